"""Where a black-box objective runs (npbandit.envs.evaluation): outcomes relayed to ``step``,
an executor's workers, and the asynchronous loop stepping the env only through ``step``.

No clock decides an outcome here: executors finish exactly the evaluations a test says."""

import concurrent.futures as cf
import signal
import warnings

import gymnasium as gym
import numpy as np
import pytest

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.envs import AsyncEvaluator, BlackBoxEnv, Evaluation, Evaluator, ObjectiveError, Outcome, OutcomeRelay
from npbandit.envs.evaluation import ExecutorFailure, _evaluate
from npbandit.loop import RunInterrupted, run_episode
from npbandit.policies.base import Policy
from npbandit.storage import RunLogger, list_runs, run_steps


def test_an_outcome_is_a_return_value_or_the_exception_raised():
    assert Outcome(True, 1.5).worker is None and Outcome(False, KeyError("k"), "host:1:t").worker == "host:1:t"
    with pytest.raises(TypeError, match="ok must be a bool"):
        Outcome(1, 0.0)
    with pytest.raises(TypeError, match="value must be the exception"):
        Outcome(False, "failed")
    with pytest.raises(TypeError, match="worker"):
        Outcome(True, 0.0, worker=3)
    with pytest.raises(TypeError, match="timed_out must be a bool"):
        Outcome(False, TimeoutError("late"), timed_out=1)
    with pytest.raises(ValueError, match="ok must be False"):
        Outcome(True, 0.0, timed_out=True)


def test_a_relayed_outcome_is_recorded_by_step_exactly_as_an_evaluation_in_place():
    noisy = dict(function="branin", budget=4, noise_std=0.5)
    here, relay = BlackBoxEnv(**noisy), OutcomeRelay()
    there = BlackBoxEnv(**noisy, evaluator=relay)
    assert isinstance(relay, Evaluator) and there.evaluator is relay
    here.reset(seed=5), there.reset(seed=5)
    for a in ([0.2, 0.7], [0.9, 0.1], [0.5, 0.5]):
        a = np.array(a)
        x = there.to_bounds(a)
        relay.hand_over(Outcome(True, there.objective(x)), x=x)
        for got, want in zip(there.step(a), here.step(a)):  # the noise draw too
            np.testing.assert_equal(got, want)
    relay.hand_over(Outcome(False, KeyError("sensor offline")))
    with pytest.raises(ObjectiveError, match="KeyError: 'sensor offline'") as caught:
        there.step(np.array([0.1, 0.1]))
    assert isinstance(caught.value.__cause__, KeyError) and there.t == 4


def test_a_relay_refuses_a_step_it_has_no_outcome_for_and_spends_no_budget():
    relay = OutcomeRelay()
    env = BlackBoxEnv(objective=lambda x: 1.0, bounds=[[0], [1]], budget=3, evaluator=relay)
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="no outcome handed over"):
        env.step(np.array([0.5]))
    relay.hand_over(Outcome(True, 2.0), x=[0.25])
    with pytest.raises(RuntimeError, match=r"evaluated at x=\[0.25\]"):
        env.step(np.array([0.5]))
    assert env.t == 0  # neither was an evaluation
    relay.hand_over(Outcome(True, 2.0), x=[0.5])
    assert env.step(np.array([0.5]))[4]["value"] == 2.0
    with pytest.raises(RuntimeError, match="no outcome handed over"):
        env.step(np.array([0.5]))  # an outcome is recorded once
    with pytest.raises(TypeError, match="outcome must be an Outcome"):
        relay.hand_over(2.0)
    with pytest.raises(ValueError, match="one point"):
        relay.hand_over(Outcome(True, 2.0), x=[[0.5]])


def test_a_relay_checks_the_params_of_an_env_over_a_space():
    from npbandit.space import Choice, Int

    relay = OutcomeRelay()
    env = BlackBoxEnv(objective=lambda p: 1.0, space={"n": Int(0, 3), "k": Choice(["a", "b"])}, evaluator=relay)
    env.reset(seed=0)
    relay.hand_over(Outcome(True, 2.0), x={"n": 1, "k": "a"})
    with pytest.raises(RuntimeError, match=r"evaluated at x=\{'n': 1, 'k': 'a'\}, but step\(\) records "
                                           r"x=\{'n': 3, 'k': 'b'\}"):
        env.step(np.array([0.9, 0.9]))
    relay.hand_over(Outcome(True, 2.0), x={"n": 3, "k": "b"})
    assert env.step(np.array([0.9, 0.9]))[4]["x"] == {"n": 3, "k": "b"}


def test_the_evaluator_must_have_an_evaluate_method_that_returns_an_outcome():
    with pytest.raises(TypeError, match="evaluator must be None or have an evaluate"):
        BlackBoxEnv(function="branin", evaluator=lambda f, x: f(x))

    class Bare:
        def evaluate(self, objective, x):
            return objective(x)  # a bare value, not an Outcome

    env = BlackBoxEnv(function="branin", evaluator=Bare())
    env.reset(seed=0)
    with pytest.raises(TypeError, match="must return an Outcome, got float"):
        env.step(np.array([0.5, 0.5]))
    env.evaluator = None
    assert np.isfinite(env.step(np.array([0.5, 0.5]))[1])


class ManualExecutor(cf.Executor):
    """Runs nothing until told: the test finishes each submitted call with ``finish(i)``, so
    which evaluations are done when the evaluator waits is decided here, not by a clock."""

    def __init__(self):
        self.calls = []

    def submit(self, fn, /, *args, **kwargs):
        future = cf.Future()
        self.calls.append((future, fn, args))
        return future

    def finish(self, i):
        future, fn, args = self.calls[i]
        future.set_running_or_notify_cancel()
        future.set_result(fn(*args))


def test_the_async_evaluator_returns_finished_evaluations_in_submission_order():
    executor = ManualExecutor()
    env = BlackBoxEnv(objective=lambda x: float(x.sum()), bounds=[[0, 0], [2, 2]], budget=5)
    evaluator = AsyncEvaluator(executor)
    env.evaluator = evaluator
    env.reset(seed=0)
    jobs = [evaluator.submit(env, a) for a in ([0.1, 0.2], [0.3, 0.4], [0.5, 0.6])]
    assert evaluator.in_flight == jobs and all(isinstance(j, Evaluation) and j.outcome is None for j in jobs)
    np.testing.assert_array_equal(jobs[1].x, [0.6, 0.8])
    assert len({args[2] for _, _, args in executor.calls}) == 3  # a unique key per evaluation (Dask's pure=True)
    executor.finish(2)
    executor.finish(0)
    assert evaluator.wait() == [jobs[0], jobs[2]]
    assert jobs[0].outcome.ok and jobs[0].outcome.value == pytest.approx(0.6) and jobs[0].outcome.worker
    with pytest.raises(ValueError, match="has not finished"):
        evaluator.hand_over(jobs[1])
    for job in (jobs[2], jobs[0]):  # recorded in the order the caller hands them over
        evaluator.hand_over(job)
        info = env.step(job.action)[4]
        assert info["value"] == job.outcome.value and info["t"] == env.t - 1
    assert evaluator.in_flight == [jobs[1]] and env.best_value == pytest.approx(0.6)
    with pytest.raises(ValueError, match="in flight"):
        evaluator.hand_over(jobs[0])
    evaluator.cancel()
    assert evaluator.in_flight == [] and jobs[1].future.cancelled()
    assert evaluator.wait() == []


def test_the_async_evaluator_times_out_what_is_still_running_and_keeps_a_late_result_out(monkeypatch):
    # the evaluator's clock is the test's: on the real one, a test descheduled for 10 ms
    # between the submissions and the first wait saw the hung evaluation time out there too
    import types

    from npbandit.envs import evaluation

    now = [0.0]
    monkeypatch.setattr(evaluation, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    executor = ManualExecutor()
    env = BlackBoxEnv(objective=lambda x: 1.0, bounds=[[0], [1]], budget=5)
    evaluator = AsyncEvaluator(executor, timeout=0.01)
    env.evaluator = evaluator
    env.reset(seed=0)
    hung, quick = evaluator.submit(env, [0.1]), evaluator.submit(env, [0.2])
    executor.calls[0][0].set_running_or_notify_cancel()  # started: cannot be cancelled
    executor.finish(1)
    now[0] = 0.005  # before the deadline
    assert evaluator.wait() == [quick]  # done at once: no deadline needed
    evaluator.hand_over(quick)
    env.step(quick.action)
    now[0] = 0.01  # the deadline
    assert evaluator.wait() == [hung]  # the deadline passed with nothing finished
    assert not hung.outcome.ok and isinstance(hung.outcome.value, TimeoutError)
    executor.calls[0][0].set_result((True, 5.0, "late"))  # the result comes after all: dropped
    evaluator.hand_over(hung)
    assert hung.outcome.timed_out and not quick.outcome.timed_out
    with pytest.raises(ObjectiveError, match="still running after 0.01 s") as caught:
        env.step(hung.action)
    assert caught.value.kind == "timeout"  # the evaluator gave it up: not an error the objective raised
    # and the message (the step's error, the report's failure line) says so: the objective raised nothing
    assert str(caught.value).startswith("objective timed out: evaluation still running after 0.01 s at x=")
    assert env.t == 2 and env.best_value == 1.0


def test_an_evaluation_queued_behind_a_busy_worker_is_timed_from_when_it_starts():
    """With one worker, the second evaluation waits while the first hangs: when the first is
    given up, the second has not run, and must not be given up with it (it was, timed from
    its submission, and so failed without ever being evaluated)."""
    import threading

    release = threading.Event()

    def objective(x):
        if x[0] < 0.5:
            release.wait(30)  # the first point hangs until the test lets it go
        return 1.0

    env = BlackBoxEnv(objective=objective, bounds=[[0], [1]], budget=5)
    with cf.ThreadPoolExecutor(max_workers=1) as pool:
        evaluator = AsyncEvaluator(pool, timeout=0.2)
        env.evaluator = evaluator
        env.reset(seed=0)
        hung, queued = evaluator.submit(env, [0.1]), evaluator.submit(env, [0.9])
        assert evaluator.wait() == [hung] and hung.outcome.timed_out
        assert queued.outcome is None and not queued.future.cancelled()  # still waiting for the worker
        release.set()
        assert evaluator.wait() == [queued] and queued.outcome.ok and queued.outcome.value == 1.0


def test_the_async_evaluator_collects_what_came_back_without_waiting():
    executor = ManualExecutor()
    env = BlackBoxEnv(objective=lambda x: 1.0, bounds=[[0], [1]], budget=5)
    evaluator = AsyncEvaluator(executor)
    jobs = [evaluator.submit(env, [a]) for a in (0.1, 0.2, 0.3)]
    executor.finish(1)
    executor.calls[2][0].set_exception(OSError("the worker died"))  # the executor failed, not the objective
    assert evaluator.finished() == [jobs[1], jobs[2]]
    assert jobs[1].outcome.ok and jobs[2].outcome == Outcome(False, jobs[2].outcome.value, None)
    failure = jobs[2].outcome.value  # the executor's failure, its own exception the cause
    assert isinstance(failure, ExecutorFailure) and isinstance(failure.__cause__, OSError) and jobs[0].outcome is None


@pytest.mark.parametrize("kwargs,error,match", [
    ({"executor": object()}, TypeError, "executor must be a concurrent.futures.Executor"),
    ({"timeout": 0}, ValueError, "timeout must be a positive"),
    ({"timeout": True}, ValueError, "timeout must be a positive"),
])
def test_the_async_evaluator_validates_its_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        AsyncEvaluator(**{"executor": ManualExecutor(), **kwargs})


def test_a_worker_returns_the_outcome_and_who_evaluated_it():
    ok, value, worker = _evaluate(lambda x: x * 2, 3.0, "key")
    assert ok and value == 6.0 and worker.count(":") >= 2

    def broken(x):
        raise KeyError("sensor offline")

    ok, err, _ = _evaluate(broken, 3.0, "key")
    assert not ok and isinstance(err, KeyError)


class InOrder(cf.Executor):
    """Runs each call as it is submitted: every evaluation has finished before the loop waits."""

    def submit(self, fn, /, *args, **kwargs):
        future = cf.Future()
        future.set_result(fn(*args, **kwargs))
        return future


class GridPolicy(Policy):
    """Proposes a fixed walk through the unit square; remembers what it saw."""

    name = "grid"

    def __init__(self):
        self.seen, self.pending = [], []

    def act(self, obs, pending=None):
        self.pending.append(None if pending is None else pending.copy())
        k = len(self.pending)
        return np.array([(0.37 * k) % 1.0, (0.61 * k) % 1.0])

    def observe(self, obs, action, reward, info):
        self.seen.append((obs.copy(), np.array(action), reward, info["value"]))


class CountingSteps(gym.Wrapper):
    """Counts ``step`` calls: the loop must go through the Gymnasium contract."""

    def __init__(self, env):
        super().__init__(env)
        self.steps = 0

    def step(self, action):
        self.steps += 1
        return super().step(action)


def _flaky(x):
    if x[0] > 0.5 and x[1] < 0.5:
        raise RuntimeError("boom")
    return float(((np.asarray(x) - 0.3) ** 2).sum())


@pytest.mark.parametrize("batch_size", [1, 3])
def test_the_asynchronous_loop_steps_the_env_only_through_step(batch_size):
    def run(executor, q):
        env = CountingSteps(gym.make("npbandit/BlackBox-v0", objective=_flaky, bounds=[[0, 0], [1, 1]],
                                     budget=9, noise_std=0.1))
        policy = GridPolicy()
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)  # never through step_evaluated
            result = run_episode(env, policy, seed=4, on_error="skip", executor=executor, batch_size=q)
        assert env.steps == 9 and env.unwrapped.evaluator is None  # the caller's evaluator is back
        return result, policy

    result, policy = run(InOrder(), batch_size)
    assert len(result.steps) == 9 and result.failed_steps == sum(s["failed"] for s in result.steps) > 0
    assert all(s["worker"] for s in result.steps)
    if batch_size == 1:  # one in flight: the sequential run, step for step (noise draws included)
        sequential, seq_policy = run(None, 1)
        assert [s["reward"] for s in result.steps] == [s["reward"] for s in sequential.steps]
        for (o1, a1, r1, v1), (o2, a2, r2, v2) in zip(policy.seen, seq_policy.seen, strict=True):
            np.testing.assert_array_equal(o1, o2), np.testing.assert_array_equal(a1, a2)
            assert (r1, v1) == (r2, v2)
    else:  # each proposal saw the points in flight (all three finish before the loop waits)
        assert [0 if p is None else len(p) for p in policy.pending] == [0, 1, 2] * 3


def test_a_stop_during_a_proposal_records_what_came_back_and_abandons_what_runs(tmp_path):
    executor = ManualExecutor()
    real_submit = executor.submit

    def submit(fn, /, *args, **kwargs):
        future = real_submit(fn, *args, **kwargs)
        if len(executor.calls) == 1:
            executor.finish(0)  # the first comes back at once; the second and third keep running
        return future

    executor.submit = submit

    class StoppedWhileProposing(GridPolicy):
        def act(self, obs, pending=None):
            if len(self.pending) == 3:  # the fourth proposal: the second evaluation comes back meanwhile
                executor.finish(1)
                raise RunInterrupted(signal.SIGINT)
            return super().act(obs, pending)

    db = f"sqlite:///{tmp_path / 'stop.db'}"
    env = BlackBoxEnv(objective=lambda x: float(x.sum()), bounds=[[0, 0], [1, 1]], budget=6)
    policy = StoppedWhileProposing()
    with pytest.raises(RunInterrupted, match="saved all 2"):
        run_episode(env, policy, seed=0, logger=RunLogger(db), executor=executor, batch_size=3)
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert run.status == "interrupted" and [s["t"] for s in steps] == [0, 1]
    assert [s["value"] for s in steps] == [v for _, _, _, v in policy.seen]  # the policy saw both, in that order
    third = executor.calls[2][0]
    assert third.cancelled() and env.evaluator is None  # still queued: it never starts


def test_the_asynchronous_loop_needs_a_black_box_env():
    with pytest.raises(TypeError, match="executor needs a BlackBoxEnv"):
        run_episode(gym.make("npbandit/WheelBandit-v0", horizon=3), GridPolicy(), seed=0, executor=InOrder())
