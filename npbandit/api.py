"""``npbandit.optimize``: Bayesian optimisation of a Python function in one call."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.optimizers import AcquisitionOptimizer
from npbandit.acquisition.pending import DEFAULT_LIAR, PendingStrategy
from npbandit.acquisition.subspace import SubspaceStrategy
from npbandit.envs.blackbox import ObjectiveError
from npbandit.loop.asynchronous import _check_async
from npbandit.loop.episode import _check_on_error, run_episode
from npbandit.objective_names import check_name, objective_label
from npbandit.optimize_result import OptimizeResult, ParetoResult, carry_history, run_history
from npbandit.optimize_setup import box_or_space, set_up_search
from npbandit.optimize_surrogate import SURROGATES
from npbandit.policies.trust_region import TrustRegionSettings
from npbandit.space import Parameter, SearchSpace
from npbandit.stopping import RunInterrupted
from npbandit.storage import DEFAULT_URL, RunRow
from npbandit.surrogates.base import NeuralProcess
from npbandit.validation import check_bool

__all__ = ["optimize", "OptimizeResult", "ParetoResult", "SURROGATES", "objective_label"]



def optimize(objective: Callable[[Any], Any], bounds: Any = None, surrogate: str | NeuralProcess = "tnpd",
             budget: int = 50,
             acquisition: str = "logei", minimize: bool | Sequence[bool] | Mapping[str, bool] = True,
             n_init: int | None = None,
             seed: int | None = 0,
             db: str | None = DEFAULT_URL, point_type: str = "numpy", on_error: str = "raise",
             progress: bool = True, commit_every: int | None = None, name: str | None = None,
             optimal_value: float | None = None, batch_size: int = 1, executor: Any = None,
             eval_timeout: float | None = None, output_warp: str | None = None,
             avoid_repeats: bool = True, trust_region: bool | TrustRegionSettings | None = None,
             liar: str | PendingStrategy = DEFAULT_LIAR, threads: int | str | None = None, *,
             space: SearchSpace | Mapping[str, Parameter] | None = None,
             initial: Sequence[Any] | int | RunRow | OptimizeResult | None = None,
             constraints: Callable[[Any], Sequence[float]] | None = None,
             acq_optimizer: AcquisitionOptimizer | None = None,
             subspace: SubspaceStrategy | None = None,
             callbacks: Callable[[list[dict[str, Any]]], Any] | Sequence[Callable] | None = None,
             branches: bool | None = None,
             parameter_constraints: Sequence[str] | None = None,
             ) -> OptimizeResult | ParetoResult:
    """Optimise ``objective`` over the box ``bounds``, or over a search space of named
    float, int and choice parameters, with a pretrained NP surrogate.

    Args:
        objective: a plain callable taking one point and returning one real number (a
            float, or a 1-element array / tensor / list; for several objectives, one per objective:
            see ``minimize``). With ``bounds`` the point is a 1-D numpy
            array of shape ``[d]`` (a torch tensor with ``point_type="torch"``); with a
            search space it is a dict ``{name: value}`` (ints as ``int``, choices as their
            values).
        bounds: ``2 x d`` (lower row, upper row), as in BoTorch (``(low, high)`` pairs per
            input, scipy.optimize's layout, are refused with their transpose named: at
            ``d = 2`` the two layouts cannot be told apart); or, in the same place, a
            search space: a :class:`~npbandit.space.SearchSpace` or a dict of names to
            :class:`~npbandit.space.Float` / :class:`~npbandit.space.Int` /
            :class:`~npbandit.space.Choice` (``optimize(f, {"lr": Float(1e-4, 1e-1,
            log=True), "layers": Int(1, 4)})``), or its record
            (:meth:`~npbandit.space.SearchSpace.describe`). The surrogate searches the
            space's unit cube (``space.dim`` columns, :mod:`npbandit.space`); every point
            it proposes is snapped to the value it decodes to, so it sees each
            observation where it was evaluated.
        space: the search space by keyword (``optimize(f, space={...})``), instead of
            ``bounds``; give one of the two.
        initial: earlier evaluations to start from (a warm start): a sequence of
            ``(x, value)`` pairs, ``x`` as the objective receives it (a point in ``bounds``,
            or a params dict of the space) and ``value`` its finite objective value (for
            several objectives, ``(x, values)``: the values in ``minimize``'s order or, when
            ``minimize`` names them, a mapping of exactly those names); the
            ``history`` of an earlier result; an earlier :class:`OptimizeResult` (its run, as
            by its id below, when it was recorded in this ``db``; its ``history`` otherwise);
            a run of ``db`` to continue, by its id or its
            :class:`~npbandit.storage.RunRow` of ``db`` (to continue an interrupted or failed run):
            checked to be a black-box run of this problem (objective, direction, objectives' names,
            bounds or space, constraints: none, or their name; ``ValueError`` naming ``initial`` and what differs
            otherwise, also for a ``RunRow`` read from another database), its evaluations are
            everything that run saw, the points it was given (following a chain of continued
            runs back to its first) then its own (:func:`npbandit.storage.run_evaluations`),
            and this run records which
            run it continues (``initial_from``), so that a continuation of it sees them all too;
            a run's steps, :func:`npbandit.storage.run_steps` ``(db, run_id)`` (its own
            evaluations only, not those it was given); or, for ``bounds``, arrays
            ``(X [n, d], Y [n])`` (``Y [n, m]`` for ``m`` objectives; :mod:`npbandit.warm_start`).
            A run's steps and a history are checked to come from
            a run of this problem as far as they say (a run's steps: its direction, bounds or
            space; a history: its direction, which a history of several objectives does not say;
            both: whether it had constraints; an earlier :class:`ParetoResult`: its directions and
            its objectives' names; pairs and
            arrays: nothing but each point lying in the box or space; the objective: never), a
            ``ValueError`` naming
            ``initial[i]`` otherwise. The policy observes them, in order, before it proposes anything:
            they count towards the initial design (with ``n_init`` of them the model
            proposes from the first evaluation), the trust region and the repeat check; the
            failed entries of a history or a run's steps are carried as failures (never
            proposed again; a BO model sees them at the worst value, as a run's own).
            They are not evaluated again, by the model or by the initial design (which
            passes over a Sobol point lying on a given one, so a run continued from one of
            the same seed that stopped inside its design goes on with the design's next
            points), and spend no ``budget``; ``history`` and
            ``best_x`` hold this call's evaluations only, and the run records how many
            it started from (``initial`` in its policy settings). With ``constraints``, each
            earlier evaluation needs its constraint values too: ``(x, value, constraints)``
            triples, or the ``history`` of an earlier constrained run; as many values each as
            ``constraints`` returns (known once it has run: another count is refused at this
            run's first evaluation, a ``ValueError`` naming ``initial`` and both counts; the
            evaluation is saved and the run recorded as failed).
        constraints: outcome constraints, ``None`` (default) or a callable taking the point
            as ``objective`` does and returning a sequence of ``k`` floats (one float for
            ``k = 1``); the point is feasible when every value is ``<= 0``. It is called
            on every evaluated point, right after ``objective`` and in the same call (on
            the executor's worker with ``executor``; ``eval_timeout`` and ``on_error``
            treat the pair as one evaluation; one that raises or returns NaN / inf is a
            failed evaluation, and one that returns anything but ``k`` real numbers an
            :class:`~npbandit.exceptions.ObjectiveReturnError`, both naming
            ``constraints``). The surrogate then models the objective and each
            constraint with an NP of its own (one network, ``1 + k`` outputs: see
            ``NPModel``), and the acquisition is expected improvement over the best
            feasible evaluation weighted by the probability of feasibility (the
            probability of feasibility alone until an evaluation is feasible;
            ``acquisition`` ``"logei"`` or ``"qlognei"``). ``best_x`` / ``best_value`` are
            the best feasible evaluation's, the run's steps record each evaluation's
            values (``npbandit report`` counts the feasible ones), and the run's problem is
            the objective subject to these constraints (``constraints``' name, as
            :func:`objective_label` names it).

            Why a separate callable and not an objective returning ``(value, [c1, c2])``:
            it is the convention Optuna users know (``constraints_func``, ``<= 0``
            feasible; :class:`~npbandit.integrations.optuna.NPSampler` takes the same),
            and BoTorch's constraint callables read ``<= 0`` as feasible too; the objective
            keeps its one-number contract, so one function runs with and without
            constraints and ``initial`` / ``history`` keep their meaning. Evaluated in the
            same call on the same worker right after the objective, a constraints
            function may read what the objective just computed (a result cached by the
            point) when both come out of one expensive simulation.
        parameter_constraints: linear constraints on the inputs, as Ax's ``parameter_constraints``:
            ``None`` (default) or a list of strings such as ``"x0 + 2*x1 <= 3"`` or
            ``"lr <= 2*momentum"`` (``<=`` or ``>=``; numbers, names, ``*``, ``+``, ``-``), naming
            the space's parameters (``x0 .. x{d-1}`` for ``bounds``): floats on a linear scale
            without a step, not conditional (:mod:`npbandit.space.linear_constraints` says why the
            others are refused). Every point evaluated satisfies them, the initial design's (Sobol
            points inside them) and every proposal's (the acquisition searched inside them, the
            trust region's box cut to them); a warm start's points must too (``ValueError`` naming
            ``initial[i]`` otherwise), and a continued run must have had the same ones. The run
            records them with its problem (``npbandit report`` shows them). Refused (``ValueError``)
            when no point of the box satisfies them, with several objectives, a conditional space
            searched by branch, a wide space searched in a subspace, and an ``acq_optimizer``
            whose ``maximise`` takes no ``polytope``. Unlike ``constraints`` (outcome constraints,
            known only by evaluating), these are known beforehand and never evaluated outside.
        acq_optimizer: how LogEI / UCB are maximised at each proposal
            (:mod:`npbandit.acquisition.optimizers`): ``CandidateSearch()`` (batched scoring
            without gradients) or ``GradientRestarts()`` (BoTorch's ``optimize_acqf``, 10
            restarts, 512 raw samples). ``None`` (default): what the checkpoint's card
            recommends, i.e. ``CandidateSearch()`` for ``"tnpd"`` (the default surrogate) and
            ``GradientRestarts()`` for every other surrogate and for ``"gp"``; the run's
            stored policy settings name the one used. Refused with the Thompson and
            ``"qlognei"`` acquisitions and with ``"random"``, which use none.
        subspace: how a space whose unit cube is wider than the NP checkpoint (``d`` columns
            against its ``x_dim``) is searched with it: a
            :class:`~npbandit.acquisition.subspace.SubspaceStrategy` such as
            ``CountSketch()`` or ``CoordinateSubspace()``. ``None`` (default):
            :func:`~npbandit.acquisition.wide_spaces.default_subspace`: a space's
            unordered choices seen as one column each until it fits
            (:class:`~npbandit.acquisition.indexed_choices.IndexedChoices`); for a
            continuous space, a count sketch re-dealt through the incumbent as the run goes on
            (:class:`~npbandit.acquisition.redealt_sketch.RedealtSketch`); for one with ints
            or steps, a fixed count sketch. Given, it is used whatever the width (a problem
            the checkpoint takes too). Refused with ``"gp"`` and ``"random"``.
        surrogate: ``"tnpd"`` (default: the ``tnpd-bo`` checkpoint, a TNP-D whose
            targets attend to every observation in every layer, so it resolves the
            function where observations are dense, as near the incumbent), ``"cmanp"``
            (``cmanp-bo``: constant-cost streaming updates through a fixed-size latent
            summary, so a step costs the same however long the run), any checkpoint
            trained on the ``bo`` prior (name or path, a ``str`` or ``os.PathLike`` such as
            ``TrainResult.card``; see ``npbandit models``; a ``d``
            wider than the checkpoint is searched in a subspace of its width, see
            ``subspace``), ``"gp"`` (BoTorch ``SingleTaskGP``) or ``"random"`` (Sobol). Or a
            surrogate loaded by ``load_surrogate`` (a ``bo`` checkpoint, loaded once for many
            runs, of any registered family): an instance without a checkpoint card, as
            ``build`` returns, is refused (``TypeError``), since the card is what says the
            box its inputs come from, how its outputs are standardised, and which weights
            a run used.
        budget: total evaluations, the initial design included.
        acquisition: ``"logei"``, ``"ucb"``, ``"thompson"``, ``"marginal-thompson"`` or
            ``"qlognei"`` (4 points per joint qLogNEI optimisation, evaluated in turn; for a
            joint model such as ``cmanp-and-bo``; see :class:`~npbandit.policies.BOPolicy`).
        minimize: minimise (default) or maximise. For several objectives, a sequence of ``m >= 2``
            bools, one direction per objective (Optuna's ``directions``): ``objective`` then
            returns ``m`` real numbers in that order, and ``optimize`` returns a
            :class:`~npbandit.optimize_result.ParetoResult` (the evaluations no other beats in
            every objective) instead of an ``OptimizeResult``. Or a mapping of ``m >= 2``
            objective names (non-empty strings) to directions, ``{"cost": True, "accuracy":
            False}`` (as Ax names its metrics), its order the objectives' order: ``objective``
            may then return a mapping with exactly those keys, in any order (a key missing or
            extra fails the evaluation as a wrong count does, naming it), or the values in that
            order; the result's ``objective_names`` and the run's record keep the names, and a
            warm start from an earlier result or run checks them (a sequence's objectives are
            named by position, ``f0``, ``f1``, ...). Such a search maximises the log
            expected hypervolume improvement over the feasible front, each objective warped
            towards a Gaussian, with no trust region and no subspace strategy (a space wider
            than the checkpoint is read on its most relevant columns), points in flight
            believed at the model's mean (:class:`~npbandit.policies.pareto.ParetoBOPolicy`);
            ``acquisition``, ``output_warp``, ``trust_region``, ``subspace``, ``liar`` and
            ``optimal_value`` are then refused when given other than their defaults
            (docs/guides/optimize.md, "Several objectives").
        n_init: initial Sobol points (default ``2d + 1``; ``2 d_e + 1`` when ``d`` is wider
            than the checkpoint and a ``d_e``-dimensional subspace is searched; a space with no
            continuous parameter and fewer points, ``SearchSpace.size``, is designed over once).
        seed: seeds the design and the acquisition optimisation: the same seed, the same
            run. ``None``: a seed drawn from the operating system's entropy, a different run
            each call; the seed drawn is the result's ``seed`` (and the run's in the
            database), so that run can be repeated.
        db: SQLAlchemy URL / SQLite path the run is logged to, or ``None``. An SQLite path
            starting with ``~`` (``"~/runs.db"``, ``"sqlite:///~/runs.db"``) is in the home
            directory, as a shell would expand it.
        on_error: an evaluation that raises or returns NaN/inf stops the run with
            :class:`~npbandit.envs.ObjectiveError` (``"raise"``) or is recorded as
            failed and skipped (``"skip"``). An ``executor`` that cannot send the objective to
            its workers at all (a lambda or a local function on a ``ProcessPoolExecutor``,
            whose pickle refuses it) stops the run at the first evaluation either way: no
            other could run.
        commit_every: evaluations per database transaction; ``None`` (default): every
            evaluation is committed as soon as it returns.
        name: what the run records as the objective's name, which ``npbandit report``
            groups runs by (with the dimension, bounds and direction). Default: the
            callable's ``module:qualname`` (:func:`objective_label`); a lambda also gets
            its file and line, since every lambda is called ``<lambda>``.
        optimal_value: the objective's known optimum over ``bounds`` (the minimum, or
            the maximum with ``minimize=False``), if any. Recorded with the run so that
            ``npbandit report`` shows simple regret (the gap from the best value found to it).
        batch_size: evaluations kept in flight at once (asynchronous BO; > 1 needs
            ``executor``). When one finishes it is streamed into the surrogate and the next
            point is proposed with the points still in flight believed at a value (by
            default each at the surrogate's own mean there, the kriging believer; see
            ``liar``, and :func:`npbandit.acquisition.proposal.propose` for why a liar).
        executor: any :class:`concurrent.futures.Executor` the objective runs on
            (``ThreadPoolExecutor``, ``ProcessPoolExecutor`` with a picklable objective,
            ``dask.distributed.Client(...).get_executor()``). ``None`` (default) with
            ``batch_size=1``: evaluated in this thread, exactly as without these arguments.
            History and database steps are then in completion order and record
            ``worker`` (``host:pid:thread``, after the worker's address on a Dask worker),
            ``submitted_at`` and ``finished_at`` (aware, UTC). Every evaluation is a call of its
            own, also where an executor would merge equal calls (Dask's, by default). An
            executor shut down already (a ``with`` block left) is refused at the first
            evaluation, a ``RuntimeError`` naming ``executor``.
        eval_timeout: seconds an evaluation may run before it is recorded as failed and
            handled as ``on_error`` says (needs ``executor``; the call itself keeps its worker
            busy: executors cannot stop a running call; on Dask a later evaluation may be sent
            to that worker and wait behind it). On a ``ThreadPoolExecutor`` or
            ``ProcessPoolExecutor`` it counts from when a worker takes the evaluation, so one
            queued behind busy workers is not given up before it ran; on other executors
            (Dask's futures do not say when they start), from submission
            (:class:`~npbandit.envs.evaluation.AsyncEvaluator`).
        output_warp: ``None`` (default) or ``"yeo-johnson"``: the surrogate sees the
            values through a power transform refit before every proposal (PFNs4BO's
            default; :func:`npbandit.transforms.yeo_johnson.yeo_johnson_warp`), which spreads out
            the values near the best when a few bad ones dominate their spread. The
            model is then rebuilt per proposal instead of streamed.
        avoid_repeats: never propose a point already evaluated (within 1e-3 of it in the
            unit cube the model sees: with the trust region, its context box; see
            :class:`~npbandit.policies.BOPolicy`). ``False`` for a noisy
            objective where a repeat is worth an evaluation.
        trust_region: search a trust region around the best point that starts as the
            whole box and shrinks when proposals stop improving (TuRBO-1's rules), the
            surrogate seeing the observations in it as its whole domain (see
            :class:`~npbandit.policies.BOPolicy`). ``None`` (default): on for the NP
            surrogates, off for ``"gp"``. The model is then rebuilt per proposal;
            ``False`` streams every observation into one global model instead (CMANP:
            constant cost however long the run). A
            :class:`~npbandit.policies.trust_region.TrustRegionSettings` searches a region
            with those settings (its side, tolerances, and what counts as an improvement).
        liar: with ``batch_size > 1``, the value points still in flight are believed at:
            ``"worst"``, ``"mean"`` or ``"best"`` of the observations the surrogate sees,
            ``"believer"``: each at the surrogate's own mean there (the kriging believer), or
            ``"penalty"`` (LogEI only): at no value, LogEI damped around each instead
            (local penalisation; ``npbandit.acquisition.pending.LIARS``), or a
            :class:`~npbandit.acquisition.pending.PendingStrategy` of your own (the run records
            its ``name``). Default ``DEFAULT_LIAR``, the kriging believer: the surrogate's mean
            surface stays where the data put it, so near a sharp optimum the next proposal is
            not pushed away by a value the region never showed.
        threads: torch's intra-op threads while the surrogate proposes a point or takes in
            an observation (:class:`~npbandit.threads.torch_threads`; the objective's calls
            keep the caller's count): a positive int, ``"torch"`` (torch's own count) or
            ``None`` (default: ``NPBANDIT_THREADS``, else ``OMP_NUM_THREADS`` /
            ``MKL_NUM_THREADS``, else 1: a small network on many threads mostly waits for
            them, the more so on a machine whose cores are busy).
        branches: a conditional space (a ``Choice`` with ``dependents``) of one objective is
            searched by branch (``None``, default: one policy per value of its gate,
            :class:`~npbandit.policies.branches.BranchBOPolicy`), or with ``False`` by one model
            over the whole cube, the parameters a point lacks pinned (as with several objectives,
            ``subspace=`` or ``output_warp``; ``True`` with any of them is refused).
        callbacks: a callable, or a sequence of them, each called after every evaluation
            (a failed one too) with the history of this call's evaluations so far (a fresh
            list of dicts, copied down to their points and values, as
            ``OptimizeResult.history``, or ``ParetoResult.history`` for several objectives,
            whose entries hold ``values`` and no ``best_value``: points given by ``initial``
            are not in it); when one returns true the run ends there, as completed, and
            reports what it has (e.g. a target,
            ``lambda h: h[-1]["best_value"] is not None and h[-1]["best_value"] < 1e-3``,
            ``best_value`` being ``None`` while every evaluation so far failed; for several
            objectives, a test of ``h[-1]["values"]``; no improvement in ``k`` evaluations;
            a wall-clock limit). With ``executor`` no point is proposed after that, and the
            evaluations in flight are waited for, kept and shown to the callbacks too. A
            callback that raises fails the run with its error (which carries the history, as
            below).

    Raises:
        ValueError / TypeError: a bad argument, naming it; ``surrogate`` also when the
            checkpoint was trained for something else (``CheckpointError``, listing
            the checkpoints that fit), and when the objective's values cannot be
            standardised in float64 (e.g. ``1e300 * x``).
        FileNotFoundError: a known checkpoint with its weights or card missing.
        StorageError: ``db`` cannot be opened or written (a ``ValueError``).
        ObjectiveError: an evaluation failed (``on_error="raise"``), or every one did; in
            the first case its ``history`` holds the evaluations so far, the failed one
            last (as for ``RunInterrupted`` below).
        RunInterrupted: SIGINT / SIGTERM (a ``KeyboardInterrupt``; one the objective or a
            callback raises too, recorded as ``KeyboardInterrupt``, ``signum`` ``None``); the evaluations so
            far are saved and the run is recorded as ``interrupted``; the exception's
            ``history`` holds them as ``OptimizeResult.history`` would (with ``db=None``,
            their only record; ``initial=err.history`` continues the run; with a ``db``,
            ``initial=err.run_id``).

    Warns:
        UserWarning: ``initial`` a run whose chain begins with a run given points in a form
            no run holds (pairs, a history): how many of them it does not see.
    """
    if not callable(objective):
        raise TypeError(f"objective must be callable, got {type(objective).__name__}")
    box, searched = box_or_space(bounds, space)
    if point_type not in ("numpy", "torch"):
        raise ValueError(f"point_type must be 'numpy' or 'torch', got {point_type!r}")
    if point_type == "torch" and searched is not None:
        raise ValueError("point_type='torch' is for bounds (the point as a tensor); with a search space the "
                         "objective receives a dict {name: value}")
    _check_on_error(on_error)
    check_bool("progress", progress)
    callbacks = _check_callbacks(callbacks)
    batch_size = _check_async(executor, batch_size, eval_timeout)
    if constraints is not None and not callable(constraints):
        raise TypeError(f"constraints must be callable (the point -> a sequence of floats, feasible when all are "
                        f"<= 0) or None, got {type(constraints).__name__}")
    # a partial of a module-level function, not a lambda: a ProcessPoolExecutor / Dask pickles it
    call = objective if point_type == "numpy" else functools.partial(_call_with_tensor, objective)
    limits = None
    if constraints is not None:
        limits = constraints if point_type == "numpy" else functools.partial(_call_with_tensor, constraints)
    search = set_up_search(call, box, searched, label=objective_label(objective) if name is None else check_name(name),
                           surrogate=surrogate, budget=budget, acquisition=acquisition, minimize=minimize,
                           n_init=n_init, seed=seed, db=db, commit_every=commit_every, optimal_value=optimal_value,
                           output_warp=output_warp, avoid_repeats=avoid_repeats, trust_region=trust_region, liar=liar,
                           threads=threads, initial=initial, constraints=limits,
                           constraint_label=None if constraints is None else objective_label(constraints),
                           acq_optimizer=acq_optimizer, subspace=subspace, branches=branches, verb="optimize",
                           stacklevel=2, parameter_constraints=parameter_constraints)
    env, logger = search.env, search.logger
    seen: list[dict[str, Any]] = []  # the history so far, each step read once

    def history_of(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:  # steps: the run's, of which seen is a prefix
        seen.extend(run_history(env, steps[len(seen):], search.constrained, before=seen))
        return seen

    def stop(so_far) -> bool:  # the callbacks see the history, as the result will give it
        history_of(so_far.steps)
        return any([bool(callback([_fresh(h) for h in seen])) for callback in callbacks])  # each is called

    try:
        result = run_episode(env, search.policy, seed=search.seed, logger=logger, run_info=search.info,
                             on_error=on_error, progress=progress, desc=search.desc, executor=executor,
                             batch_size=batch_size, eval_timeout=eval_timeout, stop=stop)
    except (Exception, RunInterrupted) as err:  # the evaluations so far go with it (db=None: their only record)
        records = err.records if isinstance(err, (RunInterrupted, ObjectiveError)) else None
        carry_history(err, seen if records is None else history_of(records), None if logger is None else logger.run_id)
        raise
    return search.result(history_of(result.steps), result, stacklevel=2)


def _check_callbacks(callbacks: Any) -> list[Callable]:
    """``optimize``'s ``callbacks`` as a list of callables, or a TypeError naming it."""
    if callbacks is None:
        return []
    listed = [callbacks] if callable(callbacks) else callbacks
    if isinstance(listed, (str, bytes, Mapping)) or not isinstance(listed, Sequence):
        raise TypeError(f"callbacks must be a callable, a sequence of callables or None, "
                        f"got {type(callbacks).__name__}")
    for i, callback in enumerate(listed):
        if not callable(callback):
            raise TypeError(f"callbacks[{i}] must be callable (the history so far -> bool), "
                            f"got {type(callback).__name__}")
    return list(listed)


def _fresh(entry: dict[str, Any]) -> dict[str, Any]:
    """A history entry as a callback sees it: copied down to its point and its lists of values
    and constraint values, so that a callback that changes what it is given leaves the run's
    history, and the front or best point taken from it, as evaluated."""
    return {key: value.copy() if isinstance(value, (np.ndarray, list, dict)) else value for key, value in entry.items()}


def _call_with_tensor(objective: Callable[[Any], Any], x: np.ndarray) -> Any:
    return objective(torch.as_tensor(x, dtype=torch.float64))
