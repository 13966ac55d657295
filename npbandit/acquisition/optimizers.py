"""Acquisition optimisers: how the proposal step finds the maximiser of an acquisition in a box.

An acquisition optimiser is an object with ``maximise(acq, bounds, seed)`` returning a few
good points and their acquisition values (:class:`AcquisitionOptimizer`); the proposal
step (:func:`npbandit.acquisition.proposal.propose`) then applies its own rules to them
(the repeat check, a mixed space's discrete search). Pass one to ``BOPolicy``,
``optimize`` or ``NPSampler`` as ``acq_optimizer=``.

- :class:`GradientRestarts`: BoTorch's ``optimize_acqf`` -- ``raw_samples`` Sobol points
  screened, ``num_restarts`` of them refined together by L-BFGS-B on the acquisition's
  input gradient. The right tool for a GP, whose acquisition is smooth and costs little
  per evaluation next to its fit.
- :class:`CandidateSearch`: gradient-free. A Sobol screen, then a few rounds in which each
  of the best points (a walker) draws Gaussian perturbations of itself inside the box and
  moves to the best one that improves, its step shrinking whenever none does. Every round
  is one batched forward pass without autograd. A network's cost per call is mostly fixed
  overhead, so scoring hundreds of points costs about what one L-BFGS-B step costs on ten,
  and L-BFGS-B on an NP's acquisition makes many short steps (its line searches stall on
  the network's small-scale roughness). The NP's inputs have at most the checkpoint's width
  (6 for the shipped ones), where a few thousand well-placed points locate a maximum to a
  fraction of a percent of the box.

Both are deterministic given ``seed``: they draw from their own generators, never torch's
global one.

Any optimiser's output is checked where the proposal step calls it
(:func:`maximised`): points ``[k, d]`` and values ``[k]`` as tensors, every point finite and
inside the box up to rounding; anything else is the optimiser's bug, refused with a
``ValueError`` naming ``acq_optimizer``, never clipped into the box.
"""

from __future__ import annotations

import inspect
import json
import warnings
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch

from npbandit.space.linear_constraints import Polytope
from npbandit.text import printable, shorten
from npbandit.validation import check_int, check_real, json_default

__all__ = ["AcquisitionOptimizer", "GradientRestarts", "CandidateSearch", "OPTIMIZERS", "MAXIMISED_ACQUISITIONS",
           "check_acq_optimizer", "check_bounds", "resolve_acq_optimizer", "maximised", "BOX_ROUNDING",
           "takes_polytope", "polytope_starts", "restarts_inside"]

#: how far outside the box, in units of the returned points' machine epsilon times
#: ``max(1, |lower|, |upper|)`` per column, a returned point may lie and still count as inside:
#: a point made as ``lower + (upper - lower) * u`` with ``0 <= u <= 1`` (a Sobol screen, an
#: affine map between boxes) is off by at most about two such units from rounding
BOX_ROUNDING = 4
#: how many offending entries an error about an optimiser's output shows (with the count of all)
SHOWN_OFFENDERS = 3


@runtime_checkable
class AcquisitionOptimizer(Protocol):
    """What the proposal step needs of an acquisition optimiser."""

    def maximise(self, acq, bounds: torch.Tensor, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Good points of ``acq`` (a BoTorch acquisition function taking ``[b, 1, d]``) in the
        box ``bounds`` ``[2, d]`` (float64): ``(points [k, d], values [k])``, each point
        inside the box, ``k >= 1``, values finite or ``-inf``. An optimiser that also takes a
        keyword ``polytope`` (a :class:`~npbandit.space.linear_constraints.Polytope` in the
        box's frame, or ``None``) can search under linear input constraints
        (``optimize(parameter_constraints=...)``): every point it returns must then lie in
        ``polytope.holds``; one without it is refused with them."""

    def params(self) -> dict[str, Any]:
        """The settings, logged with a run: a dict of JSON values, numbers finite
        (:func:`check_acq_optimizer` refuses anything else)."""


@dataclass(frozen=True)
class GradientRestarts:
    """BoTorch's ``optimize_acqf``: L-BFGS-B from ``num_restarts`` start points chosen among
    ``raw_samples`` Sobol points, BoTorch's own defaults otherwise (its retry from new start
    points when every restart ends abnormally included). Returns every restart's end point."""

    num_restarts: int = 10
    raw_samples: int = 512

    def __post_init__(self) -> None:
        check_int("num_restarts", self.num_restarts, minimum=1)
        check_int("raw_samples", self.raw_samples, minimum=1)
        if self.raw_samples < self.num_restarts:
            raise ValueError(f"raw_samples ({self.raw_samples}) must be at least num_restarts ({self.num_restarts}): "
                             "the restarts start from the best of the raw samples")

    def maximise(self, acq, bounds: torch.Tensor, seed: int,
                 polytope: Polytope | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """With ``polytope``, ``optimize_acqf``'s ``inequality_constraints`` (SLSQP) from start
        points chosen as BoTorch chooses them among ``raw_samples`` points inside the polytope
        (:func:`polytope_starts`), each end point that oversteps a face by the solver's
        tolerance moved back inside (:meth:`~npbandit.space.linear_constraints.Polytope.repair`)
        and its value recomputed."""
        from botorch.optim import optimize_acqf

        check_bounds(bounds)
        extra = restarts_inside(acq, polytope, bounds, 1, self.num_restarts, self.raw_samples, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # restarts that stop early are normal for flat acquisitions
            points, values = optimize_acqf(acq, bounds, q=1, options={"seed": seed}, return_best_only=False,
                                           **extra)
        points, values = points.detach().reshape(-1, bounds.shape[-1]), values.detach().reshape(-1)
        if polytope is not None:
            moved = polytope.repair(points.clamp(bounds[0], bounds[1]), bounds)
            if not torch.equal(moved, points):
                points, values = moved, _scores(acq, moved)
        return points, values

    def params(self) -> dict[str, Any]:
        return {"name": "gradient-restarts", "num_restarts": self.num_restarts, "raw_samples": self.raw_samples}


@dataclass(frozen=True)
class CandidateSearch:
    """Gradient-free maximisation by batched scoring (see the module docstring).

    Args:
        raw_samples: scrambled Sobol points scored first, in the box.
        walkers: the best of them that are then refined (the returned points).
        rounds: refinement rounds; each scores ``walkers * samples`` points in one call.
        samples: perturbations each walker draws per round.
        scale: a walker's first step: the perturbations' standard deviation as a share
            of the box's side in each input.
        shrink: the factor a walker's step is multiplied by after a round in which none of
            its perturbations improved on it (``0 < shrink < 1``).

    Cost: ``raw_samples + rounds * walkers * samples`` acquisition values (2,560 by
    default) in ``1 + rounds`` forward passes, no backward pass. A perturbation outside
    the box is moved onto its face.
    """

    raw_samples: int = 512
    walkers: int = 8
    rounds: int = 8
    samples: int = 32
    scale: float = 0.1
    shrink: float = 0.5

    def __post_init__(self) -> None:
        check_int("raw_samples", self.raw_samples, minimum=1)
        check_int("walkers", self.walkers, minimum=1)
        if self.raw_samples < self.walkers:
            raise ValueError(f"raw_samples ({self.raw_samples}) must be at least walkers ({self.walkers}): the walkers "
                             "start from the best of the raw samples")
        check_int("rounds", self.rounds, minimum=0)
        check_int("samples", self.samples, minimum=1)
        if not 0 < check_real("scale", self.scale) <= 1:
            raise ValueError(f"scale must be in (0, 1] (a share of the box's side), got {self.scale!r}")
        if not 0 < check_real("shrink", self.shrink) < 1:
            raise ValueError(f"shrink must be in (0, 1) (a walker's step shrinks after a round without progress), "
                             f"got {self.shrink!r}")

    def maximise(self, acq, bounds: torch.Tensor, seed: int,
                 polytope: Polytope | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """With ``polytope``, the screen's points are drawn inside it
        (:meth:`~npbandit.space.linear_constraints.Polytope.sample`) and a perturbation
        outside it scores ``-inf``, so no walker leaves it."""
        check_bounds(bounds)
        lower, upper = bounds[0], bounds[1]
        width = upper - lower
        d = bounds.shape[-1]
        # drawn on the CPU from their own seeded generators, then moved: the same points on every device
        if polytope is None:
            pool = lower + width * torch.quasirandom.SobolEngine(d, scramble=True, seed=seed).draw(
                self.raw_samples, dtype=bounds.dtype).to(bounds.device)
        else:
            pool = polytope.sample(self.raw_samples, bounds, seed)
        values = _scores(acq, pool)
        top = torch.topk(values, min(self.walkers, len(pool))).indices  # raw_samples >= walkers
        points, best = pool[top].clone(), values[top].clone()
        step = torch.full((len(points), 1), self.scale, dtype=bounds.dtype, device=bounds.device)
        generator = torch.Generator().manual_seed(seed)
        for _ in range(self.rounds):
            noise = torch.randn(len(points), self.samples, d, generator=generator, dtype=bounds.dtype).to(bounds.device)
            moved = torch.minimum(torch.maximum(points[:, None] + noise * (step * width)[:, None], lower), upper)
            scores = _scores(acq, moved.reshape(-1, d)).reshape(len(points), self.samples)
            if polytope is not None:
                scores = torch.where(polytope.feasible(moved), scores, -torch.inf)
            top_score, which = scores.max(dim=1)
            better = top_score > best
            points[better] = moved[better, which[better]]
            best = torch.where(better, top_score, best)
            step = torch.where(better[:, None], step, step * self.shrink)
        return points, best

    def params(self) -> dict[str, Any]:
        return {"name": "candidate-search", "raw_samples": self.raw_samples, "walkers": self.walkers,
                "rounds": self.rounds, "samples": self.samples, "scale": self.scale, "shrink": self.shrink}


def maximised(optimizer: AcquisitionOptimizer, acq, bounds: torch.Tensor,
              seed: int, polytope: Polytope | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``optimizer.maximise(acq, bounds, seed)``, its output checked against the
    :class:`AcquisitionOptimizer` contract: ``(points [k, d], values [k])``, float tensors,
    ``k >= 1``, ``d`` the box's width, every point finite and inside ``bounds`` ``[2, d]`` up to
    :data:`BOX_ROUNDING` (rounding-level excursions are then moved onto the box's faces, as
    a point a Sobol screen puts at ``lower + (upper - lower) * u`` may need), values finite or
    ``-inf``. The points come back in ``bounds``' dtype and device. With ``polytope`` (linear
    input constraints in the box's frame) it is passed on as ``maximise``'s keyword, and every
    point returned must satisfy :meth:`~npbandit.space.linear_constraints.Polytope.holds`.

    Raises:
        ValueError: output outside that contract, naming ``acq_optimizer`` and what it returned.
    """
    out = optimizer.maximise(acq, bounds, seed) if polytope is None else optimizer.maximise(acq, bounds, seed,
                                                                                            polytope=polytope)
    who = f"acq_optimizer {type(optimizer).__name__}.maximise"
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ValueError(f"{who} must return a tuple (points [k, d], values [k]) of tensors, got {type(out).__name__}")
    points, values = out
    d = bounds.shape[-1]
    for what, value, shape in (("points", points, f"[k, {d}]"), ("values", values, "[k]")):
        if not (isinstance(value, torch.Tensor) and value.is_floating_point()):
            raise ValueError(f"{who} must return {what} as a float torch tensor {shape}, got "
                             f"{type(value).__name__} {getattr(value, 'dtype', '')}".rstrip())
    if points.ndim != 2 or points.shape[0] < 1 or points.shape[1] != d or values.shape != points.shape[:1]:
        raise ValueError(f"{who} must return points [k, {d}] (k >= 1, the box's width {d}) and values [k]; got points "
                         f"{list(points.shape)} and values {list(values.shape)}")
    bad = ~torch.isfinite(points)
    if bad.any():
        raise ValueError(f"{who} returned points that are not finite (NaN or inf): {_offenders('points', points, bad)}")
    bad = torch.isnan(values) | (values == torch.inf)
    if bad.any():
        raise ValueError(f"{who} returned values that are NaN or +inf (each must be finite or -inf): "
                         f"{_offenders('values', values, bad)}")
    points = points.detach().to(bounds)
    lower, upper = bounds[0], bounds[1]
    tol = BOX_ROUNDING * torch.finfo(out[0].dtype).eps * torch.maximum(lower.abs().maximum(upper.abs()),
                                                                      torch.ones_like(lower))
    outside = (points < lower - tol) | (points > upper + tol)
    if outside.any():
        raise ValueError(f"{who} returned points outside the box bounds (beyond rounding): "
                         f"{_offenders('points', points, outside, bounds)}")
    points = points.clamp(lower, upper)
    if polytope is not None:
        outside = ~polytope.holds(points)
        if outside.any():
            raise ValueError(f"{who} returned {int(outside.sum())} of {len(points)} points outside the linear "
                             f"constraints (parameter_constraints), e.g. {points[outside][0].tolist()}")
    return points, values.detach()


def restarts_inside(acq, polytope: Polytope | None, bounds: torch.Tensor, q: int, num_restarts: int,
                    raw_samples: int, seed: int) -> dict[str, Any]:
    """``optimize_acqf``'s restart keywords: ``num_restarts`` and ``raw_samples`` as they are
    without ``polytope``; with it, start points inside the linear constraints
    (:func:`polytope_starts`) and the constraints as ``inequality_constraints``."""
    if polytope is None:
        return {"num_restarts": num_restarts, "raw_samples": raw_samples}
    starts = polytope_starts(acq, polytope, bounds, q, num_restarts, raw_samples, seed)
    return {"num_restarts": len(starts), "raw_samples": None, "batch_initial_conditions": starts,
            "inequality_constraints": polytope.inequality_constraints(bounds.dtype)}


def polytope_starts(acq, polytope: Polytope, bounds: torch.Tensor, q: int, num_restarts: int, raw_samples: int,
                    seed: int) -> torch.Tensor:
    """Start points ``[r, q, d]`` (``r <= num_restarts``) for ``optimize_acqf`` under ``polytope``'s
    linear constraints: ``raw_samples`` batches of ``q`` points of the box ``bounds`` inside
    them (:meth:`~npbandit.space.linear_constraints.Polytope.sample`: Sobol points kept, not
    the hit-and-run chain ``optimize_acqf`` would run per call, which costs seconds), chosen by
    BoTorch's ``initialize_q_batch`` on their acquisition values (torch's global generator,
    which the proposal step seeds)."""
    from botorch.optim.initializers import initialize_q_batch

    pool = polytope.sample(raw_samples * q, bounds, seed)
    pool = pool[: len(pool) // q * q].reshape(-1, q, bounds.shape[-1])
    with torch.no_grad():
        values = torch.nan_to_num(acq(pool).reshape(-1), nan=-torch.inf)
    finite = torch.isfinite(values)
    if finite.any() and not finite.all():
        pool, values = pool[finite], values[finite]
    if not finite.any() or len(pool) <= num_restarts or float(values.std()) == 0.0:
        return pool[torch.argsort(values, descending=True)[:num_restarts]]
    starts, _ = initialize_q_batch(pool, values, n=num_restarts)
    return starts


def takes_polytope(optimizer: Any) -> bool:
    """Whether ``optimizer.maximise`` takes the keyword ``polytope`` (linear input constraints)."""
    try:
        return "polytope" in inspect.signature(optimizer.maximise).parameters
    except (TypeError, ValueError):
        return False


def _offenders(what: str, tensor: torch.Tensor, bad: torch.Tensor, bounds: torch.Tensor | None = None) -> str:
    """How many of ``tensor``'s rows (``[k, d]`` points or ``[k]`` values) hold an entry that
    ``bad`` (its shape) marks, and the first :data:`SHOWN_OFFENDERS` such entries with their
    indices (and, given ``bounds`` ``[2, d]``, their column's interval): a message of bounded
    length however many entries are bad."""
    rows = bad if bad.ndim == 1 else bad.any(dim=-1)
    where = bad.nonzero()[:SHOWN_OFFENDERS].tolist()  # [[row], ...] or [[row, column], ...]
    shown = []
    for index in where:
        entry = f"{what}[{', '.join(map(str, index))}] = {tensor[tuple(index)].item()!r}"
        if bounds is not None:
            entry += f" (the box: [{bounds[0, index[-1]].item()!r}, {bounds[1, index[-1]].item()!r}])"
        shown.append(entry)
    first = "" if len(where) == int(bad.sum()) else f"the first {len(where)}: "
    return f"{int(rows.sum())} of {len(rows)} {what}, {first}{'; '.join(shown)}"


def check_bounds(bounds: Any) -> None:
    """``bounds`` must be a float tensor ``[2, d]`` with lower <= upper in every column (a
    column with lower == upper is held where it is)."""
    if (not isinstance(bounds, torch.Tensor) or bounds.ndim != 2 or bounds.shape[0] != 2
            or not bounds.is_floating_point()):
        raise ValueError(f"bounds must be a float tensor [2, d] (lower row, upper row), got "
                         f"{type(bounds).__name__} {tuple(getattr(bounds, 'shape', ()))}")
    if not (bounds[0] <= bounds[1]).all():
        raise ValueError(f"bounds must have lower <= upper in every column, got {bounds.tolist()}")


def _scores(acq, points: torch.Tensor) -> torch.Tensor:
    """``acq`` at ``points`` ``[m, d]`` as ``[m]``, without autograd; NaN read as ``-inf``
    (a point the acquisition cannot score is never chosen)."""
    with torch.no_grad():
        values = acq(points.unsqueeze(-2)).reshape(-1)
    return torch.nan_to_num(values, nan=-torch.inf)


def check_acq_optimizer(name: str, value: Any) -> AcquisitionOptimizer | None:
    """``value`` if it is ``None`` or an :class:`AcquisitionOptimizer` whose ``params()`` is
    what a run can record: a dict of JSON values (numbers finite,
    NumPy values and tensors read through ``tolist()``, as the run's storage writes them).
    Called where an optimiser is first taken, so a bad one fails before anything runs.

    Raises:
        TypeError: ``value`` is not an acquisition optimiser, or its ``params()`` does not
            return a dict of JSON values.
        ValueError: its ``params()`` raises, or returns a non-finite number or a
            self-referencing container.
    """
    if isinstance(value, type):  # the class has the methods too, unbound
        raise TypeError(f"{name} must be an acquisition optimiser instance, got the class {value.__name__}; "
                        f"did you mean {value.__name__}()?")
    if value is None:
        return value
    if not isinstance(value, AcquisitionOptimizer):
        raise TypeError(f"{name} must be an acquisition optimiser (an object with maximise(acq, bounds, seed) and "
                        f"params(), e.g. npbandit.acquisition.CandidateSearch()) or None, got {type(value).__name__}")
    who = f"{name}.params()"
    try:
        params = value.params()
    except Exception as err:  # the optimiser's own bug, named as such rather than surfacing bare
        raise ValueError(f"{who} ({type(value).__name__}) raised {type(err).__name__}: {err}") from err
    if not isinstance(params, dict):
        raise TypeError(f"{who} must return a dict of its settings (JSON values; a run records it), got "
                        f"{type(params).__name__}")
    try:
        json.dumps(params, allow_nan=False, default=json_default)
    except TypeError as err:
        raise TypeError(f"{who} must return a dict of JSON values (str, number, bool, None, list, dict), "
                        f"got {shorten(printable(repr(params)), 200)}: {err}") from None
    except ValueError as err:  # NaN / inf, or a container holding itself
        raise ValueError(f"{who} must return a dict of finite JSON values, got "
                         f"{shorten(printable(repr(params)), 200)}: {err}") from None
    return value


#: the acquisitions an acquisition optimiser maximises (Thompson draws score their own candidates,
#: and a batch acquisition is optimised jointly by ``optimize_acqf``)
MAXIMISED_ACQUISITIONS = ("logei", "ucb")
#: the names a checkpoint card's ``use["acq_optimizer"]`` may hold, and what they build
OPTIMIZERS = {"candidate-search": CandidateSearch, "gradient-restarts": GradientRestarts}


def resolve_acq_optimizer(acq_optimizer: Any, recommended: str | None = None, num_restarts: int | None = None,
                          raw_samples: int | None = None, *, acquisition: str = "logei") -> AcquisitionOptimizer | None:
    """The acquisition optimiser a policy or sampler runs with.

    ``None`` for an ``acquisition`` outside :data:`MAXIMISED_ACQUISITIONS`, which uses none
    (and then refuses an ``acq_optimizer``; ``num_restarts`` / ``raw_samples`` are the
    caller's to use, e.g. for ``"qlognei"``'s joint optimisation). For LogEI / UCB,
    ``acq_optimizer`` when one is given (then ``num_restarts`` / ``raw_samples`` must be
    ``None``: they configure :class:`GradientRestarts`, which takes them itself). Otherwise
    :class:`GradientRestarts` when ``num_restarts`` or ``raw_samples`` is given (the caller
    asked for ``optimize_acqf``'s settings; the other one at its default), and else the
    optimiser ``recommended`` names (a name of :data:`OPTIMIZERS`, at its defaults: what a
    checkpoint's card recommends, ``checkpoint_use(card).get("acq_optimizer")``), or
    ``GradientRestarts()`` when nothing is recommended (a GP, a checkpoint whose card is
    silent).

    Raises:
        TypeError: ``acq_optimizer`` is not an acquisition optimiser.
        ValueError: ``acq_optimizer`` with an acquisition that uses none;
            ``num_restarts`` / ``raw_samples`` beside ``acq_optimizer``; a ``recommended``
            name this version does not know.
    """
    acq_optimizer = check_acq_optimizer("acq_optimizer", acq_optimizer)
    if acquisition not in MAXIMISED_ACQUISITIONS:
        if acq_optimizer is not None:
            raise ValueError(f"acq_optimizer maximises 'logei' and 'ucb'; acquisition {acquisition!r} does not use one "
                             "(Thompson draws score their own candidates; 'qlognei' optimises its batch jointly with "
                             "optimize_acqf, set by num_restarts and raw_samples)")
        return None
    given = num_restarts is not None or raw_samples is not None
    if acq_optimizer is not None:
        if given:
            raise ValueError("num_restarts and raw_samples configure GradientRestarts (BoTorch's optimize_acqf); "
                             "with acq_optimizer given, set them on it (GradientRestarts(num_restarts=..., "
                             "raw_samples=...)) or leave them out")
        return acq_optimizer
    if given or recommended is None:
        return GradientRestarts(10 if num_restarts is None else num_restarts,
                                512 if raw_samples is None else raw_samples)
    if recommended not in OPTIMIZERS:
        raise ValueError(f"the checkpoint recommends acquisition optimiser {recommended!r}, which this version does "
                         f"not know (known: {sorted(OPTIMIZERS)}); pass acq_optimizer=... explicitly")
    return OPTIMIZERS[recommended]()
