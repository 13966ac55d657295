"""Context projections: how a per-arm NP policy reads contexts wider than its checkpoint.

A ``*-bo`` checkpoint regresses on at most ``width`` inputs (6 for the shipped ones). A
bandit whose contexts have ``D > width`` features is played by
:class:`~npbandit.policies.per_arm.PerArmNPPolicy` through a :class:`ContextProjection`
(injected as ``projection=``; :func:`default_projection` otherwise): a rule that, from the
rounds the bandit has seen, fits a linear map :class:`ProjectionMap` ``z = (x - center) @ matrix``
of contexts ``x [D]`` onto ``k <= width`` coordinates ``z [k]``, the inputs every arm's model reads.

What a projection sees: the contexts of the rounds observed so far ``[n, D]``, the arm
each round played ``[n]`` and its reward ``[n]`` -- nothing the bandit has not seen (never
the environment's data set or its later rounds). Both rules here first standardise the
contexts by the mean and std of those rows (a feature constant over them is centred, its
scale taken as 1), so a feature's units do not decide its weight, and return orthonormal
directions in those standardised units (so every coordinate ``z_j`` is in units of one
standardised feature):

- :class:`PrincipalComponents` (unsupervised): the ``k`` leading principal components of
  the standardised contexts.
- :class:`RewardDirections` (supervised): per arm, a ridge regression of the arm's rewards
  on its own rows' standardised contexts (with an intercept, ridge ``ridge``: what LinUCB
  estimates); the span of the arms' coefficient vectors, or its ``k`` leading singular
  directions when there are more arms than ``k``, completed to ``k`` columns by the
  principal components of the contexts with that span removed. Where each arm's mean
  reward depends on the context through a linear index ``f_a(x . w_a)``, the span of the
  ``w_a`` is a sufficient reduction: the arms' models lose nothing by reading it, and the
  ridge coefficients estimate it (for a Gaussian context exactly up to scale).

How the policy uses a projection (:mod:`npbandit.policies.per_arm`):

- **Refits on a doubling schedule.** The first fit comes once every arm has ``n_init``
  rounds and there are more rows than ``width`` (so the centred rows can span ``width``
  directions; until then the policy plays the arms with fewer than ``n_init`` rounds, then
  uniformly at random). Each later fit comes when the rows have doubled since the last
  (:func:`next_refit`). A fit refits the projection on all rows so far and re-conditions
  every arm's model on all its rows in the new coordinates (the raw rows are kept in
  :class:`~npbandit.rows.RowBuffer` arrays); between fits each round is projected with
  the current map and streamed into its arm's model. A fit costs ``O(n)`` at ``n`` rows
  and the fits up to round ``T`` cost ``O(T)`` together, so the amortised cost of a round
  does not grow with ``T``.
- **The box the models' cube is mapped from** (:func:`working_box`): per coordinate, the
  range of the rows seen in the new coordinates widened by :data:`BOX_MARGIN` of that
  range on each side (a coordinate with no spread: one unit either side). A later context
  whose coordinates fall outside that box is never clipped: the box is recomputed over
  the rows seen and that context, and every arm's model re-conditioned on its rows in the
  widened box, before the context is predicted at or streamed in. The exact image of the
  context ``bounds`` under the map is not used: it is a zonotope whose bounding box is
  far wider than where the contexts lie (a sum of ``D`` ranges per coordinate), which
  would crowd every context into a small part of the cube the checkpoint was trained on.
  Widenings are rare for contexts drawn from one distribution (a new extreme among ``n``
  draws comes with probability about ``2 k / n``, so their expected total cost to round
  ``T`` is ``O(k T)``).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ProjectionMap", "ContextProjection", "PrincipalComponents", "RewardDirections", "Identity",
           "default_projection",
           "next_refit", "working_box", "BOX_MARGIN", "PROJECTIONS"]

#: how far the box the models read extends past the rows seen, a share of their range on each side
BOX_MARGIN = 0.1


@dataclass(frozen=True, eq=False)
class ProjectionMap:
    """A fitted linear map of contexts: ``z = (x - center) @ matrix``.

    Attributes:
        center: ``[D]`` float64.
        matrix: ``[D, k]`` float64, ``k`` the coordinates the arms' models read.
    """

    center: np.ndarray
    matrix: np.ndarray

    @property
    def k(self) -> int:
        return self.matrix.shape[1]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Contexts ``[..., D]`` -> coordinates ``[..., k]`` (float64)."""
        return (np.asarray(X, dtype=np.float64) - self.center) @ self.matrix


class ContextProjection(abc.ABC):
    """A rule that fits a :class:`ProjectionMap` from the rounds a bandit has seen."""

    #: the rule's name, as ``params()`` logs it
    name = "projection"

    @abc.abstractmethod
    def fit(self, contexts: np.ndarray, arms: np.ndarray, rewards: np.ndarray, n_arms: int,
            width: int) -> ProjectionMap:
        """The map onto at most ``width`` coordinates, from the rounds seen so far:
        ``contexts [n, D]`` (float64), the arm each round played ``arms [n]`` (ints in
        ``[0, n_arms)``) and its reward ``rewards [n]``. ``n > min(D, width)`` when the
        policy calls it."""

    def params(self) -> dict[str, Any]:
        """What a run logs of the rule: its :attr:`name` and settings."""
        return {"name": self.name}


def _standardised(contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Xs [n, D], mean [D], scale [D])``: the contexts centred by their mean and divided by
    their std (1 where a feature is constant over them)."""
    mean = contexts.mean(0)
    std = contexts.std(0)
    scale = np.where(std > 0, std, 1.0)
    return (contexts - mean) / scale, mean, scale


def _leading_directions(Xs: np.ndarray, k: int) -> np.ndarray:
    """``[D, k]`` the ``k`` leading principal directions of the centred rows ``Xs [n, D]``:
    eigenvectors of ``Xs^T Xs`` by decreasing eigenvalue (orthonormal; past the rank of
    ``Xs``, some orthonormal completion). ``O(n D^2)``, nothing of size ``n x n``."""
    _, vectors = np.linalg.eigh(Xs.T @ Xs)
    return vectors[:, ::-1][:, :k]


class PrincipalComponents(ContextProjection):
    """The ``width`` leading principal components of the standardised contexts seen so far
    (see the module docstring); reads neither arms nor rewards."""

    name = "principal-components"

    def fit(self, contexts, arms, rewards, n_arms, width):
        Xs, mean, scale = _standardised(np.asarray(contexts, dtype=np.float64))
        directions = _leading_directions(Xs, min(width, Xs.shape[1]))
        return ProjectionMap(mean, directions / scale[:, None])


class RewardDirections(ContextProjection):
    """The span of the per-arm ridge-regression coefficients, completed by principal
    components to ``width`` columns (see the module docstring).

    Args:
        ridge: the ridge penalty of each arm's regression on standardised contexts (> 0;
            1 is LinUCB's identity prior).
    """

    name = "reward-directions"

    def __init__(self, ridge: float = 1.0) -> None:
        from npbandit.validation import check_real

        self.ridge = check_real("ridge", ridge, low=0.0)
        if self.ridge <= 0:
            raise ValueError(f"ridge must be > 0, got {ridge!r}")

    def params(self) -> dict[str, Any]:
        return {"name": self.name, "ridge": self.ridge}

    def coefficients(self, Xs: np.ndarray, arms: np.ndarray, rewards: np.ndarray, n_arms: int) -> np.ndarray:
        """``[D, n_arms]`` each arm's ridge coefficients on its own rows of ``Xs [n, D]``
        (the arm's rows and rewards centred: an intercept, not penalised); zero for an arm
        with fewer than two rows."""
        D = Xs.shape[1]
        B = np.zeros((D, n_arms))
        for arm in range(n_arms):
            rows = arms == arm
            if rows.sum() < 2:
                continue
            Xa = Xs[rows] - Xs[rows].mean(0)
            ya = rewards[rows] - rewards[rows].mean()
            B[:, arm] = np.linalg.solve(Xa.T @ Xa + self.ridge * np.eye(D), Xa.T @ ya)
        return B

    def fit(self, contexts, arms, rewards, n_arms, width):
        Xs, mean, scale = _standardised(np.asarray(contexts, dtype=np.float64))
        k = min(width, Xs.shape[1])
        B = self.coefficients(Xs, np.asarray(arms), np.asarray(rewards, dtype=np.float64), n_arms)
        u, s, _ = np.linalg.svd(B, full_matrices=False)
        r = min(k, int((s > 1e-9 * max(s.max(initial=0.0), 1e-300)).sum()))
        span = u[:, :r]
        # the contexts with the reward span removed: their principal components complete it
        rest = _leading_directions(Xs - (Xs @ span) @ span.T, k - r)
        directions, _ = np.linalg.qr(np.hstack([span, rest]))  # orthonormal (rest is already, up to rounding)
        return ProjectionMap(mean, directions / scale[:, None])


class Identity(ContextProjection):
    """The contexts as they are (``k = D``; for contexts no wider than the checkpoint): what
    a per-arm NP policy reads narrow contexts through by default, so its models' cube is
    mapped from the box of the contexts seen (:func:`working_box`), not from ``bounds``
    (a ``Box`` declared far wider than the contexts would crowd them all into a corner of
    the cube, where the models cannot tell them apart)."""

    name = "identity"

    def fit(self, contexts, arms, rewards, n_arms, width):
        D = np.asarray(contexts).shape[1]
        if D > width:
            raise ValueError(f"Identity reads contexts of at most width = {width} features, got {D}; "
                             "use a projection that reduces them (RewardDirections, PrincipalComponents)")
        return ProjectionMap(np.zeros(D), np.eye(D))


#: the projections by name (``make_bandit_policy(..., projection="principal-components")``)
PROJECTIONS = {"principal-components": PrincipalComponents, "reward-directions": RewardDirections,
               "identity": Identity}


def default_projection(context_dim: int | None = None, width: int | None = None) -> ContextProjection:
    """The projection a per-arm NP policy uses when none is given: for contexts wider than
    its checkpoint (or when the widths are not given) :class:`RewardDirections`, which keeps
    the directions the arms' rewards vary along where principal components keep those the
    contexts vary most along; for contexts that fit, :class:`Identity`."""
    if context_dim is not None and width is not None and context_dim <= width:
        return Identity()
    return RewardDirections()


def as_projection(projection: Any) -> ContextProjection:
    """``projection`` as a :class:`ContextProjection`: one, or the name of one of :data:`PROJECTIONS`."""
    if isinstance(projection, str):
        if projection not in PROJECTIONS:
            raise ValueError(f"projection must be one of {sorted(PROJECTIONS)} or a ContextProjection, "
                             f"got {projection!r}")
        return PROJECTIONS[projection]()
    if not isinstance(projection, ContextProjection):
        raise TypeError(f"projection must be a ContextProjection or one of {sorted(PROJECTIONS)}, "
                        f"got {type(projection).__name__}")
    return projection


def check_map(fitted: Any, context_dim: int, width: int, projection: ContextProjection) -> ProjectionMap:
    """Refuse what ``projection.fit`` returned unless it is a :class:`ProjectionMap` of
    ``context_dim`` features onto ``1..width`` coordinates, finite."""
    who = f"{type(projection).__name__}.fit"
    if not isinstance(fitted, ProjectionMap):
        raise TypeError(f"{who} must return a ProjectionMap, got {type(fitted).__name__}")
    center, matrix = np.asarray(fitted.center, np.float64), np.asarray(fitted.matrix, np.float64)
    if center.shape != (context_dim,) or matrix.ndim != 2 or matrix.shape[0] != context_dim \
            or not 1 <= matrix.shape[1] <= width:
        raise ValueError(f"{who} must return center [{context_dim}] and matrix [{context_dim}, k] with "
                         f"1 <= k <= {width}, got shapes {center.shape} and {matrix.shape}")
    if not (np.isfinite(center).all() and np.isfinite(matrix).all()):
        raise ValueError(f"{who} returned a map with non-finite entries")
    return ProjectionMap(center, matrix)


def next_refit(rows: int) -> int:
    """The number of rows at which the fit after one at ``rows`` rows comes: twice as many."""
    return 2 * rows


def working_box(Z: np.ndarray) -> np.ndarray:
    """``[2, k]`` the box the arms' models map onto their cube, from the rows seen in
    projected coordinates ``Z [n, k]``: their range widened by :data:`BOX_MARGIN` of it on
    each side; one unit either side of a coordinate with no spread."""
    low, high = Z.min(0), Z.max(0)
    spread = high - low
    pad = np.where(spread > 0, BOX_MARGIN * spread, 1.0)
    return np.stack([low - pad, high + pad])
