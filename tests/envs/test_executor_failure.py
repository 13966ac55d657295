"""An executor that fails to hand back an evaluation (a process pool that cannot pickle the
objective, a lost worker) is reported as the executor's failure, not as the objective raising."""

import concurrent.futures as cf
import pickle

import numpy as np
import pytest

import npbandit
from npbandit.envs import ObjectiveError


class FailingExecutor(cf.Executor):
    """Fails every call the way a ``ProcessPoolExecutor`` fails one whose function cannot be
    pickled: the future raises, and the function never runs."""

    def __init__(self, error):
        self.error, self.ran = error, 0

    def submit(self, fn, /, *args, **kwargs):
        future = cf.Future()
        future.set_running_or_notify_cancel()
        future.set_exception(self.error)
        return future


def _unpicklable():
    return pickle.PicklingError("Can't pickle <function <lambda>>: attribute lookup <lambda> on __main__ failed")


def test_a_call_the_executor_could_not_run_is_not_reported_as_the_objective_raising():
    ran = []

    def objective(x):
        ran.append(x)
        return float(np.sum(x))

    with pytest.raises(ObjectiveError) as caught:
        npbandit.optimize(objective, [[0, 0], [1, 1]], surrogate="random", budget=3, batch_size=1,
                          executor=FailingExecutor(_unpicklable()), db=None, progress=False)
    message = str(caught.value)
    assert not ran
    assert "objective raised" not in message
    assert message.startswith("the executor failed to run the objective: PicklingError: Can't pickle")
    assert "pickle" in message and "module level" in message  # what to do about it
    assert isinstance(caught.value.__cause__, pickle.PicklingError)


def test_other_executor_failures_name_the_executor_without_the_pickling_hint():
    with pytest.raises(ObjectiveError) as caught:
        npbandit.optimize(lambda x: float(np.sum(x)), [[0, 0], [1, 1]], surrogate="random", budget=3,
                          executor=FailingExecutor(cf.process.BrokenProcessPool("a process was terminated")),
                          db=None, progress=False)
    message = str(caught.value)
    assert message.startswith("the executor failed to run the objective: BrokenProcessPool: a process was terminated")
    assert "module level" not in message


def test_the_objective_raising_on_a_worker_is_still_the_objective_raising():
    def objective(x):
        raise pickle.PicklingError("raised by the objective itself")

    with cf.ThreadPoolExecutor(1) as pool, pytest.raises(ObjectiveError, match="^objective raised PicklingError"):
        npbandit.optimize(objective, [[0, 0], [1, 1]], surrogate="random", budget=3, executor=pool,
                          db=None, progress=False)


def test_skipped_executor_failures_are_recorded_with_the_executor_named():
    with pytest.raises(ObjectiveError) as caught:  # every evaluation failed: nothing to report
        npbandit.optimize(lambda x: float(np.sum(x)), [[0, 0], [1, 1]], surrogate="random", budget=2,
                          executor=FailingExecutor(_unpicklable()), on_error="skip", db=None, progress=False)
    assert "the first failed with: the executor failed to run the objective: PicklingError" in str(caught.value)
