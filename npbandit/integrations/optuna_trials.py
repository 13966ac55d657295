"""How :class:`~npbandit.integrations.optuna.NPSampler` reads an Optuna study: trials'
parameters as rows of an :class:`npbandit.space.SearchSpace`'s unit cube, Optuna's
distributions as its parameters, and the constraint values Optuna stores with a trial."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np
import torch
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.study import Study
from optuna.trial import FrozenTrial

from npbandit.space import Choice, Float, Int, SearchSpace

__all__ = ["CONSTRAINTS_KEY", "trial_constraints", "store_constraints", "in_space", "check_single_objective",
           "parameter_of", "unit_rows"]

#: the system attribute a trial's constraint values are stored under (Optuna's own key, so
#: Optuna's ``best_trial``, its other samplers and its plots read them too)
CONSTRAINTS_KEY = "constraints"


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


def in_space(trial: FrozenTrial, space: SearchSpace) -> bool:
    """Whether the trial's parameters of ``space`` are values of it (an enqueued trial's may
    lie outside a range, off a grid or among no choice)."""
    try:
        space.check({n: trial.params[n] for n in space})
    except (TypeError, ValueError):
        return False
    return True


def check_single_objective(study: Study) -> None:
    if len(study.directions) != 1:
        raise ValueError(f"NPSampler optimises one objective; this study has {len(study.directions)} "
                         "(multi-objective studies need a multi-objective sampler, e.g. optuna.samplers.NSGAIISampler)")


def parameter_of(dist: BaseDistribution) -> Float | Int | Choice | None:
    """The :mod:`npbandit.space` parameter that reads as ``dist`` (its values and their place
    in the unit cube), or ``None`` for a distribution it cannot hold (a categorical with a
    NaN or infinite float among its choices, an unknown kind)."""
    try:
        if isinstance(dist, FloatDistribution):
            return Float(dist.low, dist.high, log=dist.log, step=dist.step)
        if isinstance(dist, IntDistribution):
            return Int(dist.low, dist.high, log=dist.log, step=dist.step)
        if isinstance(dist, CategoricalDistribution):
            return Choice(dist.choices)
    except (TypeError, ValueError):
        return None
    return None


def unit_rows(trials: list[FrozenTrial], space: SearchSpace) -> torch.Tensor:
    """The trials' parameters of ``space`` on its unit cube, float64 ``[len(trials), space.dim]``."""
    return torch.tensor(np.array([space.encode({n: t.params[n] for n in space}) for t in trials]),
                        dtype=torch.float64).reshape(len(trials), space.dim)
