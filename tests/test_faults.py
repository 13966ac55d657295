"""Fault injection: SIGTERM / SIGINT / SIGKILL at each phase of a step, in every run loop.

Entry points: ``optimize`` (sequential, on a thread pool, on spawned worker processes as
``npbandit optimize --workers`` runs it), the BO loop (``run_episode`` on a BlackBox env) and
the bandit loop, on SQLite and (marked ``postgres``) PostgreSQL.

A signal is sent with ``os.kill(os.getpid(), ...)`` from inside the phase it tests, by a hook
the run calls there -- the objective, a float the objective returns (read where ``step``
judges it), a policy wrapper, the database engine's statement hook -- never from a timer.
Each case then checks that the evaluations that came back are the ones the database holds
and the ones the stop message counts, and that the run is recorded as ``interrupted``.

Phases:
    design: while the policy proposes the third point (two evaluations done);
    evaluation: while the objective (or a bandit's ``step``) runs its third evaluation,
        which is abandoned;
    returned: after the third evaluation returned, before it is written;
    observe: while the policy takes in the third evaluation;
    write: while the third step is written.
"""

import concurrent.futures as cf
import os
import pickle
import signal
import threading

import gymnasium as gym
import numpy as np
import pytest
from fault_hooks import AT, FileCount, SignalWhenRead, in_a_worker, send
from sqlalchemy import event

from npbandit.api import optimize
from npbandit.envs import BlackBoxEnv, WheelBanditEnv
from npbandit.loop import RunInterrupted, run_episode
from npbandit.policies import SobolPolicy, UniformPolicy
from npbandit.policies.base import Policy
from npbandit.stopping import StopSignals, stop_on_signals
from npbandit.storage import RunLogger, list_runs, open_db, run_steps

BOUNDS = [[0.0, 0.0], [1.0, 1.0]]
SIGNALS = [signal.SIGTERM, signal.SIGINT]
ALL_PHASES = ["design", "evaluation", "returned", "observe", "write"]


class Count:
    """How many evaluations came back (returned to their caller), across threads."""

    def __init__(self):
        self.n, self.lock = 0, threading.Lock()

    def add(self):
        with self.lock:
            self.n += 1


def objective(phase, signum, returned, release=None):
    """``sum(x)``, hooked: at evaluation ``AT`` it signals while running (``evaluation``,
    then with ``release`` waits for it before returning: a worker still busy when the run
    stops) or returns a :class:`SignalWhenRead` (``returned``)."""
    calls = Count()

    def f(x):
        calls.add()
        value = float(np.sum(x))
        if calls.n == AT and phase == "evaluation":
            send(signum)
            if release is not None:
                assert release.wait(30)
                return value  # after the run stopped: not counted as come back in time
        if calls.n == AT and phase == "returned":
            value = SignalWhenRead(value)
            value.signum = signum
        returned.add()
        return value

    return f


class Hooked(Policy):
    """``inner``, signalling on its ``AT``-th proposal (``design``) or observation (``observe``)."""

    def __init__(self, inner, phase, signum):
        self.inner, self.phase, self.signum = inner, phase, signum
        self.name, self.checkpoint = inner.name, inner.checkpoint

    def reset(self, seed=None):
        super().reset(seed)
        self.inner.reset(seed)
        self.acts = self.observed = 0

    def act(self, obs, pending=None):
        self.acts += 1
        if self.phase == "design" and self.acts == AT:
            send(self.signum)
        return self.inner.act(obs) if pending is None else self.inner.act(obs, pending=pending)

    def observe(self, obs, action, reward, info):
        self.observed += 1
        if self.phase == "observe" and self.observed == AT:
            send(self.signum)
        self.inner.observe(obs, action, reward, info)


class Counted(gym.Wrapper):
    """A bandit env counting the steps that returned; its ``AT``-th signals before the inner
    step (``evaluation``) or returns a reward that signals when the loop reads it (``returned``)."""

    def __init__(self, env, phase, signum, returned):
        super().__init__(env)
        self.phase, self.signum, self.returned, self.calls = phase, signum, returned, 0

    def step(self, action):
        self.calls += 1
        if self.calls == AT and self.phase == "evaluation":
            send(self.signum)
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self.calls == AT and self.phase == "returned":
            reward = SignalWhenRead(reward)
            reward.signum = self.signum
        self.returned.add()
        return obs, reward, terminated, truncated, info


def signal_on_write(url, phase, signum):
    """Make the database's ``AT``-th step insert send ``signum`` (phase ``write``)."""
    if phase != "write":
        return
    inserts = Count()

    def before(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO STEPS"):
            rows = len(parameters) if executemany else 1
            before_n = inserts.n
            inserts.n += rows
            if before_n < AT <= inserts.n:
                send(signum)

    event.listen(open_db(url), "before_cursor_execute", before)


# what each entry point stores when the signal hits the AT-th evaluation at each phase: the
# evaluation in progress is abandoned; one that has returned is saved
STORED = {"design": AT - 1, "evaluation": AT - 1, "returned": AT, "observe": AT, "write": AT}


def check(url, info, returned, phase, signum, stored=None):
    """Evaluations returned == stored == reported, and the run ``interrupted``."""
    stored = STORED[phase] if stored is None else stored
    (run,) = list_runs(url)
    steps = run_steps(url, run.id)
    stop = info.value
    assert isinstance(stop, RunInterrupted) and stop.signum == signum
    assert run.status == "interrupted" and run.id == stop.run_id
    assert returned == len(steps) == run.n_steps == stop.steps == stop.saved == stored
    unit = "evaluation" if run.kind == "bo" else "step"  # a black-box run counts evaluations, a bandit's steps
    assert f"after {stored} {unit}(s); run {run.id} saved all {stored} " in str(stop)
    assert run.error.endswith(f" after {stored} {unit}(s)")
    assert [s["t"] for s in steps] == list(range(stored))


def run_optimize(url, phase, signum, threads):
    returned, release = Count(), threading.Event()
    f = objective(phase, signum, returned, release if threads else None)
    signal_on_write(url, phase, signum)
    executor = cf.ThreadPoolExecutor(1) if threads else None
    try:
        with pytest.raises(RunInterrupted) as info:
            optimize(f, BOUNDS, surrogate="random", budget=6, db=url, progress=False, executor=executor)
        came_back = returned.n  # before the abandoned evaluation is let go
    finally:
        release.set()
        if executor is not None:
            executor.shutdown(wait=True)
    return info, came_back


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("phase", ["evaluation", "returned", "write"])
@pytest.mark.parametrize("threads", [False, True], ids=["sequential", "threads"])
def test_optimize_saves_every_evaluation_that_came_back(tmp_path, phase, signum, threads):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    info, returned = run_optimize(url, phase, signum, threads)
    check(url, info, returned, phase, signum)


def run_bo_loop(url, phase, signum, threads):
    returned, release = Count(), threading.Event()
    env = BlackBoxEnv(objective=objective(phase, signum, returned, release if threads else None), bounds=BOUNDS,
                      budget=6)
    signal_on_write(url, phase, signum)
    executor = cf.ThreadPoolExecutor(1) if threads else None
    try:
        with pytest.raises(RunInterrupted) as info:
            run_episode(env, Hooked(SobolPolicy(2), phase, signum), seed=0, logger=RunLogger(url),
                        run_info={"kind": "bo"}, executor=executor)
        came_back = returned.n  # before the abandoned evaluation is let go
    finally:
        release.set()
        if executor is not None:
            executor.shutdown(wait=True)
    return info, came_back


def run_bandit_loop(url, phase, signum, commit_every=None):
    returned = Count()
    env = Counted(WheelBanditEnv(horizon=8), phase, signum, returned)
    signal_on_write(url, phase, signum)
    with pytest.raises(RunInterrupted) as info:
        run_episode(env, Hooked(UniformPolicy(), phase, signum), seed=0,
                    logger=RunLogger(url, commit_every=commit_every))
    return info, returned.n


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("phase", ALL_PHASES)
@pytest.mark.parametrize("threads", [False, True], ids=["sequential", "threads"])
def test_the_bo_loop_saves_every_evaluation_that_came_back(tmp_path, phase, signum, threads):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    check(url, *run_bo_loop(url, phase, signum, threads), phase, signum)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("phase", ALL_PHASES)
@pytest.mark.parametrize("commit_every", [None, 2], ids=["each-step", "batches-of-2"])
def test_the_bandit_loop_saves_every_step_that_came_back(tmp_path, phase, signum, commit_every):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    # in batches of two, the third step is inserted with the fourth, whose write the signal hits
    stored = AT + 1 if phase == "write" and commit_every == 2 else None
    check(url, *run_bandit_loop(url, phase, signum, commit_every), phase, signum, stored=stored)


def test_a_stop_while_the_policy_observes_keeps_the_evaluation_it_was_given(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    returned = Count()
    env = BlackBoxEnv(objective=objective("observe", signal.SIGTERM, returned), bounds=BOUNDS, budget=10)
    policy = Hooked(SobolPolicy(2), "observe", signal.SIGTERM)
    with pytest.raises(RunInterrupted, match=f"after {AT} evaluation.*saved all {AT} ") as info:
        run_episode(env, policy, seed=0, logger=RunLogger(url), run_info={"kind": "bo"})
    assert returned.n == AT and info.value.saved == AT


def test_a_signal_during_the_write_is_delivered_once_the_step_is_committed(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    signal_on_write(url, "write", signal.SIGINT)
    returned = Count()
    env = BlackBoxEnv(objective=objective("write", signal.SIGINT, returned), bounds=BOUNDS, budget=6)
    with pytest.raises(RunInterrupted, match="SIGINT"):
        run_episode(env, SobolPolicy(2), seed=0, logger=RunLogger(url), run_info={"kind": "bo"})
    (run,) = list_runs(url)
    assert run.n_steps == AT == returned.n and run.status == "interrupted"


@pytest.mark.integration
@pytest.mark.parametrize(("phase", "signum"), [("evaluation", signal.SIGTERM), ("evaluation", signal.SIGINT),
                                               ("returned", signal.SIGTERM), ("write", signal.SIGTERM)],
                         ids=lambda v: v if isinstance(v, str) else signal.Signals(v).name)
def test_optimize_on_worker_processes_saves_every_evaluation_that_came_back(tmp_path, phase, signum):
    # what `npbandit optimize --workers N` runs: the objective in spawned worker processes
    import functools

    from npbandit.cluster import process_pool

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    signal_on_write(url, phase, signum)
    with pytest.raises(RunInterrupted) as info:
        with process_pool(1) as pool:
            optimize(functools.partial(in_a_worker, phase, signum, str(tmp_path)), BOUNDS, surrogate="random",
                     budget=6, db=url, progress=False, executor=pool)
    returned = (tmp_path / "returned").read_text().count("x")
    check(url, info, returned, phase, signum)


# -- the deferral itself (npbandit.stopping) ---------------------------------------------------------------------

def test_a_signal_held_during_a_block_is_raised_at_its_end_or_dropped():
    with stop_on_signals() as signals:
        with pytest.raises(RunInterrupted, match="SIGTERM") as info:
            with signals.held():
                send(signal.SIGTERM)
                send(signal.SIGINT)  # the first one held is the one raised
                reached_the_end = True
        assert reached_the_end and info.value.signum == signal.SIGTERM and info.value.run_id is None
        with signals.held(deliver=False):
            send(signal.SIGINT)
        with pytest.raises(ValueError):  # the block's own error wins; the signal is dropped
            with signals.held():
                send(signal.SIGTERM)
                raise ValueError("the run's own error")
        assert signals.pending is None and not signals.holding
        with pytest.raises(RunInterrupted):  # not held: raised where it arrives
            send(signal.SIGINT)
            pytest.fail("a signal outside a held block must stop the run where it arrives")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_step_holds_signals_from_hold_step_to_its_end():
    with stop_on_signals() as signals:
        with pytest.raises(RunInterrupted):
            with signals.step():
                send(signal.SIGTERM)  # before the evaluation returned: it is abandoned here
                pytest.fail("a signal before hold_step must raise where it arrives")
        written = []
        with pytest.raises(RunInterrupted):
            with signals.step():
                signals.hold_step()
                send(signal.SIGTERM)
                signals.hold_step()  # idempotent within the step
                written.append(1)
        assert written == [1] and not signals.holding
        with pytest.raises(OSError):
            with signals.step():
                signals.hold_step()
                send(signal.SIGINT)
                raise OSError("the write failed")
        assert signals.pending is None and not signals.holding


def test_signals_are_left_to_a_handler_the_caller_installed():
    seen = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        with stop_on_signals():
            send(signal.SIGTERM)
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_stop_message_counts_what_the_database_holds():
    assert str(RunInterrupted(signal.SIGTERM, 4, 7, 6)) == ("stopped by SIGTERM after 7 step(s); run 4 saved 6 of them "
                                                            "and is recorded as interrupted")
    assert "saved all 7 " in str(RunInterrupted(signal.SIGINT, 4, 7, 7))
    assert str(RunInterrupted(signal.SIGINT, None, 3)) == "stopped by SIGINT after 3 step(s)"
    evaluations = RunInterrupted(signal.SIGINT, 4, 3, unit="evaluation")
    assert str(evaluations).startswith("stopped by SIGINT after 3 evaluation(s); run 4 saved all 3")
    assert str(pickle.loads(pickle.dumps(evaluations))) == str(evaluations)
    assert isinstance(StopSignals().holding, bool)


@pytest.fixture(scope="module")
def pg_cluster():
    """One throw-away PostgreSQL server for this module's PostgreSQL cases (each case a fresh
    database in it): starting a server costs seconds, a database a fraction of one."""
    from postgres_cluster import Cluster, skip_unless_available

    skip_unless_available()
    with Cluster() as cluster:
        yield cluster


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_postgresql_holds_what_came_back_too(pg_cluster, signum):
    for phase in ("returned", "write", "evaluation"):
        url = pg_cluster.create_database()
        check(url, *run_optimize(url, phase, signum, threads=False), phase, signum)
    for phase in ALL_PHASES:
        url = pg_cluster.create_database()
        check(url, *run_bo_loop(url, phase, signum, threads=False), phase, signum)
        url = pg_cluster.create_database()
        check(url, *run_bandit_loop(url, phase, signum), phase, signum)


# -- SIGKILL: no handler runs, so what is committed is all there is ------------------------------------------------
#
# Each case runs in a child process forked from a forkserver that imported npbandit once; the
# hook sends SIGKILL to the child at the phase. What may be lost is the evaluation in flight (one
# that returned but whose step was not yet committed), never a committed step (every run
# commits each step by default); the run then shows as `interrupted` (its process is gone) and the file passes
# SQLite's integrity check.

# SIGKILL at each phase of the AT-th evaluation: (evaluations that returned, steps stored)
KILLED = {"design": (AT - 1, AT - 1), "evaluation": (AT - 1, AT - 1), "returned": (AT, AT - 1),
          "observe": (AT, AT), "write": (AT, AT - 1)}


def _killed_run(entry, phase, url, log):
    """The child: run ``entry`` ("optimize", "bo-loop" or "bandit") with SIGKILL at ``phase``."""
    returned = FileCount(log)
    signal_on_write(url, phase, signal.SIGKILL)
    if entry == "optimize":
        optimize(objective(phase, signal.SIGKILL, returned), BOUNDS, surrogate="random", budget=6, db=url,
                 progress=False)
    elif entry == "bo-loop":
        env = BlackBoxEnv(objective=objective(phase, signal.SIGKILL, returned), bounds=BOUNDS, budget=6)
        run_episode(env, Hooked(SobolPolicy(2), phase, signal.SIGKILL), seed=0, logger=RunLogger(url),
                    run_info={"kind": "bo"})
    else:  # a bandit run, its steps committed as storage commits them by default
        env = Counted(WheelBanditEnv(horizon=8), phase, signal.SIGKILL, returned)
        run_episode(env, Hooked(UniformPolicy(), phase, signal.SIGKILL), seed=0, logger=RunLogger(url))
    os._exit(3)  # not reached: the hook killed this process


@pytest.fixture(scope="module")
def forkserver():
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["npbandit.api", "npbandit.loop", "npbandit.storage", "npbandit.envs"])
    return context


def run_killed(context, entry, phase, url, tmp_path):
    """Run the child; returns (evaluations that returned, the run, its steps)."""
    log = tmp_path / f"returned-{entry}-{phase}"
    child = context.Process(target=_killed_run, args=(entry, phase, url, str(log)))
    child.start()
    child.join(120)
    assert child.exitcode == -signal.SIGKILL, f"the child ended with {child.exitcode}, not by SIGKILL"
    returned = log.read_text().count("x") if log.exists() else 0
    (run,) = list_runs(url)
    return returned, run, run_steps(url, run.id)


@pytest.mark.integration
@pytest.mark.parametrize(("entry", "phase"), [("optimize", p) for p in ("evaluation", "returned", "write")]
                         + [(entry, p) for entry in ("bo-loop", "bandit") for p in ALL_PHASES])
def test_a_sigkill_loses_at_most_the_evaluation_in_flight(tmp_path, forkserver, entry, phase):
    # (optimize builds its own policy, so the policy's phases are hooked in the loop's rows)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    returned, run, steps = run_killed(forkserver, entry, phase, url, tmp_path)
    assert run.status == "interrupted"  # its process is gone
    assert [s["t"] for s in steps] == list(range(len(steps))) and len(steps) <= returned
    assert (returned, len(steps)) == KILLED[phase]
    import sqlite3

    with sqlite3.connect(tmp_path / "runs.db") as conn:
        assert conn.execute("pragma integrity_check").fetchone() == ("ok",)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_sigkill_on_postgresql_loses_at_most_the_evaluation_in_flight(tmp_path, forkserver, pg_cluster):
    cases = [("optimize", p) for p in ("evaluation", "returned", "write")] + [("bandit", p) for p in ALL_PHASES]
    for entry, phase in cases:
        url = pg_cluster.create_database()
        returned, run, steps = run_killed(forkserver, entry, phase, url, tmp_path)
        assert run.status == "interrupted" and (returned, len(steps)) == KILLED[phase], (entry, phase)
        assert [s["t"] for s in steps] == list(range(len(steps)))


def test_an_interrupted_optimize_without_a_database_hands_back_its_evaluations():
    """db=None: the exception is the run's only record, so it carries optimize's history."""
    returned = Count()
    f = objective("returned", signal.SIGINT, returned, None)
    with pytest.raises(RunInterrupted) as info:
        optimize(f, BOUNDS, surrogate="random", budget=6, db=None, progress=False)
    stop = info.value
    assert stop.run_id is None and stop.steps == returned.n == AT == len(stop.records) == len(stop.history)
    assert [h["t"] for h in stop.history] == list(range(AT)) and not any(h["failed"] for h in stop.history)
    assert [h["value"] for h in stop.history] == [r["value"] for r in stop.records]
    again = optimize(lambda x: float(np.sum(np.square(x))), BOUNDS, surrogate="random", budget=1, db=None,
                     progress=False, initial=stop.history)
    assert len(again.history) == 1  # the evaluations it hands back continue a run without re-running them
