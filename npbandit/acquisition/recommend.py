"""The model's recommendation: of the evaluated points, the one the model believes best.

On a noisy objective the best *observed* value is the luckiest draw among the evaluations,
and its point need not be the best point evaluated. Ax therefore reports, beside it, the
evaluated point with the best model-predicted mean; npbandit does the same
(``BOPolicy.recommend``; ``optimize``'s ``recommended_x``; ``NPSampler.recommended_trial``).

Which model, seeing which points (:func:`recommend`): the model a proposal builds, but on
every observation over the whole cube rather than a trust region's box (the box is centred
on the best observation, so on a noisy objective it holds the lucky draw and few of the
points that would contradict it), at most ``max_context`` of them, those nearest the
incumbent (:func:`recommend_in_box`). A search of a wide space in a subspace
(:meth:`SubspaceSearch.recommend <npbandit.acquisition.subspace.SubspaceSearch.recommend>`)
keeps its own view: its model reads only the subspace's coordinates.

Which means (:func:`best_mean`): the candidates are the evaluated points among those the
model sees (a point it sees at a value no evaluation returned, a failed one shown at the
worst value, is none). Each one's value is the model's posterior mean of the latent
function there: for an :class:`~npbandit.models.NPModel` its de-noised mean at its own
observations (:meth:`~npbandit.models.NPModel.observed_mean`: each observation weighed
against the NP's leave-one-out prediction, as a GP's posterior mean weighs it), for any
other model (a GP) ``posterior(x).mean``. The recommendation is the candidate with the
highest value (outputs maximised, in the model's output units). With outcome constraints
(:mod:`npbandit.acquisition.constrained`: outputs after the objective's, feasible at
``<= 0``) it is the best of the candidates whose constraints' means are all ``<= 0``, as Ax
judges feasibility from its model's predictions; with none predicted feasible there is no
recommendation.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.constrained import feasible, incumbent
from npbandit.acquisition.mixed import typed_cube
from npbandit.acquisition.proposal import SearchRegion, nearest, region_view

__all__ = ["best_mean", "recommend", "recommend_in_box", "recommend_in_region"]


def best_mean(model, X: torch.Tensor, among: torch.Tensor, rows: torch.Tensor,
              constraints: int = 0) -> tuple[int, float] | None:
    """Of the candidates ``X[among]`` (``X [n, w]``: the inputs ``model`` was built on, in the
    model's coordinates; ``among [k]``, long: the candidates' positions in ``X``; ``rows
    [k]``, long: their rows among the observations), the row of the one with the highest
    mean of the objective (output 0), and that mean; the first of equal ones. The mean is
    ``model.observed_mean()`` at those positions when the model has one (an ``NPModel``:
    its de-noised means at its observations) and was built on ``X`` itself (its
    ``train_X`` equal to ``X``, row for row), else ``model.posterior(X[among]).mean``.
    With ``constraints`` (outputs ``1 .. constraints``, feasible at ``<= 0``), of the
    candidates whose means of every constraint are feasible. ``None`` when no candidate is
    left."""
    if not len(among):
        return None
    observed = getattr(model, "observed_mean", None)
    own = callable(observed) and isinstance(getattr(model, "train_X", None), torch.Tensor) and torch.equal(
        model.train_X, X.to(model.train_X))
    with torch.no_grad():
        if own:
            mean = observed()[among]
        else:
            mean = model.posterior(X[among].unsqueeze(-2)).mean.reshape(len(among), -1)
    objective = mean[:, 0]
    if constraints:
        objective = torch.where(feasible(mean[:, :1 + constraints], constraints), objective, -torch.inf)
        if not bool(torch.isfinite(objective).any()):
            return None
    i = int(torch.argmax(objective))
    return int(rows[i]), float(objective[i])


def recommend(build_model, X: torch.Tensor, Y: torch.Tensor, *, n_observed: int, region: SearchRegion | None = None,
              search: Any = None, rng: np.random.Generator | None = None, max_context: int | None = None,
              snap: Callable[[torch.Tensor], torch.Tensor] | None = None, constraints: int = 0,
              outcome: Any = None) -> tuple[int, float] | None:
    """The model's recommendation from the observations ``X [n, d]``, ``Y [n, 1 + constraints]``
    (maximised, then the constraint values), the first ``n_observed`` of them evaluated: the
    row of ``X`` and the objective's posterior mean there (:func:`best_mean`), or ``None``.
    The model is ``build_model(X_seen, Y_seen)``: with a ``search`` (a ``SubspaceSearch``),
    on its view as a proposal's model sees it, in ``region``
    (:meth:`~npbandit.acquisition.subspace.SubspaceSearch.recommend`; ``snap``: as
    :func:`propose_in_region`'s, a mixed space's widening its box); without one, on the
    whole cube, at most ``max_context`` observations, those nearest the incumbent
    (:func:`recommend_in_box` without a region; ``region`` and ``snap`` unused).

    ``rng``: where the draws come from, as a proposal's do (``BOPolicy``'s generator: torch's
    global generator seeded for the model's build, a GP's fit, then the proposal seed a
    subspace's view depends on), taken from a copy so the caller's generator is left as it
    is; ``None``: a fixed seed. Torch's global generator is restored afterwards. ``outcome``:
    the transform ``Y``'s objective went through before the model saw it (an
    :class:`~npbandit.transforms.OutcomeTransform`, ``BOPolicy``'s output warp), or ``None``:
    the mean is taken back through its ``untransform`` (for a nonlinear one, the posterior
    median in the data's units, which ranks the points as the mean in the model's units)."""
    rng = np.random.default_rng(0) if rng is None else copy.deepcopy(rng)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(rng.integers(2**62)))
        if search is not None:
            found = search.recommend(region, X, Y, build_model, n_observed=n_observed, seed=int(rng.integers(2**31)),
                                     max_context=max_context, constraints=constraints, snap=snap)
        else:
            found = recommend_in_box(None, X, Y, build_model, n_observed=n_observed, max_context=max_context,
                                     constraints=constraints)
    if found is None or outcome is None:
        return found
    return found[0], float(outcome.untransform(torch.tensor([[found[1]]], dtype=torch.float64)))


def recommend_in_box(region: SearchRegion | None, X: torch.Tensor, Y: torch.Tensor, build_model, *, n_observed: int,
                     max_context: int | None = None, snap: Callable[[torch.Tensor], torch.Tensor] | None = None,
                     constraints: int = 0) -> tuple[int, float] | None:
    """The recommendation of the model a proposal builds without a subspace, from ``X [n, d]``,
    ``Y [n, 1 + constraints]`` (maximised), the first ``n_observed`` rows evaluated: with a
    ``region``, :func:`recommend_in_region` (``max_context``, ``snap``, ``constraints`` as
    there); with ``None``, :func:`best_mean` of ``build_model(X_seen, Y_seen)`` over the
    evaluated points among them, on the whole cube: every observation, or of more than
    ``max_context`` (``None``: no limit) those nearest the incumbent
    (:func:`~npbandit.acquisition.proposal.nearest`; ``snap`` unused). What
    :func:`recommend` does without a ``search``, and a count-sketch search does in its
    embedding."""
    if region is not None:
        return recommend_in_region(region, X, Y, build_model, n_observed=n_observed, max_context=max_context,
                                   snap=snap, constraints=constraints)
    seen = torch.arange(len(X)) if max_context is None else nearest(X, X[incumbent(Y, constraints)], max_context)
    among = torch.nonzero(seen < n_observed).reshape(-1)
    return best_mean(build_model(X[seen], Y[seen]), X[seen], among, seen[among], constraints)


def recommend_in_region(region: SearchRegion, X: torch.Tensor, Y: torch.Tensor, build_model, *, n_observed: int,
                        max_context: int | None = None, snap: Callable[[torch.Tensor], torch.Tensor] | None = None,
                        space: Any = None, constraints: int = 0) -> tuple[int, float] | None:
    """:func:`best_mean` of the model a proposal in ``region`` builds, ``build_model(X_box,
    Y_box)`` on :func:`~npbandit.acquisition.proposal.region_view` of ``X [n, d]``, ``Y [n,
    1 + constraints]`` (maximised) and ``max_context``, over the evaluated points it sees
    (those among the first ``n_observed`` rows of ``X``); ``snap``, ``space``, ``constraints``:
    as :func:`~npbandit.acquisition.proposal.propose_in_region`'s (a mixed space widens the
    box the model sees; the region centres on the best feasible observation)."""
    cube = typed_cube(space, snap, X.shape[-1])
    view = region_view(region, X, Y, max_context, cube=None if cube is None or cube.continuous else cube,
                       constraints=constraints)
    among = torch.nonzero(view.rows < n_observed).reshape(-1)
    return best_mean(build_model(view.X, view.Y), view.X, among, view.rows[among], constraints)
