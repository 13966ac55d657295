"""Several objectives: the observed Pareto front, its reference point, and the acquisition.

A problem with ``m`` objectives has outputs ``Y`` ``[n, m + k]``: columns ``0 .. m-1`` the
objectives (each maximised, as every output here), columns ``m .. m+k-1`` the outcome
constraints' values (feasible at ``<= 0``, as in :mod:`npbandit.acquisition.constrained`). The
model predicts every column independently (an :class:`~npbandit.models.NPModel` on ``m + k``
columns holds one NP per output).

The acquisition is the log of the expected hypervolume improvement (Emmerich et al. 2006;
Daulton et al. 2020), the several-objective form of the expected improvement that ``"logei"``
maximises for one objective: the improvement of a point is the volume it adds to the region
the feasible observations dominate above the reference point. The NP's outputs are independent
Gaussians, so for one point it has a closed form over a box decomposition of the region not yet
dominated (BoTorch's ``FastNondominatedPartitioning``): per cell, the product over objectives of
each output's expected excess over the cell's lower bound, capped at its upper bound
(:class:`AnalyticLogEHVI`, in log space so that it stays informative far from the front, as
LogEI does). It costs the cells times the outputs per candidate, where BoTorch's Monte Carlo
estimate (``qLogExpectedHypervolumeImprovement``) multiplies that by its draws; on the choosing
problems it searched as well at a tenth of the seconds (experiments/log/benchmarks.md, "Several
objectives: the expected hypervolume improvement in closed form"). Constraints multiply it by
the probability that every constraint output is ``<= 0``, as LogEI's constrained form does.

Points being evaluated are believed at the model's own mean there (the kriging believer, as
:class:`~npbandit.acquisition.pending.KrigingBeliever` believes them for one objective): the
model is conditioned on them at those values, and the values join the observed rows the front
is taken from (the reference point stays the observed rows'), so a candidate beside a pending
point has little spread left there and must improve on what that point is expected to give. They are not judged jointly
with each candidate (BoTorch's ``X_pending``): an NP predicts each point on its own (an
:class:`~npbandit.models.NPModel`'s posterior is diagonal), so a candidate beside a pending point
would draw its value apart from it and the pending point would push no worker away; and the
joint improvement of ``q`` points sums ``2 ** q - 1`` terms per box and draw, each pending point
doubling the cost of an evaluation.

The reference point is the feasible front's nadir (its worst value in each objective) moved
a tenth of the observed range of that objective further down (the rule Ishibuchi et al. 2011
found robust, as BoTorch's ``infer_reference_point``; the range is taken over every observation,
not only the front, so that a front of one point still has a finite box). It moves with the
objectives when they are shifted or scaled, so the search does not depend on their units.

This module imports BoTorch only inside the functions that build an acquisition.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from npbandit.acquisition.constrained import check_constraints_argument
from npbandit.acquisition.pending import condition
from npbandit.validation import check_int

__all__ = ["REFERENCE_MARGIN", "check_objectives", "pareto_front", "reference_point", "warp_objectives",
           "front_rows",
           "log_hypervolume_improvement"]

#: how far below the front's nadir the reference point lies, as a fraction of each objective's
#: observed range
REFERENCE_MARGIN = 0.1


def check_objectives(objectives: Any) -> int:
    """``objectives`` checked: an int ``>= 1``, the number of objective columns."""
    if isinstance(objectives, bool) or not isinstance(objectives, int) or objectives < 1:
        raise ValueError(f"objectives must be the number of objective columns (an int >= 1), got {objectives!r}")
    return objectives


def _check_outputs(Y: torch.Tensor, objectives: int, constraints: int) -> None:
    width = check_objectives(objectives) + check_constraints_argument(constraints)
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
    the front, and those nearest it, are where the hypervolume can still improve.

    Raises:
        ValueError: ``objectives`` is not an int >= 1, ``constraints`` an int >= 0, ``Y`` a
            finite ``[n >= 1, objectives + constraints]`` tensor, or ``limit`` ``None`` or an
            int >= 1."""
    _check_outputs(Y, objectives, constraints)
    if limit is not None:
        check_int("limit", limit, minimum=1)
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
                                pending: torch.Tensor | None = None) -> AnalyticLogEHVI:
    """The acquisition for one point (``acq(X)`` with ``X`` ``[b, 1, d]`` gives ``[b]``): the log
    expected hypervolume improvement of ``model``'s objective outputs ``0 .. objectives-1`` over
    the feasible front of ``outputs`` (``[n, objectives + constraints]``, what the model was
    built on), measured from :func:`reference_point`, with outputs ``objectives ..`` as
    constraints (feasible at ``<= 0``). ``pending`` ``[p, d]`` (points being evaluated, or
    ``None``): each believed at ``model``'s mean there, the model conditioned on it and the
    values taken as rows of ``outputs`` for the front, not for the reference point (the module
    docstring); the acquisition's ``model`` is then the conditioned one. Deterministic: one model
    gives one acquisition."""
    from botorch.utils.multi_objective.box_decompositions.non_dominated import FastNondominatedPartitioning

    objectives = check_objectives(objectives)
    if objectives < 2:
        raise ValueError(f"a hypervolume needs at least two objectives, got objectives={objectives} (one objective "
                         f"is searched by LogEI)")
    outputs = torch.as_tensor(outputs, dtype=torch.float64)
    ref = reference_point(outputs, objectives, constraints)  # the study's units: the observed rows'
    if pending is not None and len(pending):
        pending = torch.as_tensor(pending, dtype=torch.float64)
        with torch.no_grad():
            believed = model.posterior(pending).mean.reshape(len(pending), -1).to(outputs)
        model = condition(model, pending, believed)
        outputs = torch.cat([outputs, believed])
    front = pareto_front(outputs, objectives, constraints)
    partitioning = FastNondominatedPartitioning(ref_point=ref, Y=front)
    return AnalyticLogEHVI(model, partitioning, objectives, constraints)


def log_expected_excess(lower: torch.Tensor, upper: torch.Tensor) -> torch.Tensor:
    """``log E[(min(Z, upper) - lower)^+]`` for a standard normal ``Z``, elementwise
    (``lower < upper``; ``upper`` may be ``inf``): ``log(h(lower) - h(upper))`` with
    ``h(z) = E[(Z - z)^+] = phi(z) - z Phi(-z)``, the integral of ``P(Z > t)`` over ``[lower,
    upper]``, computed in log space so that it stays finite where the values underflow."""
    log_lower = _log_h(lower)
    return log_lower + _log1mexp_safe(_log_h(upper) - log_lower)


def _log_h(z: torch.Tensor) -> torch.Tensor:
    """``log h(z)``, ``h(z) = phi(z) - z Phi(-z) > 0`` (``-inf`` at ``z = inf``). Below ``z = 1``
    ``h`` is at least ``h(1) > 0.08`` and is computed as it reads; above, as ``phi(z) (1 - z
    Phi(-z) / phi(z))`` with the Mills ratio ``Phi(-z) / phi(z) = sqrt(pi / 2) erfcx(z / sqrt(2))``,
    which ``log_erfcx`` keeps exact in the tail where the difference would cancel and ``phi``
    underflow. Each branch sees a safe stand-in input where the other is taken, so neither puts
    a NaN in the gradient."""
    from botorch.utils.probability.utils import log_erfcx, log_phi

    small = z < 1
    near = torch.where(small, z, torch.zeros_like(z))
    left = torch.log(torch.exp(-0.5 * near**2) / math.sqrt(2 * math.pi) - near * torch.special.ndtr(-near))
    finite = torch.isfinite(z)
    far = torch.where(small | ~finite, 2 * torch.ones_like(z), z)
    right = log_phi(far) + _log1mexp_safe(torch.log(far) + 0.5 * math.log(math.pi / 2) + log_erfcx(far / math.sqrt(2)))
    out = torch.where(small, left, right)
    return torch.where(finite | small, out, torch.full_like(z, -math.inf))


def _log1mexp_safe(x: torch.Tensor) -> torch.Tensor:
    """``log(1 - exp(x))`` for ``x <= 0`` (``0`` at ``x = -inf``)."""
    from botorch.utils.safe_math import log1mexp

    x = x.clamp(max=-1e-300)  # rounding may put a difference a hair above 0
    return torch.where(torch.isinf(x), torch.zeros_like(x), log1mexp(torch.where(torch.isinf(x), -torch.ones_like(x),
                                                                                  x)))


class AnalyticLogEHVI(torch.nn.Module):
    """The log expected hypervolume improvement of one point in closed form, for a model whose
    outputs are independent Gaussians (an ``NPModel``; a model list): over the cells of a
    partitioning of the region the front does not dominate (BoTorch's box decomposition),
    ``EHVI(x) = sum over cells of prod_j sigma_j E[(min(Z, u_j') - l_j')^+]`` with each bound
    standardised by the output's mean and deviation, so ``log EHVI`` is a ``logsumexp`` over
    cells of sums of :func:`log_expected_excess`; times the probability that every constraint
    output is ``<= 0``. No Monte Carlo draws: its cost is the cells times the outputs, where a
    Monte Carlo estimate multiplies that by its draws."""

    def __init__(self, model, partitioning, objectives: int, constraints: int = 0) -> None:
        super().__init__()
        self.model = model
        self.objectives = objectives
        self.constraints = constraints
        bounds = partitioning.get_hypercell_bounds()  # [2, cells, m], maximised, upper possibly inf
        self.register_buffer("cell_lower", bounds[0])
        self.register_buffer("cell_upper", bounds[1])

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        from botorch.utils.probability.utils import log_ndtr

        posterior = self.model.posterior(X)  # X [b, 1, d]
        mean = posterior.mean.squeeze(-2)  # [b, M]
        sd = posterior.variance.clamp_min(1e-30).sqrt().squeeze(-2)
        m = self.objectives
        mu, sigma = mean[..., None, :m], sd[..., None, :m]  # [b, 1, m]
        lower = (self.cell_lower - mu) / sigma  # [b, cells, m]
        # an unbounded side stays inf without going through the division: inf / sigma would give
        # the gradient an inf times the zero that the inf's constant term passes back, a NaN
        bounded = torch.isfinite(self.cell_upper)
        upper = (torch.where(bounded, self.cell_upper, torch.zeros_like(self.cell_upper)) - mu) / sigma
        upper = torch.where(bounded, upper, torch.full_like(upper, math.inf))
        per_cell = (torch.log(sigma) + log_expected_excess(lower, upper)).sum(dim=-1)  # [b, cells]
        value = torch.logsumexp(per_cell, dim=-1)
        if self.constraints:
            value = value + log_ndtr(-mean[..., m:] / sd[..., m:]).sum(dim=-1)
        return value
