"""Where a :class:`~npbandit.envs.BlackBoxEnv`'s objective runs: inside ``step``, or elsewhere.

``BlackBoxEnv.step(action)`` is the one way a black-box evaluation is recorded: it checks
the action, spends budget, judges the objective's outcome (a finite real number, or an
:class:`~npbandit.envs.ObjectiveError`), adds noise, keeps the best value and returns
Gymnasium's ``(obs, reward, terminated, truncated, info)``. Where the outcome comes from
is the env's ``evaluator``:

* ``None`` (the default): ``step`` calls the objective itself.
* An :class:`OutcomeRelay`: the point was evaluated elsewhere (a replay, another process);
  :meth:`OutcomeRelay.hand_over` gives ``step`` that evaluation's :class:`Outcome`.
* An :class:`AsyncEvaluator`: the objective runs on a :class:`concurrent.futures.Executor`'s
  workers, several points at once; each finished evaluation is handed over and recorded by
  ``step`` in the order they finish (asynchronous BO, :func:`npbandit.loop.run_episode`).

Any object with ``evaluate(objective, x) -> Outcome`` can serve: ``step`` calls it with the
objective and the point ``x`` (shape ``[d]``, in the env's bounds; the params dict of an
env with a search space) and records what it returns. It returns a failed evaluation as an
``Outcome`` and raises only when it is misused.
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import os
import pickle
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from npbandit.envs.outcomes import Evaluated

__all__ = ["AsyncEvaluator", "Evaluation", "Evaluator", "ExecutorFailure", "Outcome", "OutcomeRelay", "UnsentError"]


class ExecutorFailure(RuntimeError):
    """An executor could not hand back an evaluation's outcome: the objective did not raise
    (a process pool that cannot pickle the objective, its point or what it returned; a
    worker lost). ``__cause__`` is the executor's own exception; ``step`` records the
    evaluation as failed, naming the executor.

    Attributes:
        unsendable: the executor cannot send the objective itself to its workers (a process
            pool whose pickler refuses it: a lambda, a local function), so no evaluation on it
            can run; a run then stops at this evaluation whatever its ``on_error``, rather than
            spend its budget failing them all. ``False`` for a failure of one evaluation (its
            value could not come back, a worker was lost).
    """

    def __init__(self, message: str, unsendable: bool = False) -> None:
        super().__init__(message)
        self.unsendable = unsendable

    def __reduce__(self):
        return type(self), (str(self), self.unsendable), dict(self.__dict__)


class UnsentError(Exception):
    """Stands in for an exception the objective (or its constraints) raised in a worker's
    process that pickle cannot send back to the run's process (an exception class whose
    ``__init__`` takes other arguments than its ``args``, or one holding a lock): sent as
    it was, it would break a process pool for every later evaluation (``BrokenProcessPool``)
    or hide the objective's error behind pickle's. ``raised`` is the original type's name,
    ``str()`` its message, so the step records what was raised."""

    def __init__(self, raised: str, message: str) -> None:
        super().__init__(raised, message)
        self.raised, self.message = raised, message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Outcome:
    """One finished evaluation of an objective at a point.

    Attributes:
        ok: whether the objective returned (``True``) or raised (``False``).
        value: what it returned when ``ok`` (judged by ``step``: a real number is
            expected), else the exception it raised.
        worker: who evaluated it (``host:pid:thread``, preceded on a Dask worker by its
            address); ``None`` when unknown (evaluated in ``step``, or the executor failed).
        timed_out: the evaluator gave it up, still running after its timeout (``ok`` is
            then ``False`` and ``value`` a ``TimeoutError``); ``step`` records it as a
            failure of kind ``"timeout"`` (:attr:`~npbandit.envs.ObjectiveError.kind`).
    """

    ok: bool
    value: Any
    worker: str | None = None
    timed_out: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.ok, bool):
            raise TypeError(f"ok must be a bool, got {type(self.ok).__name__}")
        if not self.ok and not isinstance(self.value, BaseException):
            raise TypeError(f"value must be the exception the objective raised when ok is False, "
                            f"got {type(self.value).__name__}")
        if self.worker is not None and not isinstance(self.worker, str):
            raise TypeError(f"worker must be a str or None, got {type(self.worker).__name__}")
        if not isinstance(self.timed_out, bool):
            raise TypeError(f"timed_out must be a bool, got {type(self.timed_out).__name__}")
        if self.timed_out and self.ok:
            raise ValueError("timed_out=True is an evaluation given up: ok must be False")


@runtime_checkable
class Evaluator(Protocol):
    """What ``BlackBoxEnv.step`` asks for the outcome at a point (see the module docstring)."""

    def evaluate(self, objective: Callable[[np.ndarray], Any], x: np.ndarray) -> Outcome:
        """The outcome of ``objective`` at ``x`` (shape ``[d]``, in the env's bounds)."""
        ...


class OutcomeRelay:
    """An evaluator for points evaluated elsewhere: hand it an outcome, and the env's next
    ``step`` records that outcome instead of calling the objective.

    Example::

        relay = OutcomeRelay()
        env = BlackBoxEnv(objective=f, bounds=bounds, evaluator=relay)
        env.reset(seed=0)
        relay.hand_over(Outcome(True, value), x=env.to_bounds(action))
        obs, reward, terminated, truncated, info = env.step(action)
    """

    def __init__(self) -> None:
        self._handed: tuple[Outcome, Any] | None = None

    def hand_over(self, outcome: Outcome, x: Any = None) -> None:
        """Make ``outcome`` the one the next ``step`` records (replacing one not yet recorded).

        Args:
            outcome: the evaluation's :class:`Outcome`.
            x: the point it was evaluated at (shape ``[d]``, in the env's bounds, or the
                params dict of an env with a search space); when given, ``step`` refuses to
                record the outcome at any other point.
        """
        if not isinstance(outcome, Outcome):
            raise TypeError(f"outcome must be an Outcome, got {type(outcome).__name__}")
        if isinstance(x, dict):
            x = dict(x)
        elif x is not None:
            x = np.asarray(x, dtype=np.float64)
            if x.ndim != 1:
                raise ValueError(f"x must be one point of shape [d], got shape {list(x.shape)}")
        self._handed = (outcome, x)

    def evaluate(self, objective: Callable[[np.ndarray], Any], x: np.ndarray) -> Outcome:
        """The outcome handed over (once: the next ``step`` needs a new one)."""
        del objective  # evaluated elsewhere
        if self._handed is None:
            raise RuntimeError("step() was called with no outcome handed over: call hand_over() first (an env whose "
                               "evaluator is an OutcomeRelay records evaluations made elsewhere)")
        outcome, at = self._handed
        self._handed = None
        if at is not None and not (at == x if isinstance(at, dict) else
                                   not isinstance(x, dict) and np.array_equal(at, x)):
            shown = at if isinstance(at, dict) else at.tolist()
            raise RuntimeError(f"the outcome handed over was evaluated at x={shown}, but step() records "
                               f"x={x if isinstance(x, dict) else np.asarray(x).tolist()}")
        return outcome


@dataclass(eq=False)
class Evaluation:
    """One evaluation submitted by an :class:`AsyncEvaluator` (compared and hashed by identity).

    Attributes:
        action: the point in the unit cube, shape ``[d]`` (what ``env.step`` takes).
        x: what the objective gets: the point in the env's bounds, shape ``[d]``, or the
            params dict of an env with a search space.
        submitted: ``time.perf_counter()`` when it was submitted.
        submitted_at: the UTC time it was submitted.
        future: the executor's future (its result is ``(ok, value, worker)``).
        outcome: ``None`` while it runs; its :class:`Outcome` once :meth:`AsyncEvaluator.wait`
            returned it (a timed-out one fails with ``TimeoutError``).
        started: ``time.perf_counter()`` from which its timeout counts (``None`` while it waits
            for a worker): see :class:`AsyncEvaluator`'s ``timeout``.
    """

    action: np.ndarray
    x: Any
    submitted: float
    submitted_at: dt.datetime
    future: cf.Future = field(repr=False)
    outcome: Outcome | None = None
    started: float | None = None


#: the executors whose futures say when a worker takes them (``Future.running()``), so that an
#: evaluation's timeout counts from then: the standard library's pools
_REPORTS_START = (cf.ThreadPoolExecutor, cf.ProcessPoolExecutor)

#: the longest :meth:`AsyncEvaluator.wait` blocks at once (seconds). A stop signal that another
#: thread takes (a worker's ``os.kill``, or one arriving just as the main thread goes to sleep)
#: only sets a flag that the main thread's interpreter acts on when it runs again; waking this
#: often bounds how late a SIGINT / SIGTERM stops a run that waits for a long evaluation.
_WAKE_S = 0.1


class AsyncEvaluator:
    """Runs a :class:`~npbandit.envs.BlackBoxEnv`'s objective on an executor's workers,
    several points at once, and hands each finished evaluation to the env's ``step``.

    Set as the env's ``evaluator``; then, for each point: :meth:`submit` starts it,
    :meth:`wait` returns the evaluations that finished (or timed out), and for each one
    :meth:`hand_over` followed by ``env.step(evaluation.action)`` records it -- with every
    check ``step`` makes of an evaluation done in place, so a run is the same whichever way
    its points were evaluated.

    Args:
        executor: where the objective runs (a thread or process pool, a Dask client's
            executor): ``executor.submit`` is called with a module-level function, the
            objective and the point, so a process pool needs a picklable objective.
        timeout: seconds an evaluation may run before it is given up: it fails with
            ``TimeoutError`` (its worker is not stopped -- no executor can stop a running call
            -- and its result, if it ever comes, is dropped); ``None``: wait for ever. On the
            standard library's thread and process pools, whose futures say when a worker takes
            them, it counts from then (as :meth:`wait` sees it, within ``_WAKE_S``; a process
            pool's futures say so once queued for a worker, so there a call counts from when the
            calls submitted before it that have not returned, those given up included, leave
            it a worker), so an evaluation queued behind busy workers is not given up before it ran;
            on any other executor (a Dask client's, whose futures never say), from submission.
        workers: how many calls a ``ProcessPoolExecutor`` runs at once (its ``max_workers``),
            which the rule above needs; ignored on other executors. ``None`` (default): the
            executor's public ``max_workers`` attribute where it has one, else the count the
            standard library's pool keeps (it makes it public nowhere, so it is read where it is
            found), else ``os.cpu_count()``, the pool's own default.

    A pool that cannot send the objective to its workers (its pickler refuses the objective:
    a lambda or a local function on a process pool) fails every evaluation the same way; the
    first such failure says so (:attr:`ExecutorFailure.unsendable`), and the run loop stops
    there whatever its ``on_error``. An executor shut down already takes no call: ``submit``
    raises a ``RuntimeError`` naming ``executor``.
    """

    def __init__(self, executor: cf.Executor, timeout: float | None = None, workers: int | None = None) -> None:
        if not isinstance(executor, cf.Executor):
            raise TypeError(f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be a positive int or None, got {workers!r}")
        self.executor, self.timeout = executor, timeout
        #: whether the executor's futures say when they start running (see ``timeout``)
        self._reports_start = isinstance(executor, _REPORTS_START)
        #: a process pool's workers: its futures read ``running()`` once queued for a worker, not taken
        self._workers = _pool_workers(executor, workers) if isinstance(executor, cf.ProcessPoolExecutor) else None
        #: the objective the executor runs (the env's, set at the first submit) and whether it can
        #: send it to its workers (``None``: not known; asked only once an evaluation failed)
        self._objective: Any = None
        self._sendable: bool | None = None
        #: evaluations given up whose call may still hold a process pool's worker (see _taken)
        self._abandoned: list[Evaluation] = []
        self._in_flight: list[Evaluation] = []
        self._relay = OutcomeRelay()
        self._tag, self._count = uuid.uuid4().hex, 0  # a key no other evaluation, of any run, has

    @property
    def in_flight(self) -> list[Evaluation]:
        """The evaluations submitted and not yet handed over, in submission order."""
        return list(self._in_flight)

    def submit(self, env: Any, action: Any) -> Evaluation:
        """Start evaluating ``env``'s objective at ``action`` on a worker.

        Args:
            env: the :class:`~npbandit.envs.BlackBoxEnv` (its ``objective`` and ``point``).
            action: a point of the unit cube, shape ``[d]``.
        """
        action = np.asarray(action, dtype=np.float64)
        x = env.point(action)
        x = dict(x) if isinstance(x, dict) else x.copy()
        self._objective = env.objective
        try:
            future = self.executor.submit(_evaluate, env.objective, x, f"{self._tag}-{self._count}", os.getpid())
        except cf.BrokenExecutor:  # a worker was lost: the pool's own error says so (the run records it)
            raise
        except RuntimeError as err:
            if not _shut_down(err):
                raise
            raise RuntimeError(f"executor is shut down and takes no more calls ({type(err).__name__}: {err}); pass "
                               "an executor that is running (a with block shuts its executor down on leaving it, "
                               "so run inside the block)") from err
        self._count += 1
        now = time.perf_counter()
        evaluation = Evaluation(action=action, x=x, submitted=now, submitted_at=dt.datetime.now(dt.UTC),
                                future=future, started=None if self._reports_start else now)
        self._in_flight.append(evaluation)
        return evaluation

    def wait(self) -> list[Evaluation]:
        """Block until an evaluation in flight finishes or times out; return every one that
        has, each with its ``outcome``: the finished ones, then the timed-out ones, each group
        in submission order. They stay in flight until handed over. ``[]`` when nothing is
        running.

        Which evaluations count as finished is decided once, from one snapshot of the
        executor's futures, so a late result cannot turn a timed-out evaluation into a success.
        """
        running = [e for e in self._in_flight if e.outcome is None]
        if not running:
            return []
        while True:  # in slices: see _WAKE_S (and a queued evaluation's start is seen at the next slice)
            now = time.perf_counter()
            for evaluation in self._taken(running):
                if evaluation.started is None:
                    evaluation.started = now
            starts = [e.started for e in running if e.started is not None]
            deadline = None if self.timeout is None or not starts else min(starts) + self.timeout
            left = None if deadline is None else max(0.0, deadline - now)
            done, _ = cf.wait([e.future for e in running], timeout=_WAKE_S if left is None else min(_WAKE_S, left),
                              return_when=cf.FIRST_COMPLETED)
            if done or (left is not None and left <= _WAKE_S):
                break
        now = time.perf_counter()
        for evaluation in running:
            if evaluation.future in done:
                evaluation.outcome = self._outcome(evaluation.future)
        if self.timeout is not None:
            for evaluation in running:
                if (evaluation.future not in done and evaluation.started is not None
                        and now - evaluation.started >= self.timeout):
                    if not evaluation.future.cancel():  # a queued one never starts; a running one cannot be stopped
                        self._abandoned.append(evaluation)
                    evaluation.outcome = Outcome(False, TimeoutError(f"evaluation still running after "
                                                                     f"{self.timeout} s"), timed_out=True)
        finished = [e for e in running if e.future in done]
        return finished + [e for e in running if e.future not in done and e.outcome is not None]

    def _taken(self, running: list[Evaluation]) -> list[Evaluation]:
        """The evaluations of ``running`` a worker has taken (or that are done). A process pool
        queues calls for its workers ahead of time, its futures ``running()`` from then on, and
        its workers take them in submission order, each call holding its worker until it returns
        (one given up too): so of the calls not yet returned, the first ``max_workers`` are taken."""
        if self._workers is None:
            return [e for e in running if e.future.running() or e.future.done()]
        self._abandoned = [e for e in self._abandoned if not e.future.done()]
        held = sorted(self._abandoned + [e for e in running if not e.future.done()], key=lambda e: e.submitted)
        ahead = held[:self._workers]
        return [e for e in running if e.future.done() or any(e is a for a in ahead)]

    def finished(self) -> list[Evaluation]:
        """The evaluations in flight whose worker has returned, without waiting, each with its
        ``outcome`` (what a stopped run still records), in submission order."""
        out = []
        for evaluation in self._in_flight:
            if evaluation.future.done() and not evaluation.future.cancelled():
                evaluation.outcome = self._outcome(evaluation.future)
                out.append(evaluation)
        return out

    def _outcome(self, future: cf.Future) -> Outcome:
        """A finished future's :class:`Outcome`; an executor's failure is marked
        :attr:`~ExecutorFailure.unsendable` when the objective itself cannot be sent."""
        outcome = _outcome(future)
        if not outcome.ok and isinstance(outcome.value, ExecutorFailure) and not self._can_send():
            outcome.value.unsendable = True
        return outcome

    def _can_send(self) -> bool:
        """Whether a process pool can send the objective to its workers: pickled as the pool
        pickles its calls (multiprocessing's ``ForkingPickler``), asked once, after an evaluation
        failed in the executor. Other executors (threads need no pickling; Dask pickles with
        cloudpickle, and says so when it cannot) are not asked."""
        if self._sendable is None:
            self._sendable = True
            if isinstance(self.executor, cf.ProcessPoolExecutor):
                from multiprocessing.reduction import ForkingPickler

                try:
                    ForkingPickler.dumps(self._objective)
                except Exception:  # noqa: BLE001 - pickle raises what the objective's parts raise
                    self._sendable = False
        return self._sendable

    def hand_over(self, evaluation: Evaluation) -> None:
        """Take ``evaluation`` out of flight; the env's next ``step`` records its outcome."""
        if not isinstance(evaluation, Evaluation) or evaluation not in self._in_flight:
            raise ValueError("evaluation must be one of this evaluator's evaluations in flight")
        if evaluation.outcome is None:
            raise ValueError("the evaluation has not finished: hand over what wait() or finished() returned")
        self._in_flight.remove(evaluation)
        self._relay.hand_over(evaluation.outcome, evaluation.x)

    def evaluate(self, objective: Callable[[np.ndarray], Any], x: np.ndarray) -> Outcome:
        """The outcome handed over (``env.step`` calls this; see :class:`OutcomeRelay`)."""
        return self._relay.evaluate(objective, x)

    def cancel(self) -> None:
        """Give up every evaluation in flight: a queued one never starts, a running one
        cannot be stopped and its result is dropped."""
        for evaluation in self._in_flight:
            evaluation.future.cancel()
        self._in_flight.clear()


def _pool_workers(executor: cf.ProcessPoolExecutor, workers: int | None) -> int:
    """How many calls the process pool ``executor`` runs at once: ``workers`` when given, else its
    public ``max_workers`` where it has one, else the standard library pool's own count, else
    ``os.cpu_count()`` (see :class:`AsyncEvaluator`)."""
    for count in (workers, getattr(executor, "max_workers", None), getattr(executor, "_max_workers", None)):
        if isinstance(count, int) and not isinstance(count, bool) and count >= 1:
            return count
    return os.cpu_count() or 1


def _shut_down(err: RuntimeError) -> bool:
    """Whether ``executor.submit`` raised ``err`` because the executor was shut down (the
    standard library's pools and Dask's executor say "after shutdown"; not the interpreter's
    own shutdown)."""
    text = str(err).lower()
    return ("shutdown" in text or "shut down" in text) and "interpreter" not in text


def _outcome(future: cf.Future) -> Outcome:
    try:
        ok, out, worker = future.result()
    except Exception as err:  # noqa: BLE001 - the executor failed, not the objective
        # pickle's own error, or the TypeError / AttributeError it raises for a lock or a local function
        hint = (" (a process pool sends the objective and its point to its workers, and the value back, by "
                "pickle: define the objective at module level, not as a lambda or a local function, and keep "
                "what it holds and returns picklable; or use a thread pool)") if "pickl" in str(err).lower() else ""
        failure = ExecutorFailure(f"{type(err).__name__}: {err}{hint}")
        failure.__cause__ = err
        return Outcome(False, failure, None)
    return Outcome(ok, out, worker)


def _evaluate(call: Callable[[Any], Any], x: Any, key: str, home: int | None = None) -> tuple[bool, Any, str]:
    """Runs on the executor's worker: ``(ok, return value or exception, worker)``.

    ``key`` is unused here and unique per evaluation: Dask's executor takes two calls with
    equal arguments for one task (``pure=True``, its default) and would run a point
    proposed twice once, which is wrong for a noisy objective. ``home``: the run's process
    id; in another process, an exception raised that pickle cannot send back is sent as an
    :class:`UnsentError`."""
    del key
    worker = _worker_name()
    away = home is not None and os.getpid() != home
    try:
        out = call(x)
    except SystemExit as err:  # the objective's sys.exit: the env's step stops the run with it
        return False, err, worker
    except Exception as err:  # noqa: BLE001 - the user's objective: judged by the env's step
        return False, _sendable(err) if away else err, worker
    if away and isinstance(out, Evaluated) and out.failed:  # the constraints raised
        out = Evaluated(out.value, _sendable(out.constraints), failed=True)
    return True, out, worker


def _sendable(err: BaseException) -> BaseException:
    """``err``, or an :class:`UnsentError` of its type's name and message where it does not
    come back from pickle as an exception."""
    try:
        back = pickle.loads(pickle.dumps(err))
    except Exception as why:  # noqa: BLE001 - pickle raises whatever the exception's class raises
        return UnsentError(type(err).__name__, f"{err} (its exception could not be sent back from the worker's "
                                               f"process by pickle: {type(why).__name__}: {why})")
    return err if isinstance(back, BaseException) else UnsentError(type(err).__name__, str(err))


def _worker_name() -> str:
    """Who is evaluating: ``host:pid:thread``, preceded on a Dask worker by the worker's
    address (what the dashboard and ``client.scheduler_info()`` call it)."""
    here = f"{socket.gethostname()}:{os.getpid()}:{threading.current_thread().name}"
    distributed = sys.modules.get("distributed")  # a Dask worker has imported it; never import it here
    if distributed is not None:
        try:
            return f"{distributed.get_worker().address} {here}"
        except ValueError:  # not running in a Dask worker
            pass
    return here
