"""The proposal step: the next point(s) to evaluate, the maximiser of an acquisition.

:func:`propose` is the one proposal step every NP/GP route shares (``BOPolicy``, and so
``optimize``; ``npbandit.integrations.optuna.NPSampler``); :func:`propose_in_region` is
the same step inside a trust region's box. Points still being evaluated enter through a
:class:`~npbandit.acquisition.pending.PendingStrategy`. The acquisition each step builds is
maximised, away from the evaluated points, in :mod:`npbandit.acquisition.maximise`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from npbandit.acquisition.constrained import (
    best_feasible,
    check_constraints_argument,
    constrained_log_ei,
    incumbent,
)
from npbandit.acquisition.maximise import REPEAT_DISTANCE, maximise_batch, maximise_point, repeats
from npbandit.acquisition.mixed import TypedCube, typed_cube
from npbandit.acquisition.multi_objective import check_objectives, check_outputs, log_hypervolume_improvement
from npbandit.acquisition.optimizers import (
    AcquisitionOptimizer,
    check_acq_optimizer,
)
from npbandit.acquisition.pending import (
    DEFAULT_LIAR,
    ConstantLiar,
    KrigingBeliever,
    LocalPenalisation,
    PendingStrategy,
    pending_strategy,
)
from npbandit.acquisition.pinned import Pinned, pin
from npbandit.space.linear_constraints import Polytope

# REPEAT_DISTANCE (npbandit.acquisition.maximise) is re-exported: this module was its home
__all__ = ["propose", "propose_in_region", "region_view", "searched_box", "RegionView", "nearest", "SearchRegion",
           "ACQUISITIONS", "REPEAT_DISTANCE", "REPEATED_WARNING", "warn_if_repeated"]

#: the acquisitions :func:`propose` maximises (see ``BOPolicy``)
ACQUISITIONS = ("logei", "ucb", "thompson", "marginal-thompson", "qlognei")


def propose(model, acquisition: str, *, dim: int, best_f: float | torch.Tensor | None, seed: int, beta: float = 2.0,
            num_restarts: int = 10, raw_samples: int = 512, thompson_candidates: int = 2048,
            pending: torch.Tensor | None = None, pending_strategy: PendingStrategy | None = None,
            outputs: torch.Tensor | None = None, pending_value: float | torch.Tensor | None = None,
            observed: torch.Tensor | None = None, bounds: torch.Tensor | None = None, q: int = 1,
            penalise_pending: bool = False, believe_pending: bool = False,
            snap: Callable[[torch.Tensor], torch.Tensor] | None = None, space: Any = None,
            constraints: int = 0, acq_optimizer: AcquisitionOptimizer | None = None,
            objectives: int = 1, polytope: Polytope | None = None, pinned: Pinned | None = None) -> np.ndarray:
    """The next point to evaluate: the maximiser of ``acquisition`` on ``model`` over the unit cube.

    Args:
        model: a BoTorch model on ``[0, 1]^d`` inputs whose output is maximised
            (``NPModel`` or ``SingleTaskGP``).
        acquisition: one of :data:`ACQUISITIONS` (see ``BOPolicy``).
        dim: ``d``, the number of inputs.
        best_f: the best observed output, for LogEI (not read with ``constraints``: the best
            feasible one of ``outputs`` is, and ``None`` may be given).
        seed: seeds the acquisition optimiser (or the Thompson candidates),
            so the same model and seed give the same point.
        pending: ``[p, d]`` points being evaluated now (an Optuna trial still running,
            an evaluation in flight with ``optimize(batch_size=q)``), or ``None``. They enter
            the proposal as ``pending_strategy`` says, while ``best_f`` stays the best
            *observed* value.
        pending_strategy: a :class:`~npbandit.acquisition.pending.PendingStrategy`
            (:class:`ConstantLiar`, :class:`KrigingBeliever`, :class:`LocalPenalisation`);
            required with a non-empty ``pending`` unless one of the keyword forms below is
            given instead (not both).
        outputs: ``[n, 1]`` the outputs the model was built on (maximised), for a
            :class:`ConstantLiar` rule such as ``"mean"``; ``[n, 1 + k]`` with ``constraints``
            (required then).
        pending_value: keyword form of ``ConstantLiar``: the value pending points are
            believed at, in the model's output units (``liar_value`` of the observed outputs).
        believe_pending: keyword form of ``KrigingBeliever()``: each pending point believed at
            the model's own predictive mean there; the pending points also join ``observed``.
        penalise_pending: keyword form of ``LocalPenalisation()``: the model left as it is and
            LogEI damped around each pending point (``"logei"`` only).
        observed: ``[n, d]`` points already evaluated, or ``None``. Given, LogEI / UCB never
            return a point within :data:`REPEAT_DISTANCE` of one of them: the best restart that
            lands farther away is taken, or, when every restart came back to an observation,
            the acquisition's best among ``raw_samples`` Sobol points farther away. On a
            deterministic objective a repeat teaches nothing, yet an NP that stays unsure
            at its observations keeps expected improvement high there.
        snap: maps points ``[k, d]`` of the cube to where they would be evaluated (a grid of
            stepped parameters); the repeat check then compares those, so a proposal that
            rounds onto an observed grid point counts as a repeat. A plain function is used
            by the repeat check only; a :class:`~npbandit.space.SearchSpace`'s own
            ``space.snap`` counts as ``space=space``.
        space: the :class:`~npbandit.space.SearchSpace` whose unit cube ``[0, 1]^d`` is
            searched (or a :class:`~npbandit.acquisition.mixed.TypedCube` of it), or ``None``.
            With integer, stepped or choice parameters the acquisition is judged where the
            objective would be evaluated (:mod:`npbandit.acquisition.mixed`): the relaxation's
            restarts are snapped, improved by a discrete local search and the best one's
            continuous columns re-optimised; Thompson candidates are snapped. The point
            returned is then a fixed point of ``space.snap``. A continuous space changes
            nothing.
        bounds: ``[2, d]`` lower and upper corners of the box searched, inside the unit
            cube (``None``: the whole cube). The model may know points outside it.
        q: points proposed together, for ``"qlognei"`` (1 for the other acquisitions).
            ``qLogNoisyExpectedImprovement`` is maximised jointly over the ``q`` points,
            its baseline the model's training inputs (pending points included); no
            repeat check (``observed`` is not used): the batch is what the acquisition
            makes of the model's joint.
        constraints: ``k``, the number of outcome constraints: the model's outputs (and
            ``outputs``' columns) ``1 .. k`` are constraint values, feasible at ``<= 0``,
            beside the objective's output 0 (:mod:`npbandit.acquisition.constrained`).
            ``"logei"`` then maximises expected improvement over the best feasible
            observation weighted by the probability of feasibility (the probability of
            feasibility alone while no observation is feasible), ``"qlognei"`` takes them as
            constraints of its Monte Carlo improvement; other acquisitions are refused.

        acq_optimizer: how LogEI / UCB are maximised in the box
            (:mod:`npbandit.acquisition.optimizers`): ``None`` (default) is
            ``GradientRestarts(num_restarts, raw_samples)``, BoTorch's ``optimize_acqf``;
            ``CandidateSearch()`` scores batches of points without gradients. Not used by
            the Thompson acquisitions (their own candidates) nor ``"qlognei"`` (BoTorch's
            joint optimisation of the batch).
        objectives: ``m``, the number of objectives: the model's outputs (and ``outputs``'
            columns) ``0 .. m-1``, each maximised, the constraint values after them. With
            ``m >= 2`` (``"logei"`` only) the acquisition is the log expected hypervolume
            improvement over the observed feasible Pareto front
            (:mod:`npbandit.acquisition.multi_objective`), ``outputs`` (``[n, m + constraints]``)
            is required, ``best_f`` is not read, and ``pending`` points are believed at the
            model's mean there, each output (the kriging believer: the model conditioned on them,
            their believed values on the front; they join ``observed`` too, so none is proposed
            again), so no pending strategy or keyword form is taken.
        polytope: linear input constraints on the cube
            (:class:`~npbandit.space.linear_constraints.Polytope`, ``optimize``'s
            ``parameter_constraints``), or ``None``: every point returned satisfies them
            (its ``holds``). The acquisition optimiser searches inside them (its ``polytope``
            keyword), ``"qlognei"`` passes them to ``optimize_acqf`` as
            ``inequality_constraints``, and Thompson candidates and the repeat check's fallback
            pool are drawn inside them. With a mixed ``space`` they may constrain its continuous
            columns only (what ``LinearConstraints`` allows), which its discrete moves leave as they are.
        pinned: columns held at given values (:class:`~npbandit.acquisition.pinned.Pinned`, inside
            ``bounds``; one trial with some parameters fixed), or ``None``: the acquisition is
            maximised over the other columns, every candidate judged with them set, and the point
            returned has them exactly (``"qlognei"``: ``optimize_acqf``'s ``fixed_features``).

    Returns:
        the point, numpy float64 of shape ``[d]``; ``[q, d]`` for ``"qlognei"``.
    """
    cube = typed_cube(space, snap, dim)
    if cube is not None:
        snap = None if cube.continuous else cube.snap
        cube = None if cube.continuous else cube
    if acquisition not in ACQUISITIONS:
        raise ValueError(f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r}")
    check_constraints_argument(constraints, acquisition)
    objectives = check_objectives(objectives)
    if objectives > 1 and acquisition != "logei":
        raise ValueError(f"several objectives are searched by the log expected hypervolume improvement, "
                         f"acquisition 'logei'; got {acquisition!r}")
    if constraints or objectives > 1:
        if outputs is None:
            raise ValueError(f"outputs (the observations' objective and constraint values, [n, {objectives} + "
                             f"constraints]) are required with constraints or several objectives")
        outputs = torch.as_tensor(outputs, dtype=torch.float64)
        if objectives > 1:
            check_outputs(outputs, objectives, constraints)
        else:
            best_feasible(outputs, constraints)  # checks the shape
    if not isinstance(q, int) or isinstance(q, bool) or q < 1 or (q > 1 and acquisition != "qlognei"):
        raise ValueError(f"q must be a positive int, and 1 unless acquisition is 'qlognei'; got {q!r}")
    if pending_strategy is not None and not isinstance(pending_strategy, PendingStrategy):
        raise TypeError(f"pending_strategy must be a PendingStrategy or None, got {type(pending_strategy).__name__}")
    strategy = None
    if pending is not None:
        pending = torch.as_tensor(pending, dtype=torch.float64)
        if pending.ndim != 2 or pending.shape[-1] != dim:
            raise ValueError(f"pending must have shape [p, {dim}], got {tuple(pending.shape)}")
        if len(pending) and objectives > 1:
            if pending_strategy is not None or pending_value is not None or penalise_pending or believe_pending:
                raise ValueError("with several objectives the pending points are believed at the model's mean "
                                 "(the kriging believer, on every output): give no pending_strategy (nor "
                                 "pending_value, penalise_pending, believe_pending)")
        elif len(pending):
            strategy = _strategy(acquisition, pending_strategy, pending_value, penalise_pending, believe_pending)
            model, observed = strategy.believe(model, pending, outputs=outputs, observed=observed)
        elif penalise_pending and believe_pending:
            raise ValueError("penalise_pending and believe_pending exclude each other (one rule for pending points)")
    # optimize_acqf's seed covers its raw samples but not the choice among them (torch.multinomial
    # on the global generator), and a posterior draw uses the global generator too: seed it here,
    # so the point depends on (model, seed) alone and the caller's generator is left as it was
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if observed is not None:
            observed = torch.as_tensor(observed, dtype=torch.float64)
            if observed.ndim != 2 or observed.shape[-1] != dim:
                raise ValueError(f"observed must have shape [n, {dim}], got {tuple(observed.shape)}")
        if bounds is None:
            bounds = torch.stack([torch.zeros(dim), torch.ones(dim)]).to(torch.float64)
        bounds = torch.as_tensor(bounds, dtype=torch.float64)
        if bounds.shape != (2, dim) or not ((0 <= bounds[0]) & (bounds[0] < bounds[1]) & (bounds[1] <= 1)).all():
            raise ValueError(f"bounds must be [2, {dim}] corners with 0 <= lower < upper <= 1, got {bounds.tolist()}")
        if pinned is not None and not (bool((pinned.columns < dim).all()) and bool(
                ((bounds[0, pinned.columns] <= pinned.values) & (pinned.values <= bounds[1, pinned.columns])).all())):
            raise ValueError(f"pinned columns must lie in the box bounds, got {pinned.features()}")
        if objectives > 1:
            acq = log_hypervolume_improvement(model, outputs, objectives, constraints, pending)
            if observed is not None and pending is not None and len(pending):
                # a point under way is no new point either (one objective's default liar adds them alike)
                observed = torch.cat([torch.as_tensor(observed, dtype=torch.float64), pending])
            return pin(pinned, maximise_point(model, acquisition, dim, None, seed, beta, num_restarts, raw_samples,
                                              thompson_candidates, observed, bounds, None, snap, cube, acq,
                                              check_acq_optimizer("acq_optimizer", acq_optimizer), polytope, pinned))
        if acquisition == "qlognei":
            points = maximise_batch(model, q, seed, num_restarts, raw_samples, bounds, constraints, polytope, pinned)
            # the batch maximised jointly over the relaxation, each point then snapped
            return pin(pinned, points if cube is None else cube.snap(torch.as_tensor(points)).numpy())
        penalty = None
        if strategy is not None:
            top = best_f
            if constraints:  # the penalty's M: the best feasible value (the best value while none is)
                top = best_feasible(outputs, constraints)
                top = outputs[:, 0].max() if top is None else top
            penalty = strategy.penalise(model, pending, best_f=top, bounds=bounds, seed=seed)
        acq = constrained_log_ei(model, outputs, constraints) if constraints else None
        optimizer = check_acq_optimizer("acq_optimizer", acq_optimizer)
        return pin(pinned, maximise_point(model, acquisition, dim, best_f, seed, beta, num_restarts, raw_samples,
                                          thompson_candidates, observed, bounds, penalty, snap, cube, acq, optimizer,
                                          polytope, pinned))


def _strategy(acquisition: str, strategy: PendingStrategy | None, pending_value: Any, penalise: bool,
              believe: bool) -> PendingStrategy:
    """The strategy for a non-empty ``pending``: the one given, or the one the keyword form names."""
    if strategy is not None:
        if pending_value is not None or penalise or believe:
            raise ValueError("give pending_strategy or its keyword form (pending_value, penalise_pending, "
                             "believe_pending), not both")
        strategy.check(acquisition)
        return strategy
    if penalise and believe:
        raise ValueError("penalise_pending and believe_pending exclude each other (one rule for pending points)")
    if penalise:
        if acquisition != "logei":
            raise ValueError(f"penalise_pending needs acquisition 'logei', got {acquisition!r}")
        if pending_value is not None:
            raise ValueError("pending_value is not used with penalise_pending (pending points are believed at "
                             "no value)")
        return LocalPenalisation()
    if believe:
        if pending_value is not None:
            raise ValueError("pending_value is not used with believe_pending (each pending point is believed at "
                             "the model's mean there)")
        return KrigingBeliever()
    if pending_value is None:
        raise ValueError("pending_value is required with pending points (or a pending_strategy): the value they are "
                         "believed at (liar_value of the observed outputs)")
    value = torch.as_tensor(pending_value, dtype=torch.float64).reshape(-1)
    if value.numel() != 1 or not torch.isfinite(value).all():
        raise ValueError(f"pending_value must be one finite number, got {pending_value!r}")
    return ConstantLiar(float(value))


class SearchRegion(Protocol):
    """What :func:`propose_in_region` needs of a region (``npbandit.policies.trust_region.TrustRegion``)."""

    context_factor: float

    def box(self, center: torch.Tensor, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]: ...

    def to_unit(self, X: torch.Tensor, lower: torch.Tensor,
                upper: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]: ...


def propose_in_region(region: SearchRegion, X: torch.Tensor, Y: torch.Tensor, build_model, acquisition: str, *,
                      seed: int, pending: torch.Tensor | None = None, avoid_repeats: bool = True,
                      liar: str | PendingStrategy = DEFAULT_LIAR,
                      snap: Callable[[torch.Tensor], torch.Tensor] | None = None, space: Any = None,
                      max_context: int | None = None, constraints: int = 0, pinned: Pinned | None = None,
                      **settings: Any) -> np.ndarray:
    """:func:`propose` inside ``region``'s box around the best of ``X`` ``[n, d]`` (values
    ``Y`` ``[n, 1]``, maximised): the model, ``build_model(X_box, Y_box)``, sees only the
    observations in the box ``region.context_factor`` times as wide around the same
    centre, mapped onto the unit cube (:func:`region_view`), and so do the pending points;
    the repeat check compares the proposal with every observation in that cube's frame (a
    point snapped onto a grid can leave the box, onto an observation the model does not
    see), at :data:`REPEAT_DISTANCE` of the model's cube wherever it is made, so the region
    step and the check after it agree on what a repeat is; the proposal, searched for in the
    middle of that cube, is mapped back. The one trust-region step of ``BOPolicy`` and
    ``NPSampler``. ``liar``: a :class:`PendingStrategy`, or its name, for the
    pending points, its constants taken from the outputs in the model's box. ``settings``:
    ``propose``'s ``beta``, ``num_restarts``, ``raw_samples``, ``thompson_candidates``, ``q``,
    ``acq_optimizer``.
    ``constraints``: as :func:`propose`'s, ``Y`` then ``[n, 1 + constraints]``; the region
    centres on the best feasible observation (with none feasible, on the one that violates
    the constraints least, :func:`~npbandit.acquisition.constrained.incumbent`).
    ``snap``, ``space``: as :func:`propose`'s, on the whole unit cube (the space's moves
    limited to values the searched box reaches). ``max_context``: the most observations the
    model sees (``None``: all in the box); when more lie in the box, the ``max_context``
    nearest the incumbent (:func:`nearest`), so a long run gives a network no more context
    points than it was trained with and the model keeps to the neighbourhood the region is
    refining. Returns ``[d]`` in the unit cube (``[q, d]`` for ``"qlognei"``; with a mixed
    ``space``, a fixed point of its snap: the continuous columns inside the box searched, the
    others where the snap puts them). With a mixed ``space`` both boxes are widened on the
    discrete parameters' columns to reach every value one move from the incumbent's
    (:meth:`~npbandit.acquisition.mixed.TypedCube.reaching_one_move`): a cube around a one-hot
    point would otherwise hold one choice only. With ``avoid_repeats`` and a ``snap`` or a
    discrete ``space``, a LogEI / UCB proposal that still repeats an evaluated point (every
    grid point the region reaches has been evaluated) is replaced by :func:`propose`'s over the
    whole cube, the model on the ``max_context`` observations nearest the incumbent.
    ``settings``' ``polytope`` (linear input constraints on the whole cube) is searched in the
    model's frame, cut to the box searched; where the two do not meet in a set of positive
    volume (an incumbent given on a face, not proposed inside the search margin), the proposal
    is :func:`propose`'s over the whole cube inside the polytope, the model on the
    ``max_context`` observations nearest the incumbent. ``pinned``: columns held at given values
    of the whole cube (:func:`propose`'s), which may lie outside the region: both boxes are
    stretched on those columns alone to reach them, and the point returned has them exactly."""
    strategy = pending_strategy(liar)
    polytope = settings.pop("polytope", None)
    cube = typed_cube(space, snap, X.shape[-1])
    if cube is not None and cube.continuous:
        snap, cube = None, None
    whole_pending, whole_snap = pending, snap if cube is None else cube.snap
    view = region_view(region, X, Y, max_context, cube=cube, constraints=constraints, pinned=pinned)
    lower, upper = searched_box(region, view.center, cube, pinned)
    seen_lower, seen_upper, span, X_box, Y_box = view.lower, view.upper, view.span, view.X, view.Y
    if pending is not None:
        pending = region.to_unit(pending, seen_lower, seen_upper)[0]
    bounds = torch.stack([(lower - seen_lower) / span, (upper - seen_lower) / span]).clamp(0.0, 1.0)
    local_pinned = None if pinned is None else pinned.in_frame(seen_lower, span, bounds)

    def snap_in_frame(points: torch.Tensor) -> torch.Tensor:  # the whole cube's snap, seen in the model's frame
        return (whole_snap(seen_lower + points * span) - seen_lower) / span

    # the repeat check in the model's cube, through the whole cube's grid (a mixed space's cube snaps itself)
    local_snap = snap_in_frame if snap is not None and cube is None else None
    X_local = (X - seen_lower) / span  # every observation in the model's frame, outside its box too
    local = None if polytope is None else polytope.in_frame(seen_lower, span)
    if local is not None and local.interior(bounds) is None:  # the region misses the constraints' polytope
        keep = torch.arange(len(X)) if max_context is None else nearest(X, view.center, max_context)
        return propose(build_model(X[keep], Y[keep]), acquisition, dim=X.shape[-1],
                       best_f=None if constraints else Y[keep].max(), seed=seed, pending=whole_pending,
                       pending_strategy=strategy, outputs=Y[keep], observed=X if avoid_repeats else None,
                       snap=snap, constraints=constraints, polytope=polytope, pinned=pinned, **settings)
    point = propose(build_model(X_box, Y_box), acquisition, dim=X.shape[-1],
                    best_f=None if constraints else Y_box.max(), seed=seed, pending=pending,
                    pending_strategy=strategy, outputs=Y_box, observed=X_local if avoid_repeats else None,
                    bounds=bounds, snap=local_snap, space=None if cube is None else cube.through(seen_lower, span),
                    constraints=constraints, polytope=local, pinned=local_pinned, **settings)
    whole = seen_lower + torch.as_tensor(point) * span
    # the optimiser's point is inside the model's box (checked in maximise_point); mapped back it may
    # leave the box searched by rounding only, which the clamp below moves onto its faces
    if cube is None:
        out = whole.clamp(lower, upper).numpy()
    else:
        # a grid value's centre, or a choice's one-hot point, may lie outside the box searched
        # although the box reaches it: only the continuous columns are held to the box
        out = cube.snap(torch.where(cube.continuous_columns, whole.clamp(lower, upper), whole)).numpy()
    out = pin(pinned, out)  # exactly, not through the frame's arithmetic
    if not (avoid_repeats and whole_snap is not None and acquisition in ("logei", "ucb") and out.ndim == 1
            and repeats((torch.as_tensor(out) - seen_lower) / span, X_local, snap_in_frame)):
        return out
    # every grid point the region reaches has been evaluated (a small discrete space): the
    # repeat check is kept by searching the whole cube, the model on the observations nearest
    # the incumbent. A continuous region repeats only once it has shrunk below the repeat
    # distance, which the region's own restart rule handles.
    keep = torch.arange(len(X)) if max_context is None else nearest(X, view.center, max_context)
    X_near, Y_near = X[keep], Y[keep]
    out = propose(build_model(X_near, Y_near), acquisition, dim=X.shape[-1],
                  best_f=None if constraints else Y_near.max(), seed=seed, pending=whole_pending,
                  pending_strategy=strategy, outputs=Y_near, observed=X, snap=snap if cube is None else None,
                  space=cube, constraints=constraints, polytope=polytope, pinned=pinned, **settings)
    warn_if_repeated(out, X, whole_snap)
    return out


#: what :func:`warn_if_repeated` says (a caller that gives it once per run matches it)
REPEATED_WARNING = ("every point of the discrete search space that the search reaches has been evaluated: the proposal "
                    "repeats an evaluated point (avoid_repeats cannot hold; a smaller budget, or a finer grid, avoids "
                    "the repeats)")


def warn_if_repeated(point: np.ndarray, observed: torch.Tensor,
                     snap: Callable[[torch.Tensor], torch.Tensor] | None) -> None:
    """A ``RuntimeWarning`` when a proposal made with the repeat check, ``point`` ``[d]`` (a
    batch ``[q, d]`` is not checked), still repeats a row of ``observed`` ``[n, d]`` (the
    evaluated points) on the grid of ``snap``: every point of the discrete space the search
    reaches has been evaluated. Nothing without ``snap`` (a continuous space: the check finds
    a new point there). Said to the caller's caller (the policy's)."""
    if snap is not None and np.ndim(point) == 1 and repeats(torch.as_tensor(point), observed, snap):
        warnings.warn(REPEATED_WARNING, RuntimeWarning, stacklevel=3)


@dataclass(frozen=True)
class RegionView:
    """What the model of a trust region's proposal sees (:func:`region_view`).

    Attributes:
        center: ``[d]`` the incumbent, the best (feasible) observation.
        lower, upper, span: ``[d]`` the corners and the sides of the box the model sees (the
            region's box ``context_factor`` times as wide around ``center``): its unit cube.
        X: ``[m, d]`` the observations in that box, mapped onto its unit cube.
        Y: ``[m, 1 + constraints]`` their outputs.
        rows: ``[m]`` (long) the row of each among the observations given.
    """

    center: torch.Tensor
    lower: torch.Tensor
    upper: torch.Tensor
    span: torch.Tensor
    X: torch.Tensor
    Y: torch.Tensor
    rows: torch.Tensor


def searched_box(region: SearchRegion, center: torch.Tensor, cube: TypedCube | None = None,
                 pinned: Pinned | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The box a proposal in ``region`` searches around ``center`` ``[d]``: lower and upper
    corners ``[d]`` each, widened on a mixed ``cube``'s discrete columns so that every value
    one move from the incumbent's stays in reach (:meth:`TypedCube.reaching_one_move`), and
    stretched on ``pinned``'s columns to hold their values."""
    lower, upper = region.box(center)
    if cube is not None:
        lower, upper = cube.reaching_one_move(lower, upper, center)
    return (lower, upper) if pinned is None else pinned.reach(lower, upper)


def region_view(region: SearchRegion, X: torch.Tensor, Y: torch.Tensor, max_context: int | None = None,
                cube: TypedCube | None = None, constraints: int = 0, pinned: Pinned | None = None) -> RegionView:
    """The observations ``X [n, d]``, ``Y [n, 1 + constraints]`` (maximised) as the model of a
    proposal in ``region`` sees them: those in the box ``region.context_factor`` times as wide
    as the region around the incumbent (the best observation; with ``constraints``, the best
    feasible one: :func:`~npbandit.acquisition.constrained.incumbent`; with a mixed ``cube``,
    the box widened to reach every discrete value one move from the incumbent's:
    :meth:`TypedCube.reaching_one_move`), mapped onto its unit cube; of more than
    ``max_context`` (``None``: no limit), the ``max_context`` nearest the incumbent
    (:func:`nearest`); with ``pinned``, the box stretched on its columns to hold their values.
    What :func:`propose_in_region` builds its model on, and the box and
    observations a coordinate subspace's proposal projects onto its coordinates
    (:class:`~npbandit.acquisition.subspace.CoordinateSearch`)."""
    if max_context is not None and (not isinstance(max_context, int) or isinstance(max_context, bool)
                                    or max_context < 1):
        raise ValueError(f"max_context must be a positive int or None, got {max_context!r}")
    center = X[incumbent(Y, constraints)]
    seen_lower, seen_upper = region.box(center, region.context_factor)  # what the model sees, as its unit cube
    if cube is not None:
        seen_lower, seen_upper = cube.reaching_one_move(seen_lower, seen_upper, center)
    if pinned is not None:
        seen_lower, seen_upper = pinned.reach(seen_lower, seen_upper)
    span = seen_upper - seen_lower
    X_box, inside = region.to_unit(X, seen_lower, seen_upper)
    Y_box, rows = Y[inside], torch.nonzero(inside).reshape(-1)
    if max_context is not None and len(X_box) > max_context:
        keep = nearest(X_box, (center - seen_lower) / span, max_context)
        X_box, Y_box, rows = X_box[keep], Y_box[keep], rows[keep]
    return RegionView(center, seen_lower, seen_upper, span, X_box, Y_box, rows)


def nearest(X: torch.Tensor, center: torch.Tensor, k: int) -> torch.Tensor:
    """Indices (ascending) of the ``k`` rows of ``X`` ``[n, d]`` nearest ``center`` ``[d]``
    (Euclidean; of equally near rows the earlier ones), all rows when ``n <= k``."""
    if len(X) <= k:
        return torch.arange(len(X))
    distance = torch.linalg.vector_norm(X - center, dim=-1)
    order = torch.argsort(distance, stable=True)
    return torch.sort(order[:k]).values
