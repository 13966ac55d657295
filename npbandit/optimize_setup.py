"""The search a call of :func:`npbandit.optimize` sets up, and an :class:`~npbandit.ask_tell.Optimizer`
too: the arguments they share checked, the checkpoint loaded, the environment, the policy (behind a
warm start when earlier evaluations are given), the database logger and what the run records of its
problem. Both then drive the same run: ``optimize`` calls the objective itself, the ask-and-tell
optimizer is told each outcome."""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.constrained import CONSTRAINED_ACQUISITIONS, incumbent
from npbandit.acquisition.optimizers import check_acq_optimizer, takes_polytope
from npbandit.acquisition.pending import DEFAULT_LIAR, pending_strategy
from npbandit.acquisition.proposal import ACQUISITIONS
from npbandit.acquisition.subspace import check_subspace
from npbandit.envs.blackbox import BlackBoxEnv, ObjectiveError
from npbandit.envs.bounds import as_bounds
from npbandit.envs.directions import maximised, named_directions
from npbandit.loop.records import EpisodeResult
from npbandit.optimize_policy import optimize_policy
from npbandit.optimize_result import OptimizeResult, ParetoResult, carry_history
from npbandit.optimize_surrogate import SURROGATES, check_loaded, named_by_card, surrogate_checkpoint
from npbandit.policies.base import Policy
from npbandit.policies.bo import OUTPUT_WARPS
from npbandit.policies.branches import by_branch
from npbandit.policies.trust_region import TrustRegionSettings
from npbandit.space import SearchSpace, as_search_space
from npbandit.space.linear_constraints import LinearConstraints, as_linear_constraints
from npbandit.storage import RunEvaluations, RunLogger, RunRow
from npbandit.surrogates.base import NeuralProcess
from npbandit.threads import resolve_threads
from npbandit.validation import check_bool, check_int, check_seed, path_as_str, real_as_float
from npbandit.warm_start import WarmStart, check_same_problem, continued_run, initial_points

__all__ = ["Search", "box_or_space", "set_up_search", "stored_directions", "linear_constraints", "outside_linear",
           "same_constraints"]

#: the other way to give a box's inputs, named where ``bounds`` reads as (low, high) pairs
NAMED_INPUTS = "name each input with space={'x0': Float(low, high), ...} (npbandit.space)"


@dataclass
class Search:
    """A search, set up and not yet started.

    Attributes:
        env: the :class:`~npbandit.envs.BlackBoxEnv` whose steps are the evaluations.
        policy: what proposes the points (behind a warm start, when earlier evaluations were given).
        logger: the run's database logger, ``None`` without ``db``.
        info: what the run records of itself (``kind``, ``env_id``, ``env_params``).
        desc: the run's progress line.
        seed: the seed (drawn from the operating system's entropy when ``None`` was given).
        box: the ``2 x d`` box searched, or ``None`` for a search space.
        searched: the search space, or ``None`` for a box.
        minimize: the direction, or one per objective.
        names: the objectives' names (``f0``, ``f1``, ... when not given), ``None`` for one objective.
        db: the database's URL as given, ``None`` without one.
        constrained: whether each evaluation has outcome-constraint values.
        linear: the linear input constraints (``parameter_constraints``), or ``None``.
    """

    env: BlackBoxEnv
    policy: Policy
    logger: RunLogger | None
    info: dict[str, Any]
    desc: str
    seed: int
    box: np.ndarray | None
    searched: SearchSpace | None
    minimize: bool | tuple[bool, ...]
    names: tuple[str, ...] | None
    db: str | None
    constrained: bool
    linear: LinearConstraints | None = None

    @property
    def objectives(self) -> int:
        """``m``, the objectives searched."""
        return self.env.objectives

    def result(self, history: list[dict[str, Any]], run: EpisodeResult,
               stacklevel: int) -> OptimizeResult | ParetoResult:
        """The search's result from its ``history`` (:func:`~npbandit.optimize_result.run_history`
        of ``run``'s steps) and ``run`` (its id, recommendation and early stop): a
        :class:`ParetoResult` for several objectives, else an :class:`OptimizeResult`.
        ``stacklevel``: where the warnings point, as for :func:`set_up_search`.

        Raises:
            ObjectiveError: no evaluation succeeded (it carries ``history``).

        Warns:
            UserWarning: evaluations that returned no number and were counted as failed.
            RuntimeWarning: no evaluation satisfied the constraints.
        """
        good = [h for h in history if not h["failed"]]
        failed = [h for h in history if h["failed"]]
        if not good:
            error = ObjectiveError(f"every one of the {len(history)} evaluations failed; nothing to report"
                                   + ("" if run.run_id is None else f" (run {run.run_id})")
                                   + f"; the first failed with: {failed[0].get('error')}", history[-1]["x"])
            carry_history(error, history, run.run_id)
            raise error
        returns = [h for h in failed if h.get("error_kind") == "returned"]
        if returns:  # counted as failed points; a wrong return is more often the objective's bug
            warnings.warn(f"{len(returns)} of {len(history)} evaluations returned no number and counted as failed "
                          f"(on_error='skip'); the first: {returns[0]['error']}", stacklevel=stacklevel + 1)
        if self.objectives > 1:
            found = ParetoResult.of_history(history, self.minimize, run.run_id, stopped_early=run.stopped_early,
                                            db=self.db, seed=self.seed, objective_names=self.names)
            if not found.feasible:
                warnings.warn(f"no evaluation of the {len(good)} satisfied the constraints; the front is empty "
                              "(result.feasible is False)", RuntimeWarning, stacklevel=stacklevel + 1)
            return found
        # the incumbent's rule: the best feasible evaluation (the first of equal ones), or, with none
        # feasible, the one whose constraint values exceed 0 by the least in total
        k = 0 if not self.constrained else len(good[0]["constraints"])
        outputs = torch.tensor([[maximised(h["value"], self.minimize), *h.get("constraints", ())]
                                for h in good], dtype=torch.float64)  # [n, 1 + k], the objective maximised
        best = good[incumbent(outputs, k)]
        feasible = any(h.get("feasible", True) for h in good)
        if not feasible:
            warnings.warn(f"no evaluation of the {len(good)} satisfied the constraints; best_x is the one that "
                          "violates them least (result.feasible is False)", RuntimeWarning, stacklevel=stacklevel + 1)
        best_x = best["x"] if self.searched is not None else np.asarray(best["x"])
        if run.recommended is None:  # no recommendation: the best observed point stands in
            recommended = (best_x, float(best["value"]), "observed")
        else:
            point = self.env.point(run.recommendation.action)
            recommended = (point if self.searched is not None else np.asarray(point), run.recommended["value"],
                           "model")
        return OptimizeResult(best_x, float(best["value"]), history, run.run_id, feasible, *recommended,
                              stopped_early=run.stopped_early, db=self.db, seed=self.seed)


def set_up_search(objective: Callable[[Any], Any], box: np.ndarray | None, searched: SearchSpace | None, *,
                  label: str, surrogate: Any, budget: Any, acquisition: Any, minimize: Any, n_init: Any, seed: Any,
                  db: Any, commit_every: Any, optimal_value: Any, output_warp: Any, avoid_repeats: Any,
                  trust_region: Any, liar: Any, threads: Any, initial: Any, constraints: Callable[[Any], Any] | None,
                  constraint_label: str | None, acq_optimizer: Any, subspace: Any, branches: Any, verb: str,
                  stacklevel: int, parameter_constraints: Any = None) -> Search:
    """Check the arguments ``optimize`` and :class:`~npbandit.ask_tell.Optimizer` share, each as
    ``optimize`` documents it, and set up their search of ``objective`` over ``box`` or
    ``searched`` (:func:`box_or_space`). ``label``: the objective's name as the run records it;
    ``constraints`` and ``constraint_label``: the constraints' callable (the env calls it after
    ``objective``) and their recorded name, both ``None`` without constraints; ``verb``: the
    progress line's first word; ``stacklevel``: where this function's warnings point, as
    :func:`warnings.warn` counts from here (at the caller of the public function);
    ``parameter_constraints``: linear input constraints (:func:`linear_constraints`).

    Raises:
        ValueError / TypeError: a bad argument, naming it (``optimize``'s Raises).
    """
    d = box.shape[1] if searched is None else searched.dim
    budget = check_int("budget", budget, minimum=1)  # a NumPy integer too, as an int from then on
    if acquisition not in ACQUISITIONS:
        raise ValueError(f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r}")
    surrogate = path_as_str(surrogate)
    if isinstance(surrogate, NeuralProcess):
        check_loaded(surrogate)
    elif not isinstance(surrogate, str):
        raise TypeError(f"surrogate must be a name, a checkpoint path or a surrogate loaded by load_surrogate, got "
                        f"{type(surrogate).__name__}")
    elif not surrogate.strip():
        raise ValueError(f"surrogate must be a non-empty name ({', '.join(SURROGATES)}, a 'bo' checkpoint or a "
                         f"checkpoint path), got {surrogate!r}")
    if output_warp is not None and output_warp not in OUTPUT_WARPS:
        raise ValueError(f"output_warp must be None or one of {OUTPUT_WARPS}, got {output_warp!r}")
    avoid_repeats = check_bool("avoid_repeats", avoid_repeats)  # a NumPy bool too, as a bool from then on
    named = isinstance(minimize, Mapping)
    minimize, objectives, names = named_directions(minimize)
    if objectives > 1:
        _check_several(acquisition, output_warp, trust_region, subspace, liar, optimal_value)
    if seed is None:  # as Optuna's samplers and numpy's generators read it: fresh entropy, then recorded
        seed = secrets.randbelow(2**31)
    seed = check_seed("seed", seed)
    if n_init is not None:
        n_init = check_int("n_init", n_init, minimum=1)
    check_acq_optimizer("acq_optimizer", acq_optimizer)
    check_subspace(subspace)
    if subspace is not None and surrogate in ("gp", "random"):
        raise ValueError(f"subspace lets an NP checkpoint search more inputs than it takes; surrogate={surrogate!r} "
                         "takes any number")
    if acq_optimizer is not None and surrogate == "random":
        raise ValueError("acq_optimizer maximises a surrogate's acquisition; surrogate='random' (Sobol points) has "
                         "none")
    if commit_every is not None:
        commit_every = check_int("commit_every", commit_every, minimum=1)
    db = path_as_str(db)  # a pathlib.Path of an SQLite file as its str, as a result records it
    if db is not None and (not isinstance(db, str) or not db):
        raise TypeError(f"db must be an SQLAlchemy URL, a file path or None, got {db!r}")
    if isinstance(trust_region, np.bool_):
        trust_region = bool(trust_region)
    if trust_region is not None and not isinstance(trust_region, (bool, TrustRegionSettings)):
        raise TypeError(f"trust_region must be a bool, a TrustRegionSettings or None, got "
                        f"{type(trust_region).__name__}")
    pending_strategy(liar)  # a name or a PendingStrategy; its acquisition is checked with the policy
    resolve_threads(threads)  # a bad threads or $NPBANDIT_THREADS fails before anything is evaluated
    branches = by_branch(branches, searched, objectives=objectives, surrogate=surrogate, subspace=subspace,
                         output_warp=output_warp)
    linear = linear_constraints(parameter_constraints, box, searched, objectives=objectives, branches=branches,
                                acq_optimizer=acq_optimizer)
    if constraints is not None and surrogate != "random" and acquisition not in CONSTRAINED_ACQUISITIONS:
        raise ValueError(f"constraints need acquisition 'logei' (expected improvement weighted by the "
                         f"probability of feasibility) or 'qlognei'; got acquisition={acquisition!r}")
    if optimal_value is not None:
        if isinstance(optimal_value, bool) or not isinstance(optimal_value, (int, float, np.integer, np.floating)):
            raise TypeError(f"optimal_value must be a real number or None, got {type(optimal_value).__name__}")
        if not np.isfinite(real_as_float(optimal_value)):
            raise ValueError(f"optimal_value must be finite, got {optimal_value!r}")
        optimal_value = float(optimal_value)
    model = surrogate_checkpoint(surrogate, d)
    # check the database before loading a model or evaluating anything: a bad db fails first (a new
    # SQLite file is created only when the run starts, so an argument refused below leaves none)
    logger = None if db is None else RunLogger(db, commit_every=commit_every)
    # the problem as the run records it (env_params), and as a continued run's is compared with
    problem = {"bounds": box.tolist()} if searched is None else {"space": searched.describe()}
    if linear is not None:
        problem["parameter_constraints"] = linear.describe()
    source = None  # the run continued, when initial is one: recorded with this run (initial_from)
    if isinstance(initial, (OptimizeResult, ParetoResult)):  # its run where recorded in this db, else its history
        same_db = db is not None and initial.run_id is not None and initial.db == str(db)
        if isinstance(initial, ParetoResult) and objectives > 1 and not same_db:  # its history holds no directions
            check_same_problem({"objective_names": list(initial.objective_names), "minimize": list(initial.minimize)},
                               {"objective_names": list(names), "minimize": stored_directions(minimize)},
                               "initial", "the earlier result's",
                               "; to start from its evaluations on purpose, give them as (x, values) pairs")
        initial = initial.run_id if same_db else initial.history
    if isinstance(initial, (int, np.integer, RunRow)) and not isinstance(initial, bool):
        if db is None:
            raise ValueError(f"initial={getattr(initial, 'id', initial)} names a run of db, but db is None: give db, "
                             "or the run's evaluations themselves")
        here = {"objective": label, **({} if objectives == 1 else {"objective_names": list(names)}),
                "minimize": stored_directions(minimize), "parameter_constraints": None, **problem,
                "constraints": constraint_label}
        initial = continued_run(db, initial, "initial", problem=here, stacklevel=stacklevel + 2,
                                same=same_constraints(linear))
    if isinstance(initial, RunEvaluations) and db is not None and str(initial.db) == str(db):
        source = initial.run_id
    warm = [] if initial is None else initial_points(initial, box, searched, minimize,
                                                     constraints is not None, names if named else None)
    where = {"bounds": box} if searched is None else {"space": searched}
    env = BlackBoxEnv(objective=objective, minimize=dict(zip(names, minimize)) if named else minimize, budget=budget,
                      optimal_value=optimal_value, constraints=constraints, **where)
    env.name = label
    if linear is not None:
        _check_warm_points(warm, env, linear, initial.source if isinstance(initial, RunEvaluations) else "initial")
    # a space with ints, steps or choices: every point handed out lands on what it decodes to
    snap = None if searched is None or searched.continuous else searched.snap
    policy, bo, more = optimize_policy(named_by_card(model) if model != "random" else model, dim=d,
                                       objectives=objectives, searched=searched, snap=snap, by_branch=branches,
                                       budget=budget + len(warm), n_init=n_init, acquisition=acquisition,
                                       output_warp=output_warp, avoid_repeats=avoid_repeats, trust_region=trust_region,
                                       liar=liar, threads=threads, constrained=constraints is not None,
                                       acq_optimizer=acq_optimizer, subspace=subspace,
                                       polytope=None if linear is None else linear.polytope)
    if bo is not None and budget + len(warm) <= bo.n_init:
        given = f" (and {len(warm)} initial point{'' if len(warm) == 1 else 's'})" if warm else ""
        warnings.warn(f"budget={budget}{given} does not exceed "
                      f"n_init={bo.n_init}: every point comes from the Sobol initial design and the model proposes "
                      "none; raise budget or lower n_init", stacklevel=stacklevel + 1)
    if initial is not None:  # named in its messages as the user named it (initial=7, --initial-from 7)
        policy = WarmStart(policy, warm, source, initial.source if isinstance(initial, RunEvaluations) else "initial")
    info = {"kind": "bo", "env_id": "npbandit/BlackBox-v0",
            "env_params": {"objective": label, "dim": d, **problem, "minimize": stored_directions(minimize),
                           "budget": budget, "optimal_value": optimal_value}}
    if objectives > 1:
        info["env_params"]["objectives"] = objectives
    if constraints is not None:
        info["env_params"]["constraints"] = constraint_label
    return Search(env, policy, logger, info, f"{verb} {env.name}{more}", seed, box, searched, minimize, names,
                  None if db is None else str(db), constraints is not None, linear)


def linear_constraints(given: Any, box: np.ndarray | None, searched: SearchSpace | None, *, objectives: int,
                       branches: bool, acq_optimizer: Any) -> LinearConstraints | None:
    """``optimize``'s ``parameter_constraints`` parsed against the space searched (a box's floats
    named ``x0 .. x{d-1}``), ``None`` for ``None``; refused (``ValueError``, naming
    ``parameter_constraints``) with several objectives, a conditional space searched by branch,
    and an ``acq_optimizer`` whose ``maximise`` takes no ``polytope`` (the combinations not
    supported yet; a subspace search is refused where the policy decides it, ``BOPolicy``)."""
    if given is None:
        return None
    linear = as_linear_constraints(given, SearchSpace.from_bounds(box) if searched is None else searched)
    if objectives > 1:
        raise ValueError("parameter_constraints are supported for a search of one objective only (for now); with "
                         "several objectives, wrap the objective to refuse points outside them instead")
    if branches:
        raise ValueError("parameter_constraints are not supported with a conditional space searched by branch; "
                         "give branches=False (one model over the whole cube)")
    if acq_optimizer is not None and not takes_polytope(acq_optimizer):
        raise ValueError(f"parameter_constraints need an acq_optimizer whose maximise takes the keyword polytope "
                         f"(CandidateSearch, GradientRestarts); {type(acq_optimizer).__name__}.maximise does not")
    return linear


def _check_warm_points(warm: list[Any], env: BlackBoxEnv, linear: LinearConstraints, source: str) -> None:
    """Refuse (``ValueError``, naming ``source[i]`` and the constraints) an earlier evaluation,
    failed ones too, whose point violates the linear constraints."""
    for i, entry in enumerate(warm):
        violated = outside_linear(env, linear, entry[0])
        if violated:
            raise ValueError(f"{source}[{i}]: the point {env.params(entry[0])} violates parameter_constraints "
                             f"{violated}; earlier evaluations must satisfy this run's constraints")


def same_constraints(linear: LinearConstraints | None) -> dict[str, Any] | None:
    """How a continued run's recorded ``parameter_constraints`` are judged the same as
    ``linear`` (:func:`~npbandit.warm_start.check_same_problem`'s ``same``): as parsed rows,
    however written; ``None`` (plain equality) without constraints."""
    return None if linear is None else {"parameter_constraints": lambda had, _: linear.same_as(had)}


def outside_linear(env: BlackBoxEnv, linear: LinearConstraints, action: np.ndarray) -> list[str]:
    """The linear input constraints the point at unit-cube ``action`` ``[d]`` violates, as given
    (the point read in the user's units, by name, as the run records it)."""
    return linear.violated(env.params(action))


def stored_directions(minimize: bool | tuple[bool, ...]) -> bool | list[bool]:
    """``minimize`` as a run records it (``env_params``): a bool, or a list of one per objective."""
    return minimize if isinstance(minimize, bool) else list(minimize)


def _check_several(acquisition: Any, output_warp: Any, trust_region: Any, subspace: Any, liar: Any,
                   optimal_value: Any) -> None:
    """Refuse, naming each, the settings of a search of one objective given to one of several
    (``ValueError``): what that search does instead is fixed (``optimize``'s ``minimize``)."""
    given = {"acquisition": (acquisition, "logei", "the log expected hypervolume improvement is the acquisition"),
             "output_warp": (output_warp, None, "each objective is warped towards a Gaussian already"),
             "trust_region": (trust_region, None, "a trust region follows one incumbent; a front has many"),
             "subspace": (subspace, None, "the NP reads a wide space's most relevant columns instead"),
             "liar": (liar, DEFAULT_LIAR, "points in flight are believed at the model's mean"),
             "optimal_value": (optimal_value, None, "several objectives have a front of optima")}
    for name, (value, default, why) in given.items():
        if value is not default and value != default and not (name == "trust_region" and value is False):
            raise ValueError(f"{name}={value!r} is for a search of one objective; with several (minimize=[...]) "
                             f"{why}: leave {name} at its default ({default!r})")


def box_or_space(bounds: Any, space: Any) -> tuple[np.ndarray | None, SearchSpace | None]:
    """``(box, None)`` for a ``2 x d`` box, ``(None, space)`` for a search space given as
    ``bounds`` (a :class:`SearchSpace` or a mapping) or as ``space``."""
    if bounds is not None and space is not None:
        raise ValueError("give bounds (a 2 x d box, or a search space in its place) or space=, not both")
    if bounds is None and space is None:
        raise ValueError("bounds is required: a 2 x d box (lower row, upper row) or a search space (a SearchSpace, "
                         "or a dict of names to Float / Int / Choice)")
    if space is None and not isinstance(bounds, Mapping):
        return as_bounds(bounds, named=NAMED_INPUTS), None
    given = bounds if space is None else space
    if not isinstance(given, Mapping):
        raise TypeError(f"space must be a SearchSpace or a dict of names to Float / Int / Choice, got "
                        f"{type(given).__name__}")
    return None, as_search_space(given)
