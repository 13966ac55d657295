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
estimate (``qLogExpectedHypervolumeImprovement``) multiplies that by its draws (the choice is
recorded in experiments/log/benchmarks.md, "Several objectives: the expected hypervolume
improvement in closed form"). Constraints multiply it by
the probability that every constraint output is ``<= 0``, as LogEI's constrained form does.

The cells of the exact decomposition grow with the front's points, the faster the more objectives
there are, and the acquisition's cost with them. From five objectives on, the region is cut by
BoTorch's approximate ``NondominatedPartitioning`` instead (:func:`partitioning_alpha`,
:func:`box_decomposition`): it leaves out each box of the region between the front's extremes
whose volume is below a fraction ``alpha`` of theirs, so the cells it keeps lie in the exact
region, the improvement it misses is that of the small boxes near the front, and their number is
bounded by ``alpha`` however many points the front has. ``alpha`` is BoTorch's own rule for its
hypervolume acquisitions (exact up to four objectives, 1e-3 for five, 1e-2 for six or more):
beyond four objectives the exact cells make a proposal impractically slow once the front has some
dozens of points. Up to four objectives the decomposition stays exact: on a small front the
approximate one cuts more cells than the exact one, not fewer (the choice is recorded in
experiments/log/benchmarks.md, "Several objectives: the partitioning for four or more").

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
objectives when they are shifted or scaled, so the search does not depend on their units (an
objective with no range yet, every observation equal in it, has no scale: its point is moved
by the margin in its own units, which a shift moves alike).

This module imports BoTorch only inside the functions that build an acquisition.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from npbandit.acquisition.constrained import check_constraints_argument, feasible
from npbandit.acquisition.pending import condition
from npbandit.validation import check_int

__all__ = ["REFERENCE_MARGIN", "check_objectives", "check_outputs", "pareto_front", "dominated_volume",
           "reference_point", "warp_objectives", "front_rows", "partitioning_alpha", "box_decomposition",
           "log_hypervolume_improvement", "log_expected_excess", "AnalyticLogEHVI"]

#: how far below the front's nadir the reference point lies, as a fraction of each objective's
#: observed range
REFERENCE_MARGIN = 0.1
#: an objective of no range has its reference point moved by the margin in its own units, or by the
#: margin times this many of its values' last places (their magnitude times the dtype's epsilon)
#: where that is more (beyond 2 ** 40 in float64): the margin of about 400 places, a width the point's
#: rounding leaves
_NO_RANGE_PLACES = 2**12


def check_objectives(objectives: Any) -> int:
    """``objectives`` checked: an int ``>= 1``, the number of objective columns."""
    if isinstance(objectives, bool) or not isinstance(objectives, int) or objectives < 1:
        raise ValueError(f"objectives must be the number of objective columns (an int >= 1), got {objectives!r}")
    return objectives


def check_outputs(Y: torch.Tensor, objectives: int, constraints: int = 0) -> None:
    """``ValueError`` unless ``Y`` is a finite ``[n >= 1, objectives + constraints]`` tensor (and
    the counts an int >= 1 and an int >= 0), naming what was expected."""
    width = check_objectives(objectives) + check_constraints_argument(constraints)
    if not isinstance(Y, torch.Tensor) or Y.ndim != 2 or Y.shape[-1] != width or not len(Y):
        shape = tuple(Y.shape) if isinstance(Y, torch.Tensor) else type(Y).__name__
        raise ValueError(f"the outputs must be [n >= 1, {objectives} + {constraints}] (the objectives, then the "
                         f"constraint values), got {shape}")
    if not bool(torch.isfinite(Y).all()):
        raise ValueError("the outputs must be finite (a failed evaluation is seen at the worst observed values)")


def pareto_front(Y: torch.Tensor, objectives: int, constraints: int = 0) -> torch.Tensor:
    """The feasible rows of ``Y`` (``[n, objectives + constraints]``, maximised) that no other
    feasible row dominates, their objective columns only: ``[p, objectives]``, ``p = 0`` when
    no row is feasible. Rows equal to an earlier one are kept once."""
    from botorch.utils.multi_objective.pareto import is_non_dominated

    check_outputs(Y, objectives, constraints)
    values = Y[feasible(Y, constraints, objectives), :objectives]
    if not len(values):
        return values
    return values[is_non_dominated(values, deduplicate=True)]


def dominated_volume(values: torch.Tensor, reference: torch.Tensor) -> float:
    """The hypervolume of ``values`` ``[n, m]`` (maximised): the volume their Pareto front
    dominates above ``reference`` ``[m]`` (BoTorch's ``Hypervolume``); 0 for no rows, and a
    point not above the reference in every objective adds nothing. What a result
    (:meth:`~npbandit.optimize_result.ParetoResult.hypervolume`) and the report measure."""
    from botorch.utils.multi_objective.hypervolume import Hypervolume
    from botorch.utils.multi_objective.pareto import is_non_dominated

    if not len(values):
        return 0.0
    front = values[is_non_dominated(values, deduplicate=True)]
    return float(Hypervolume(reference).compute(front))


def reference_point(Y: torch.Tensor, objectives: int, constraints: int = 0) -> torch.Tensor:
    """``[objectives]``: the reference point the hypervolume is measured from (the module
    docstring): the feasible front's nadir minus :data:`REFERENCE_MARGIN` times each objective's
    range over every row of ``Y``; with no feasible row, every row's worst value minus the same,
    so that any feasible point adds volume and the search is drawn to feasibility by the
    acquisition's feasibility weights. An objective with no range yet (every row equal in it,
    so no scale to take a share of) is moved by the margin in its own units, so that a shift of
    its values moves the point by the same shift; where its values are so large that this would
    be lost to rounding (beyond ``2 ** 40`` in float64), by the margin times ``2 ** 12`` of their
    last places, so that the box below the front keeps a width."""
    return _reference_point(Y[:, :objectives], pareto_front(Y, objectives, constraints))


def _reference_point(values: torch.Tensor, front: torch.Tensor) -> torch.Tensor:
    """:func:`reference_point` of the objective columns ``values`` ``[n, m]`` of checked outputs
    and their feasible front ``front`` ``[p, m]`` (:func:`pareto_front`), so that a caller that
    has the front already does not find it again."""
    if not len(front):
        front = values
    span = values.amax(dim=0) - values.amin(dim=0)
    unit = (values.abs().amax(dim=0) * (torch.finfo(values.dtype).eps * _NO_RANGE_PLACES)).clamp_min(1.0)
    span = torch.where(span > 0, span, unit)
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
    warped units (the choice is recorded in experiments/log/benchmarks.md, "Several objectives in
    NPSampler").

    Values of any finite magnitude are taken: each objective column is first multiplied by the
    power of two :func:`~npbandit.transforms.standardize.output_scale` gives it (values near
    ``1e160`` have a variance past float64's largest value). The power of two scales exactly and
    the standardisation divides it out again, so the warp of values that need no scaling, and of
    values a power of two apart, is the same to the last bit."""
    from npbandit.transforms.standardize import output_scale
    from npbandit.transforms.yeo_johnson import yeo_johnson_warp

    check_outputs(Y, objectives, constraints)
    values = Y[:, :objectives].detach().cpu().to(torch.float64)
    values = values * output_scale(values)
    out = Y.clone()
    for j in range(objectives):
        out[:, j] = torch.from_numpy(yeo_johnson_warp(values[:, j].numpy())).to(Y)
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
    check_outputs(Y, objectives, constraints)
    if limit is not None:
        check_int("limit", limit, minimum=1)
    n = len(Y)
    if limit is None or n <= limit:
        return torch.arange(n)
    from botorch.utils.multi_objective.pareto import is_non_dominated

    chosen: list[int] = []
    ok = feasible(Y, constraints, objectives)
    for group in (torch.nonzero(ok).reshape(-1), torch.nonzero(~ok).reshape(-1)):
        while len(group) and len(chosen) < limit:
            layer = is_non_dominated(Y[group, :objectives], deduplicate=False)
            top = group[layer]
            chosen += top[-(limit - len(chosen)):].tolist() if len(top) > limit - len(chosen) else top.tolist()
            group = group[~layer]
    return torch.sort(torch.tensor(chosen, dtype=torch.long)).values


def partitioning_alpha(objectives: int) -> float:
    """The approximation of the box decomposition of ``objectives`` objectives (an int >= 2): 0,
    exact, for two to four; else the fraction of the volume below which
    :func:`box_decomposition` leaves a box out, BoTorch's: 1e-3 for five, 1e-2 for six or more
    (the module docstring)."""
    objectives = check_objectives(objectives)
    if objectives < 2:
        raise ValueError(f"a hypervolume needs at least two objectives, got objectives={objectives}")
    if objectives <= 4:
        return 0.0
    return 1e-3 if objectives == 5 else 1e-2


def box_decomposition(reference: torch.Tensor, front: torch.Tensor, alpha: float | None = None):
    """The cells of the region above ``reference`` ``[m]`` that ``front`` ``[p, m]`` (maximised,
    non-dominated; ``p = 0`` allowed) does not dominate: BoTorch's exact
    ``FastNondominatedPartitioning`` where ``alpha`` is 0, its approximate
    ``NondominatedPartitioning(alpha=alpha)`` where it is positive; ``alpha=None`` takes
    :func:`partitioning_alpha` of the ``m`` objectives.

    Raises:
        ValueError: ``alpha`` is not ``None`` or a finite float in ``[0, 1)``."""
    from botorch.utils.multi_objective.box_decompositions.non_dominated import (
        FastNondominatedPartitioning,
        NondominatedPartitioning,
    )

    if alpha is None:
        alpha = partitioning_alpha(reference.shape[-1])
    elif isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha < 1:
        raise ValueError(f"alpha must be None or a float in [0, 1) (0: the exact decomposition), got {alpha!r}")
    if alpha == 0:
        return FastNondominatedPartitioning(ref_point=reference, Y=front)
    return NondominatedPartitioning(ref_point=reference, Y=front, alpha=float(alpha))


def log_hypervolume_improvement(model, outputs: torch.Tensor, objectives: int, constraints: int = 0,
                                pending: torch.Tensor | None = None) -> AnalyticLogEHVI:
    """The acquisition for one point (``acq(X)`` with ``X`` ``[..., 1, d]`` gives ``[...]``): the log
    expected hypervolume improvement of ``model``'s objective outputs ``0 .. objectives-1`` over
    the feasible front of ``outputs`` (``[n, objectives + constraints]``, what the model was
    built on), measured from :func:`reference_point` over the cells of :func:`box_decomposition`
    (exact for two to four objectives, approximate from five), with outputs ``objectives ..`` as
    constraints (feasible at ``<= 0``). ``pending`` ``[p, d]`` (points being evaluated, or
    ``None``): each believed at ``model``'s mean there, the model conditioned on it and the
    values taken as rows of ``outputs`` for the front, not for the reference point (the module
    docstring); the acquisition's ``model`` is then the conditioned one. Deterministic: one model
    gives one acquisition."""
    objectives = check_objectives(objectives)
    if objectives < 2:
        raise ValueError(f"a hypervolume needs at least two objectives, got objectives={objectives} (one objective "
                         f"is searched by LogEI)")
    outputs = torch.as_tensor(outputs, dtype=torch.float64)
    front = pareto_front(outputs, objectives, constraints)
    ref = _reference_point(outputs[:, :objectives], front)  # the study's units: the observed rows'
    if pending is not None and len(pending):
        pending = torch.as_tensor(pending, dtype=torch.float64)
        with torch.no_grad():
            believed = model.posterior(pending).mean.reshape(len(pending), -1).to(outputs)
        check_outputs(believed, objectives, constraints)
        model = condition(model, pending, believed)
        # the front of the observed and believed rows together: a row dominated among the observed
        # rows is dominated among them all, so the observed front stands for them (it keeps their
        # order, each value at its first row, as the front of every row would)
        believed = believed[feasible(believed, constraints, objectives), :objectives]
        if len(believed):
            front = pareto_front(torch.cat([front, believed]), objectives)
    return AnalyticLogEHVI(model, box_decomposition(ref, front), objectives, constraints)


def log_expected_excess(lower: torch.Tensor, upper: torch.Tensor) -> torch.Tensor:
    """``log E[(min(Z, upper) - lower)^+]`` for a standard normal ``Z``, elementwise
    (``upper`` may be ``inf``): ``log(h(lower) - h(upper))`` with ``h(z) = E[(Z - z)^+] =
    phi(z) - z Phi(-z)``, the integral of ``P(Z > t)`` over ``[lower, upper]``, computed in log
    space so that it stays finite where the values underflow. ``-inf`` (gradient 0) where
    ``upper <= lower``, a cell of no width; where the cell is so narrow that ``h(upper) /
    h(lower)`` rounds to within :func:`_narrow` of 1, its width times ``P(Z > t)`` at its
    midpoint (the difference of the ``h`` would have lost its digits to rounding). NaN where
    either bound is NaN."""
    log_lower = _log_h(lower)
    ratio = _log_h(upper) - log_lower  # log(h(upper) / h(lower)) <= 0; -inf for an unbounded cell
    narrow = ~(ratio <= -_narrow(ratio.dtype))  # NaN bounds take the exact branch, which keeps the NaN
    nan = torch.isnan(ratio)
    narrow = narrow & ~nan
    exact = log_lower + _log1mexp_safe(torch.where(narrow, -torch.ones_like(ratio), ratio))
    width = upper - lower
    some = narrow & (width > 0)
    # the midpoint rule: its relative error is about (width * z)^2 / 24, below _narrow's cube
    short = torch.log(torch.where(some, width, torch.ones_like(width))) + _log_sf(
        torch.where(some, (lower + upper) / 2, torch.zeros_like(width)))
    return torch.where(narrow, torch.where(some, short, torch.full_like(short, -math.inf)), exact)


def _narrow(dtype: torch.dtype) -> float:
    """The ``|log(h(upper) / h(lower))|`` below which a cell is integrated by its midpoint: the
    cube root of the dtype's epsilon, where the midpoint rule's error (the square of that log,
    over 24) and the rounding of the exact difference (the epsilon times ``|log h|``, over that
    log) are both near the epsilon's two thirds power."""
    return torch.finfo(dtype).eps ** (1 / 3)


def _log_sf(z: torch.Tensor) -> torch.Tensor:
    """``log P(Z > z)``."""
    from botorch.utils.probability.utils import log_ndtr

    return log_ndtr(-z)


def _log_h(z: torch.Tensor) -> torch.Tensor:
    """``log h(z)``, ``h(z) = phi(z) - z Phi(-z) > 0`` (``-inf`` at ``z = inf``, NaN at NaN).
    Below ``z = 1`` ``h`` is at least ``h(1) > 0.08`` and is computed as it reads; above, as
    ``phi(z) (1 - z Phi(-z) / phi(z))`` with the Mills ratio ``Phi(-z) / phi(z) = sqrt(pi / 2)
    erfcx(z / sqrt(2))``, which ``log_erfcx`` keeps exact where ``phi`` underflows; beyond
    :func:`_tail_start`, where ``1 - z Phi(-z) / phi(z)`` (about ``1 / z^2``) would lose its
    digits to rounding, as ``phi(z) / z^2`` times the asymptotic series ``1 - 3 / z^2 + 15 / z^4
    - ...`` (five terms). Each branch sees a safe stand-in input where another is taken, so none
    puts a NaN in the gradient."""
    from botorch.utils.probability.utils import log_erfcx, log_phi

    small = z < 1
    tail = (z > _tail_start(z.dtype)) & (z < math.inf)
    near = torch.where(small, z, torch.zeros_like(z))
    left = torch.log(torch.exp(-0.5 * near**2) / math.sqrt(2 * math.pi) - near * torch.special.ndtr(-near))
    mid = torch.where(small | tail | ~torch.isfinite(z), 2 * torch.ones_like(z), z)
    middle = log_phi(mid) + _log1mexp_safe(torch.log(mid) + 0.5 * math.log(math.pi / 2) + log_erfcx(mid / math.sqrt(2)))
    far = torch.where(tail, z, 100 * torch.ones_like(z))
    w = far**-2
    series = w * (-3 + w * (15 + w * (-105 + w * (945 - 10395 * w))))
    right = log_phi(far) + 2 * torch.log(w.sqrt()) + torch.log1p(series)
    out = torch.where(small, left, torch.where(tail, right, middle))
    out = torch.where(z == math.inf, torch.full_like(z, -math.inf), out)
    return torch.where(torch.isnan(z), z, out)


def _tail_start(dtype: torch.dtype) -> float:
    """Where :func:`_log_h` takes the asymptotic series: the ``z`` at which its truncation
    (the next term, ``135135 / z^12``) equals the rounding of ``1 - z Phi(-z) / phi(z)``
    (the epsilon over ``1 / z^2``): about 30 in float64, 7 in float32."""
    return (135135 / torch.finfo(dtype).eps) ** (1 / 14)


def _log1mexp_safe(x: torch.Tensor) -> torch.Tensor:
    """``log(1 - exp(x))`` for ``x < 0`` (``0`` at ``x = -inf``)."""
    from botorch.utils.safe_math import log1mexp

    unbounded = torch.isinf(x)
    return torch.where(unbounded, torch.zeros_like(x), log1mexp(torch.where(unbounded, -torch.ones_like(x), x)))


class AnalyticLogEHVI(torch.nn.Module):
    """The log expected hypervolume improvement of one point in closed form, for a model whose
    outputs are independent Gaussians (an ``NPModel``; a model list): over the cells of a
    partitioning of the region the front does not dominate (BoTorch's box decomposition),
    ``EHVI(x) = sum over cells of prod_j sigma_j E[(min(Z, u_j') - l_j')^+]`` with each bound
    standardised by the output's mean and deviation, so ``log EHVI`` is a ``logsumexp`` over
    cells of sums of :func:`log_expected_excess`; times the probability that every constraint
    output is ``<= 0``. No Monte Carlo draws: its cost is the cells times the outputs, where a
    Monte Carlo estimate multiplies that by its draws.

    Raises:
        ValueError: ``model`` has not ``objectives + constraints`` outputs (its ``num_outputs``),
            or ``partitioning``'s cells are not of ``objectives`` dimensions."""

    def __init__(self, model, partitioning, objectives: int, constraints: int = 0) -> None:
        super().__init__()
        outputs = getattr(model, "num_outputs", None)
        if outputs is not None and outputs != objectives + constraints:
            raise ValueError(f"model must have {objectives} + {constraints} outputs (the objectives, then the "
                             f"constraints), got {outputs}")
        bounds = partitioning.get_hypercell_bounds()  # [2, cells, m], maximised, upper possibly inf
        if bounds.shape[-1] != objectives:
            raise ValueError(f"partitioning must cut the space of the {objectives} objectives, got cells of "
                             f"{bounds.shape[-1]}")
        self.model = model
        self.objectives = objectives
        self.constraints = constraints
        self.register_buffer("cell_lower", bounds[0])
        self.register_buffer("cell_upper", bounds[1])

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """``X`` ``[..., 1, d]`` (one point per t-batch) -> ``[...]``.

        Raises:
            ValueError: ``X`` is not ``[..., 1, d]``: ``q > 1`` points would each be judged on
                their own, and ``optimize_acqf`` would sum those values as if they were joint."""
        from botorch.utils.probability.utils import log_ndtr

        if X.ndim < 2 or X.shape[-2] != 1:
            raise ValueError(f"X must be [..., 1, d] (one point per t-batch), got {list(X.shape)}: the closed form "
                             f"is the improvement of one point (for q points jointly: BoTorch's "
                             f"qLogExpectedHypervolumeImprovement)")
        posterior = self.model.posterior(X)  # X [..., 1, d]
        mean = posterior.mean.squeeze(-2)  # [..., M]
        sd = posterior.variance.clamp_min(1e-30).sqrt().squeeze(-2)
        m = self.objectives
        mu, sigma = mean[..., None, :m], sd[..., None, :m]  # [..., 1, m]
        lower = (self.cell_lower - mu) / sigma  # [..., cells, m]
        # an unbounded side stays inf without going through the division: inf / sigma would give
        # the gradient an inf times the zero that the inf's constant term passes back, a NaN
        bounded = torch.isfinite(self.cell_upper)
        upper = (torch.where(bounded, self.cell_upper, torch.zeros_like(self.cell_upper)) - mu) / sigma
        upper = torch.where(bounded, upper, torch.full_like(upper, math.inf))
        per_cell = (torch.log(sigma) + log_expected_excess(lower, upper)).sum(dim=-1)  # [..., cells]
        value = torch.logsumexp(per_cell, dim=-1)
        if self.constraints:
            value = value + log_ndtr(-mean[..., m:] / sd[..., m:]).sum(dim=-1)
        return value
