"""What one :class:`~npbandit.integrations.optuna.NPSampler` proposal sees of a study
(:func:`study_observations`): the usable completed trials and the failed ones as unit-cube
rows ``X [n, d]`` and maximised values ``Y [n, m + k]`` (``m`` objectives), the trust region replayed from them,
and the points the running trials evaluate.

Which trials count: a completed trial whose parameters lie in the space (an enqueued one
off its grid or range is left out, with a warning); with constraints, one that holds
constraint values. Trials that gave no real value -- failed (an exception caught by
``study.optimize(catch=...)``, a NaN), completed with an infinite value on the worsening
side (``inf`` minimised, ``-inf`` maximised), or pruned -- are seen at the worst completed
value of each output, as ``optimize`` sees its failures: not proposed again, and searched
away from. An infinity on the improving side is Optuna's best trial, and is seen at the best
finite value (as ``GPSampler`` clips it). A failed or pruned trial is seen where it was
evaluated: its parameters as suggested and, for those it did not suggest (it failed before
suggesting them, or took a conditional branch without them), as the sampler proposed them
(the proposal stored with the trial); one with a parameter neither suggested nor proposed is
left out, and so is one that Optuna re-runs (:func:`retried_trials`: its worker stopped, and
its retry will say what the point gives). Values too large for their spread's variance to be
held in float64 (an objective's ``1e300`` for a bad point), or spanning less than ``2 ** -10``,
are scaled by a power of two for the whole study (:func:`study_scale`), which changes no
proposal of a study without them.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from optuna.distributions import BaseDistribution
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from npbandit.acquisition.subspace import SubspaceSearch
from npbandit.feasibility import check_constraint_count, is_feasible
from npbandit.integrations.optuna_trials import known_params, pending_points, trial_constraints
from npbandit.policies.trust_region import TrustRegion
from npbandit.space import SearchSpace
from npbandit.transforms.standardize import output_scale
from npbandit.validation import check_int

__all__ = ["StudyObservations", "study_observations", "EncodedParams", "MAX_ENCODED_SPACES", "RETRY_HISTORY_KEY",
           "retried_trials"]

#: the search spaces whose rows :class:`EncodedParams` keeps: a proposal reads the relative space and, in a
#: conditional study, each branch's and each conditional group's; this holds those of a gate of up to 31
#: choices. A study whose space keeps changing (define-by-run), or a sampler serving study after study,
#: meets new spaces without end: past this many the least recently read space is let go
MAX_ENCODED_SPACES = 32

#: ``(study, trials, kept, why)``: warns of the ``trials`` not ``kept`` (the sampler's, once per trial and reason)
LeftOut = Callable[[Study, list[FrozenTrial], list[FrozenTrial], str], None]


@dataclass(frozen=True)
class StudyObservations:
    """What one proposal sees of a study: the usable completed and failed ``trials`` in
    order of their numbers, their rows ``X [n, d]`` (the unit cube) and ``Y [n, m + k]``
    (the ``m = objectives`` maximised objectives, then ``k`` constraint values; a failed
    trial at the worst of each; each output scaled by :func:`study_scale`), the trust
    region replayed from them (or ``None``; always ``None`` with several objectives), and
    the points ``pending`` ``[p, d]`` the running trials evaluate (``None`` for none)."""

    trials: list[FrozenTrial]
    X: torch.Tensor
    Y: torch.Tensor
    k: int
    region: TrustRegion | None
    pending: torch.Tensor | None
    objectives: int = 1


class EncodedParams:
    """Trials' parameter values as rows of a search space's unit cube, each computed once:
    every proposal reads every trial of the study, and checking and encoding them all again
    made a proposal's cost grow with the study while the model's stays bounded (it sees at
    most ``max_context`` trials). A row is a function of the space and the values alone
    (each value keyed with its type, as :class:`~npbandit.space.Choice` tells ``1`` from
    ``True``), so keeping it changes no proposal.

    The rows of at most ``max_spaces`` search spaces are kept, those most recently read
    (:data:`MAX_ENCODED_SPACES` by default), so memory stays flat in the number of distinct
    spaces a study meets; a space let go has its rows computed again when it is read again,
    which costs time and changes no proposal.

    Raises:
        ValueError: ``max_spaces`` is not an int >= 1.
    """

    def __init__(self, max_spaces: int = MAX_ENCODED_SPACES) -> None:
        self.max_spaces = check_int("max_spaces", max_spaces, minimum=1)
        self._tables: OrderedDict[SearchSpace, dict[tuple, np.ndarray | None]] = OrderedDict()
        self._lock = threading.Lock()  # NPSampler's recommended_trial reads rows outside its proposal lock

    def encoder(self, space: SearchSpace) -> Callable[[Mapping[str, Any]], np.ndarray | None]:
        """``params -> row``: ``space.encode`` of ``params``' values of ``space`` (a mapping
        holding each of its names), ``None`` when one is not a value of it (outside its range,
        off its grid, among no choice)."""
        with self._lock:
            table = self._tables.get(space)
            if table is None:
                table = self._tables[space] = {}
                while len(self._tables) > self.max_spaces:
                    self._tables.popitem(last=False)
            else:
                self._tables.move_to_end(space)

        def row(params: Mapping[str, Any]) -> np.ndarray | None:
            values = {n: params[n] for n in space}
            key = tuple((type(v).__name__, v) for v in values.values())
            if key not in table:
                try:
                    table[key] = space.encode(values)
                except (TypeError, ValueError):
                    table[key] = None
            return table[key]

        return row


#: the system attribute in which Optuna's ``RetryHeartbeatStaleTrialCallback`` (``RetryFailedTrialCallback``
#: before Optuna 4.9) lists, in the trial it adds, the numbers of the failed trials that trial re-runs
RETRY_HISTORY_KEY = "retry_history"


def retried_trials(trials: list[FrozenTrial]) -> set[int]:
    """The numbers of the failed ones of ``trials`` (a study's) that a later trial re-runs. With a heartbeat
    (``RDBStorage(heartbeat_interval=..., heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback())``)
    Optuna fails a running trial whose worker stopped (killed, preempted) and adds a waiting
    trial with its suggested values: that failure says nothing of the point, whose value the
    retry gives."""
    return {int(n) for t in trials for n in t.system_attrs.get(RETRY_HISTORY_KEY) or ()}


def study_scale(trials: list[FrozenTrial], k: int) -> torch.Tensor:
    """``[m + k]``: per output (the ``m`` objectives, then ``k`` constraints), the power of two the values
    of every proposal's rows are multiplied by: :func:`~npbandit.transforms.standardize.output_scale`
    of the values the study's completed ``trials`` hold (a trial without constraint values holds
    none of those). One factor for the whole study, so the branches of a conditional study, each
    seen apart, compare in one unit."""
    rows = []
    for t in trials:
        if t.state == TrialState.COMPLETE:
            limits = list(trial_constraints(t)[:k]) if k else []
            rows.append([*t.values, *limits, *[math.nan] * (k - len(limits))])
    return output_scale(torch.tensor(rows, dtype=torch.float64).reshape(len(rows), -1))


def _failed_point(trial: FrozenTrial, search_space: dict[str, BaseDistribution],
                  row: Callable[[Mapping[str, Any]], np.ndarray | None],
                  fixed: dict[str, object] | None) -> dict[str, object] | None:
    """Where a failed or pruned ``trial`` is seen in ``search_space``: its parameters as
    suggested, and those it did not suggest (it failed first, or took a branch without them)
    as ``NPSampler`` proposed them (:func:`known_params`); ``None`` when some parameter is
    neither, was suggested with another distribution, lies outside the space (``row``:
    :meth:`EncodedParams.encoder`'s), or the trial did not take the values ``fixed``."""
    known = known_params(trial)
    if (not all(n in known for n in search_space)
            or any(n in trial.distributions and trial.distributions[n] != search_space[n] for n in search_space)
            or any(n not in known or known[n] != v for n, v in (fixed or {}).items())):
        return None
    return None if row(known) is None else known


def study_observations(study: Study, search_space: dict[str, BaseDistribution], space: SearchSpace,
                       search: SubspaceSearch | None, completed: list[FrozenTrial], number: int | None, *,
                       constrained: bool, trust_region: bool, n_startup_trials: int,
                       warn_left_out: LeftOut, fixed: dict[str, object] | None = None,
                       encoded: EncodedParams | None = None,
                       trials: list[FrozenTrial] | None = None) -> StudyObservations | None:
    """What a proposal for trial ``number`` (``None``: no trial) sees of ``search_space``
    (read as ``space``, searched through ``search``): the usable ``completed`` trials and
    the failed ones, their rows, the trust region replayed from them (``trust_region``; the
    first ``n_startup_trials`` its design), the running trials. ``constrained``: the
    sampler has a ``constraints_func`` (a study whose trials set constraint values is
    constrained too). ``warn_left_out`` is told of trials left out, and why. ``fixed``
    (name -> value): the failed and running trials seen are only those that took these
    values too (a branch's choice: ``completed`` holds that branch's trials alone).
    ``encoded``: the rows computed for earlier proposals (the sampler's; ``None``: none kept).
    ``trials``: the study's trials, read once, from which ``completed`` was taken (``None``: read
    them now). A proposal passes the list it took ``completed`` from, so that every trial is in
    one state for it: read apart, a trial that completed in between was neither completed nor
    running to it, and its point could be proposed again (another worker's, just finished).
    ``None`` when no completed trial can be used.

    Raises:
        ValueError: the trials hold different numbers of constraint values
            (:func:`~npbandit.feasibility.check_constraint_count`).
    """
    d = space.dim
    row = (encoded or EncodedParams()).encoder(space)
    usable = [t for t in completed if row(t.params) is not None]
    warn_left_out(study, completed, usable, "a parameter lies outside its range, off its grid or among no "
                  "choice (an enqueued trial), where the NP has no model")
    signs = [-1.0 if direction == StudyDirection.MINIMIZE else 1.0 for direction in study.directions]
    m = len(signs)
    maximised = {t.number: [sign * v for sign, v in zip(signs, t.values)] for t in usable}  # each trial's, once
    # an infinity on the improving side (-inf minimised: log(0) of a perfect score) is Optuna's best trial; it
    # is seen at the best finite value, as GPSampler clips it (one on the worsening side as a failed trial, below)
    finite = [t for t in usable if all(v > -math.inf for v in maximised[t.number])]
    if not any(all(map(math.isfinite, t.values)) for t in finite):
        return None
    constrained = constrained or any(trial_constraints(t) for t in finite)
    if constrained:
        kept = [t for t in finite if trial_constraints(t)]
        warn_left_out(study, finite, kept, "they have no constraint values (constraints_func did not run on "
                      "them, or they set none), and the NP models every constraint at every trial")
        finite = kept
        if not any(all(map(math.isfinite, t.values)) for t in finite):
            return None
        earlier = None  # the constraint values each earlier trial holds
        for t in finite:
            count = len(trial_constraints(t))
            check_constraint_count(count, earlier, "study", f"trial {t.number} holds", unit="completed trial",
                                   why=" (every trial needs the same number, from constraints_func or "
                                   "trial.set_constraint)")
            earlier = count
    # trials that gave no real value (the module docstring) are seen at the worst completed value
    trials = study.get_trials(deepcopy=False) if trials is None else trials
    retried = retried_trials(trials)
    failed = [(t, params) for t in trials if t.state in (TrialState.FAIL, TrialState.PRUNED)
              and t.number not in retried and (params := _failed_point(t, search_space, row, fixed)) is not None]
    failed += [(t, t.params) for t in usable if any(v == -math.inf for v in maximised[t.number])]
    # each objective's best finite value, where an infinity on the improving side is seen
    best = [max((maximised[t.number][j] for t in finite if math.isfinite(maximised[t.number][j])),
                default=-math.inf) for j in range(m)]
    completed_rows = [[min(v, b) for v, b in zip(maximised[t.number], best)] for t in finite]
    if constrained:
        completed_rows = [[*r, *trial_constraints(t)] for r, t in zip(completed_rows, finite)]
    finite = [t for t, r in zip(finite, completed_rows) if all(map(math.isfinite, r[:m]))]
    completed_rows = [r for r in completed_rows if all(map(math.isfinite, r[:m]))]
    worst = np.array(completed_rows).min(axis=0)
    if constrained:  # the worst value of each constraint is its largest
        worst[m:] = np.array(completed_rows)[:, m:].max(axis=0)
    rows = dict(zip((t.number for t in finite), completed_rows))
    seen_at = {t.number: params for t, params in failed}  # where each failed trial is seen
    finite = sorted(finite + [t for t, _ in failed], key=lambda t: t.number)
    X = torch.tensor(np.array([row(seen_at.get(t.number, t.params)) for t in finite]),
                     dtype=torch.float64).reshape(len(finite), d)
    Y = torch.tensor(np.array([rows.get(t.number, worst) for t in finite]),
                     dtype=torch.float64).reshape(len(finite), -1)  # [n, m + k], maximised objectives first
    k = Y.shape[-1] - m
    Y = Y * study_scale(trials, k)
    pending = pending_points(trials, space, number, fixed)  # what other workers are evaluating right now
    region = None
    if trust_region and m == 1:  # the trials in the order they were started, the first n_startup_trials the design
        order = sorted(range(len(finite)), key=lambda i: finite[i].number)
        # with constraints an infeasible (or failed) trial improves on nothing
        values = [float(Y[i, 0]) if finite[i].state == TrialState.COMPLETE and is_feasible(Y[i, 1:])
                  else -math.inf if k else float(Y[i, 0]) for i in order]
        region = (TrustRegion.replay(d, values, n_startup_trials) if search is None else
                  TrustRegion.replay(search.search_dim, values, n_startup_trials,
                                     failure_tolerance=max(4, search.active_dim)))
    return StudyObservations(finite, X, Y, k, region, pending, m)
