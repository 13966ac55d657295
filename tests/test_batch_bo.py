"""optimize(batch_size=q, executor=...): asynchronous BO on a concurrent.futures executor."""

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from npbandit import optimize
from npbandit.envs import ObjectiveError
from npbandit.policies.bo import propose
from npbandit.storage import SCHEMA_VERSION, list_runs, run_steps

from helpers import tiny_checkpoint

BOUNDS = [[-1.0, 0.0], [1.0, 2.0]]


def sphere(x):
    return float(((np.asarray(x) - np.array([0.3, 1.2])) ** 2).sum())


def slow_sphere(x):
    time.sleep(0.2)
    return sphere(x)


def _points(result):
    return np.array([h["x"] for h in result.history])


def test_batch_size_one_is_the_sequential_loop(tmp_path):
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    today = optimize(sphere, BOUNDS, surrogate=card, budget=8, seed=2, db=None, progress=False)
    same = optimize(sphere, BOUNDS, surrogate=card, budget=8, seed=2, db=None, progress=False, batch_size=1)
    np.testing.assert_array_equal(_points(today), _points(same))
    assert "worker" not in today.history[0]
    # one evaluation in flight on an executor proposes the very same points (nothing is pending)
    with ThreadPoolExecutor(1) as ex:
        pooled = optimize(sphere, BOUNDS, surrogate=card, budget=8, seed=2, db=None, progress=False, executor=ex)
    np.testing.assert_array_equal(_points(today), _points(pooled))


def test_four_in_flight_overlap_and_storage_records_workers(tmp_path):
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    db = str(tmp_path / "async.db")
    with ThreadPoolExecutor(4) as ex:
        result = optimize(slow_sphere, BOUNDS, surrogate=card, budget=10, n_init=3, seed=0, db=db, progress=False,
                          batch_size=4, executor=ex)
    assert len(result.history) == 10 and not any(h["failed"] for h in result.history)
    spans = [(h["submitted_at"], h["finished_at"]) for h in result.history]
    # with q=1 every evaluation is submitted after the previous one finished; with q=4 the
    # first four are all submitted before the first finishes
    first_finish = min(f for _, f in spans)
    assert sum(s < first_finish for s, _ in spans) == 4
    assert len({h["worker"] for h in result.history}) > 1
    # completion order: finish times never go backwards as t grows
    finishes = [f for _, f in spans]
    assert finishes == sorted(finishes)
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert [s["t"] for s in steps] == list(range(10))
    assert all(s["worker"] and s["submitted_at"] <= s["finished_at"] for s in steps)
    assert [s["worker"] for s in steps] == [h["worker"] for h in result.history]
    assert SCHEMA_VERSION == 2


def test_sequential_run_overlaps_nothing(tmp_path):
    with ThreadPoolExecutor(4) as ex:
        result = optimize(slow_sphere, BOUNDS, surrogate="random", budget=4, seed=0, db=None, progress=False,
                          batch_size=1, executor=ex)
    spans = [(h["submitted_at"], h["finished_at"]) for h in result.history]
    assert all(spans[i + 1][0] >= spans[i][1] for i in range(3))


def test_a_failing_evaluation_is_skipped_and_the_run_goes_on(tmp_path):
    calls = []

    def flaky(x):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return sphere(x)

    db = str(tmp_path / "fail.db")
    with ThreadPoolExecutor(2) as ex:
        result = optimize(flaky, BOUNDS, surrogate="random", budget=6, seed=0, db=db, progress=False,
                          batch_size=2, executor=ex, on_error="skip")
    assert len(result.history) == 6 and sum(h["failed"] for h in result.history) == 1
    (run,) = list_runs(db)
    assert run.status == "completed" and sum(s["failed"] for s in run_steps(db, run.id)) == 1


def _hang_first(seconds):
    """An objective whose first call hangs for ``seconds``."""
    calls = []

    def f(x):
        calls.append(1)
        if len(calls) == 1:
            time.sleep(seconds)
        return sphere(x)
    return f


def test_a_timeout_is_recorded_as_failed(tmp_path):
    db = str(tmp_path / "timeout.db")
    with ThreadPoolExecutor(3) as ex:
        result = optimize(_hang_first(1.5), BOUNDS, surrogate="random", budget=5, seed=0, db=db, progress=False,
                          batch_size=2, executor=ex, eval_timeout=0.5, on_error="skip")
    failed = [h for h in result.history if h["failed"]]
    assert len(result.history) == 5 and len(failed) == 1 and failed[0]["worker"] is None
    (run,) = list_runs(db)
    assert run.status == "completed" and [s["failed"] for s in run_steps(db, run.id)].count(True) == 1
    with ThreadPoolExecutor(2) as ex, pytest.raises(ObjectiveError, match="still running after 0.5 s"):
        optimize(_hang_first(1.0), BOUNDS, surrogate="random", budget=3, seed=0, db=None, progress=False,
                 batch_size=2, executor=ex, eval_timeout=0.5)


def test_pending_points_are_believed_in_propose(tmp_path, monkeypatch):
    from npbandit.surrogates.npmodel import NPModel
    from npbandit.surrogates.pretrained import load_surrogate

    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    X = torch.rand(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = -((X - 0.4) ** 2).sum(-1, keepdim=True)
    model = NPModel.from_pretrained(load_surrogate(str(card)), X, Y)
    seen = []
    real = NPModel.condition_on_observations

    def spy(self, X, Y, **kw):
        seen.append((X, Y))
        return real(self, X, Y, **kw)

    monkeypatch.setattr(NPModel, "condition_on_observations", spy)
    propose(model, "ucb", dim=2, best_f=Y.max(), seed=1)
    assert not seen  # nothing pending: the model as it is
    pending = torch.tensor([[0.2, 0.7], [0.9, 0.1]], dtype=torch.float64)
    propose(model, "ucb", dim=2, best_f=Y.max(), seed=1, pending=pending, pending_value=Y.min())
    (cx, cy), = seen  # one conditioning on the points in flight, at the worst observed value (a constant liar)
    torch.testing.assert_close(cx, pending)
    torch.testing.assert_close(cy, Y.min().expand(2, 1))
    with pytest.raises(ValueError, match="pending"):
        propose(model, "ucb", dim=2, best_f=Y.max(), seed=1, pending=torch.zeros(3), pending_value=0.0)
    with pytest.raises(ValueError, match="pending_value is required"):
        propose(model, "ucb", dim=2, best_f=Y.max(), seed=1, pending=pending)
    with pytest.raises(ValueError, match="pending_value must be one finite number"):
        propose(model, "ucb", dim=2, best_f=Y.max(), seed=1, pending=pending, pending_value=float("nan"))


def test_the_policy_believes_points_in_flight_at_its_worst_observation(monkeypatch):
    from npbandit.policies import BOPolicy
    from npbandit.policies import bo

    seen = {}
    real = bo.propose

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(bo, "propose", spy)
    policy = BOPolicy(2, model="gp")
    policy.reset(0)
    for _ in range(policy.n_init):
        x = policy.act(None)
        policy.observe(None, x, float(-np.sum((x - 0.4) ** 2)), {})
    policy.act(None, pending=np.array([[0.5, 0.5]]))
    assert float(seen["pending_value"]) == min(policy.Y)
    torch.testing.assert_close(seen["pending"], torch.tensor([[0.5, 0.5]], dtype=torch.float64))


@pytest.mark.parametrize("kwargs,err,match", [
    ({"batch_size": 0}, ValueError, "batch_size"),
    ({"batch_size": 2.0}, ValueError, "batch_size"),
    ({"batch_size": True}, ValueError, "batch_size"),
    ({"batch_size": 2}, ValueError, "needs an executor"),
    ({"executor": object()}, TypeError, "executor"),
    ({"eval_timeout": 1.0}, ValueError, "eval_timeout"),
])
def test_argument_validation(kwargs, err, match):
    with pytest.raises(err, match=match):
        optimize(sphere, BOUNDS, surrogate="random", budget=3, db=None, progress=False, **kwargs)


def test_eval_timeout_must_be_positive():
    with ThreadPoolExecutor(1) as ex, pytest.raises(ValueError, match="eval_timeout"):
        optimize(sphere, BOUNDS, surrogate="random", budget=3, db=None, progress=False, executor=ex,
                 eval_timeout=0)


def test_a_version_1_database_is_refused(tmp_path):
    # schema 2 added steps.worker / submitted_at / finished_at: a version-1 file is not misread
    from sqlalchemy import update

    from npbandit.storage import Meta, RunLogger, SchemaVersionError, open_db

    db = str(tmp_path / "old.db")
    RunLogger(db)
    with open_db(db).begin() as conn:
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="1"))
    from npbandit import storage

    for engine in storage._ENGINES.values():  # open_db caches engines: open the file afresh
        engine.dispose()
    storage._ENGINES.clear()
    with pytest.raises(SchemaVersionError, match="schema version 1.*older npbandit"):
        RunLogger(db)
