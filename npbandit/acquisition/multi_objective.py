"""Several objectives: the observed Pareto front, its reference point, and the acquisition.

A problem with ``m`` objectives has outputs ``Y`` ``[n, m + k]``: columns ``0 .. m-1`` the
objectives (each maximised, as every output here), columns ``m .. m+k-1`` the outcome
constraints' values (feasible at ``<= 0``, as in :mod:`npbandit.acquisition.constrained`). The
model predicts every column independently (an :class:`~npbandit.models.NPModel` on ``m + k``
columns holds one NP per output).

The acquisition is the log of the expected hypervolume improvement (Daulton et al. 2020; in
log space as Ament et al. 2023): BoTorch's ``qLogExpectedHypervolumeImprovement`` for one
point, over a box decomposition of the region the feasible observations dominate, bounded
below by the reference point. It is the several-objective form of the expected improvement
that ``"logei"`` maximises for one objective: the improvement of a point is the volume it
adds to the dominated region. Constraints enter as BoTorch's constraint callables (the
smoothed feasibility indicator, weighing each Monte Carlo draw), so the acquisition is the
expected improvement of the feasible front; points being evaluated enter as ``X_pending``,
each candidate judged by what it adds to the front together with them (the pending points'
draws are part of every joint draw), so a candidate that only repeats what a pending point
is expected to add is worth little.

The reference point is the feasible front's nadir (its worst value in each objective) moved
a tenth of the observed range of that objective further down (the rule Ishibuchi et al. 2011
found robust, as BoTorch's ``infer_reference_point``; the range is taken over every observation,
not only the front, so that a front of one point still has a finite box). It moves with the
objectives when they are shifted or scaled, so the search does not depend on their units.

This module imports BoTorch only inside the functions that build an acquisition.
"""

from __future__ import annotations

from typing import Any

import torch

from npbandit.acquisition.constrained import OutputColumn

__all__ = ["REFERENCE_MARGIN", "MC_SAMPLES", "check_objectives", "pareto_front", "reference_point", "warp_objectives",
           "front_rows",
           "log_hypervolume_improvement"]

#: how far below the front's nadir the reference point lies, as a fraction of each objective's
#: observed range
REFERENCE_MARGIN = 0.1
#: the quasi-Monte Carlo draws of the posterior the improvement is averaged over
MC_SAMPLES = 128


def check_objectives(objectives: Any) -> int:
    """``objectives`` checked: an int ``>= 1``, the number of objective columns."""
    if isinstance(objectives, bool) or not isinstance(objectives, int) or objectives < 1:
        raise ValueError(f"objectives must be the number of objective columns (an int >= 1), got {objectives!r}")
    return objectives


def _check_outputs(Y: torch.Tensor, objectives: int, constraints: int) -> None:
    width = objectives + constraints
    if not isinstance(Y, torch.Tensor) or Y.ndim != 2 or Y.shape[-1] != width or not len(Y):
        shape = tuple(Y.shape) if isinstance(Y, torch.Tensor) else type(Y).__name__
        raise ValueError(f"the outputs must be [n >= 1, {objectives} + {constraints}] (the objectives, then the "
                         f"constraint values), got {shape}")
    if not bool(torch.isfinite(Y).all()):
        raise ValueError("the outputs must be finite (a failed evaluation is seen at the worst observed values)")


def _feasible(Y: torch.Tensor, objectives: int) -> torch.Tensor:
    return (Y[:, objectives:] <= 0).all(dim=-1)


def pareto_front(Y: torch.Tensor, objectives: int, constraints: int = 0) -> torch.Tensor:
    """The feasible rows of ``Y`` (``[n, objectives + constraints]``, maximised) that no other
    feasible row dominates, their objective columns only: ``[p, objectives]``, ``p = 0`` when
    no row is feasible. Rows equal to an earlier one are kept once."""
    from botorch.utils.multi_objective.pareto import is_non_dominated

    _check_outputs(Y, objectives, constraints)
    values = Y[_feasible(Y, objectives), :objectives]
    if not len(values):
        return values
    return values[is_non_dominated(values, deduplicate=True)]


def reference_point(Y: torch.Tensor, objectives: int, constraints: int = 0) -> torch.Tensor:
    """``[objectives]``: the reference point the hypervolume is measured from (the module
    docstring): the feasible front's nadir minus :data:`REFERENCE_MARGIN` times each objective's
    range over every row of ``Y``; with no feasible row, every row's worst value minus the same,
    so that any feasible point adds volume and the search is drawn to feasibility by the
    acquisition's feasibility weights. An objective with no range yet (every row equal in it)
    is moved by the margin times its magnitude, or by the margin where that is 0."""
    front = pareto_front(Y, objectives, constraints)
    values = Y[:, :objectives]
    if not len(front):
        front = values
    span = values.amax(dim=0) - values.amin(dim=0)
    span = torch.where(span > 0, span, front.abs().amax(dim=0))
    span = torch.where(span > 0, span, torch.ones_like(span))
    return front.amin(dim=0) - REFERENCE_MARGIN * span


def warp_objectives(Y: torch.Tensor, objectives: int, constraints: int = 0) -> torch.Tensor:
    """``Y`` (``[n, objectives + constraints]``) with each objective column through a Yeo-Johnson
    transform fitted to it (standardised, then power-transformed towards a Gaussian:
    :func:`~npbandit.transforms.yeo_johnson.yeo_johnson_warp`), the constraint columns as they are.

    What a network of a study of several objectives is shown, and the units its hypervolume is
    measured in. Without a trust region to zoom in (there is none for several objectives), the
    part of an objective that matters to the front can be a sliver of its observed range
    (Branin spans 0-300 where its share of BraninCurrin's front lies below 18), which the network
    resolves poorly once standardised; the warp spreads it. Each transform is increasing, so
    which rows dominate which, and so the front, is unchanged; the volumes are those of the
    warped units. Chosen on the choosing problems of the multi-objective benchmark
    (experiments/log/benchmarks.md, "Several objectives in NPSampler")."""
    from npbandit.transforms.yeo_johnson import yeo_johnson_warp

    _check_outputs(Y, objectives, constraints)
    out = Y.clone()
    for j in range(objectives):
        out[:, j] = torch.from_numpy(yeo_johnson_warp(Y[:, j].detach().cpu().numpy())).to(Y)
    return out


def front_rows(Y: torch.Tensor, objectives: int, constraints: int = 0, limit: int | None = None) -> torch.Tensor:
    """Indices (ascending) of at most ``limit`` rows of ``Y`` (``[n, objectives + constraints]``,
    maximised) for a model that takes no more context points: all of them when ``n <= limit``
    (or ``limit`` is ``None``), else the rows of the best non-dominated layers (the front of
    the feasible rows, then the front of those left, and so on; then the infeasible rows'
    layers), the last layer taken in part keeping its most recent rows. The rows that shape
    the front, and those nearest it, are where the hypervolume can still improve."""
    _check_outputs(Y, objectives, constraints)
    n = len(Y)
    if limit is None or n <= limit:
        return torch.arange(n)
    from botorch.utils.multi_objective.pareto import is_non_dominated

    chosen: list[int] = []
    ok = _feasible(Y, objectives)
    for group in (torch.nonzero(ok).reshape(-1), torch.nonzero(~ok).reshape(-1)):
        while len(group) and len(chosen) < limit:
            layer = is_non_dominated(Y[group, :objectives], deduplicate=False)
            top = group[layer]
            chosen += top[-(limit - len(chosen)):].tolist() if len(top) > limit - len(chosen) else top.tolist()
            group = group[~layer]
    return torch.sort(torch.tensor(chosen, dtype=torch.long)).values


def log_hypervolume_improvement(model, outputs: torch.Tensor, objectives: int, constraints: int = 0,
                                pending: torch.Tensor | None = None, seed: int = 0):
    """The acquisition for one point (``acq(X)`` with ``X`` ``[b, 1, d]`` gives ``[b]``): the log
    expected hypervolume improvement of ``model``'s objective outputs ``0 .. objectives-1`` over
    the feasible front of ``outputs`` (``[n, objectives + constraints]``, what the model was
    built on), measured from :func:`reference_point`, with outputs ``objectives ..`` as
    constraints (feasible at ``<= 0``) and ``pending`` ``[p, d]`` (points being evaluated, or
    ``None``) judged together with each candidate. Its quasi-Monte Carlo draws are seeded by
    ``seed``, so one model and seed give one acquisition."""
    from botorch.acquisition.multi_objective.logei import qLogExpectedHypervolumeImprovement
    from botorch.acquisition.multi_objective.objective import IdentityMCMultiOutputObjective
    from botorch.sampling import SobolQMCNormalSampler
    from botorch.utils.multi_objective.box_decompositions.non_dominated import FastNondominatedPartitioning

    objectives = check_objectives(objectives)
    if objectives < 2:
        raise ValueError(f"a hypervolume needs at least two objectives, got objectives={objectives} (one objective "
                         f"is searched by LogEI)")
    outputs = torch.as_tensor(outputs, dtype=torch.float64)
    ref = reference_point(outputs, objectives, constraints)
    front = pareto_front(outputs, objectives, constraints)
    partitioning = FastNondominatedPartitioning(ref_point=ref, Y=front)
    if pending is not None and not len(pending):
        pending = None
    return qLogExpectedHypervolumeImprovement(
        model, ref_point=ref, partitioning=partitioning,
        sampler=SobolQMCNormalSampler(sample_shape=torch.Size([MC_SAMPLES]), seed=seed),
        objective=IdentityMCMultiOutputObjective(outcomes=list(range(objectives))) if constraints else None,
        constraints=[OutputColumn(objectives + i) for i in range(constraints)] or None, X_pending=pending)

