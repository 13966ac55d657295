"""The NP's proposals for one search space of an Optuna study: what
:class:`~npbandit.integrations.optuna.NPSampler` proposes for its relative search space, for a
conditional group (:mod:`~npbandit.integrations.optuna_groups`) and for each branch of a
conditional study (:mod:`~npbandit.integrations.optuna_branches`).

:class:`StudyProposals` is mixed into the sampler: it reads the sampler's settings
(``acquisition``, ``acq_optimizer``, ``trust_region``, ``pending_strategy``, ...) and its loaded network
from the sampler's own attributes, so one sampler object holds them all, and the sampler's
module keeps Optuna's interface (which parameters go where, and when).
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np
import torch
from optuna.distributions import BaseDistribution
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from npbandit.acquisition.indexed_choices import IndexedChoices
from npbandit.acquisition.multi_objective import front_rows, warp_objectives
from npbandit.acquisition.optimizers import AcquisitionOptimizer
from npbandit.acquisition.pending import PendingStrategy
from npbandit.acquisition.point_value import acquisition_value
from npbandit.acquisition.proposal import nearest, propose, propose_in_region, warn_if_repeated
from npbandit.acquisition.subspace import SubspaceSearch, SubspaceStrategy, bind_search
from npbandit.acquisition.wide_spaces import check_subspace_space, default_subspace
from npbandit.integrations.optuna_branches import (
    MIN_BRANCH_TRIALS,
    Branch,
    best_branch,
    branch_of,
    branches,
    first_choice,
)
from npbandit.integrations.optuna_groups import conditional_group
from npbandit.integrations.optuna_observations import EncodedParams, StudyObservations, study_observations
from npbandit.integrations.optuna_trials import (
    FIRST_TRY_KEY,
    GROUP_PROPOSAL_KEY,
    holds,
    known_params,
    optuna_values,
    parameter_of,
    store_proposal,
    stored_proposal,
)
from npbandit.integrations.optuna_warnings import OnceWarnings
from npbandit.policies.trust_region import TrustRegion
from npbandit.space import SearchSpace
from npbandit.surrogates.pretrained import check_bo_checkpoint, served_width
from npbandit.threads import torch_threads

__all__ = ["StudyProposals"]


class StudyProposals:
    """The proposal half of :class:`~npbandit.integrations.optuna.NPSampler` (see the module
    docstring): the attributes below are the sampler's, set by its ``__init__``."""

    _surrogate: Any
    _max_context: int | None
    _warnings: OnceWarnings
    _proposing: threading.Lock
    _encoded: EncodedParams
    acquisition: str
    acq_optimizer: AcquisitionOptimizer
    beta: float
    num_restarts: int
    raw_samples: int
    avoid_repeats: bool
    trust_region: bool
    pending_strategy: PendingStrategy
    n_startup_trials: int
    seed: int
    threads: Any
    subspace: SubspaceStrategy | None
    constraints_func: Any

    def _propose_space(self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution],
                       completed: list[FrozenTrial], purpose: str, n_startup_trials: int | None = None,
                       fixed: dict[str, Any] | None = None, trials: list[FrozenTrial] | None = None,
                       avoid_repeats: bool | None = None,
                       ) -> tuple[dict[str, Any], StudyObservations, torch.Tensor] | None:
        """The NP's proposal for ``search_space`` in trial ``trial`` from the ``completed`` trials
        (seeded by ``purpose``; ``n_startup_trials``: the trust region's design, default the
        sampler's; ``fixed``: a branch's choice, ``trials``: the study's trials ``completed`` was
        taken from, as :meth:`_observations`; ``avoid_repeats``: the sampler's unless given): its
        values, what it saw and the point in the space's unit cube; ``None`` when no completed
        trial can be used."""
        space, search = self._space(search_space, len(study.directions))
        seen = self._observations(study, search_space, space, search, completed, trial.number, n_startup_trials,
                                  fixed, trials)
        if seen is None:
            return None
        # the proposal's warnings are passed on once it is made, the repeat warning once per study
        with torch_threads(self.threads), warnings.catch_warnings(record=True) as caught:
            u = self._propose(seen.X, seen.Y, seen.pending, self._trial_seed(trial.number, purpose), seen.region,
                              space, search, seen.k, seen.objectives,
                              self.avoid_repeats if avoid_repeats is None else avoid_repeats)
        self._warnings.proposal_warnings(study, caught, trial.number)
        return optuna_values(space.decode(u), search_space), seen, torch.as_tensor(u)

    def _recommend_in(self, study: Study, search_space: dict[str, BaseDistribution], completed: list[FrozenTrial],
                      fixed: dict[str, Any] | None = None) -> tuple[FrozenTrial, float] | None:
        """Of the ``completed`` trials, the one with the best de-noised posterior mean of the
        objective under the NP of ``search_space`` (:func:`~npbandit.acquisition.recommend.recommend`,
        as ``optimize``'s ``recommended_x``), and that mean (maximised units, times the study's one
        power of two per output, :func:`~npbandit.integrations.optuna_observations.study_scale`: so
        the means of two branches of one study compare); ``None`` before two usable completed
        trials. ``fixed``: a branch's choice, as :meth:`_observations`."""
        from npbandit.acquisition.recommend import recommend

        space, search = self._space(search_space)
        seen = self._observations(study, search_space, space, search, completed, None, fixed=fixed)
        if seen is None:
            return None
        # the completed trials' rows first: those are the candidates (failed ones are seen, never recommended)
        order = sorted(range(len(seen.trials)), key=lambda i: seen.trials[i].state != TrialState.COMPLETE)
        n_completed = sum(t.state == TrialState.COMPLETE for t in seen.trials)
        if n_completed < 2:
            return None
        with torch_threads(self.threads):
            found = recommend(self._build, seen.X[order], seen.Y[order], n_observed=n_completed, region=seen.region,
                              search=search, rng=np.random.default_rng(self._trial_seed(len(completed), "recommend")),
                              max_context=self._max_context, snap=None if space.continuous else space.snap,
                              constraints=seen.k)
        return None if found is None else (seen.trials[order[found[0]]], found[1])

    def _branch_proposal(self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution],
                         gate: str, trials: list[FrozenTrial]) -> dict[str, Any] | None:
        """The relative proposal of a conditional study whose categorical ``gate`` decides the
        branch (:mod:`~npbandit.integrations.optuna_branches`): a choice fewer than
        ``MIN_BRANCH_TRIALS`` trials have taken (completed, failed, pruned or running:
        :func:`first_choice`) first (``{gate: choice}``, the rest drawn independently); else the
        NP's point in each branch with ``MIN_BRANCH_TRIALS`` completed trials, from that branch's
        trials, and of those the one with the highest acquisition value, its branch's parameters
        stored with the trial for :meth:`sample_independent`. A branch wider than the checkpoint
        is searched in a subspace, as a wide relative space is, and its value read by the NP on
        its most relevant columns (:meth:`_value_model`). ``None`` when no branch has a point
        (the sampler then proposes the plain way). A trial enqueued with the gate's value
        (``study.enqueue_trial``) is proposed in that branch alone, its other parameters that
        branch's model's. ``trials``: the study's trials, read once (:meth:`_observations`)."""
        completed = [t for t in trials if t.state == TrialState.COMPLETE]
        options = branches(gate, search_space, completed)
        fixed = trial.system_attrs.get("fixed_params") or {}  # study.enqueue_trial's values
        if gate in fixed and (given := branch_of(search_space[gate], options, fixed[gate])) is not None:
            options = [given]  # the trial's choice is given: the NP proposes in its branch
        # the gate's value in the failed and pruned trials that suggested it, and in the other running trials
        # (suggested, enqueued or proposed), so a choice whose trials fail or are under way counts as tried
        others = []
        for t in trials:
            if t.state not in (TrialState.FAIL, TrialState.PRUNED, TrialState.RUNNING):
                continue
            params = t.params if gate in t.params or t.state != TrialState.RUNNING else known_params(t)
            if t.number != trial.number and gate in params:
                others.append(params[gate])
        first = first_choice(search_space[gate], options, others)
        if first is not None:  # the rest of the trial is the independent sampler's, as a start-up trial's
            study._storage.set_trial_system_attr(trial._trial_id, FIRST_TRY_KEY, True)
            return {gate: first.value}
        # a choice tried that often whose trials mostly failed has no model: it is passed over
        options = [b if len(b.trials) >= MIN_BRANCH_TRIALS else Branch(b.value, b.trials, {}) for b in options]
        everything = self._observations(study, search_space, self._space(search_space)[0], None, completed, None,
                                        trials=trials)
        if everything is None:
            return None

        def propose_in(branch: Branch, startup: int) -> tuple[dict[str, Any], float] | None:
            found = self._propose_space(study, trial, branch.search_space, branch.trials, f"branch:{branch.value!r}",
                                        startup, {gate: branch.value}, trials)
            if found is None:
                return None
            params, seen, u = found
            near = nearest(seen.X, u, self._max_context)
            with torch_threads(self.threads):
                return params, acquisition_value(self._value_model(seen.X[near], seen.Y[near]), u, self.acquisition,
                                                 best_f=float(everything.Y[:, 0].max()), beta=self.beta,
                                                 outputs=everything.Y, constraints=everything.k,
                                                 seed=self._trial_seed(trial.number, f"value:{branch.value!r}"))

        best = best_branch(options, self.n_startup_trials, propose_in)
        if best is None:
            return None
        chosen = {gate: best[0].value, **best[1]}
        store_proposal(study, trial, {n: v for n, v in chosen.items() if n not in search_space}, GROUP_PROPOSAL_KEY)
        return {n: v for n, v in chosen.items() if n in search_space}

    def _sample_conditional(self, study: Study, trial: FrozenTrial, name: str,
                            dist: BaseDistribution) -> tuple[str, Any]:
        """``("proposed", value)``: the NP's value of ``name`` stored with this trial (its
        branch's proposal, or its conditional group's, :mod:`~npbandit.integrations.optuna_groups`,
        made at the first of the group's parameters the trial suggests and stored with the
        trial, where the others and other workers read it); ``("startup", None)``: the study or
        the group is still in its start-up (the group's: ``min(n_startup_trials, 2 * columns +
        1)`` completed trials that suggested it, as ``optimize``'s initial design);
        ``("none", None)``: ``name`` is in no conditional group the NP can model. A trial that
        takes a branch's choice first (:func:`~npbandit.integrations.optuna_branches.first_choice`)
        is a start-up trial for the parameters its proposal left out."""
        if len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))) < self.n_startup_trials:
            return "startup", None
        with self._proposing:  # as sample_relative: other threads' proposals are stored before this reads
            trials = study.get_trials(deepcopy=False)  # read once (_observations), after waiting for the lock
            completed = [t for t in trials if t.state == TrialState.COMPLETE]
            current = study._storage.get_trial(trial._trial_id)
            stored = stored_proposal(current, GROUP_PROPOSAL_KEY)
            if name in stored and holds(dist, stored[name]):
                return "proposed", stored[name]
            if current.system_attrs.get(FIRST_TRY_KEY):
                return "startup", None
            group = conditional_group(name, dist, completed)
            if group is None:
                return "none", None
            startup = min(self.n_startup_trials, 2 * self._space(group.search_space)[0].dim + 1)
            if len(group.trials) < startup:
                return "startup", None
            found = self._propose_space(study, trial, group.search_space, group.trials,
                                        "group:" + ",".join(sorted(group.search_space)), startup, trials=trials)
            if found is None:
                return "none", None
            store_proposal(study, current, {**stored, **found[0]}, GROUP_PROPOSAL_KEY)
        return "proposed", found[0][name]

    def _space(self, search_space: dict[str, BaseDistribution],
               objectives: int = 1) -> tuple[SearchSpace, SubspaceSearch | None]:
        """``search_space`` as a :class:`SearchSpace` (parameters by name, sorted), and the
        subspace it is searched in when its unit cube has more columns than the checkpoint
        takes (fixed by the sampler's seed), else ``None``. An ``IndexedChoices`` given as
        ``subspace`` is taken in that order when it holds the same parameters. A study of
        several ``objectives`` is searched in the whole cube (``None``), its NP reading the
        most relevant columns (:meth:`_value_model`): the subspaces follow one objective's
        incumbent."""
        names = sorted(search_space)
        space = SearchSpace({n: parameter_of(search_space[n]) for n in names})
        d = space.dim  # columns of the unit cube: a categorical of k >= 3 choices takes k
        width = check_bo_checkpoint(self._surrogate.card, d,
                                    purpose=f"NPSampler over {len(names)} parameters in {d} unit-cube columns "
                                            f"({', '.join(names)})")
        if d <= width:
            return space, None
        if objectives > 1:
            if self.subspace is not None:
                warnings.warn(f"NPSampler(subspace={self.subspace!r}) is not used in a study of several objectives: "
                              f"its whole cube is searched, the NP reading the most relevant columns",
                              RuntimeWarning, stacklevel=2)
            return space, None
        strategy = self.subspace or default_subspace(space)
        if isinstance(strategy, IndexedChoices) and dict(strategy.space.items()) == dict(space.items()):
            strategy = IndexedChoices(space, then=strategy.then)  # the same parameters, in the sampler's order
        check_subspace_space(strategy, space)
        return space, bind_search(strategy, d, width, self.seed)

    def _build(self, X: torch.Tensor, Y: torch.Tensor):
        """The NP conditioned on ``X [n, w]``, ``Y [n, 1 + k]`` (an ``NPModel``)."""
        from npbandit.models import NPModel

        return NPModel.from_pretrained(self._surrogate, X, Y)

    def _value_model(self, X: torch.Tensor, Y: torch.Tensor):
        """The model a branch's acquisition value is read from, and a study of several
        objectives' model: the NP on ``X [n, w]``, ``Y [n, m + k]`` (one NP per output), and on
        a cube wider than the checkpoint, on the columns most relevant to ``Y`` (``NPModel``'s
        ``columns="relevant"``), so every branch has a value in the objective's units whatever
        its width."""
        from npbandit.models import NPModel

        wide = X.shape[-1] > served_width(self._surrogate)
        return NPModel.from_pretrained(self._surrogate, X, Y, **({"columns": "relevant"} if wide else {}))

    def _propose(self, X: torch.Tensor, Y: torch.Tensor, pending: torch.Tensor | None, seed: int,
                 region: TrustRegion | None = None, space: SearchSpace | None = None,
                 search: SubspaceSearch | None = None, constraints: int = 0, objectives: int = 1,
                 avoid_repeats: bool = True) -> np.ndarray:
        """The next point in the unit cube, ``[d]``, from completed ``X`` ``[n, d]`` with
        maximised values ``Y`` ``[n, 1]`` and the running trials ``pending`` ``[p, d]``,
        inside ``region`` when given; ``space``: the parameters whose cube it is, so the
        acquisition is judged where a trial would be evaluated (:func:`propose`); ``search``:
        the subspace a ``d`` wider than the checkpoint is searched in (``region`` then lives
        in its search cube, and points are snapped to the space after they are lifted);
        ``constraints``: ``k``, with ``Y`` then ``[n, 1 + k]`` (the constraint values after the
        objective's); ``objectives``: ``m``, with ``Y`` then ``[n, m + k]``: with ``m >= 2`` the
        log expected hypervolume improvement over the whole cube
        (:mod:`npbandit.acquisition.multi_objective`), each objective warped
        (:func:`~npbandit.acquisition.multi_objective.warp_objectives`), the NP on at most ``max_context`` trials
        (:func:`~npbandit.acquisition.multi_objective.front_rows`) and, in a space wider than the
        checkpoint, on its most relevant columns, the running trials believed at its mean;
        ``avoid_repeats``: whether an evaluated point may not be proposed again."""
        snap = None if space is None or space.continuous else space.snap
        if objectives > 1:
            keep = front_rows(Y, objectives, constraints, self._max_context)
            Y = warp_objectives(Y, objectives, constraints)
            point = propose(self._value_model(X[keep], Y[keep]), "logei", dim=X.shape[-1], best_f=None, seed=seed,
                            pending=pending, outputs=Y, observed=X if avoid_repeats else None, space=space,
                            constraints=constraints, objectives=objectives, num_restarts=self.num_restarts,
                            raw_samples=self.raw_samples, acq_optimizer=self.acq_optimizer)
            if avoid_repeats:
                warn_if_repeated(point, X, snap)
            return point
        build = self._build
        settings = {"beta": self.beta, "num_restarts": self.num_restarts, "raw_samples": self.raw_samples,
                    "acq_optimizer": self.acq_optimizer}
        if constraints:
            settings["constraints"] = constraints
        # running trials are believed at a value (the liar rule) in propose, shared with optimize(batch_size=q)
        if search is not None:
            point = search.propose(region, X, Y, build, self.acquisition, seed=seed, pending=pending,
                                   avoid_repeats=avoid_repeats, liar=self.pending_strategy, snap=snap,
                                   max_context=self._max_context, **settings)
            return point if snap is None else snap(torch.as_tensor(point)).numpy()
        if region is not None:
            return propose_in_region(region, X, Y, build, self.acquisition, seed=seed, pending=pending,
                                     avoid_repeats=avoid_repeats, liar=self.pending_strategy, space=space,
                                     max_context=self._max_context, **settings)
        point = propose(build(X, Y), self.acquisition, dim=X.shape[-1], best_f=None if constraints else Y.max(),
                        seed=seed, pending=pending,
                        pending_strategy=self.pending_strategy, outputs=Y, observed=X if avoid_repeats else None,
                        space=space, **settings)
        if avoid_repeats and self.acquisition in ("logei", "ucb"):  # those that keep the repeat check
            warn_if_repeated(point, X, snap)
        return point

    def _observations(self, study: Study, search_space: dict[str, BaseDistribution], space: SearchSpace,
                      search: SubspaceSearch | None, completed: list[FrozenTrial], number: int | None,
                      n_startup_trials: int | None = None, fixed: dict[str, Any] | None = None,
                      trials: list[FrozenTrial] | None = None) -> StudyObservations | None:
        """What a proposal for trial ``number`` (``None``: no trial) sees of the study, with
        this sampler's settings (:func:`~npbandit.integrations.optuna_observations.study_observations`);
        ``n_startup_trials``: the trust region's design (default the sampler's); ``fixed``: the
        branch's choice the failed and running trials seen must have taken; ``trials``: the
        study's trials, read once, that ``completed`` was taken from (a proposal's: every trial in
        one state; ``None``: read now)."""
        return study_observations(study, search_space, space, search, completed, number,
                                  constrained=self.constraints_func is not None, trust_region=self.trust_region,
                                  n_startup_trials=self.n_startup_trials if n_startup_trials is None
                                  else n_startup_trials, warn_left_out=self._warnings.left_out, fixed=fixed,
                                  encoded=self._encoded, trials=trials)

    def _trial_seed(self, number: int, purpose: str) -> int:
        key = [self.seed, number, *purpose.encode()]
        return int(np.random.SeedSequence(key).generate_state(1)[0] % 2**31)
