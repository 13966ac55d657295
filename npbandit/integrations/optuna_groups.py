"""The conditional parameters of an Optuna study, group by group, for
:class:`~npbandit.integrations.optuna.NPSampler`.

In a define-by-run study a choice decides which other parameters a trial suggests (an SVM's
``C`` and ``gamma`` only when ``classifier == "svm"``). Those parameters are missing from some
completed trials, so they are not in Optuna's intersection search space, which is what the
sampler proposes jointly. This module finds them in *groups*: the finest partition of the
parameter names of the completed trials in which every trial suggests either all of a group or
none of it (Optuna's ``TPESampler(multivariate=True, group=True)`` decomposes a space the
same way). A group some completed trial lacks is *conditional*; the sampler proposes it as a
search space of its own, modelled on the trials that suggested it.

Within a group only the parameters every one of its trials suggested with one distribution,
and that an :mod:`npbandit.space` parameter can hold, are modelled; so a parameter whose range
depends on an earlier choice stays with the independent sampler. What the group's model does
not see -- the parameters outside the group, the branch choice included -- is the same for
every trial of a branch (or, for a shared parameter, a source of noise in its values), which
is the assumption TPE's groups make too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.trial import FrozenTrial

from npbandit.integrations.optuna_trials import parameter_of

__all__ = ["parameter_groups", "ConditionalGroup", "conditional_group", "unmodelled_branches"]


def parameter_groups(trials: Iterable[FrozenTrial]) -> list[frozenset[str]]:
    """The finest partition of the trials' parameter names in which each trial suggested
    either every name of a group or none: each trial's set of names splits every group it
    cuts in two, and its names in no group yet form a new one. Ordered by each group's
    first name in sorted order (the same groups whatever the trials' order)."""
    groups: list[frozenset[str]] = []
    for trial in trials:
        names = frozenset(trial.distributions)
        split: list[frozenset[str]] = []
        for group in groups:
            split.extend(part for part in (group & names, group - names) if part)
        seen = frozenset().union(*groups) if groups else frozenset()
        if names - seen:
            split.append(names - seen)
        groups = split
    return sorted(groups, key=lambda g: min(g))


@dataclass(frozen=True)
class ConditionalGroup:
    """A conditional group's modelled parameters ``search_space`` (name -> the distribution
    every one of ``trials`` suggested it with) and ``trials``, the completed trials that
    suggested the group."""

    search_space: dict[str, BaseDistribution]
    trials: list[FrozenTrial]


def conditional_group(name: str, distribution: BaseDistribution,
                      completed: list[FrozenTrial]) -> ConditionalGroup | None:
    """The conditional group parameter ``name`` (suggested now with ``distribution``) belongs to
    among the ``completed`` trials, with the parameters of it that can be modelled, or ``None``:
    no completed trial suggested ``name``, every one did (it is not conditional), some trial of
    the group suggested it with another distribution, or it cannot be modelled (a single value,
    a categorical whose choices :class:`~npbandit.space.Choice` cannot hold)."""
    if distribution.single() or parameter_of(distribution) is None:
        return None
    group = next((g for g in parameter_groups(completed) if name in g), None)
    if group is None:
        return None
    trials = [t for t in completed if name in t.distributions]
    if len(trials) == len(completed):
        return None
    space: dict[str, BaseDistribution] = {}
    for member in sorted(group):
        first = trials[0].distributions[member]
        if (not first.single() and parameter_of(first) is not None
                and all(t.distributions[member] == first for t in trials)):
            space[member] = first
    if space.get(name) != distribution:
        return None
    return ConditionalGroup(space, trials)


def unmodelled_branches(search_space: dict[str, BaseDistribution], completed: list[FrozenTrial]) -> str | None:
    """The warning for a sampler that models only ``search_space`` (the intersection search
    space) when that holds only categoricals while the ``completed`` trials suggested other
    parameters it could model (a conditional space whose groups are not modelled): those are
    drawn independently in every trial, and a model of the choices alone tends to keep one of
    them. ``None`` when that is not the case."""
    if not all(isinstance(d, CategoricalDistribution) for d in search_space.values()):
        return None
    others = sorted({name for t in completed for name, dist in t.distributions.items()
                     if name not in search_space and not dist.single() and parameter_of(dist) is not None})
    if not others:
        return None
    shown = ", ".join(map(repr, others[:4])) + (f" and {len(others) - 4} more" if len(others) > 4 else "")
    modelled = ", ".join(map(repr, sorted(search_space)))
    return (f"NPSampler models only the categorical(s) {modelled} of this study; {shown} are missing from some "
            f"completed trial or changed distribution (a conditional search space), so they are drawn independently "
            f"in every trial and the NP tends to keep one choice. NPSampler(conditional=True), the default, models "
            f"them group by group (docs/guides/optuna.md)")
