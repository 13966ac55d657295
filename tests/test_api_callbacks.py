"""optimize's callbacks (a user's stopping rule) and the history a failed run's error carries."""

import concurrent.futures as cf

import numpy as np
import pytest
from helpers import BOUNDS, sphere, tiny_checkpoint

from npbandit import optimize
from npbandit.envs import WheelBanditEnv
from npbandit.exceptions import ObjectiveError
from npbandit.loop import RunInterrupted, run_episode
from npbandit.policies import UniformPolicy
from npbandit.storage import list_runs, run_steps


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
    # what the run says of its stop counts the evaluation that was in flight, when there was one
    late = "" if len(result.history) == 3 else "; 1 evaluation in flight then, written too"
    assert result.stopped_early == "by its stop rule after 3 of 20 evaluations" + late
    assert [h["t"] for h in result.history] == list(range(len(result.history)))


def test_a_stop_with_an_evaluation_in_flight_says_it_was_written_too():
    """Two evaluations start together; the first to come back ends the run while the other
    (slow) is in flight: it comes back and is written, and the run's account of its stop
    counts it (it said 'after 1 of 20 steps' beside a history of 2)."""
    import itertools
    import threading

    calls, lock, stopped = itertools.count(1), threading.Lock(), threading.Event()

    def second_waits_for_the_stop(x):
        with lock:
            n = next(calls)
        if n == 2:
            stopped.wait(30)  # comes back only once the stop rule has ended the run
        return sphere(x)

    def stop(history):
        if len(history) >= 1:
            stopped.set()
            return True
        return False

    with cf.ThreadPoolExecutor(2) as pool:
        result = optimize(second_waits_for_the_stop, BOUNDS, surrogate="random", budget=20, db=None, progress=False,
                          executor=pool, batch_size=2, callbacks=stop)
    assert len(result.history) == 2
    assert result.stopped_early == ("by its stop rule after 1 of 20 evaluations; 1 evaluation in flight then, "
                                    "written too")


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


def test_errors_that_end_a_run_carry_its_history_and_survive_pickling(tmp_path):
    import pickle
    import signal

    from npbandit.stopping import RunInterrupted

    class Boom(Exception):
        pass

    def explodes(history):
        if len(history) == 3:
            raise Boom("the callback's own bug")

    db = str(tmp_path / "cb.db")
    with pytest.raises(Boom) as caught:
        optimize(sphere, BOUNDS, surrogate="random", budget=10, db=db, progress=False, callbacks=explodes)
    assert len(caught.value.history) == 3 and caught.value.run_id == list_runs(db)[0].id
    assert list_runs(db)[0].status == "failed"

    def always_fails(x):
        raise RuntimeError("no licence")

    with pytest.raises(ObjectiveError, match="every one of the 4") as caught:
        optimize(always_fails, BOUNDS, surrogate="random", budget=4, db=None, progress=False, on_error="skip")
    assert len(caught.value.history) == 4 and all(h["failed"] for h in caught.value.history)
    copy = pickle.loads(pickle.dumps(caught.value))  # a process pool or Dask sends it back whole
    assert len(copy.history) == 4 and copy.kind == caught.value.kind and str(copy) == str(caught.value)
    stopped = RunInterrupted(signal.SIGTERM, run_id=7, steps=3, saved=3, records=[{"t": 0}])
    stopped.history = [{"t": 0}]
    copy = pickle.loads(pickle.dumps(stopped))
    assert (copy.signum, copy.run_id, copy.steps, copy.saved, copy.records, copy.history, str(copy)) == (
        signal.SIGTERM, 7, 3, 3, [{"t": 0}], [{"t": 0}], str(stopped))


def test_a_run_a_callback_ended_says_so_in_its_result_record_and_report(tmp_path):
    from npbandit.report import report_text

    db = str(tmp_path / "cb.db")
    result = optimize(sphere, BOUNDS, surrogate="random", budget=30, db=db, progress=False,
                      callbacks=lambda h: len(h) >= 4)
    assert result.stopped_early == "by its stop rule after 4 of 30 evaluations"
    (run,) = list_runs(db)
    assert run.stopped_early == result.stopped_early and "stopped_early" not in run.policy_params
    assert "stopped early by its stop rule after 4 of 30 evaluations" in report_text(db)
    full = optimize(sphere, BOUNDS, surrogate="random", budget=3, db=db, progress=False, callbacks=lambda h: False)
    assert full.stopped_early is None and list_runs(db)[1].stopped_early is None


def test_with_an_executor_every_callback_sees_what_was_in_flight_too():
    seen = []
    with cf.ThreadPoolExecutor(2) as pool:
        result = optimize(sphere, BOUNDS, surrogate="random", budget=20, db=None, progress=False, executor=pool,
                          batch_size=2, callbacks=[lambda h: seen.append(len(h)), lambda h: len(h) >= 3])
    assert seen == list(range(1, len(result.history) + 1))


def test_a_loaded_network_changed_since_is_not_recorded_as_its_checkpoint(tmp_path):
    import torch

    from npbandit.surrogates.pretrained import CheckpointError, load_surrogate

    card = tiny_checkpoint(tmp_path, "tnpd", "bo")
    net = load_surrogate(str(card))
    net.to(torch.float64)  # a dtype or device is no change of weights
    assert optimize(sphere, BOUNDS, surrogate=net, budget=6, n_init=5, db=None, progress=False)
    with torch.no_grad():
        next(net.parameters()).add_(1e-3)  # fine-tuned, edited in place
    with pytest.raises(CheckpointError, match="save_pretrained"):
        optimize(sphere, BOUNDS, surrogate=net, budget=6, db=None, progress=False)


def test_a_network_padded_wider_than_its_training_dims_serves_only_those_directly(tmp_path):
    from npbandit.priors import BOPrior
    from npbandit.surrogates import build
    from npbandit.surrogates.pretrained import load_surrogate, save_pretrained, served_width

    card = save_pretrained(build("tnpd", 16, 1, size="tiny"), tmp_path, "wide-bo", prior=BOPrior(x_dim=16).spec(),
                           training={"steps": 1}, evaluation={"log_likelihood": {"test": 0.0}})
    assert served_width(load_surrogate(str(card))) == 6  # trained on d = 1..6, padded to 16 columns
    d = 8  # wider than it was trained on: searched through a subspace of 6, not refused after the design
    result = optimize(lambda x: float(np.sum((x - 0.3) ** 2)), [[0.0] * d, [1.0] * d], surrogate=str(card),
                      budget=2 * d + 3, db=None, progress=False)
    assert len(result.history) == 2 * d + 3 and not any(h["failed"] for h in result.history)


def test_a_bandit_run_stopped_by_its_rule_counts_steps_as_its_interruption_does(tmp_path):
    # a black-box run counts evaluations (above); a bandit run its steps, as --steps does
    result = run_episode(WheelBanditEnv(horizon=30), UniformPolicy(), seed=0, stop=lambda r: r.n_steps >= 4)
    assert result.stopped_early == "by its stop rule after 4 of 30 steps"

    class CtrlC(UniformPolicy):
        def act(self, obs):
            if self.calls == 3:
                raise KeyboardInterrupt
            self.calls += 1
            return super().act(obs)

    policy = CtrlC()
    policy.calls = 0
    with pytest.raises(RunInterrupted, match=r"^stopped by KeyboardInterrupt after 3 step\(s\)$"):
        run_episode(WheelBanditEnv(horizon=30), policy, seed=0)
