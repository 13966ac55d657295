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

* :func:`relevance` -- a per-column relevance estimate of observed data (a trend or a bowl
  around a given point), which :meth:`CoordinateSearch.coordinate_weights
  <npbandit.acquisition.subspace.CoordinateSearch.coordinate_weights>` uses;
* :class:`ColumnSelector` -- the interface of a rule that picks ``S`` from the training
  data (inject one as ``NPModel(..., columns=selector)``);
* :class:`RelevantColumns` -- the default rule: the ``width`` columns with the largest
  effects in an additive quadratic model of the outputs;
* :func:`resolve_columns` -- what ``NPModel``'s ``columns`` argument means for given data.
"""

from __future__ import annotations

import abc
import numbers
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from botorch.exceptions.warnings import InputDataWarning
from torch import Tensor

from npbandit.exceptions import CheckpointError

__all__ = ["relevance", "ColumnSelector", "RelevantColumns", "resolve_columns", "COLUMN_CHOICES"]

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


class ColumnSelector(abc.ABC):
    """A rule that picks the columns a model narrower than its data reads."""

    @abc.abstractmethod
    def select(self, X: Tensor, Y: Tensor, width: int) -> Sequence[int]:
        """At most ``width`` distinct column indices of ``X`` (``[n, D]``, the raw training
        inputs) for the outputs ``Y`` (``[n, m]``), in the order the network is to read them."""


class RelevantColumns(ColumnSelector):
    """The ``width`` columns with the largest effects in an additive quadratic model of the
    outputs, fitted to all the columns at once.

    Each column ``j`` offers two features: ``x_j`` and the part of ``x_j**2`` not explained
    by ``x_j`` (a trend and a bowl with its centre anywhere, so the rule serves maximisation
    and minimisation alike: Ax hands the model the metric as measured, whichever way it is
    optimised), each centred and scaled to unit norm over the points. Each output, centred
    and scaled to unit norm, is regressed on the ``2 D`` features together by ridge
    regression (penalty :attr:`ridge` on the squared coefficients, so any number of points
    will do); a column's score is the squared norm of its two coefficients (for several
    outputs, the largest over them), and the ``width`` highest are chosen.

    Fitting the columns together is what lets a weaker input outrank inert columns whose
    chance correlation with the outputs is as large as its own marginal one: the effects of
    the other inputs are accounted for instead of counted as noise. The penalty shares the
    credit between columns that move together, as an optimiser's proposals make the inputs
    that matter do, where a rule that took out one column's fit before scoring the next
    would leave the others nothing.

    Deterministic and unchanged by shifting and scaling a column or an output: ties (among
    them every column with fewer than three points, or without signal) go to the lower
    index, and the chosen columns are read in increasing order.

    Args:
        ridge: the penalty (``> 0``), in units of the unit-norm features; smaller trusts the
            joint fit more, larger tends to ranking each column by its own fit.
    """

    def __init__(self, ridge: float = 0.1) -> None:
        if isinstance(ridge, bool) or not isinstance(ridge, numbers.Real) or not 0 < ridge < float("inf"):
            raise ValueError(f"ridge must be a positive number, got {ridge!r}")
        self.ridge = float(ridge)

    def select(self, X: Tensor, Y: Tensor, width: int) -> tuple[int, ...]:
        X = torch.as_tensor(X).detach().to(torch.float64)
        Y = torch.as_tensor(Y).detach().to(torch.float64).reshape(len(X), -1)
        n, D = X.shape
        k = min(int(width), D)
        if n < 3:
            return tuple(range(k))
        A = _quadratic_features(X).reshape(n, 2 * D)
        y = Y - Y.mean(dim=0)
        norm = y.norm(dim=0)
        signal = norm > 1e-12 * Y.abs().amax(dim=0) * n**0.5  # a constant output (up to rounding) has none
        y = torch.where(signal, y / norm.clamp_min(1e-300), torch.zeros(()))  # [n, m]
        if n < 2 * D:  # the ridge solution in the smaller of its two forms (the same numbers)
            beta = A.T @ torch.linalg.solve(A @ A.T + self.ridge * torch.eye(n, dtype=X.dtype), y)  # [2 D, m]
        else:
            beta = torch.linalg.solve(A.T @ A + self.ridge * torch.eye(2 * D, dtype=X.dtype), A.T @ y)
        score = beta.reshape(D, 2, -1).pow(2).sum(dim=1).amax(dim=-1)  # [D]
        score = torch.where(score > 1e-24, score, torch.zeros(()))  # rounding: no signal
        order = torch.sort(-score, stable=True).indices[:k]
        return tuple(sorted(order.tolist()))

    def __repr__(self) -> str:
        return "RelevantColumns()" if self.ridge == 0.1 else f"RelevantColumns(ridge={self.ridge})"


def _quadratic_features(X: Tensor) -> Tensor:
    """``[n, D, 2]``: per column of ``X`` (``[n, D]``), an orthonormal basis of the part of
    ``span(x_j, x_j**2)`` orthogonal to the constant (zero where a column has no such part:
    a constant column has none, a two-valued one no quadratic part)."""
    z = X - X.mean(dim=0)
    scale = z.norm(dim=0)
    z = torch.where(scale > 1e-12 * X.abs().amax(dim=0).clamp_min(1e-300), z / scale.clamp_min(1e-300),
                    torch.zeros(()))
    q = z**2
    q = q - q.mean(dim=0)
    before = q.norm(dim=0)
    q = q - (q * z).sum(dim=0) * z
    after = q.norm(dim=0)
    q = torch.where(after > 1e-6 * before.clamp_min(1e-300), q / after.clamp_min(1e-300), torch.zeros(()))
    return torch.stack([z, q], dim=-1)


def resolve_columns(columns: Any, train_X: Tensor, train_Y: Tensor, width: int) -> tuple[int, ...] | None:
    """The columns a model of ``width`` inputs reads of ``train_X`` (``[n, D]``), or ``None``
    for all of them in their order.

    ``columns``: ``None`` (default: all when ``D <= width``, else ``"relevant"``, with an
    ``InputDataWarning`` naming the columns read, since the user did not choose them); ``"all"``
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
    implicit = columns is None and D > width  # chosen for a user who may not know: said in a warning
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
    if implicit:
        # the same text for every model of this width, so that Python's default filter shows it once per call
        # site (Ax builds a model per metric, trial and cross-validation fold), until a warnings.catch_warnings()
        # block resets what Python has shown (BoTorch's optimize_acqf opens them: in Ax, once per trial)
        warnings.warn(f"train_X has {D} columns but the network reads at most {width}; NPModel reads the {len(chosen)} "
                      "RelevantColumns judges most relevant and ignores the others (model.columns lists them; "
                      "pass columns= to choose, or say columns='relevant' explicitly -- in Ax, "
                      "model_options={..., 'columns': 'relevant'} -- to keep this choice without this warning)",
                      InputDataWarning, stacklevel=3)
    return None if chosen == tuple(range(D)) else chosen
