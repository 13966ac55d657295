"""How :class:`~npbandit.integrations.optuna.NPSampler` reads and writes an Optuna study:
trials' parameters as rows of an :class:`npbandit.space.SearchSpace`'s unit cube, Optuna's
distributions as its parameters (and its values as Optuna writes them), the constraint
values Optuna stores with a trial, and the points running trials evaluate (the proposal
stored with each, so other workers see it before the trial has suggested every
parameter)."""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np
import torch
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from npbandit.space import Choice, Float, Int, SearchSpace

__all__ = ["CONSTRAINTS_KEY", "PROPOSAL_KEY", "GROUP_PROPOSAL_KEY", "FIRST_TRY_KEY", "trial_constraints",
           "store_constraints", "holds", "check_objectives", "check_single_objective", "optuna_choices", "parameter_of",
           "unmodelled_reason", "independent_reason", "optuna_values", "store_proposal", "stored_proposal",
           "known_params", "pending_points"]

#: the system attribute a trial's constraint values are stored under (Optuna's own key, so
#: Optuna's ``best_trial``, its other samplers and its plots read them too)
CONSTRAINTS_KEY = "constraints"


#: the system attribute a trial's relative proposal is stored under (JSON, in chunks of at most
#: ``_CHUNK`` characters: ``"npsampler:proposal:0"``, ``":1"``, ...), so that other workers see a
#: running trial's point before its objective has suggested every parameter
PROPOSAL_KEY = "npsampler:proposal"
#: the same for the proposals of a trial's conditional groups (:mod:`~npbandit.integrations.optuna_groups`),
#: one JSON object holding every group proposed for the trial so far
GROUP_PROPOSAL_KEY = "npsampler:group-proposal"
#: the system attribute marking a trial that takes a conditional branch's choice first, the rest
#: of it drawn as a start-up trial's (:func:`~npbandit.integrations.optuna_branches.first_choice`)
FIRST_TRY_KEY = "npsampler:first-try"
_CHUNK = 2045  # RDBStorage keeps a system attribute's value in fewer than 2046 characters


def trial_constraints(trial: FrozenTrial) -> list[float]:
    """A trial's constraint values, as Optuna stores them (``constraints_func``'s under the
    system attribute ``"constraints"``; ``trial.set_constraint``'s, Optuna 5, under
    ``"constraints:<name>"``, in the order of their names); ``[]`` for none."""
    attrs = trial.system_attrs
    stored = attrs.get(CONSTRAINTS_KEY)
    values = [] if stored is None else [float(v) for v in stored]
    prefix = f"{CONSTRAINTS_KEY}:"
    named = sorted((key[len(prefix):], value) for key, value in attrs.items() if key.startswith(prefix))
    return values + [float(value) for _, value in named]


def store_constraints(constraints_func: Callable[[FrozenTrial], Sequence[float]], study: Study,
                       trial: FrozenTrial) -> None:
    """``constraints_func(trial)`` checked (a non-empty sequence of real numbers, none NaN) and
    stored under the trial's system attribute ``"constraints"``; ``None`` is stored when it
    raises or returns anything else, and the error is raised, naming ``constraints_func``."""
    values = None
    try:
        out = constraints_func(trial)
        if isinstance(out, (str, bytes)) or not isinstance(out, (Sequence, np.ndarray, torch.Tensor)):
            raise TypeError(f"constraints_func must return a sequence of floats, got {type(out).__name__} "
                            f"{out!r} for trial {trial.number}")
        items = list(np.asarray(out.detach().cpu() if isinstance(out, torch.Tensor) else out,
                                dtype=object).reshape(-1)) if np.ndim(out) == 1 else None
        if not items or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) for v in items):
            raise TypeError(f"constraints_func must return a non-empty sequence of real numbers, got {out!r} for "
                            f"trial {trial.number}")
        if any(math.isnan(float(v)) for v in items):
            raise ValueError(f"constraints_func returned NaN for trial {trial.number}: {out!r}")
        values = tuple(float(v) for v in items)
    finally:
        study._storage.set_trial_system_attr(trial._trial_id, CONSTRAINTS_KEY, values)


def holds(dist: BaseDistribution, value: object) -> bool:
    """Whether ``value`` is a value of ``dist`` (in its range, on its grid, among its choices),
    as the :mod:`npbandit.space` parameter that reads ``dist`` checks it."""
    parameter = parameter_of(dist)
    if parameter is None:
        return False
    try:
        parameter.check(value)
    except (TypeError, ValueError):
        return False
    return True


def check_objectives(study: Study, acquisition: str) -> int:
    """The number of objectives of ``study``; ``ValueError`` for several objectives with an
    ``acquisition`` other than ``"logei"`` (whose several-objective form, the expected
    hypervolume improvement, searches them)."""
    m = len(study.directions)
    if m > 1 and acquisition != "logei":
        raise ValueError(f"NPSampler(acquisition={acquisition!r}) optimises one objective; this study has {m} "
                         f"directions, which NPSampler searches with acquisition 'logei' (its several-objective "
                         f"form, the log expected hypervolume improvement)")
    return m


def check_single_objective(study: Study, what: str) -> None:
    """``ValueError`` for a study with more than one objective, saying that ``what`` is
    defined for one objective only."""
    if len(study.directions) != 1:
        raise ValueError(f"{what} is defined for a study of one objective; this study has {len(study.directions)} "
                         f"directions: study.best_trials holds its Pareto front")


def optuna_choices(dist: CategoricalDistribution) -> tuple:
    """The choices of ``dist`` a trial can hold. Optuna stores a categorical value as the index
    of the first choice equal to it (``==``: ``True`` and ``1``, ``1.0`` and ``1`` are one choice
    to it), so a choice equal to an earlier one is recorded as that one whichever sampler
    suggested it; proposing it would evaluate the earlier one while the NP believed it had
    tried another."""
    return tuple(c for i, c in enumerate(dist.choices) if int(dist.to_internal_repr(c)) == i)


def parameter_of(dist: BaseDistribution) -> Float | Int | Choice | None:
    """The :mod:`npbandit.space` parameter that reads as ``dist`` (its values and their place
    in the unit cube; a categorical's choices as Optuna records them, :func:`optuna_choices`),
    or ``None`` for a distribution it cannot hold (a categorical with a NaN or infinite float
    among its choices, an unknown kind)."""
    try:
        if isinstance(dist, FloatDistribution):
            return Float(dist.low, dist.high, log=dist.log, step=dist.step)
        if isinstance(dist, IntDistribution):
            return Int(dist.low, dist.high, log=dist.log, step=dist.step)
        if isinstance(dist, CategoricalDistribution):
            return Choice(optuna_choices(dist))
    except (TypeError, ValueError):
        return None
    return None


def unmodelled_reason(dist: BaseDistribution) -> str:
    """Why no :mod:`npbandit.space` parameter holds ``dist``, in a few words (what a
    categorical's choices break, for a categorical)."""
    if isinstance(dist, CategoricalDistribution):
        try:
            Choice(optuna_choices(dist))
        except (TypeError, ValueError) as err:
            return str(err)
    return f"its distribution {dist} has no npbandit.space parameter"


def independent_reason(name: str, dist: BaseDistribution, completed: list[FrozenTrial]) -> str:
    """Why parameter ``name``, suggested with ``dist``, is not in the search space the NP
    proposes (the parameters every ``completed`` trial suggested with one distribution), in a
    few words for a log message. A changed distribution is named before a trial that lacks the
    parameter: in a conditional space a branch's parameters are missing from the other
    branches' trials, and their group is modelled unless its distribution changed (a range
    that depends on another parameter)."""
    if any(name in t.distributions and t.distributions[name] != dist for t in completed):
        return "its distribution changed between trials"
    if any(name not in t.distributions for t in completed):
        return "some completed trial lacks it"
    if parameter_of(dist) is None:
        return "the NP cannot hold its choices"
    # the trial's proposal was made before some of these trials completed, or from no usable trial
    return "the NP had no proposal for it when this trial started"


def optuna_values(params: dict[str, object], search_space: dict[str, BaseDistribution]) -> dict[str, object]:
    """``params`` as Optuna's own samplers give them: a stepped float's grid value as
    ``k * step + low`` in float64, clipped to ``[low, high]`` (so ``0.35000000000000003`` for
    ``k = 7`` of ``step=0.05``, as ``RandomSampler``, ``TPESampler`` and ``GPSampler`` write
    it), so that one grid point is one float in a study whichever sampler drew it; every
    other value unchanged."""
    out = dict(params)
    for name, value in params.items():
        dist = search_space.get(name)
        if isinstance(dist, FloatDistribution) and dist.step is not None:
            k = round((float(value) - dist.low) / dist.step)
            out[name] = float(min(max(k * dist.step + dist.low, dist.low), dist.high))
    return out


def store_proposal(study: Study, trial: FrozenTrial, params: dict[str, object], key: str = PROPOSAL_KEY) -> None:
    """Store a trial's proposal ``params`` (JSON) in its system attributes under ``key``
    (:data:`PROPOSAL_KEY`: the relative proposal; :data:`GROUP_PROPOSAL_KEY`: its conditional
    groups'), in chunks an RDB storage holds, where :func:`known_params` reads it. A
    categorical value JSON cannot hold (a choice of another type than Optuna's None, bool, int,
    float, str) is left out: other workers see that trial once it has suggested the parameter."""
    kept = {}
    for name, value in params.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        kept[name] = value
    text = json.dumps(kept)
    chunks = [text[i:i + _CHUNK] for i in range(0, len(text), _CHUNK)]
    for i, chunk in enumerate(chunks):
        study._storage.set_trial_system_attr(trial._trial_id, f"{key}:{i}", chunk)
    # an attribute cannot be deleted: a shorter proposal written over a longer one ends at a None
    if trial.system_attrs.get(f"{key}:{len(chunks)}") is not None:
        study._storage.set_trial_system_attr(trial._trial_id, f"{key}:{len(chunks)}", None)


def stored_proposal(trial: FrozenTrial, key: str = PROPOSAL_KEY) -> dict[str, object]:
    """The proposal :func:`store_proposal` stored with ``trial`` under ``key`` (``{}`` for none)."""
    attrs = trial.system_attrs
    chunks = []
    while (chunk := attrs.get(f"{key}:{len(chunks)}")) is not None:
        chunks.append(chunk)
    return json.loads("".join(chunks)) if chunks else {}


def known_params(trial: FrozenTrial) -> dict[str, object]:
    """The parameters a (running) trial is known to evaluate: its stored conditional groups'
    proposals, overridden by its stored relative proposal, overridden by the values enqueued
    for it (``study.enqueue_trial``: Optuna keeps those in its system attribute
    ``"fixed_params"``), overridden by those it has suggested."""
    known = stored_proposal(trial, GROUP_PROPOSAL_KEY)
    known.update(stored_proposal(trial))
    known.update(trial.system_attrs.get("fixed_params") or {})
    known.update(trial.params)
    return known


def pending_points(trials: list[FrozenTrial], space: SearchSpace, number: int | None,
                   fixed: dict[str, object] | None = None) -> torch.Tensor | None:
    """The points ``[p, space.dim]`` of ``space``'s unit cube that the running ones of
    ``trials`` (a study's) other than trial ``number`` evaluate: each one whose every parameter
    of ``space`` is known (:func:`known_params`: suggested, enqueued, or proposed by
    ``NPSampler`` and stored), and a value of it, and that is known to take the values
    ``fixed`` (name -> value) too; ``None`` for none."""
    rows = []
    for trial in trials:
        if trial.state != TrialState.RUNNING:
            continue
        known = known_params(trial) if trial.number != number else {}
        if all(n in known for n in space) and all(n in known and known[n] == v for n, v in (fixed or {}).items()):
            try:
                rows.append(space.encode({n: known[n] for n in space}))
            except (TypeError, ValueError):  # a value outside the space (an enqueued one): no point of it
                continue
    return torch.tensor(np.array(rows), dtype=torch.float64) if rows else None
