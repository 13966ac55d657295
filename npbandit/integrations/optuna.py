"""``NPSampler``: a pretrained neural process as an Optuna sampler.

    import optuna
    from npbandit.integrations.optuna import NPSampler

    study = optuna.create_study(sampler=NPSampler(seed=0))      # "tnpd-bo" by default
    study.optimize(objective, n_trials=30)

After ``n_startup_trials`` completed trials, every parameter that all completed trials
share with one distribution (Optuna's intersection search space: floats, log-scale and
stepped ones included, ints and categoricals) is proposed jointly: the distributions are
read as an :class:`npbandit.space.SearchSpace` (``FloatDistribution`` as ``Float``,
``IntDistribution`` as ``Int``, ``CategoricalDistribution`` as an unordered ``Choice``,
one-hot for three or more choices), whose unit cube the NP conditions on (``NPModel``),
and the point maximising the acquisition -- judged where the trial would be evaluated, on
the ints' grid and at one choice per categorical
(:mod:`npbandit.acquisition.mixed`) -- is found by the same
:func:`npbandit.acquisition.propose` that ``npbandit.optimize`` uses. Everything else
(parameters some trials lack or suggested with another distribution, the start-up trials)
comes from an independent sampler -- except in a conditional (define-by-run) space, where a
categorical decides which other parameters a trial suggests: there the parameters suggested
together (one branch's) are proposed as a search space of their own, modelled on the trials
that suggested them (``conditional=True``, the default; :mod:`npbandit.integrations.optuna_groups`).

Outcome constraints: ``NPSampler(constraints_func=...)`` as Optuna's ``TPESampler`` and
``GPSampler`` take it (a completed trial -> a sequence of floats, feasible when all are
``<= 0``; stored in the trial's system attributes by :meth:`NPSampler.after_trial`), or the
values a trial sets with ``trial.set_constraint`` (Optuna 5). The NP then models the
objective and each constraint (:class:`~npbandit.models.NPModel` on ``1 + k`` columns) and
maximises expected improvement over the best feasible trial weighted by the probability
of feasibility, as ``optimize(constraints=...)`` does.

Reproducibility: each trial's proposal is seeded from ``(seed, trial.number)`` alone, and
so are the default start-up draws; one worker with one seed therefore repeats its trials
exactly, and several workers (threads via ``n_jobs``, or processes sharing an RDB storage)
draw different random points even when they share a seed. Trials other workers are still
running count as observations at a believed value (by default each at the NP's own mean
there, the kriging believer; ``liar="mean"`` is a constant liar as
``TPESampler(constant_liar=True)``; ``NPSampler(liar=...)``, by default as ``optimize``), so
a worker does not propose a point another is evaluating. A running trial counts from the
moment its proposal is made: the proposal is stored with the trial (its system attributes,
as ``GPSampler`` shares its own), so it is seen before the objective has suggested every
parameter; the values enqueued for it
(``study.enqueue_trial``) and those it suggested stand in for the proposal's. Within one
process (``n_jobs`` threads) proposals are made one at a time, each after the others were
stored; processes sharing a storage see each other's once stored, so two proposals made at
the same moment see neither and can be the same point.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

try:
    from optuna.distributions import BaseDistribution, CategoricalDistribution
    from optuna.logging import get_logger
    from optuna.samplers import BaseSampler, RandomSampler
    from optuna.search_space import IntersectionSearchSpace
    from optuna.study import Study
    from optuna.trial import FrozenTrial, TrialState
except ImportError as err:  # pragma: no cover - exercised only without Optuna
    raise ImportError("npbandit.integrations.optuna needs Optuna: pip install -e \".[optuna]\" in the clone "
                      f"(or pip install optuna) ({err})") from None

from npbandit.acquisition.constrained import CONSTRAINED_ACQUISITIONS
from npbandit.acquisition.optimizers import AcquisitionOptimizer, resolve_acq_optimizer
from npbandit.acquisition.pending import DEFAULT_LIAR, PendingStrategy, pending_strategy
from npbandit.acquisition.proposal import ACQUISITIONS
from npbandit.acquisition.subspace import SubspaceStrategy, check_subspace
from npbandit.integrations.optuna_branches import branches, gating_choice
from npbandit.integrations.optuna_observations import MAX_ENCODED_SPACES, EncodedParams
from npbandit.integrations.optuna_proposals import StudyProposals
from npbandit.integrations.optuna_trials import (
    check_objectives,
    check_single_objective,
    independent_reason,
    optuna_values,
    parameter_of,
    store_constraints,
    store_proposal,
)
from npbandit.integrations.optuna_warnings import OnceWarnings
from npbandit.optimize_surrogate import SURROGATES
from npbandit.surrogates.pretrained import (
    check_checkpoint_kind,
    checkpoint_use,
    context_limit,
    load_surrogate,
)
from npbandit.threads import check_threads
from npbandit.validation import check_bool, check_int, check_real, check_seed, path_as_str

__all__ = ["NPSampler"]


# Optuna's verbosity, handler and propagation (optuna.logging.set_verbosity, disable_default_handler,
# enable_propagation) act on its library logger, "optuna": named under it, this sampler's messages are shown,
# formatted and silenced as TPESampler's and GPSampler's are (OptunaHub's samplers name theirs so too)
_LOGGER = get_logger(f"optuna.{__name__}")


class NPSampler(StudyProposals, BaseSampler):
    """Optuna sampler that proposes float, int and categorical parameters with a pretrained
    NP surrogate.

    Args:
        checkpoint: a ``bo`` checkpoint (name or path, ``str`` or ``os.PathLike``; ``"tnpd"`` / ``"cmanp"`` are
            accepted as in ``optimize``). Default ``"tnpd-bo"``, as ``optimize``'s default.
            Its width (6 for the shipped ``*-bo`` checkpoints) is the most unit-cube columns
            its model takes (one per float, int or two-choice categorical, one per choice of a
            categorical with three or more); more are proposed in a subspace of that width
            (``subspace``).
        acquisition: ``"logei"`` (default), ``"ucb"``, ``"thompson"`` or ``"marginal-thompson"``,
            as in ``optimize``.
        n_startup_trials: completed trials before the NP proposes (before that, the
            independent sampler draws every parameter). Default 10, as Optuna's GPSampler.
        seed: seeds the start-up draws and every proposal; ``None`` draws one.
        independent_sampler: samples the parameters outside the NP's search space and the
            start-up trials. Default: a ``RandomSampler`` seeded per trial from
            ``(seed, trial.number)``.
        beta: UCB's exploration weight.
        acq_optimizer: how the acquisition is maximised
            (:mod:`npbandit.acquisition.optimizers`), as ``optimize``'s. ``None`` (default):
            what the checkpoint's card recommends (``CandidateSearch()`` for ``tnpd-bo``),
            else ``GradientRestarts()``, as ``optimize`` does.
        num_restarts, raw_samples: ``optimize_acqf``'s settings; either one given (and no
            ``acq_optimizer``) selects ``GradientRestarts(num_restarts, raw_samples)``.
        avoid_repeats: never propose a point a completed trial has evaluated (as in
            ``optimize``; int, stepped and categorical parameters compared as evaluated);
            ``False`` for a noisy objective. With ``conditional=False`` in a study whose
            trials hold parameters the NP does not propose, a trial is not judged by the NP's
            parameters alone, so they may repeat.
        trust_region: propose inside a trust region around the best trial, the NP seeing
            the trials in it as its whole domain, as ``optimize`` does by default (see
            :class:`~npbandit.policies.BOPolicy`). The region is replayed from the
            completed trials in the order of their numbers at every proposal, so it needs
            no state of its own and every worker of a study agrees on it; when more trials lie
            in its box than the checkpoint was trained with, the NP sees those nearest the
            best trial (as ``BOPolicy(max_context=...)``). ``False``: one model of every
            completed trial.
        liar: how running trials enter a worker's proposal: a
            :class:`~npbandit.acquisition.pending.PendingStrategy` (as ``BOPolicy(liar=...)``
            takes one), or the name of a shipped one: ``"worst"``, ``"mean"`` or ``"best"`` of
            the completed trials the NP sees (in the trust region, those in its box;
            ``ConstantLiar``), ``"believer"``: each at the NP's own mean there (the kriging
            believer, ``KrigingBeliever``), or ``"penalty"`` (LogEI only): at no value, LogEI
            damped around each (``LocalPenalisation``); default as ``optimize``'s. The
            strategy is the sampler's ``pending_strategy``, its name ``liar``.
        warn_independent_sampling: log a warning, saying why, when, past the start-up
            trials, a parameter is drawn by the independent sampler instead of the NP: one
            whose distribution changed between trials, or that some completed trial lacks and
            no conditional group holds (below). The logger is under Optuna's
            (``optuna.npbandit.integrations.optuna``), so ``optuna.logging.set_verbosity`` and
            Optuna's handler apply to it as to ``GPSampler``'s.
        conditional: in a conditional (define-by-run) space, propose the parameters some
            completed trials lack group by group (:mod:`~npbandit.integrations.optuna_groups`):
            the parameters that are suggested together (one branch's) are a search space of
            their own, modelled by the NP on the trials that suggested them, once
            ``min(n_startup_trials, 2 * columns + 1)`` of those completed (before that, the
            independent sampler draws them); where a categorical decides the branch, each of its
            choices is proposed in by its own model and the trial takes the branch whose point
            has the highest acquisition value (:mod:`~npbandit.integrations.optuna_branches`).
            Default ``True``. ``False``: only the
            intersection search space is the NP's, the rest the independent sampler's, with a
            ``RuntimeWarning`` once per study when that leaves the NP only categoricals.
        threads: torch's intra-op threads for each proposal
            (:class:`~npbandit.threads.torch_threads`; the objective's own threads are left
            alone): a positive int, ``"torch"`` (torch's own count) or ``None`` (default:
            ``NPBANDIT_THREADS``, else ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``, else 1). With
            ``n_jobs`` workers each worker thread runs its proposals at this count.
        subspace: a :class:`~npbandit.acquisition.subspace.SubspaceStrategy` for a search
            space whose unit cube has more columns than the checkpoint's width (a categorical
            of ``k >= 3`` choices counts ``k``); ``None``
            (default): :func:`~npbandit.acquisition.wide_spaces.default_subspace`, as
            ``optimize``. Bound to the sampler's ``seed``, so every trial and worker sees the
            same subspace; the region is replayed in its search cube. Start-up trials whose
            relative search space is known (every trial after the first completed one) are
            drawn uniformly in the search cube and lifted, so with an embedding
            (``CountSketch``) they lie in it; the others (the first, and any suggested before a
            trial completed) are the independent sampler's, and the NP sees their
            least-squares projections onto the embedding.
        constraints_func: outcome constraints, as Optuna's samplers take them: a callable of a
            finished trial (a ``FrozenTrial``) returning a sequence of floats, the trial feasible
            when every value is ``<= 0``. :meth:`after_trial` calls it on every completed (and
            pruned) trial and stores the values in the trial's system attributes under
            ``"constraints"``, where Optuna reads them (``study.best_trial`` is then the best
            feasible trial); a value that is not a real number, or NaN, is refused with an
            error naming ``constraints_func``. ``None`` (default): the values trials set
            themselves with ``trial.set_constraint`` (Optuna 5), if any. With constraints the
            NP models the objective and each constraint, and the acquisition is expected
            improvement over the best feasible trial weighted by the probability of feasibility
            (the probability of feasibility alone while no trial is feasible; ``"logei"``
            only); the trust region centres on the best feasible trial; completed trials without
            constraint values are left out (with a warning), and failed ones are seen at the
            worst objective value and the worst value of each constraint.
        max_encoded_spaces: the search spaces whose trials' unit-cube rows are kept between
            proposals (:class:`~npbandit.integrations.optuna_observations.EncodedParams`), those
            most recently read; a space let go has its rows computed again when it is read again,
            which costs time and changes no proposal. An int >= 1; default
            :data:`~npbandit.integrations.optuna_observations.MAX_ENCODED_SPACES` (32), enough
            for a gate of up to 31 choices. Lower it to bound memory in a define-by-run study
            that meets many spaces with many trials each.

    Values come back as Optuna's own samplers give them: ints as ``int``, a stepped float's
    grid value as ``k * step + low`` in float64 (``0.35000000000000003`` for ``k = 7`` of
    ``step=0.05``, as ``RandomSampler``, ``TPESampler`` and ``GPSampler`` write it), each
    categorical one of its ``choices`` itself.

    Completed trials inform the NP, and so do the trials that gave no real value: failed ones (an exception,
    an interrupt, a NaN; not one that Optuna's heartbeat retry re-runs), pruned ones, and completed ones whose
    value is infinite on the worsening side (``inf`` minimised), each where it was evaluated (parameters it
    never suggested where the sampler proposed them: :mod:`~npbandit.integrations.optuna_observations`). The
    NP sees each at the worst completed value, so it is not proposed again and the search moves away from
    where trials fail or are pruned, and each counts as a trial that did not improve (the trust region). An
    infinity on the improving side (``-inf`` minimised, Optuna's best trial) is seen at the best finite value,
    as ``GPSampler`` clips it. Trials with a parameter outside its distribution (enqueued ones) are left out,
    with a warning. An enqueued trial that gives some parameters keeps them; past the start-up the others are
    the NP's proposal for the whole space (made as if the enqueued ones were free, as Optuna's ``GPSampler``
    and ``TPESampler`` do), and its result is modelled like any other's. One sampler may serve several studies
    in turn (the checkpoint is loaded once). ``study.direction`` decides whether the objective is minimised
    (Optuna's default) or maximised.

    A study of several objectives (``optuna.create_study(directions=[...])``) is searched with the log
    expected hypervolume improvement over the completed trials' Pareto front
    (:mod:`npbandit.acquisition.multi_objective`; ``acquisition="logei"`` only), the NP modelling each
    objective (and each constraint): without the trust region, in the whole cube (a space wider than the
    checkpoint through the NP's most relevant columns), the running trials believed at the NP's own mean
    in every output whatever ``liar`` says (the kriging believer: their believed values on the front, and,
    with ``avoid_repeats``, none proposed again), and on at most the checkpoint's context size of trials,
    the best non-dominated layers first (:func:`~npbandit.acquisition.multi_objective.front_rows`). A
    proposal's cost grows with the front (the acquisition's box decomposition; the Optuna guide).

    Raises:
        ValueError / TypeError: a bad argument, naming it (``"gp"`` / ``"random"`` or
            ``acquisition="qlognei"`` included, which this sampler does not offer).
        FileNotFoundError: no checkpoint has that name or path.
        CheckpointError: ``checkpoint`` was not trained on the ``bo`` prior with one output.
        ValueError: when a trial starts, a study of several objectives with an ``acquisition``
            other than ``"logei"``.
    """

    def __init__(self, checkpoint: str = "tnpd-bo", *, acquisition: str = "logei", n_startup_trials: int = 10,
                 seed: int | None = None, independent_sampler: BaseSampler | None = None, beta: float = 2.0,
                 num_restarts: int | None = None, raw_samples: int | None = None, avoid_repeats: bool = True,
                 trust_region: bool = True, liar: str | PendingStrategy = DEFAULT_LIAR,
                 warn_independent_sampling: bool = True,
                 threads: int | str | None = None, subspace: SubspaceStrategy | None = None,
                 constraints_func: Callable[[FrozenTrial], Sequence[float]] | None = None,
                 acq_optimizer: AcquisitionOptimizer | None = None, conditional: bool = True,
                 max_encoded_spaces: int = MAX_ENCODED_SPACES) -> None:
        self.max_encoded_spaces = check_int("max_encoded_spaces", max_encoded_spaces, minimum=1)
        self.conditional = check_bool("conditional", conditional)
        self.subspace = check_subspace(subspace)
        if constraints_func is not None and not callable(constraints_func):
            raise TypeError(f"constraints_func must be callable (a FrozenTrial -> a sequence of floats, feasible when "
                            f"all are <= 0) or None, got {type(constraints_func).__name__}")
        if constraints_func is not None and acquisition not in CONSTRAINED_ACQUISITIONS:
            raise ValueError(f"constraints_func needs acquisition 'logei' (expected improvement weighted by the "
                             f"probability of feasibility); got {acquisition!r}")
        self.constraints_func = constraints_func
        checkpoint = path_as_str(checkpoint)
        if not isinstance(checkpoint, str):
            raise TypeError(f"checkpoint must be a checkpoint name or path, got {type(checkpoint).__name__}")
        if not checkpoint.strip():
            raise ValueError(f"checkpoint must be a checkpoint name or path, got {checkpoint!r}")
        name = SURROGATES.get(checkpoint, checkpoint)
        if name in ("gp", "random"):
            raise ValueError(f"checkpoint must be an NP checkpoint trained on the 'bo' prior, got {checkpoint!r} "
                             "(for a GP or random search use Optuna's GPSampler or RandomSampler)")
        offered = tuple(a for a in ACQUISITIONS if a != "qlognei")
        if acquisition not in ACQUISITIONS:
            raise ValueError(f"acquisition must be one of {offered}, got {acquisition!r}")
        if acquisition == "qlognei":  # Optuna asks for one trial at a time
            raise ValueError("acquisition 'qlognei' proposes a batch of points; NPSampler proposes one per trial "
                             "(several workers are handled by believing running trials at a value: liar=...). Use "
                             "'logei', 'ucb', 'thompson' or 'marginal-thompson'")
        check_int("n_startup_trials", n_startup_trials, minimum=0)
        if seed is not None:
            seed = check_seed("seed", seed)
        if independent_sampler is not None and not isinstance(independent_sampler, BaseSampler):
            raise TypeError(f"independent_sampler must be an optuna BaseSampler or None, "
                            f"got {type(independent_sampler).__name__}")
        if num_restarts is not None:
            check_int("num_restarts", num_restarts, minimum=1)
        if raw_samples is not None:
            check_int("raw_samples", raw_samples, minimum=1)
        beta = check_real("beta", beta, low=0.0)
        self.warn_independent_sampling = check_bool("warn_independent_sampling", warn_independent_sampling)
        self.threads = check_threads("threads", threads)
        self._surrogate = load_surrogate(name)
        check_checkpoint_kind(self._surrogate.card, prior="bo", y_dim=1, purpose="NPSampler")
        self.acq_optimizer = resolve_acq_optimizer(acq_optimizer, checkpoint_use(self._surrogate.card).get(
            "acq_optimizer"), num_restarts, raw_samples, acquisition=acquisition)
        self.checkpoint = self._surrogate.card["name"]
        self._max_context = context_limit(self._surrogate.card)  # the most trials the NP is shown at once
        self.acquisition = acquisition
        self.n_startup_trials = n_startup_trials
        self.seed = int(np.random.SeedSequence().generate_state(1)[0]) if seed is None else seed
        self._independent = independent_sampler
        self.beta = float(beta)
        self.num_restarts = 10 if num_restarts is None else num_restarts
        self.raw_samples = 512 if raw_samples is None else raw_samples  # the repeat check's fallback too
        if not isinstance(avoid_repeats, bool):
            raise TypeError(f"avoid_repeats must be a bool, got {type(avoid_repeats).__name__}")
        self.avoid_repeats = avoid_repeats
        if not isinstance(trust_region, bool):
            raise TypeError(f"trust_region must be a bool, got {type(trust_region).__name__}")
        self.trust_region = trust_region
        self.pending_strategy = pending_strategy(liar, acquisition)
        self.liar = self.pending_strategy.name
        # one per study: Optuna's cache is per study, and every in-memory study has id 0
        self._search_spaces: weakref.WeakKeyDictionary[Any, dict[int, IntersectionSearchSpace]] = \
            weakref.WeakKeyDictionary()
        self._warnings = OnceWarnings()
        # the trials this process started in the start-up and runs still, by storage (trial ids are per storage)
        self._startup_trials: weakref.WeakKeyDictionary[Any, set[int]] = weakref.WeakKeyDictionary()
        # one proposal at a time in this process: a worker thread reads the running trials only after
        # the proposals other threads made were stored with their trials
        self._proposing = threading.Lock()
        # the trials' rows, each encoded once (the encodings are the trials')
        self._encoded = EncodedParams(self.max_encoded_spaces)

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps (Optuna's recipe for saving a study pickles its sampler): all
        but the per-study cache of search spaces and the trials' encoded rows, both rebuilt
        from the trials, and the lock proposals are made under."""
        state = self.__dict__.copy()
        state["_search_spaces"] = None
        state["_startup_trials"] = None
        state["_proposing"] = None
        state["_encoded"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._search_spaces = weakref.WeakKeyDictionary()
        self._startup_trials = weakref.WeakKeyDictionary()
        self._proposing = threading.Lock()
        self.max_encoded_spaces = state.get("max_encoded_spaces", MAX_ENCODED_SPACES)  # a state without it: the default
        self._encoded = EncodedParams(self.max_encoded_spaces)

    # -- Optuna's sampler interface ---------------------------------------------------

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        """The float, int and categorical parameters every completed trial shares with one
        distribution (Optuna's intersection search space), less those with a single value
        (and categoricals whose choices a :class:`~npbandit.space.Choice` cannot hold: a
        NaN or infinite float)."""
        check_objectives(study, self.acquisition)
        spaces = self._search_spaces.setdefault(study._storage, {})
        space = spaces.setdefault(study._study_id, IntersectionSearchSpace())
        out = {}
        for name, dist in space.calculate(study).items():
            if dist.single():
                continue
            if parameter_of(dist) is None:
                self._warnings.unmodelled(study, name, dist)
            else:
                if isinstance(dist, CategoricalDistribution):
                    self._warnings.equal_choices(study, name, dist)
                out[name] = dist
        return out

    def sample_relative(self, study: Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        """The NP's proposal for ``search_space``, ``{name: value}``. Before
        ``n_startup_trials`` completed trials: ``{}`` (every parameter from the independent
        sampler), or, for a space wider than the checkpoint, a uniform point of the
        subspace's search cube, lifted; ``{}`` too when no completed trial can be used. The
        NP's proposal is stored with the trial, where other workers read it as pending.

        Raises:
            ValueError: the study has several objectives and ``acquisition`` is not ``"logei"``.
        """
        trials = study.get_trials(deepcopy=False)
        completed = [t for t in trials if t.state == TrialState.COMPLETE]
        startup = self._startup_trials.setdefault(study._storage, set())
        # a finished trial is forgotten here as well as in after_trial, which Optuna skips for a trial it
        # fails because its heartbeat stopped (the storage's state set, nothing else); only this study's
        # trials are looked at, so another study's running trials in the storage stay
        startup.difference_update(t._trial_id for t in trials if t.state.is_finished())
        if len(completed) < self.n_startup_trials:
            # a start-up trial throughout: trials that complete while it runs (other workers') do not
            # make its later parameters ones the NP was expected to propose (sample_independent's warning)
            startup.add(trial._trial_id)
        if not search_space:
            return {}
        objectives = check_objectives(study, self.acquisition)
        space, search = self._space(search_space, objectives)
        if len(completed) < self.n_startup_trials:
            if search is None:
                return {}
            # a start-up point of the search cube, lifted: the NP then sees the start-up trials where
            # it searches (their projections would be exact only for points in the embedding)
            z = torch.rand(1, search.search_dim, dtype=torch.float64,
                           generator=torch.Generator().manual_seed(self._trial_seed(trial.number, "startup")))
            return optuna_values(space.decode(space.snap(search.lift(z))[0].numpy()), search_space)
        if not self.conditional:
            self._warnings.conditional(study, search_space, completed)
        with self._proposing:  # other threads' proposals are stored with their trials before this one reads them
            # read again, once for every state: trials may have completed while this thread waited for the lock,
            # and one that completes between two reads would be neither completed nor running to this proposal
            trials = study.get_trials(deepcopy=False)
            completed = [t for t in trials if t.state == TrialState.COMPLETE]
            # a gate's branches are compared by one objective's acquisition value: several objectives search
            # the gate as a categorical of the relative space, each branch's own parameters as conditional groups
            gate = gating_choice(search_space, completed) if self.conditional and objectives == 1 else None
            params = None if gate is None else self._branch_proposal(study, trial, search_space, gate, trials)
            if params is None:
                # without conditional groups the other parameters are the independent sampler's: a trial
                # that repeats the relative space's values is not a repeated trial, so they may repeat
                drawn_elsewhere = not self.conditional and any(set(t.params) - set(search_space) for t in completed)
                found = self._propose_space(study, trial, search_space, completed, "relative", trials=trials,
                                            avoid_repeats=self.avoid_repeats and not drawn_elsewhere)
                if found is None:
                    return {}
                params = found[0]
            # shared with the other workers, which see this trial as pending at this point even before its
            # objective has suggested every parameter (as Optuna's GPSampler shares its proposals)
            store_proposal(study, trial, params)
        return params

    def sample_independent(self, study: Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        """A parameter outside the relative search space: with ``conditional``, the NP's
        proposal for its conditional group once the group has had its start-up trials
        (:meth:`_sample_conditional`); otherwise the independent sampler's draw."""
        status, value = (self._sample_conditional(study, trial, param_name, param_distribution)
                         if self.conditional else ("none", None))
        if status == "proposed":
            return value
        if self.warn_independent_sampling and status == "none" and not param_distribution.single():
            completed = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            startup = trial._trial_id in self._startup_trials.get(study._storage, ())
            # the NP would be expected to propose it: the trial started past the start-up
            if completed and len(completed) >= self.n_startup_trials and not startup:
                _LOGGER.warning(f"NPSampler samples parameter {param_name!r} of trial {trial.number} independently, "
                                f"not with the NP: {independent_reason(param_name, param_distribution, completed)}. "
                                f"warn_independent_sampling=False hides this.")
        if self._independent is not None:
            return self._independent.sample_independent(study, trial, param_name, param_distribution)
        # one generator per (seed, trial, parameter): a trial's draws do not depend on which
        # trials this process ran before, so workers sharing a seed still differ
        sampler = RandomSampler(seed=self._trial_seed(trial.number, param_name))
        return sampler.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        """Refuse a study of several objectives with an ``acquisition`` other than ``"logei"``
        before the trial's objective runs (the trial is marked failed, so no running trial is
        left behind); then the independent sampler's ``before_trial``.

        Raises:
            ValueError: the study has several objectives and ``acquisition`` is not ``"logei"``.
        """
        try:
            check_objectives(study, self.acquisition)
        except ValueError:
            study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
            raise
        if self._independent is not None:
            self._independent.before_trial(study, trial)

    def after_trial(self, study: Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        """Store ``constraints_func``'s values of a completed or pruned trial (as Optuna's
        samplers do: under the system attribute ``"constraints"``, ``None`` when the function
        failed, which then raises); then the independent sampler's ``after_trial``."""
        self._startup_trials.get(study._storage, set()).discard(trial._trial_id)
        if self.constraints_func is not None and state in (TrialState.COMPLETE, TrialState.PRUNED):
            store_constraints(self.constraints_func, study, trial)
        if self._independent is not None:
            self._independent.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        """Reseed the user-given ``independent_sampler``, if any; the sampler's own ``seed``
        stays. Optuna calls this when ``study.optimize(n_jobs=...)`` starts its workers, so
        that copies of one generator do not repeat each other; this sampler's draws and
        proposals are keyed by ``(seed, trial.number)``, which workers never share, so they
        already differ, and a study run again with the same seed repeats its trials after a
        call too (unlike ``RandomSampler``, ``TPESampler`` and ``GPSampler``, whose later
        draws a call changes)."""
        if self._independent is not None:
            self._independent.reseed_rng()

    def recommended_trial(self, study: Study) -> FrozenTrial | None:
        """The completed trial the NP believes best: of the trials (every one, on the whole
        cube; through the subspace for a wide space), the one with the best de-noised
        posterior mean of the objective, of those predicted feasible with
        constraints (:mod:`npbandit.acquisition.recommend`, as ``optimize``'s
        ``recommended_x``). In a conditional study (``conditional``, a gating categorical):
        each branch's best by the NP of that branch, and of those the one with the best mean.
        On a noisy objective ``study.best_trial`` is the luckiest draw;
        this is a smoothed choice, as Ax reports beside it. ``None`` before two usable
        completed trials, or with no trial predicted feasible. Proposes nothing and changes
        no trial.

        Raises:
            ValueError: the study has more than one objective (``study.best_trials`` holds its
                Pareto front).
        """
        check_single_objective(study, "NPSampler.recommended_trial")
        search_space = self.infer_relative_search_space(study, None)
        completed = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if not search_space or len(completed) < 2:
            return None
        gate = gating_choice(search_space, completed) if self.conditional else None
        if gate is None:
            found = self._recommend_in(study, search_space, completed)
            return None if found is None else found[0]
        # a conditional study: each branch's best by its own model, the best of those by their means
        found = [self._recommend_in(study, b.search_space, b.trials, {gate: b.value})
                 for b in branches(gate, search_space, completed) if b.search_space]
        found = [f for f in found if f is not None]
        return max(found, key=lambda f: f[1])[0] if found else None
