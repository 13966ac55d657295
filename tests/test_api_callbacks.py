"""optimize's callbacks (a user's stopping rule) and the history a failed run's error carries."""

import concurrent.futures as cf

import numpy as np
import pytest
from helpers import tiny_checkpoint

from npbandit import optimize
from npbandit.exceptions import ObjectiveError
from npbandit.storage import list_runs, run_steps

BOUNDS = [[-1.0, 0.0], [1.0, 2.0]]


def sphere(x):
    return float(((np.asarray(x) - np.array([0.3, 1.2])) ** 2).sum())


def test_a_callback_ends_the_run_where_it_says_and_the_run_is_complete(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = str(tmp_path / "cb.db")
    seen, lengths = [], []

    def enough(history):
        seen.append([h["value"] for h in history])
        return len(history) >= 6

    result = optimize(sphere, BOUNDS, surrogate=str(card), n_init=3, budget=20, db=db, progress=False,
                      callbacks=[enough, lambda h: lengths.append(len(h))])  # both are called at every evaluation
    assert len(result.history) == 6 and lengths == [1, 2, 3, 4, 5, 6]
    assert seen[-1] == [h["value"] for h in result.history]  # what it saw is what the result gives
    assert result.recommended_by == "model"  # recommended as at a run's end, from all six
    (run,) = list_runs(db)
    assert run.status == "completed" and run.n_steps == 6 and len(run_steps(db, run.id)) == 6


def test_callbacks_see_failed_evaluations_and_can_stop_on_them():
    calls = []

    def flaky(x):
        calls.append(x)
        if len(calls) % 2 == 0:
            raise RuntimeError("simulator crashed")
        return sphere(x)

    result = optimize(flaky, BOUNDS, surrogate="random", budget=20, db=None, progress=False, on_error="skip",
                      callbacks=lambda h: sum(e["failed"] for e in h) >= 3)
    assert len(result.history) == 6 and [e["failed"] for e in result.history] == [False, True] * 3


def test_with_an_executor_nothing_more_is_proposed_and_what_is_in_flight_is_kept():
    with cf.ThreadPoolExecutor(2) as pool:
        result = optimize(sphere, BOUNDS, surrogate="random", budget=20, db=None, progress=False, executor=pool,
                          batch_size=2, callbacks=lambda h: len(h) >= 3)
    assert 3 <= len(result.history) <= 4  # the third ends it; a fourth may be in flight then
    assert [h["t"] for h in result.history] == list(range(len(result.history)))


@pytest.mark.parametrize("callbacks,match", [(3, "callbacks must be"), ([len, "x"], r"callbacks\[1\]"),
                                             ("stop", "callbacks must be")])
def test_callbacks_are_checked_before_anything_runs(callbacks, match):
    with pytest.raises(TypeError, match=match):
        optimize(sphere, BOUNDS, surrogate="random", budget=3, db=None, progress=False, callbacks=callbacks)


def test_a_failed_evaluation_carries_the_history_so_far_and_it_continues_the_run(tmp_path):
    calls = []

    def breaks_at_four(x):
        calls.append(x)
        if len(calls) == 4:
            raise RuntimeError("disk full")
        return sphere(x)

    with pytest.raises(ObjectiveError, match="disk full") as caught:
        optimize(breaks_at_four, BOUNDS, surrogate="random", budget=10, db=None, progress=False)
    history = caught.value.history
    assert len(history) == 4 and [h["failed"] for h in history] == [False, False, False, True]
    assert [h["value"] for h in history[:3]] == [sphere(x) for x in calls[:3]]
    assert caught.value.run_id is None  # no database
    more = optimize(sphere, BOUNDS, surrogate="random", budget=2, db=None, progress=False, initial=history)
    assert len(more.history) == 2  # the given four (the failed one too) are not evaluated again
    assert not any(np.allclose(new["x"], old["x"]) for new in more.history for old in history)
