"""Warnings :class:`~npbandit.integrations.optuna.NPSampler` gives once per study (and per
parameter or trial) rather than at every trial: a parameter the NP cannot hold, a
conditional space it does not model, trials it leaves out. Optuna calls a sampler at every
trial, so without the record here a study of a hundred trials would repeat each warning a
hundred times."""

from __future__ import annotations

import warnings
import weakref
from typing import Any

from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.study import Study
from optuna.trial import FrozenTrial

from npbandit.acquisition.proposal import REPEATED_WARNING
from npbandit.integrations.optuna_groups import unmodelled_branches
from npbandit.integrations.optuna_trials import optuna_choices, unmodelled_reason

__all__ = ["OnceWarnings"]

# the stack level of the warnings the sampler gave from its own methods before this class held them: from
# here, the sampler method Optuna called is two frames up
_STACKLEVEL = 4


class OnceWarnings:
    """What a sampler warned of, so each warning is given once per study (a sampler may serve
    several studies in turn): for each storage, the ``(study id, reason, key)`` marks given.

    A study is its storage object and its id in it. The storage is held by a weak reference:
    every in-memory study has id 0, and a storage's ``id()`` is reused once it is collected,
    so a mark keyed by ``id()`` would silence a later study whose storage landed at a freed
    address; a weak key goes (with its marks) when its storage does, and holding no strong
    reference keeps a finished study's storage (and its trials) collectable. The marks are
    not pickled: a restored sampler meets its studies through new storage objects, and warns
    once per study again."""

    def __init__(self) -> None:
        self._given: weakref.WeakKeyDictionary[Any, set[tuple[int, str, object]]] = weakref.WeakKeyDictionary()

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._given = weakref.WeakKeyDictionary()

    def _first(self, study: Study, reason: str, key: object) -> bool:
        """Whether ``(study, reason, key)`` is new (and from now on known)."""
        given = self._given.setdefault(study._storage, set())
        mark = (study._study_id, reason, key)
        if mark in given:
            return False
        given.add(mark)
        return True

    def unmodelled(self, study: Study, name: str, dist: BaseDistribution) -> None:
        """The NP cannot hold parameter ``name``'s ``dist``, so the independent sampler draws it."""
        if self._first(study, "unmodelled", name):
            warnings.warn(f"NPSampler cannot model parameter {name!r} ({unmodelled_reason(dist)}); the independent "
                          f"sampler draws it in every trial", RuntimeWarning, stacklevel=_STACKLEVEL)

    def equal_choices(self, study: Study, name: str, dist: CategoricalDistribution) -> None:
        """Some of categorical ``name``'s choices equal earlier ones, so Optuna records them as
        those (:func:`~npbandit.integrations.optuna_trials.optuna_choices`) and no trial takes them."""
        kept = optuna_choices(dist)
        if len(kept) < len(dist.choices) and self._first(study, "equal choices", name):
            lost = [i for i, c in enumerate(dist.choices) if int(dist.to_internal_repr(c)) != i]
            warnings.warn(f"parameter {name!r}: its choices at positions {lost} equal earlier ones (True == 1, "
                          f"1.0 == 1, a repeat), and Optuna records a value as the first choice equal to it, so no "
                          f"trial takes them; NPSampler proposes among {list(kept)!r}", RuntimeWarning,
                          stacklevel=_STACKLEVEL)

    def conditional(self, study: Study, search_space: dict[str, BaseDistribution],
                    completed: list[FrozenTrial]) -> None:
        """A conditional space of which the NP models only the categoricals
        (:func:`~npbandit.integrations.optuna_groups.unmodelled_branches`)."""
        message = unmodelled_branches(search_space, completed)
        if message is not None and self._first(study, "conditional", None):
            warnings.warn(message, RuntimeWarning, stacklevel=_STACKLEVEL)

    def proposal_warnings(self, study: Study, caught: list[warnings.WarningMessage], number: int) -> None:
        """Pass on the warnings ``caught`` while trial ``number``'s proposal was made, the one that
        every point of the discrete space reached has been evaluated once per study: it holds for
        every later trial too, and Python's own memory of the warnings already shown is cleared by
        each ``catch_warnings`` block (BoTorch's, the proposal step's), so its ``default`` filter
        alone would show it at every trial. The others are passed on as they came."""
        for w in caught:
            if str(w.message) != REPEATED_WARNING:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
            elif self._first(study, "repeated", None):
                warnings.warn(f"NPSampler (trial {number}; said once per study): {REPEATED_WARNING}",
                              RuntimeWarning, stacklevel=_STACKLEVEL)

    def left_out(self, study: Study, trials: list[FrozenTrial], kept: list[FrozenTrial], why: str) -> None:
        """The ``trials`` not in ``kept`` are left out, for the reason ``why`` (once per trial and reason)."""
        numbers = {t.number for t in kept}
        skipped = [t.number for t in trials if t.number not in numbers and self._first(study, why, t.number)]
        if skipped:
            warnings.warn(f"NPSampler leaves out trial(s) {skipped}: {why}", RuntimeWarning, stacklevel=_STACKLEVEL)
