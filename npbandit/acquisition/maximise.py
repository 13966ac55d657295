"""The maximisation inside one proposal step (:func:`~npbandit.acquisition.proposal.propose`):
the acquisition built, maximised, and kept away from the evaluated points.

- :func:`maximise_point` -- one point ``[d]``: the best of a Thompson draw over Sobol
  candidates, or LogEI / UCB (or an analytic acquisition given, a local penalty on it)
  maximised by an :class:`~npbandit.acquisition.optimizers.AcquisitionOptimizer`; of its
  restarts, the best that is no repeat, else the acquisition's best Sobol point that is none;
  on a mixed space, judged at snapped points (:mod:`npbandit.acquisition.mixed`);
- :func:`maximise_batch` -- ``q`` points ``[q, d]`` of qLogNEI, maximised jointly;
- :data:`REPEAT_DISTANCE` and :func:`repeats` -- what counts as proposing an evaluated point
  again.

Linear input constraints (a :class:`~npbandit.space.linear_constraints.Polytope`) and pinned
columns (:class:`~npbandit.acquisition.pinned.Pinned`) hold for every candidate.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import torch

from npbandit.acquisition.constrained import constrained_batch_acquisition
from npbandit.acquisition.mixed import TypedCube, mixed_candidates
from npbandit.acquisition.optimizers import AcquisitionOptimizer, GradientRestarts, maximised, restarts_inside
from npbandit.acquisition.pinned import Pinned, pin
from npbandit.acquisition.thompson import is_np_model, thompson_draw
from npbandit.space.linear_constraints import Polytope

__all__ = ["maximise_point", "maximise_batch", "sobol_pool", "repeats", "REPEAT_DISTANCE"]

#: a proposal closer than this (Euclidean, unit cube) to an observed point is a repeat; with
#: ``observed`` given the proposal step replaces it (see :func:`propose`)
REPEAT_DISTANCE = 1e-3


def maximise_point(model, acquisition: str, dim: int, best_f: float | torch.Tensor, seed: int, beta: float,
                   num_restarts: int, raw_samples: int, thompson_candidates: int,
                   avoid: torch.Tensor | None, bounds: torch.Tensor, penalty=None,
                   snap: Callable[[torch.Tensor], torch.Tensor] | None = None, cube: TypedCube | None = None,
                   acq=None, acq_optimizer: AcquisitionOptimizer | None = None,
                   polytope: Polytope | None = None, pinned: Pinned | None = None) -> np.ndarray:
    """One point ``[d]``: the argmax of a Thompson draw over Sobol candidates, or LogEI / UCB
    (or ``acq``, an analytic acquisition given, e.g. a constrained LogEI; plus ``penalty``'s
    log, a :class:`~npbandit.acquisition.penalty.LocalPenalty`) maximised by ``acq_optimizer``
    (``None``: :class:`GradientRestarts`, BoTorch's ``optimize_acqf``) away from the points
    ``avoid`` ``[n, d]``; with a mixed ``cube``, judged at snapped points
    (:mod:`npbandit.acquisition.mixed`); with ``polytope``, every candidate inside it; with
    ``pinned``, every candidate judged, and compared with ``avoid``, with its columns set."""
    from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound

    if acquisition in ("thompson", "marginal-thompson"):
        candidates = pin(pinned, sobol_pool(dim, thompson_candidates, bounds, seed, polytope))
        if cube is not None:  # the draw judged where the objective would be evaluated, each point once
            candidates = torch.unique(cube.snap(candidates), dim=0)
        with torch.no_grad():
            sample = thompson_draw(model, candidates, seed, joint=acquisition == "thompson")
        return candidates[int(torch.argmax(sample))].numpy()
    if acq is None:
        acq = (LogExpectedImprovement(model, best_f=best_f) if acquisition == "logei"
               else UpperConfidenceBound(model, beta=beta))
    if penalty is not None:
        acq = penalty.wrap(acq)
    if pinned is not None:
        acq = pinned.wrap(acq)
    optimizer = GradientRestarts(num_restarts, raw_samples) if acq_optimizer is None else acq_optimizer
    candidates, values = maximised(optimizer, acq, bounds, seed, polytope)  # checked: [k, d] in the box, finite
    candidates = pin(pinned, candidates)
    if cube is not None:
        point = mixed_candidates(acq, cube, candidates, bounds, None if avoid is None else snap(avoid.to(candidates)),
                                 REPEAT_DISTANCE, polytope, pinned)
        if point is not None:
            return point
        candidates = snap(candidates)  # every point reached repeats an observation: the fallback below
    if avoid is None or not len(avoid):
        return candidates[int(torch.argmax(values))].numpy()
    if snap is None:
        def snap(points: torch.Tensor) -> torch.Tensor:
            return points

    # the observations are where they were evaluated already (as :func:`repeats` takes them): snapped
    # again, they would move wherever snap is not idempotent (a count sketch's grid, seen in its
    # embedding), and a candidate snapping onto an observation would pass for a new point
    avoid = avoid.to(candidates)
    new = torch.cdist(snap(candidates), avoid).amin(dim=-1) >= REPEAT_DISTANCE
    if new.any():  # the best restart that lands away from every observation
        return candidates[int(torch.argmax(torch.where(new, values, -torch.inf)))].numpy()
    # every restart came back to an observation: the acquisition's best among Sobol points away from them
    pool = pin(pinned, sobol_pool(dim, raw_samples, bounds, seed, polytope))
    if cube is not None:
        pool = snap(pool)
    pool = pool[torch.cdist(snap(pool), avoid).amin(dim=-1) >= REPEAT_DISTANCE]
    if not len(pool):  # observations everywhere (a tiny box searched for long): nothing new to offer
        return candidates[int(torch.argmax(values))].numpy()
    with torch.no_grad():
        scores = acq(pool.unsqueeze(-2))
    return pool[int(torch.argmax(scores))].numpy()


def maximise_batch(model, q: int, seed: int, num_restarts: int, raw_samples: int, bounds: torch.Tensor,
                   constraints: int = 0, polytope: Polytope | None = None,
                   pinned: Pinned | None = None) -> np.ndarray:
    """``q`` points ``[q, d]`` maximising ``qLogNoisyExpectedImprovement`` jointly, with the
    model's training inputs as its baseline (and ``constraints`` outputs after the
    objective's as its constraints; ``polytope``'s linear input constraints as
    ``optimize_acqf``'s ``inequality_constraints``, each point then moved inside them where it
    oversteps a face by the solver's tolerance)."""
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.optim import optimize_acqf

    baseline = model.train_X if is_np_model(model) else model.train_inputs[0]
    baseline = baseline.detach()
    if baseline.ndim > 2:  # a multi-output GP keeps its inputs once per output
        baseline = baseline[0]
    acq = (constrained_batch_acquisition(model, baseline, constraints) if constraints
           else qLogNoisyExpectedImprovement(model, X_baseline=baseline, prune_baseline=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # restarts that stop early are normal for flat acquisitions
        starts = restarts_inside(acq, polytope, bounds, q, num_restarts, raw_samples, seed)
        points, _ = optimize_acqf(acq, bounds, q=q, options={"seed": seed},
                                  fixed_features=None if pinned is None else pinned.features(), **starts)
    points = points.detach().reshape(q, -1)
    if polytope is not None:
        points = polytope.repair(points.clamp(bounds[0], bounds[1]), bounds)
    return points.numpy()


def sobol_pool(dim: int, n: int, bounds: torch.Tensor, seed: int, polytope: Polytope | None) -> torch.Tensor:
    """``n`` scrambled Sobol points ``[n, d]`` of the box ``bounds``; with ``polytope``, up to
    ``n`` points of the box inside it (:meth:`~npbandit.space.linear_constraints.Polytope.sample`)."""
    if polytope is not None:
        return polytope.sample(n, bounds, seed)
    return bounds[0] + (bounds[1] - bounds[0]) * torch.quasirandom.SobolEngine(
        dim, scramble=True, seed=seed).draw(n, dtype=torch.float64)


def repeats(point: torch.Tensor, X: torch.Tensor, snap: Callable[[torch.Tensor], torch.Tensor] | None) -> bool:
    """Whether ``point`` ``[d]``, snapped to where the objective would see it, lies within
    :data:`REPEAT_DISTANCE` of a row of ``X`` ``[n, d]`` (evaluated points, already where
    the objective saw them: not snapped again on every proposal)."""
    if not len(X):
        return False
    point = point.to(X).unsqueeze(0)
    if snap is not None:
        point = snap(point)
    return bool(torch.cdist(point, X).amin() < REPEAT_DISTANCE)
