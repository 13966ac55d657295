"""Which input columns a model reads when its data is wider than its network.

A ``*-bo`` network takes at most ``width`` inputs (its checkpoint's ``x_dim``, 6 for the
shipped ones). Data with ``D > width`` columns can still be modelled by conditioning on a
chosen set ``S`` of at most ``width`` columns: the model reads ``X[..., S]`` of its training
data and of every point it predicts at, so its posterior is flat in the other ``D - |S|``
columns. An acquisition maximised over all ``D`` columns (BoTorch's ``optimize_acqf``, Ax's
generation step) then chooses the columns of ``S`` and is indifferent to the others. This
is sound where a projection of arbitrary points (a count sketch, :mod:`npbandit.acquisition.subspace`)
is not: a projection that mixes several inputs into one coordinate is exact only for points
the search itself placed in the embedding, which an optimiser over all ``D`` inputs does not.

* :func:`relevance` -- the per-column relevance estimate of observed data, which
  :class:`RelevantColumns` and :meth:`CoordinateSearch.coordinate_weights
  <npbandit.acquisition.subspace.CoordinateSearch.coordinate_weights>` share;
* :func:`ard_relevance` -- a joint estimate: the inverse squared lengthscales of an ARD
  Gaussian process fitted to all the columns (the coordinate subspace's ``scores="ard"``);
* :class:`ColumnSelector` -- the interface of a rule that picks ``S`` from the training
  data (inject one as ``NPModel(..., columns=selector)``);
* :class:`RelevantColumns` -- the default rule: the ``width`` most relevant columns;
* :func:`resolve_columns` -- what ``NPModel``'s ``columns`` argument means for given data.
"""

from __future__ import annotations

import abc
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from npbandit.exceptions import CheckpointError

__all__ = ["relevance", "ard_relevance", "ColumnSelector", "RelevantColumns", "resolve_columns", "COLUMN_CHOICES"]

#: the names ``columns`` takes besides a list of column indices or a :class:`ColumnSelector`
COLUMN_CHOICES = ("all", "relevant")


def relevance(X: Tensor, Y: Tensor, center: Tensor) -> Tensor:
    """A relevance score in ``[0, 1]`` per column of ``X`` (``[n, D]``) for the outputs ``Y``
    (``[n]`` or ``[n, m]``): per column, the largest of ``|corr(x_i, y)|`` (a trend) and
    ``|corr(|x_i - center_i|, y)|`` (a bowl around ``center``, ``[D]``), over the outputs.

    Returns ``[D]`` float64 scores: 0 for a column (or output) that is constant over the
    points, and all 0 with fewer than three points (two points correlate perfectly with
    any column that differs between them). Each score is unchanged by shifting and
    scaling a column or an output (``Normalize``, ``Standardize``, ``bounds``)."""
    X = torch.as_tensor(X).detach().to(torch.float64)
    Y = torch.as_tensor(Y).detach().to(torch.float64).reshape(len(X), -1)
    center = torch.as_tensor(center).detach().to(torch.float64)
    if len(X) < 3:
        return torch.zeros(X.shape[-1], dtype=torch.float64)
    y = Y - Y.mean(dim=0)  # [n, m]
    scores = []
    for feature in (X, (X - center).abs()):
        f = feature - feature.mean(dim=0)  # [n, D]
        denom = f.norm(dim=0)[:, None] * y.norm(dim=0)[None, :]  # [D, m]
        corr = (f.T @ y).abs() / denom.clamp_min(1e-300)
        scores.append(torch.where(denom > 0, corr, torch.zeros(())).amax(dim=-1))
    return torch.maximum(*scores)


#: the most L-BFGS-B iterations of :func:`ard_relevance`'s fit
ARD_ITERATIONS = 100


def ard_relevance(X: Tensor, Y: Tensor, *, iterations: int = ARD_ITERATIONS) -> Tensor:
    """Per column of ``X`` (``[n, D]``), the inverse squared lengthscale of an exact GP with
    an ARD RBF kernel fitted to the first column of ``Y`` (``[n]`` or ``[n, m]``).

    Unlike :func:`relevance` (one column at a time) the fit explains the outputs with all
    columns at once, so an input whose effect is a ridge or an interaction scores as high
    as one with a trend. The model: each column rescaled to ``[0, 1]`` over the points
    (a constant column scores 0), the output standardised, unit output scale, a noise
    variance with floor ``1e-6``; the lengthscales have BoTorch's dimension-scaled prior
    (LogNormal(sqrt(2) + log(D) / 2, sqrt(3)), Hvarfner et al. 2024; a normal prior on
    the log lengthscale), bounded to ``[0.01, 1000]``, and start from
    ``exp(sqrt(2) + log(D) / 2 - 3)`` (floor 0.05); a column the data do not inform drifts
    to the prior's long lengthscales. The log marginal likelihood plus the log prior is
    maximised with at most ``iterations`` L-BFGS-B steps (SciPy). Deterministic for given
    data.

    Returns ``[D]`` float64 scores ``>= 0`` (a score's scale is ``1 / lengthscale**2`` in the
    rescaled units); all 0 with fewer than three points or a constant output.

    Raises:
        ValueError: ``X`` not ``[n, D]``, ``Y`` of another length, non-finite values, or
            ``iterations`` not a positive int.
    """
    X = torch.as_tensor(X).detach().to(torch.float64)
    if X.ndim != 2:
        raise ValueError(f"X must have shape [n, D], got {tuple(X.shape)}")
    Y = torch.as_tensor(Y).detach().to(torch.float64).reshape(len(X), -1)
    if not (torch.isfinite(X).all() and torch.isfinite(Y).all()):
        raise ValueError("X and Y must be finite (NaN or inf found)")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    import scipy.optimize  # SciPy comes with BoTorch; loaded when a fit first runs

    n, D = X.shape
    y = Y[:, 0]
    if n < 3 or float(y.std()) == 0.0:
        return torch.zeros(D, dtype=torch.float64)
    low, span = X.min(dim=0).values, X.max(dim=0).values - X.min(dim=0).values
    varies = span > 0
    Xs = torch.where(varies, (X - low) / torch.where(varies, span, torch.ones(())), torch.zeros(()))
    y = (y - y.mean()) / y.std()
    loc, scale = 2**0.5 + 0.5 * float(np.log(D)), 3**0.5
    eye = torch.eye(n, dtype=torch.float64)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        params = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
        log_ls, log_noise = params[:D], params[D]
        K = torch.exp(-0.5 * torch.cdist(Xs / log_ls.exp(), Xs / log_ls.exp()).pow(2)) + log_noise.exp() * eye
        L, info = torch.linalg.cholesky_ex(K)
        if int(info) != 0:  # not positive definite in float64: a large value sends the line search back
            return 1e10, np.zeros_like(theta)
        alpha = torch.cholesky_solve(y[:, None], L)
        nll = 0.5 * (y[:, None] * alpha).sum() + torch.log(torch.diagonal(L)).sum()
        prior = (0.5 * ((log_ls - loc) / scale) ** 2).sum()  # LogNormal on ls: normal on log ls (+ const)
        value = (nll + prior) / n
        value.backward()
        return float(value.detach()), params.grad.numpy().copy()

    start = np.append(np.full(D, max(loc - scale**2, np.log(0.05))), np.log(1e-3))
    bounds = [(np.log(0.01), np.log(1e3))] * D + [(np.log(1e-6), 0.0)]
    with torch.enable_grad():
        fit = scipy.optimize.minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds,
                                      options={"maxiter": iterations})
    log_ls = torch.as_tensor(fit.x[:D], dtype=torch.float64)
    score = torch.exp(-2.0 * log_ls)
    return torch.where(varies, score, torch.zeros(()))


class ColumnSelector(abc.ABC):
    """A rule that picks the columns a model narrower than its data reads."""

    @abc.abstractmethod
    def select(self, X: Tensor, Y: Tensor, width: int) -> Sequence[int]:
        """At most ``width`` distinct column indices of ``X`` (``[n, D]``, the raw training
        inputs) for the outputs ``Y`` (``[n, m]``), in the order the network is to read them."""


class RelevantColumns(ColumnSelector):
    """The ``width`` columns of highest :func:`relevance`, scored with the bowl centred on the
    best and on the worst observed point of the first output (the larger of the two per
    column), so the rule serves maximisation and minimisation alike (Ax hands the model the
    metric as measured, whichever way it is optimised).

    Deterministic: ties (among them every column when fewer than three points or no signal
    are seen) go to the lower index, and the chosen columns are read in increasing order."""

    def select(self, X: Tensor, Y: Tensor, width: int) -> tuple[int, ...]:
        X = torch.as_tensor(X).detach().to(torch.float64)
        Y = torch.as_tensor(Y).detach().to(torch.float64).reshape(len(X), -1)
        best, worst = int(torch.argmax(Y[:, 0])), int(torch.argmin(Y[:, 0]))
        score = torch.maximum(relevance(X, Y, X[best]), relevance(X, Y, X[worst]))
        order = torch.sort(-score, stable=True).indices[:width]
        return tuple(sorted(order.tolist()))

    def __repr__(self) -> str:
        return "RelevantColumns()"


def resolve_columns(columns: Any, train_X: Tensor, train_Y: Tensor, width: int) -> tuple[int, ...] | None:
    """The columns a model of ``width`` inputs reads of ``train_X`` (``[n, D]``), or ``None``
    for all of them in their order.

    ``columns``: ``None`` (default: all when ``D <= width``, else ``"relevant"``); ``"all"``
    (every column; ``D`` may not exceed ``width``); ``"relevant"``
    (:class:`RelevantColumns`); a :class:`ColumnSelector`; or a sequence of distinct column
    indices (at most ``width``). A selection of every column in increasing order is ``None``.

    Raises:
        CheckpointError: ``"all"`` with ``D > width``.
        TypeError: ``columns`` of none of these kinds.
        ValueError: indices out of range, repeated, more than ``width`` or none; a
            selector that returns such indices.
    """
    D = train_X.shape[-1]
    if columns is None:
        columns = "all" if D <= width else "relevant"
    if isinstance(columns, str):
        if columns not in COLUMN_CHOICES:
            raise ValueError(f"columns must be one of {list(COLUMN_CHOICES)}, a list of column indices or a "
                             f"ColumnSelector, got {columns!r}")
        if columns == "all":
            if D > width:
                raise CheckpointError(f"train_X has {D} columns but the network reads at most {width} inputs "
                                      f"(columns='all'); columns='relevant' (the default for data wider than the "
                                      f"network) reads the {width} most relevant ones")
            return None
        columns = RelevantColumns()
    source = "columns"
    if isinstance(columns, ColumnSelector):
        source = f"the columns {type(columns).__name__} selected"
        columns = columns.select(train_X, train_Y, width)
    if isinstance(columns, (Tensor, np.ndarray)):
        columns = columns.tolist()
    if not isinstance(columns, Sequence) or isinstance(columns, (str, bytes)):
        raise TypeError(f"columns must be None, one of {list(COLUMN_CHOICES)}, a list of column indices or a "
                        f"ColumnSelector, got {type(columns).__name__}")
    if any(isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < D for i in columns):
        raise ValueError(f"{source} must be column indices in 0..{D - 1} (train_X has {D} columns), "
                         f"got {list(columns)!r}")
    chosen = tuple(int(i) for i in columns)
    if not chosen or len(set(chosen)) != len(chosen) or len(chosen) > width:
        raise ValueError(f"{source} must be 1 to {width} distinct column indices (the network reads at most "
                         f"{width} inputs), got {chosen!r}")
    return None if chosen == tuple(range(D)) else chosen
