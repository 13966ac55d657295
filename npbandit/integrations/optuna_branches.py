"""Which branch of a conditional Optuna study the next trial takes, for
:class:`~npbandit.integrations.optuna.NPSampler`.

A define-by-run objective often starts with one choice that decides which other parameters
it suggests (``classifier = trial.suggest_categorical(...)``, then that classifier's own
parameters). That choice is in Optuna's intersection search space, the branch's parameters
are not (:mod:`~npbandit.integrations.optuna_groups`). A model of the choice alone judges
each branch by the mean of its trials' values, which are mostly the start-up's random draws
of its parameters; once one branch's parameters have been tuned it looks better than any
untuned one, and the search never returns to the others (on a two-branch test the sampler
kept one branch in every trial). A branch is worth what its best setting is expected to
give, so the choice is made through the branches' own models:

- :func:`gating_choice`: the categorical of the relative search space whose value decides
  which conditional groups a trial suggests (each value always with the same groups, and
  not every value with the same ones; a sub-branch's groups, which a choice inside a branch
  decides, with that value alone);
- :func:`branches`: for each of its choices, the completed trials that took it and the
  branch's search space, the relative space's other parameters and the parameters of the
  branch's groups;
- the sampler proposes a point in each branch with the NP conditioned on that branch's
  trials, and takes the branch whose point has the highest acquisition value
  (:func:`acquisition_value`: each branch's model at its own point, against the study's
  best value, so the values are in the same units and compare the same quantity).

A choice with fewer than :data:`MIN_BRANCH_TRIALS` completed trials has no model yet. One
that fewer than that many trials have taken -- completed, failed, pruned or running -- is
taken first (:func:`first_choice`: the one taken least), so every branch is tried and then
modelled; one whose trials failed or were pruned so that fewer than that many completed is
then passed over in the comparison, so a branch that always fails is not taken again and
again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.trial import FrozenTrial

from npbandit.integrations.optuna_groups import parameter_groups
from npbandit.integrations.optuna_trials import optuna_choices, parameter_of
from npbandit.policies.branches import MIN_BRANCH_TRIES
from npbandit.space import SearchSpace

__all__ = ["MIN_BRANCH_TRIALS", "Branch", "gating_choice", "branches", "branch_of", "first_choice", "best_branch"]

#: completed trials a branch needs before its own model proposes in it (the NP standardises
#: a branch's values by their mean and spread, which one value does not have): the number
#: ``optimize``'s search by branch waits for too
MIN_BRANCH_TRIALS = MIN_BRANCH_TRIES


@dataclass(frozen=True)
class Branch:
    """One choice ``value`` of the gating categorical: the completed ``trials`` that took it
    and its ``search_space`` (name -> distribution: the relative space's other parameters and
    the modelled parameters of the branch's groups; empty for a branch with no parameter of
    its own, or one no trial took)."""

    value: object
    trials: list[FrozenTrial]
    search_space: dict[str, BaseDistribution]


def _choice(dist: CategoricalDistribution, trial: FrozenTrial, name: str) -> int | None:
    """The index of the choice ``trial`` took for categorical ``name`` (``None``: none of
    ``dist``'s choices, as an enqueued trial may hold)."""
    try:
        return int(dist.to_internal_repr(trial.params[name]))
    except ValueError:
        return None


def _conditional_groups(completed: list[FrozenTrial]) -> list[frozenset[str]]:
    """The groups some completed trial lacks."""
    return [g for g in parameter_groups(completed) if any(next(iter(g)) not in t.distributions for t in completed)]


def gating_choice(search_space: dict[str, BaseDistribution], completed: list[FrozenTrial]) -> str | None:
    """The categorical of ``search_space`` (the relative search space) whose value decides which
    conditional groups a completed trial suggested: the groups every trial that took a value
    suggested (its branch's) differ between two values, and a group only some of a value's
    trials suggested (a sub-branch's, decided by a choice inside the branch: an SVM's
    ``gamma`` only for its ``"rbf"`` kernel) no trial of another value suggested. ``None`` when
    no categorical does, or more than one does (their branches are then not told apart here)."""
    groups = _conditional_groups(completed)
    if not groups:
        return None
    found = []
    for name, dist in sorted(search_space.items()):
        if not isinstance(dist, CategoricalDistribution):
            continue
        signatures: dict[object, set[frozenset[str]]] = {}
        for t in completed:
            signature = frozenset(g for g in groups if next(iter(g)) in t.distributions)
            signatures.setdefault(_choice(dist, t, name), set()).add(signature)
        cores = {value: frozenset.intersection(*s) for value, s in signatures.items()}
        nested = {value: frozenset().union(*s) - cores[value] for value, s in signatures.items()}
        seen = {value: frozenset().union(*s) for value, s in signatures.items()}
        if len(set(cores.values())) > 1 and all(not nested[v] & seen[w] for v in signatures for w in signatures
                                                if v != w):
            found.append(name)
    return found[0] if len(found) == 1 else None


def branches(gate: str, search_space: dict[str, BaseDistribution], completed: list[FrozenTrial]) -> list[Branch]:
    """One :class:`Branch` per choice of ``gate`` (a categorical of ``search_space``) that a
    trial can hold (:func:`~npbandit.integrations.optuna_trials.optuna_choices`: not one Optuna
    records as an earlier, equal choice), in the order of its choices: the completed trials
    that took it, and its search space -- the other parameters of ``search_space`` and, of its
    groups (those all its trials suggested), the parameters every one of its trials suggested
    with one distribution that an :mod:`npbandit.space` parameter holds."""
    dist = search_space.get(gate)
    if not isinstance(dist, CategoricalDistribution):
        raise ValueError(f"gate must name a categorical of search_space, got {gate!r} ({dist})")
    shared = {n: d for n, d in search_space.items() if n != gate}
    out = []
    for value in optuna_choices(dist):
        index = int(dist.to_internal_repr(value))
        trials = [t for t in completed if _choice(dist, t, gate) == index]
        space: dict[str, BaseDistribution] = {}
        if trials:
            space = dict(shared)
            own = set.intersection(*(set(t.distributions) for t in trials)) - set(search_space)
            for name in sorted(own):
                first = trials[0].distributions[name]
                if (not first.single() and parameter_of(first) is not None
                        and all(t.distributions[name] == first for t in trials)):
                    space[name] = first
        out.append(Branch(value, trials, space))
    return out


def branch_of(dist: CategoricalDistribution, options: list[Branch], value: object) -> Branch | None:
    """The branch of ``options`` (:func:`branches` of the gating categorical ``dist``) that a trial
    taking ``value`` is in: the one whose choice Optuna records ``value`` as (the first choice
    ``==`` to it); ``None`` when ``value`` is none of the choices."""
    try:
        index = int(dist.to_internal_repr(value))
    except ValueError:
        return None
    return next((b for b in options if int(dist.to_internal_repr(b.value)) == index), None)


def first_choice(dist: CategoricalDistribution, options: list[Branch], others: list[object]) -> Branch | None:
    """The branch of the gating categorical ``dist`` to take before the branches are compared:
    of the ``options`` (:func:`branches`) taken by fewer than :data:`MIN_BRANCH_TRIALS`
    trials, the one taken least (the first in the order of the choices on a tie). A choice's
    trials are its branch's completed ``trials`` and the values in ``others`` that are it (the
    gate's values the failed, pruned and running trials took), so a choice whose trials fail
    counts as tried. ``None`` when every choice has been taken that often. The branch, not its
    value, is returned: ``None`` is a choice a categorical can hold."""
    taken = [len(b.trials) for b in options]
    position = {int(dist.to_internal_repr(b.value)): i for i, b in enumerate(options)}  # choice index -> option
    for value in others:
        try:
            taken[position[int(dist.to_internal_repr(value))]] += 1
        except ValueError:  # none of the choices (an enqueued value)
            continue
    fewest = min(range(len(options)), key=lambda i: taken[i])
    return options[fewest] if taken[fewest] < MIN_BRANCH_TRIALS else None


def best_branch(options: list[Branch], n_startup_trials: int,
                propose: Callable[[Branch, int], tuple[dict[str, Any], float] | None]
                ) -> tuple[Branch, dict[str, Any]] | None:
    """The branch of ``options`` whose proposal has the highest acquisition value, and that
    proposal: ``propose(branch, startup)`` gives a branch's proposal (its parameters' values)
    and its value (:func:`acquisition_value`), ``startup`` the branch's design size for its
    trust region (``min(n_startup_trials, 2 * columns + 1)``, as a group's). Branches with no
    parameter of their own are passed over (all they could propose is their evaluated setting).
    ``None`` when no branch has a proposal."""
    best: tuple[float, Branch, dict[str, Any]] | None = None
    for branch in options:
        if not branch.search_space:
            continue
        columns = SearchSpace({n: parameter_of(d) for n, d in branch.search_space.items()}).dim
        found = propose(branch, min(n_startup_trials, 2 * columns + 1))
        if found is not None and math.isfinite(found[1]) and (best is None or found[1] > best[0]):
            best = (found[1], branch, found[0])
    return None if best is None else (best[1], best[2])
