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
* :class:`RelevantColumns` -- the default rule: the ``width`` columns that explain most of
  the outputs, by forward selection;
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
    """The ``width`` columns that explain most of the outputs, chosen one at a time by forward
    selection on each column's quadratic.

    Each column ``j`` offers the two features ``x_j`` and ``x_j**2`` (a trend and a bowl
    with its centre anywhere, so the rule serves maximisation and minimisation alike: Ax hands
    the model the metric as measured, whichever way it is optimised). Step by step the column
    chosen is the one whose least-squares quadratic explains the largest fraction ``R2`` of
    the outputs' variation left unexplained (per output, the largest over the ``m``
    outputs). Its fit is then taken out of the outputs -- they are refitted jointly on every
    column so taken, additively -- provided the evidence supports it: the chance that the
    best of the ``c`` columns still in play explains that much of pure noise (the F test of
    its two features, ``(1 - R2) ** (df / 2)`` with ``df`` the residual degrees of freedom,
    times ``c``) is below :attr:`alpha`. Taking out what the inputs chosen so far explain is
    what lets a weaker input outrank inert columns whose chance correlation with the
    outputs is of the same size as its own marginal one; a step that is not supported
    leaves the outputs as they are, so with thin data the rule ranks columns by their
    marginal ``R2``.

    Deterministic and unchanged by shifting and scaling a column or an output: ties
    (among them every column with fewer than four points, which a quadratic fits
    exactly, or without signal) go to the lower index, and the chosen columns are read in
    increasing order.

    Args:
        alpha: the chance level (in ``(0, 1)``) below which a step's fit is taken out.
    """

    def __init__(self, alpha: float = 0.2) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
            raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
        self.alpha = float(alpha)

    def select(self, X: Tensor, Y: Tensor, width: int) -> tuple[int, ...]:
        X = torch.as_tensor(X).detach().to(torch.float64)
        Y = torch.as_tensor(Y).detach().to(torch.float64).reshape(len(X), -1)
        n, D = X.shape
        k = min(int(width), D)
        if n < 4:
            return tuple(range(k))
        F = _quadratic_features(X)  # [n, D, 2]
        y = Y - Y.mean(dim=0)  # [n, m]
        residual, taken, chosen = y, [], []
        for _ in range(k):
            proj = torch.einsum("ndk,nm->dmk", F, residual)  # [D, m, 2]
            explained = (proj**2).sum(-1) / (residual**2).sum(0).clamp_min(1e-300)  # [D, m]: R2
            score = torch.where((residual**2).sum(0) > 1e-24 * (y**2).sum(0).clamp_min(1e-300),
                                explained, torch.zeros(())).amax(dim=-1).clamp(0, 1)
            score[chosen] = -1.0
            j = int(torch.sort(-score, stable=True).indices[0])
            chosen.append(j)
            df = n - 1 - 2 * len(taken) - 2  # the residual degrees of freedom with j's two features fitted
            if df >= 1 and (1 - float(score[j])) ** (df / 2) * (D - len(chosen) + 1) < self.alpha:
                taken.append(j)
                A = torch.cat([torch.ones(n, 1, dtype=X.dtype)] + [F[:, c, :] for c in taken], dim=1)
                residual = y - A @ torch.linalg.lstsq(A, y).solution
        return tuple(sorted(chosen))

    def __repr__(self) -> str:
        return "RelevantColumns()" if self.alpha == 0.2 else f"RelevantColumns(alpha={self.alpha})"


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
        warnings.warn(f"train_X has {D} columns but the network reads at most {width}; NPModel reads the columns "
                      f"{list(chosen)}, those RelevantColumns judged most relevant, and ignores the others "
                      "(model.columns; pass columns= to choose, or say columns='relevant' explicitly -- in Ax, "
                      "model_options={..., 'columns': 'relevant'} -- to keep this choice without this warning)",
                      InputDataWarning, stacklevel=3)
    return None if chosen == tuple(range(D)) else chosen
