"""An executor that cannot run the objective at all (a process pool that cannot pickle a lambda)
stops a run at its first evaluation, also with ``on_error="skip"``, instead of spending the
budget failing every one; one that was shut down is refused by name at the first submit; an
evaluation the executor fails on its own (a value that cannot come back) is still skipped."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import pickle
import threading

import numpy as np
import pytest

import npbandit
from npbandit.envs import ObjectiveError
from npbandit.envs.evaluation import AsyncEvaluator, ExecutorFailure, _pool_workers
from npbandit.storage import list_runs

BOUNDS = [[0.0, 0.0], [1.0, 1.0]]
fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool's workers are forked")


def _pool(workers: int = 1) -> cf.ProcessPoolExecutor:
    return cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))


def lock_below_half(x):
    """Returns a lock (which pickle cannot send back) where ``x[0] < 0.5``, a number elsewhere."""
    return threading.Lock() if x[0] < 0.5 else float(np.sum(x))


@fork
@pytest.mark.parametrize("batch_size", [1, 2])
def test_a_lambda_on_a_process_pool_stops_a_skipping_run_at_its_first_evaluation(tmp_path, batch_size):
    db = str(tmp_path / "runs.db")
    with _pool(2) as pool, pytest.raises(ObjectiveError) as caught:
        npbandit.optimize(lambda x: float(np.sum(x)), BOUNDS, surrogate="random", budget=6, executor=pool,
                          batch_size=batch_size, on_error="skip", db=db, progress=False)
    message = str(caught.value)
    assert message.startswith("the executor cannot send the objective to its workers, so no evaluation can run "
                              "there: ")  # then pickle's own error (a local lambda: AttributeError)
    assert "module level" in message  # what to do about it
    assert len(caught.value.history) == 1 and caught.value.history[0]["failed"]
    (run,) = list_runs(db)
    assert run.status == "failed" and run.n_steps == 1


@fork
def test_a_value_that_cannot_come_back_is_still_skipped():
    with _pool() as pool:
        result = npbandit.optimize(lock_below_half, BOUNDS, surrogate="random", budget=6, executor=pool,
                                   on_error="skip", db=None, progress=False)
    failed = [h for h in result.history if h["failed"]]
    assert len(result.history) == 6 and 0 < len(failed) < 6
    assert all(h["error"].startswith("the executor failed to run the objective") for h in failed)


def test_an_unsendable_failure_survives_pickling():
    err = pickle.loads(pickle.dumps(ExecutorFailure("PicklingError: x", unsendable=True)))
    assert err.unsendable and str(err) == "PicklingError: x"
    assert not ExecutorFailure("lost").unsendable


def test_a_shut_down_executor_is_refused_by_name():
    pool = cf.ThreadPoolExecutor(1)
    pool.shutdown()
    with pytest.raises(RuntimeError, match=r"^executor is shut down and takes no more calls \(RuntimeError: "
                                           r"cannot schedule new futures after shutdown\)"):
        npbandit.optimize(lambda x: float(np.sum(x)), BOUNDS, surrogate="random", budget=3, executor=pool,
                          db=None, progress=False)


class Refusing(cf.Executor):
    """An executor whose submit raises ``error``."""

    def __init__(self, error):
        self.error = error

    def submit(self, fn, /, *args, **kwargs):
        raise self.error


@pytest.mark.parametrize("error", [RuntimeError("the scheduler is gone"),
                                   cf.process.BrokenProcessPool("a child process terminated abruptly")])
def test_other_submit_errors_are_raised_as_they_are(error):
    with pytest.raises(type(error)) as caught:
        npbandit.optimize(lambda x: float(np.sum(x)), BOUNDS, surrogate="random", budget=3, executor=Refusing(error),
                          db=None, progress=False)
    assert caught.value is error


def test_a_process_pools_workers_are_given_or_read_from_a_public_attribute():
    class Counted(cf.ProcessPoolExecutor):
        max_workers = 3

    with cf.ProcessPoolExecutor(2) as pool:
        assert _pool_workers(pool, 5) == 5  # given
        assert _pool_workers(pool, None) == 2  # the standard library's pool: its own count
    with Counted(1) as pool:
        assert _pool_workers(pool, None) == 3  # a public attribute first
    with pytest.raises(ValueError, match="workers must be a positive int or None, got 0"):
        AsyncEvaluator(cf.ThreadPoolExecutor(1), workers=0)
