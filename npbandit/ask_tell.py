"""Ask and tell: the search :func:`npbandit.optimize` makes, for evaluations made elsewhere.

``optimize`` calls the objective itself. When the evaluation is a laboratory experiment, a job
on a cluster, a simulation another program starts, or a step of a loop the caller keeps, the
caller asks for a point, evaluates it however it can and tells the outcome::

    opt = npbandit.Optimizer(bounds=[[-5, -5], [5, 5]], budget=30, name="my-experiment")
    for _ in range(30):
        trial = opt.ask()                       # trial.x: the point, as optimize's objective gets it
        opt.tell(trial, run_experiment(trial.x))
    result = opt.close()                        # an OptimizeResult, as optimize returns

The search is the one ``optimize`` runs with the same arguments: the same surrogate, design,
acquisition, trust region and checks, set up by the same code
(:func:`~npbandit.optimize_setup.set_up_search`); a loop that asks, evaluates and tells in turn
proposes the points ``optimize`` would. Several points may be asked before any is told (each
later proposal sees the earlier ones in flight, as ``optimize``'s ``batch_size`` does), and they
may be told in any order; :meth:`Optimizer.attach` adds a point of the caller's own. Every
told outcome is written to the database as it is told, so a process that dies loses only the
points in flight; ``Optimizer(..., initial=run_id)`` continues the run.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.optimizers import AcquisitionOptimizer
from npbandit.acquisition.pending import DEFAULT_LIAR, PendingStrategy
from npbandit.acquisition.pinned import Pinned
from npbandit.acquisition.subspace import SubspaceStrategy
from npbandit.envs.evaluation import Outcome
from npbandit.envs.outcomes import Evaluated, constraint_values, objective_value, objective_values
from npbandit.exceptions import ObjectiveError, ObjectiveReturnError
from npbandit.loop.stepped import SteppedRun
from npbandit.objective_names import check_name
from npbandit.optimize_result import OptimizeResult, ParetoResult, run_history, with_fixed
from npbandit.optimize_setup import box_or_space, outside_linear, set_up_search
from npbandit.policies.base import PolicyWrapper
from npbandit.policies.branches import BranchBOPolicy
from npbandit.policies.trust_region import TrustRegionSettings
from npbandit.space import Parameter, SearchSpace
from npbandit.storage import DEFAULT_URL, RunRow
from npbandit.surrogates.base import NeuralProcess
from npbandit.validation import check_int
from npbandit.warm_start import point_action

__all__ = ["Optimizer", "Trial"]

#: the name a run of an Optimizer records as its objective's when none is given
DEFAULT_NAME = "ask-tell"
#: what a run of an Optimizer records as its constraints' name (optimize records the callable's)
TOLD_CONSTRAINTS = "told"


@dataclass(frozen=True, eq=False)
class Trial:
    """A point asked for and not yet told (or told: :attr:`Optimizer.history` holds it then).
    Each is the caller's copy, compared by identity; its ``number`` names it to :meth:`Optimizer.tell`.

    Attributes:
        number: the order it was asked in, from 0 within this :class:`Optimizer`.
        x: the point, as ``optimize``'s objective receives it: a numpy array ``[d]`` in
            ``bounds``, or for a search space a dict ``{name: value}`` (ints as ``int``,
            choices as their values; a conditional space's active parameters alone).
        fixed: the values :meth:`Optimizer.ask` was told to hold (``{name: value}``, as
            checked; ``x`` holds each exactly), empty for a trial asked without ``fixed``.
    """

    number: int
    x: np.ndarray | dict[str, Any]
    fixed: dict[str, Any] = field(default_factory=dict)


def _told(x: Any) -> Any:
    """The env's objective under ask and tell: never called, since each outcome is told."""
    raise RuntimeError("an Optimizer's evaluations are told (Optimizer.tell), not called")


class Optimizer:
    """Bayesian optimisation by ask and tell (see the module docstring). Not thread-safe: ask
    and tell from one thread.

    ``bounds``, ``surrogate``, ``budget``, ``acquisition``, ``minimize``, ``n_init``, ``seed``,
    ``db``, ``optimal_value``, ``output_warp``, ``avoid_repeats``, ``trust_region``, ``liar``,
    ``threads``, ``space``, ``initial``, ``acq_optimizer``, ``subspace``, ``branches``,
    ``parameter_constraints`` and ``commit_every`` are :func:`npbandit.optimize`'s, which
    documents each; the same values make the same search. ``budget`` is the evaluations this
    optimizer may ask for (those told and those in flight).

    Args:
        name: what the run records as its objective's name (``npbandit report`` groups runs
            by it, and ``initial=`` continues only a run of the same name). Default
            ``"ask-tell"``: name your problem.
        constraints: the number ``k >= 1`` of outcome-constraint values told with each value
            (``tell(trial, value, constraints=[c1, ..., ck])``; feasible when every one is
            ``<= 0``, as ``optimize``'s ``constraints`` returns them), or ``None`` (default)
            for none. The run records its constraints as ``"told"``.

    Raises:
        ValueError / TypeError: a bad argument, naming it, as ``optimize`` raises them.

    Nothing is written to ``db`` until the first :meth:`ask`.
    """

    def __init__(self, bounds: Any = None, surrogate: str | NeuralProcess = "tnpd", budget: int = 50,
                 acquisition: str = "logei", minimize: bool | Sequence[bool] | Mapping[str, bool] = True,
                 n_init: int | None = None, seed: int | None = 0, db: str | None = DEFAULT_URL,
                 name: str = DEFAULT_NAME, optimal_value: float | None = None, output_warp: str | None = None,
                 avoid_repeats: bool = True, trust_region: bool | TrustRegionSettings | None = None,
                 liar: str | PendingStrategy = DEFAULT_LIAR, threads: int | str | None = None, *,
                 space: SearchSpace | Mapping[str, Parameter] | None = None,
                 initial: Sequence[Any] | int | RunRow | OptimizeResult | None = None,
                 constraints: int | None = None, commit_every: int | None = None,
                 acq_optimizer: AcquisitionOptimizer | None = None, subspace: SubspaceStrategy | None = None,
                 branches: bool | None = None, parameter_constraints: Sequence[str] | None = None) -> None:
        box, searched = box_or_space(bounds, space)
        if constraints is not None:
            check_int("constraints", constraints, minimum=1)
        self._search = set_up_search(_told, box, searched, label=check_name(name), surrogate=surrogate, budget=budget,
                                     acquisition=acquisition, minimize=minimize, n_init=n_init, seed=seed, db=db,
                                     commit_every=commit_every, optimal_value=optimal_value, output_warp=output_warp,
                                     avoid_repeats=avoid_repeats, trust_region=trust_region, liar=liar,
                                     threads=threads, initial=initial,
                                     constraints=None if constraints is None else _told,
                                     constraint_label=None if constraints is None else TOLD_CONSTRAINTS,
                                     acq_optimizer=acq_optimizer, subspace=subspace, branches=branches, verb="ask",
                                     stacklevel=2, parameter_constraints=parameter_constraints)
        self._k = constraints
        self._run = SteppedRun(self._search.env, self._search.policy, seed=self._search.seed,
                               logger=self._search.logger, run_info=self._search.info)
        self._pending: dict[int, Trial] = {}
        self._asked = 0
        self._history: list[dict[str, Any]] = []

    @property
    def run_id(self) -> int | None:
        """The run's id in ``db`` (``None`` without one, or before the first :meth:`ask`)."""
        return self._run.result.run_id

    @property
    def seed(self) -> int:
        """The run's seed (drawn when ``seed=None`` was given)."""
        return self._search.seed

    @property
    def budget(self) -> int:
        """The evaluations this optimizer may ask for."""
        return self._run.budget

    @property
    def status(self) -> str:
        """``"new"`` before the first :meth:`ask`, then ``"running"``; ``"completed"`` once
        closed or when the budget's last evaluation is told; ``"failed"`` or ``"interrupted"``
        when asking or telling raised (the run's record says why)."""
        return self._run.status or "new"

    @property
    def pending(self) -> tuple[Trial, ...]:
        """The trials asked for and not yet told, in the order they were asked (copies)."""
        return tuple(Trial(trial.number, _copied(trial.x), dict(trial.fixed)) for trial in self._pending.values())

    @property
    def history(self) -> list[dict[str, Any]]:
        """The told evaluations in the order they were told, each as ``optimize``'s
        ``OptimizeResult.history`` holds it (``x``, ``value`` or ``values``, ``failed``, ...,
        and ``fixed``: the trial's :attr:`Trial.fixed`, ``{}`` for one asked without)."""
        self._history.extend(run_history(self._search.env, self._run.result.steps[len(self._history):],
                                         self._search.constrained, before=self._history, fixed=True))
        return list(self._history)

    def ask(self, fixed: Mapping[str, Any] | None = None) -> Trial:
        """The next point to evaluate, as a :class:`Trial`. Asking again before telling keeps
        several points in flight: each proposal sees those asked and not told.

        Args:
            fixed: parameters this trial must hold at given values, ``{name: value}`` (Ax's
                ``fixed_features``, Optuna's ``PartialFixedSampler``: the oven is at 200 C
                today), or ``None``. Names are the space's parameters, ``x0 .. x{d-1}`` for
                ``bounds``; each value is checked as its parameter checks a point's. The
                others are proposed as usual with these set: the acquisition is maximised over
                them alone, in the trust region (stretched on the fixed parameters to reach
                their values, which may lie outside it), and during the initial design the
                trial is the next design point with these values set. ``trial.x`` holds them
                exactly and ``trial.fixed`` lists them; once told, the run's step records them
                (``steps.fixed``, ``history[i]["fixed"]``). Not supported, and refused naming the
                combination: a subspace search (more columns than the checkpoint takes), a
                conditional space searched by branch, a fixed parameter that some choice lists
                or that lists others (``branches=False`` searches the rest), and a fixed
                parameter that appears in ``parameter_constraints``.

        Raises:
            TypeError / ValueError: ``fixed`` is not a mapping of this space's parameter names to
                valid values, or names a combination not supported (nothing is asked).
            RuntimeError: the budget is spent (told and pending evaluations fill it), or the
                run has ended (closed, or failed).
        """
        values, pinned = ({}, None) if fixed is None else self._fixed(fixed)
        key = self._asked
        action = self._run.propose(key, pinned, values)
        self._asked += 1
        return self._held(key, action, values)

    def attach(self, x: Any) -> Trial:
        """A point of the caller's own to evaluate, held as a :class:`Trial` in flight as an
        asked one is (Ax's ``attach_trial``, Optuna's ``enqueue_trial``): a known good setting,
        a colleague's guess, a point a constraint of the lab requires. Tell its outcome as any
        trial's; it counts against the budget, later proposals see it in flight, and once told
        the model learns from it and the run records it as any evaluation (its ``act_s`` 0:
        nothing was proposed).

        Args:
            x: the point in the objective's form: for ``bounds``, an array ``[d]`` inside
                them (or ``{"x0": ..., "x{d-1}": ...}``); for a search space, a params dict
                (a conditional space's active parameters alone).

        Returns:
            the trial, its ``x`` the point as the run records it: ``x`` read into the model's
            unit cube and back, so a float may differ from the one given in its last bits
            (ints and choices are exact).

        Raises:
            ValueError / TypeError: ``x`` is not a point of the bounds or space, or violates
                ``parameter_constraints`` (nothing is held).
            RuntimeError: the budget is spent (told and pending evaluations fill it), or the
                run has ended.
        """
        try:
            action = point_action(x, self._search.box, self._search.searched)
        except (TypeError, ValueError) as err:
            raise type(err)(f"attach(x): {err}") from None
        violated = [] if self._search.linear is None else outside_linear(self._search.env, self._search.linear, action)
        if violated:
            raise ValueError(f"attach(x): the point {self._search.env.params(action)} violates "
                             f"parameter_constraints {violated}")
        key = self._asked
        self._run.hold(key, action)
        self._asked += 1
        return self._held(key, action)

    def tell(self, trial: Trial | int, value: Any = None, *, constraints: Any = None,
             error: str | BaseException | None = None) -> None:
        """Record the outcome of a trial asked for (a :class:`Trial` or its ``number``).

        Args:
            trial: the trial evaluated.
            value: its objective value: a real number (or a 1-element array or list); for several
                objectives, one per objective in ``minimize``'s order, or a mapping by name
                when ``minimize`` names them. NaN or inf records a failed evaluation (as an
                objective returning it in ``optimize`` with ``on_error="skip"``).
            constraints: its ``k`` outcome-constraint values, when the optimizer was made with
                ``constraints=k`` (required then, refused otherwise).
            error: instead of ``value``, why the evaluation failed (a message or the exception
                raised): recorded as a failed evaluation, which the model learns from as
                ``optimize``'s failures (the point is not proposed again).

        Raises:
            TypeError: ``value`` or ``constraints`` is not what the problem needs, or neither
                ``value`` nor ``error`` is given (nothing is recorded).
            ValueError: ``trial`` was never asked for, or was told already.
            RuntimeError: the run has ended.
        """
        number = trial.number if isinstance(trial, Trial) else trial
        if isinstance(number, bool) or not isinstance(number, (int, np.integer)):
            raise TypeError(f"trial must be a Trial or its number, got {type(trial).__name__}")
        number = int(number)
        if number not in self._pending:
            told = number < self._asked and number >= 0
            asked = ("none has been asked for yet: Optimizer.ask() gives each trial" if self._asked == 0 else
                     "trial 0 was" if self._asked == 1 else f"trials 0..{self._asked - 1} were")
            raise ValueError(f"trial {number} " + ("was told already" if told else f"was never asked for ({asked})"))
        x = self._pending[number].x
        outcome = self._outcome(number, x, value, constraints, error)
        self._run.record(number, outcome)
        del self._pending[number]

    def result(self) -> OptimizeResult | ParetoResult:
        """The search's result so far, as ``optimize`` returns it: the best told evaluation
        (or the Pareto front), with the model's recommendation once the run has completed
        (the best evaluation stands in for it until then).

        Raises:
            RuntimeError: no evaluation has been told, or every one failed.
        """
        history = self.history
        if not any(not h["failed"] for h in history):
            raise RuntimeError(f"no evaluation to report: {len(history)} told"
                               + (", every one failed" if history else ""))
        return self._search.result(history, self._run.result, stacklevel=2)

    def close(self) -> OptimizeResult | ParetoResult | None:
        """Complete the run (the model's recommendation is recorded, and the run marked
        ``completed``) and return its result, or ``None`` when no evaluation succeeded. Trials
        still pending are dropped, with a warning. Closing again returns the result again."""
        if self._pending and self._run.status == "running":
            warnings.warn(f"{len(self._pending)} trial(s) asked for were never told and are dropped: "
                          f"{sorted(self._pending)}", UserWarning, stacklevel=2)
            self._pending.clear()
        told = self._run.result.n_steps
        self._run.finish(None if told >= self.budget else f"by close() after {told} of {self.budget} evaluations")
        if not any(not step["failed"] for step in self._run.result.steps):
            return None
        return self.result()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, kind: Any, err: BaseException | None, tb: Any) -> bool:
        if err is None:
            self.close()
            return False
        raised = self._run.end(err)
        if raised is not err:
            raise raised from err
        return False

    def _held(self, key: int, action: np.ndarray, fixed: dict[str, Any] | None = None) -> Trial:
        """Trial ``key`` at unit-cube ``action`` ``[d]`` kept pending, the values ``fixed`` set
        exactly in its point; returns the caller's copy."""
        point = self._search.env.point(action)
        point = with_fixed(point if isinstance(point, dict) else np.asarray(point, dtype=np.float64), fixed)
        trial = Trial(key, point, dict(fixed or {}))
        self._pending[key] = trial
        return Trial(key, _copied(trial.x), dict(trial.fixed))

    def _fixed(self, fixed: Any) -> tuple[dict[str, Any], Pinned | None]:
        """``ask``'s ``fixed`` checked (see :meth:`ask`): the values by name, as their parameters
        hold them, and the unit-cube columns they pin (``None`` when they take none)."""
        if not isinstance(fixed, Mapping):
            raise TypeError(f"fixed must be a mapping of parameter names to values, got {type(fixed).__name__}")
        search = self._search
        space = SearchSpace.from_bounds(search.box) if search.searched is None else search.searched
        values, columns, encoded = {}, [], []
        for name, value in fixed.items():
            if name not in space:
                raise ValueError(f"fixed: unknown parameter {name!r}; the parameters are {space.names}")
            try:
                values[name] = space[name].check(value)
            except (TypeError, ValueError) as err:
                raise type(err)(f"fixed[{name!r}]: {err}") from None
            if space.depends_on(name) is not None or getattr(space[name], "dependents", None):
                raise ValueError(f"fixed[{name!r}]: a parameter of a conditional space's choices (one that a choice "
                                 "lists, or a choice that lists others) cannot be fixed; fix the others")
            cols = space.columns(name)
            columns.extend(range(cols.start, cols.stop))
            encoded.extend(space[name].snap(torch.as_tensor(space[name].encode(values[name]))).tolist())
        _check_fixed_search(search, set(values))
        if not columns:
            return values, None
        return values, Pinned(torch.as_tensor(columns), torch.as_tensor(encoded, dtype=torch.float64))

    def _outcome(self, number: int, x: Any, value: Any, constraints: Any, error: Any) -> Outcome:
        """The :class:`Outcome` told for trial ``number`` at ``x``, checked (see :meth:`tell`)."""
        if error is not None:
            if value is not None:
                raise TypeError("give value or error, not both")
            if not isinstance(error, (str, BaseException)):
                raise TypeError(f"error must be a message (str) or the exception raised, got {type(error).__name__}")
            return Outcome(False, error if isinstance(error, BaseException) else RuntimeError(error))
        if value is None:
            raise TypeError(f"tell(trial {number}) needs value=, or error= for a failed evaluation")
        env = self._search.env
        try:
            if env.objectives > 1:
                objective_values(value, x, env.objectives, env.objective_names if env.named_objectives else None,
                                 held=True)
            else:
                objective_value(value, x, held=True)
        except ObjectiveReturnError as err:
            raise TypeError(f"tell(trial {number}): {err}") from None
        if self._k is None:
            if constraints is not None:
                raise TypeError("constraints are told only to an Optimizer made with constraints=k")
            return Outcome(True, value)
        if constraints is None:
            raise TypeError(f"tell(trial {number}) needs constraints= ({self._k} values): this Optimizer was made "
                            f"with constraints={self._k}")
        try:
            count = constraint_values(constraints, x).size
        except ObjectiveReturnError as err:
            raise TypeError(f"tell(trial {number}): {err}") from None
        except ObjectiveError:  # NaN / inf: the env records a failed evaluation
            count = self._k
        if count != self._k:
            raise TypeError(f"tell(trial {number}): constraints must hold {self._k} value"
                            f"{'' if self._k == 1 else 's'} (this Optimizer was made with constraints={self._k}), "
                            f"got {count}")
        return Outcome(True, Evaluated(value, constraints))


def _check_fixed_search(search: Any, names: set[str]) -> None:
    """Refuse (``ValueError``, naming the combination) fixed values for ``names`` where the search
    cannot hold them: linear constraints on one of them, a conditional space searched by branch, a
    subspace search, a policy whose ``act`` takes no ``pinned``."""
    if search.linear is not None:
        constrained = sorted(names & {n for coefs, _ in search.linear.rows for n, c in coefs.items()
                                      if c and search.linear.space[n].columns})
        if constrained:
            raise ValueError(f"fixed {constrained} with parameter_constraints on them is not supported: a fixed "
                             "value can leave the constraints' polytope no volume; fix parameters they do not name")
    policy = search.policy
    while isinstance(policy, PolicyWrapper):
        policy = policy.inner
    if isinstance(policy, BranchBOPolicy):
        raise ValueError("fixed is not supported with a conditional space searched by branch; give branches=False "
                         "(one model over the whole cube) to fix parameters no choice lists")
    if getattr(policy, "subspace", None) is not None:
        raise ValueError(f"fixed is not supported with a subspace search ({policy.dim} columns for a model of "
                         f"{policy.width}): the search moves in the subspace's cube, not the parameters'")
    if "pinned" not in inspect.signature(policy.act).parameters:
        raise ValueError(f"fixed needs a policy whose act takes pinned columns; {type(policy).__name__}'s does not")


def _copied(x: np.ndarray | dict[str, Any]) -> np.ndarray | dict[str, Any]:
    return dict(x) if isinstance(x, dict) else x.copy()
