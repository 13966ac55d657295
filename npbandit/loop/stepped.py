"""A black-box run driven from outside, one evaluation at a time: the loop under ask and tell
(:class:`~npbandit.ask_tell.Optimizer`).

:func:`~npbandit.loop.run_episode` calls the objective itself (or has an executor call it);
a :class:`SteppedRun` is handed each outcome instead. :meth:`SteppedRun.propose` asks the
policy for a point, seeing the points proposed and not yet recorded as in flight (as the
asynchronous loop does), and :meth:`SteppedRun.hold` keeps a point the caller chose in flight
the same way; :meth:`SteppedRun.record` records one of them with its
:class:`~npbandit.envs.evaluation.Outcome`, in any order, through the same
``env.step`` and the same write as an asynchronous run's evaluation
(:func:`~npbandit.loop.records._record_evaluation`): the env judges the outcome (a
non-finite value is a failed evaluation), the step is written as the next ``t`` with
``submitted_at`` (when it was proposed) and ``finished_at`` (when it was recorded), and the
policy observes it. The run is started by the first proposal, completes on :meth:`finish`
(or when its budget's last evaluation is recorded) with the policy's recommendation, and is
recorded ``failed`` or ``interrupted`` when the policy raises or a stop signal arrives
while it works (:meth:`end`)."""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.envs.blackbox import BlackBoxEnv
from npbandit.envs.evaluation import Outcome, OutcomeRelay
from npbandit.loop.episode import _end_on_error, _finish, _recommendation, _start
from npbandit.loop.records import EpisodeResult, _Clock, _record_evaluation
from npbandit.policies.base import Policy
from npbandit.stopping import StopSignals, stop_on_signals
from npbandit.storage import RunLogger
from npbandit.validation import check_seed

__all__ = ["SteppedRun"]


@dataclass(frozen=True)
class _Proposed:
    """A point proposed and not yet recorded: its action (``[d]``, in the unit cube), the
    seconds the policy took, when it was proposed (``perf_counter`` and UTC), and the values
    the caller held in it (``{name: value}``, or ``None``)."""

    action: np.ndarray
    act_s: float
    at: float
    at_utc: dt.datetime
    fixed: dict[str, Any] | None = None


class SteppedRun:
    """One black-box run whose evaluations are made by the caller (see the module docstring).

    Args:
        env: a :class:`~npbandit.envs.BlackBoxEnv` (its objective is never called: each
            outcome is handed to its evaluator, which this run replaces).
        policy: proposes the points.
        seed: seeds the env's reset and the policy.
        logger: where the run and its steps are written, or ``None``.
        run_info: what the run records of itself, as for ``run_episode``.

    Attributes:
        result: the run so far (its id, steps, recommendation once it completes).
        status: ``None`` before the first proposal, then ``"running"``, and at the end
            ``"completed"``, ``"failed"`` or ``"interrupted"``.
    """

    def __init__(self, env: gym.Env, policy: Policy, *, seed: int, logger: RunLogger | None = None,
                 run_info: dict[str, Any] | None = None) -> None:
        if not isinstance(env, gym.Env) or not isinstance(env.unwrapped, BlackBoxEnv):
            raise TypeError(f"env must be a BlackBoxEnv, got {type(env).__name__}")
        if not isinstance(policy, Policy):
            raise TypeError(f"policy must be an npbandit Policy, got {type(policy).__name__}")
        check_seed("seed", seed)
        if logger is not None and not isinstance(logger, RunLogger):
            raise TypeError(f"logger must be a RunLogger or None, got {type(logger).__name__}")
        policy.check_spaces(env.observation_space, env.action_space)
        self.env, self.policy, self.seed, self.logger = env, policy, seed, logger
        self.info = dict(run_info or {})
        self.result = EpisodeResult(run_id=None)
        self.status: str | None = None
        self._relay = OutcomeRelay()
        env.unwrapped.evaluator = self._relay
        self._proposed: dict[int, _Proposed] = {}
        self._obs: Any = None
        self._clock = _Clock()

    @property
    def budget(self) -> int:
        """The evaluations the run may make (its env's ``budget``)."""
        return self.env.unwrapped.budget

    @property
    def in_flight(self) -> dict[int, np.ndarray]:
        """The points proposed and not yet recorded, by key, as unit-cube actions ``[d]``."""
        return {key: proposed.action.copy() for key, proposed in self._proposed.items()}

    def propose(self, key: int, pinned: Any = None, fixed: dict[str, Any] | None = None) -> np.ndarray:
        """The policy's next point, a unit-cube action ``[d]``, kept under ``key`` until
        :meth:`record`; the points in flight are passed to the policy as pending. The first
        call starts the run. ``pinned``: columns the point must hold at given values (a
        :class:`~npbandit.acquisition.pinned.Pinned`, passed to the policy's ``act``, which must
        take it), or ``None``. ``fixed``: those values by name in the user's units
        (``{name: value}``), which the step records as its ``fixed`` and sets exactly in its
        ``params``, or ``None``.

        Raises:
            RuntimeError: the run has ended, or the budget is spent (the evaluations recorded
                and in flight fill it).
            ValueError: ``key`` is in flight already.
            Exception: what the policy raised (the run is then recorded ``failed``, or
                ``interrupted`` by a ``KeyboardInterrupt``: :meth:`end`).
        """
        self._check_room(key)
        with stop_on_signals() as signals, self._ending_on_error(signals):
            self._start(signals)
            pending = [proposed.action for proposed in self._proposed.values()]
            t0 = time.perf_counter()
            given = {} if pinned is None else {"pinned": pinned}
            if pending:
                action = self.policy.act(self._obs, pending=np.stack(pending), **given)
            else:
                action = self.policy.act(self._obs, **given)
            action = np.asarray(action, dtype=np.float64)
            self._proposed[key] = _Proposed(action, time.perf_counter() - t0, time.perf_counter(),
                                            dt.datetime.now(dt.UTC), dict(fixed) if fixed else None)
        return action.copy()

    def hold(self, key: int, action: np.ndarray) -> None:
        """Keep ``action`` (``[d]``, in the unit cube), a point the caller chose rather than
        the policy, in flight under ``key`` as a proposed one is: later proposals see it as
        pending, :meth:`record` records it, and it counts against the budget (the policy is
        not asked, so its proposing seconds are 0). The first call starts the run.

        Raises:
            RuntimeError: the run has ended, or the budget is spent.
            ValueError: ``key`` is in flight already.
        """
        self._check_room(key)
        action = np.array(action, dtype=np.float64)
        with stop_on_signals() as signals, self._ending_on_error(signals):
            self._start(signals)
            self._proposed[key] = _Proposed(action, 0.0, time.perf_counter(), dt.datetime.now(dt.UTC))

    def record(self, key: int, outcome: Outcome) -> dict[str, Any]:
        """Record the evaluation of the point in flight under ``key`` (the next ``t``), judged
        by the env as ``step`` judges any outcome, and let the policy observe it; returns the
        step's record. A failed evaluation (``outcome.ok`` false, or a non-finite value) is
        recorded as failed and the run goes on. When it fills the budget and nothing else is
        in flight, the run completes (:meth:`finish`).

        Raises:
            KeyError: no point is in flight under ``key``.
            RuntimeError: the run has ended.
            Exception: what the env or the policy raised on it (the run is then recorded
                ``failed``; :meth:`end`).
        """
        self._check_running()
        if key not in self._proposed:
            raise KeyError(key)
        proposed = self._proposed.pop(key)
        times = dict(worker=None, submitted_at=proposed.at_utc, finished_at=dt.datetime.now(dt.UTC))
        with stop_on_signals() as signals, self._ending_on_error(signals):
            self._obs, row = _record_evaluation(self.env, self.policy, self._obs, proposed.action,
                                                lambda: self._relay.hand_over(outcome), proposed.act_s,
                                                time.perf_counter() - proposed.at, times, self.logger, "skip",
                                                self.result, signals, self._clock, proposed.fixed)
        if self.result.n_steps >= self.budget and not self._proposed:
            self.finish()
        return row

    def finish(self, stopped_early: str | None = None) -> None:
        """Complete the run: ask the policy for its recommendation (when an evaluation
        succeeded) and record the run ``completed`` (``failed`` when every evaluation failed),
        with ``stopped_early`` saying why it ended before its budget, if it did. Points still
        in flight are dropped. A run never started is left unrecorded. Idempotent once ended."""
        if self.status not in (None, "running"):
            return
        if self.status is None:
            self.status = "completed"
            return
        self._proposed.clear()
        self.result.stopped_early = stopped_early
        if self.result.n_steps and self.result.failed_steps < self.result.n_steps:
            self.result.recommendation, self.result.recommended = _recommendation(self.env, self.policy,
                                                                                  self.result.steps)
        with stop_on_signals() as signals:
            _finish(self.logger, self.result, signals)
        failed = self.result.n_steps and self.result.failed_steps == self.result.n_steps
        self.status = "failed" if failed else "completed"

    def end(self, err: BaseException, signals: StopSignals | None = None) -> BaseException:
        """Record the run ended by ``err`` (``failed``, or ``interrupted`` by a
        ``KeyboardInterrupt``) unless it has ended; returns the error to raise: a
        :class:`~npbandit.stopping.RunInterrupted` counting the steps saved in place of a
        ``KeyboardInterrupt``, else ``err``. ``signals``: the stop signals of the block the
        error came from (a fresh handler otherwise)."""
        if self.status != "running":
            return err
        self._proposed.clear()
        with contextlib.nullcontext(signals) if signals is not None else stop_on_signals() as held:
            interrupted = _end_on_error(err, self.logger, self.result, held)
        self.status = "failed" if interrupted is None else "interrupted"
        return err if interrupted is None else interrupted

    def _check_room(self, key: int) -> None:
        """Refuse a point under ``key`` when the run has ended, ``key`` is in flight or the
        budget is spent (see :meth:`propose`)."""
        self._check_running()
        if key in self._proposed:
            raise ValueError(f"key {key!r} is in flight already")
        if self.result.n_steps + len(self._proposed) >= self.budget:
            raise RuntimeError(f"the budget of {self.budget} evaluations is spent: {self.result.n_steps} recorded and "
                               f"{len(self._proposed)} in flight")

    def _start(self, signals: StopSignals) -> None:
        """Start the run (its record, the env's reset and the policy's) on the first point."""
        if self.status is None:
            self.status = "running"  # a start that fails is recorded as the run's failure
            self._obs = _start(self.env, self.policy, self.seed, self.logger, self.info, self.result, signals)

    def _check_running(self) -> None:
        if self.status not in (None, "running"):
            raise RuntimeError(f"the run has ended ({self.status}); start another to go on (its evaluations can be "
                               "given to it as initial points)")

    @contextlib.contextmanager
    def _ending_on_error(self, signals: StopSignals) -> Iterator[None]:
        """A block whose error ends the run (:meth:`end`, recorded with ``signals`` held) and is raised."""
        try:
            yield
        except BaseException as err:
            raised = self.end(err, signals)
            if raised is not err:
                raise raised from None
            raise
