"""An exception the objective or its constraints raise in a process pool's worker that
pickle cannot send back (its class's ``__init__`` takes other arguments than its ``args``)
is recorded as that failed evaluation, by its type's name and message, instead of breaking
the pool (``BrokenProcessPool`` for the whole run, whatever ``on_error`` says)."""

from __future__ import annotations

import multiprocessing
import pickle
import threading
from concurrent.futures import ProcessPoolExecutor

import pytest

import npbandit
from npbandit.envs.evaluation import UnsentError


class SolverError(Exception):
    """An exception pickle cannot send: it holds a lock (and ``__init__`` needs two arguments,
    so plain pickle could not rebuild it either; a process that imported Dask, whose tblib
    pickles exceptions by their attributes, could, were it not for the lock)."""

    def __init__(self, code: int, where: str) -> None:
        super().__init__(f"code {code} in {where}")
        self.code = code
        self.lock = threading.Lock()


def always_fails(x):
    raise SolverError(3, "the mesher")


def value(x):
    return float(x[0])


def constraints_fail(x):
    raise SolverError(4, "the checker")


def _pool() -> ProcessPoolExecutor:
    return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))


def test_the_exception_class_cannot_round_trip_pickle():
    with pytest.raises(TypeError):
        pickle.loads(pickle.dumps(SolverError(3, "x")))


@pytest.mark.parametrize(("objective", "constraints", "who", "text"),
                         [(always_fails, None, "objective", "code 3 in the mesher"),
                          (value, constraints_fail, "constraints", "code 4 in the checker")])
def test_skipped_as_a_failed_evaluation_named_by_its_type(objective, constraints, who, text):
    with _pool() as pool:
        with pytest.raises(npbandit.exceptions.ObjectiveError, match="every one of the 3 evaluations failed") as caught:
            npbandit.optimize(objective, [[0.0], [1.0]], surrogate="random", budget=3, db=None, progress=False,
                              executor=pool, on_error="skip", constraints=constraints)
    errors = [h["error"] for h in caught.value.history]
    assert len(errors) == 3
    assert all(e.startswith(f"{who} raised SolverError: {text}") for e in errors)


def test_raised_stops_the_run_with_the_objectives_message():
    with _pool() as pool:
        with pytest.raises(npbandit.exceptions.ObjectiveError, match="objective raised SolverError: code 3") as caught:
            npbandit.optimize(always_fails, [[0.0], [1.0]], surrogate="random", budget=3, db=None, progress=False,
                              executor=pool)
    assert isinstance(caught.value.__cause__, UnsentError)
    assert caught.value.__cause__.raised == "SolverError"


def test_stand_in_pickles():
    err = UnsentError("SolverError", "code 3")
    back = pickle.loads(pickle.dumps(err))
    assert (back.raised, str(back)) == ("SolverError", "code 3")
