"""npbandit.Optimizer: the search optimize makes, asked for points and told their outcomes."""

import numpy as np
import pytest
from helpers import BOUNDS, drive, sphere, tiny_checkpoint

from npbandit import Optimizer, Trial, optimize
from npbandit.space import Choice, Float, Int
from npbandit.stopping import RunInterrupted
from npbandit.storage import list_runs, run_steps

SPACE = {"lr": Float(1e-4, 1e-1, log=True), "layers": Int(1, 4), "act": Choice(["relu", "tanh"])}


def tuned(p):
    return (np.log10(p["lr"]) + 2) ** 2 + (p["layers"] - 2) ** 2 + (0.0 if p["act"] == "relu" else 0.5)


@pytest.mark.parametrize("surrogate", ["gp", "tiny-np"])
def test_asking_and_telling_in_turn_evaluates_the_points_optimize_evaluates(tmp_path, surrogate):
    surrogate = str(tiny_checkpoint(tmp_path, "cmanp", "bo")) if surrogate == "tiny-np" else surrogate
    ref = optimize(sphere, BOUNDS, surrogate=surrogate, budget=8, seed=3, db=None, progress=False)
    opt = Optimizer(BOUNDS, surrogate=surrogate, budget=8, seed=3, db=None)
    drive(opt, sphere)
    result = opt.result()
    assert [h["x"].tolist() for h in opt.history] == [h["x"].tolist() for h in ref.history]
    assert [h["value"] for h in result.history] == [h["value"] for h in ref.history]
    assert result.best_value == ref.best_value and result.best_x.tolist() == ref.best_x.tolist()
    assert result.recommended_by == ref.recommended_by == "model"
    assert result.recommended_x.tolist() == ref.recommended_x.tolist()


def test_a_search_space_is_asked_as_params_dicts_and_the_run_is_recorded_as_optimize_records_it(tmp_path):
    db = str(tmp_path / "runs.db")
    ref = optimize(tuned, space=SPACE, budget=9, seed=1, db=db, progress=False, name="tuned")
    opt = Optimizer(space=SPACE, budget=9, seed=1, db=db, name="tuned")
    assert opt.status == "new" and opt.run_id is None and not list_runs(db)[1:]  # nothing written before ask
    drive(opt, tuned)
    assert [h["x"] for h in opt.history] == [h["x"] for h in ref.history]
    first, second = list_runs(db)
    assert second.id == opt.run_id and second.status == "completed" and second.n_steps == 9
    assert second.env_params == first.env_params and second.policy == first.policy
    assert [s["params"] for s in run_steps(db, second.id)] == [s["params"] for s in run_steps(db, first.id)]
    assert second.recommended["params"] == first.recommended["params"]


def test_trials_asked_before_any_is_told_are_pending_distinct_and_told_in_any_order(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(BOUNDS, surrogate="gp", budget=9, n_init=2, seed=0, db=db)
    drive(opt, sphere, 2)
    trials = [opt.ask() for _ in range(3)]
    assert [t.number for t in opt.pending] == [2, 3, 4]
    assert len({tuple(t.x) for t in trials}) == 3  # each proposal saw the others in flight
    for trial in reversed(trials):
        opt.tell(trial, sphere(trial.x))
    assert not opt.pending
    assert [h["x"].tolist() for h in opt.history[2:]] == [t.x.tolist() for t in reversed(trials)]
    steps = run_steps(db, opt.run_id)
    assert [s["t"] for s in steps] == list(range(5))
    assert all(s["submitted_at"] <= s["finished_at"] for s in steps)


def test_failed_evaluations_are_told_by_message_exception_or_a_non_finite_value():
    opt = Optimizer(BOUNDS, surrogate="random", budget=6, seed=0, db=None)
    told = [("error", "the rig jammed"), ("error", MemoryError("out of memory")), ("value", float("nan")),
            ("value", 0.5)]
    for how, what in told:
        trial = opt.ask()
        opt.tell(trial, **{how: what})
    history = opt.history
    assert [h["failed"] for h in history] == [True, True, True, False]
    assert "the rig jammed" in history[0]["error"] and "MemoryError: out of memory" in history[1]["error"]
    assert history[2]["error_kind"] == "nonfinite"
    assert opt.status == "running" and opt.result().best_value == 0.5


def test_a_tell_that_is_refused_records_nothing_and_names_what_was_wrong():
    opt = Optimizer(BOUNDS, surrogate="random", budget=4, seed=0, db=None)
    with pytest.raises(ValueError, match=r"trial 0 was never asked for \(none has been asked for yet: Optimizer.ask"):
        opt.tell(0, 1.0)  # not 'trials 0..-1 were'
    trial = opt.ask()
    for kwargs, error, words in [({"value": "1.5"}, TypeError, "the value must be a float"),
                                 ({"value": [1.0, 2.0]}, TypeError, r"minimize=\[True, False\]"),
                                 ({}, TypeError, "needs value=, or error="),
                                 ({"value": 1.0, "error": "x"}, TypeError, "not both"),
                                 ({"value": 1.0, "constraints": [0.0]}, TypeError, "constraints=k")]:
        with pytest.raises(error, match=words):
            opt.tell(trial, **kwargs)
    with pytest.raises(ValueError, match=r"trial 7 was never asked for \(trial 0 was\)"):
        opt.tell(7, 1.0)
    with pytest.raises(TypeError, match="trial must be a Trial or its number"):
        opt.tell("0", 1.0)
    assert opt.history == [] and [t.number for t in opt.pending] == [0]
    opt.tell(trial.number, 1.0)
    with pytest.raises(ValueError, match="trial 0 was told already"):
        opt.tell(trial, 2.0)
    assert [h["value"] for h in opt.history] == [1.0]


def test_the_budget_bounds_the_trials_asked_and_the_run_completes_when_its_last_is_told(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(BOUNDS, surrogate="random", budget=3, seed=0, db=db)
    trials = [opt.ask() for _ in range(3)]
    with pytest.raises(RuntimeError, match="budget of 3 evaluations is spent: 0 recorded and 3 in flight"):
        opt.ask()
    for trial in trials:
        opt.tell(trial, sphere(trial.x))
    assert opt.status == "completed" and list_runs(db)[0].status == "completed"
    assert list_runs(db)[0].stopped_early is None
    with pytest.raises(RuntimeError, match="the run has ended"):
        opt.ask()


def test_closing_early_completes_the_run_with_the_models_recommendation_and_drops_what_is_pending(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(BOUNDS, surrogate="gp", budget=20, n_init=3, seed=0, db=db)
    drive(opt, sphere, 4)
    opt.ask()
    with pytest.warns(UserWarning, match=r"1 trial\(s\) asked for were never told and are dropped: \[4\]"):
        result = opt.close()
    (run,) = list_runs(db)
    assert run.status == "completed" and run.n_steps == 4
    assert run.stopped_early == "by close() after 4 of 20 evaluations" == result.stopped_early
    assert result.recommended_by == "model" and run.recommended is not None
    assert opt.close().best_value == result.best_value  # closing again returns the result again


def test_constraints_are_told_with_each_value(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(BOUNDS, surrogate="gp", budget=6, seed=0, db=db, constraints=1)
    trial = opt.ask()
    with pytest.raises(TypeError, match=r"needs constraints= \(1 values\)"):
        opt.tell(trial, 1.0)
    with pytest.raises(TypeError, match="constraints must return a sequence of real numbers"):
        opt.tell(trial, 1.0, constraints="low")
    with pytest.raises(TypeError, match=r"must hold 1 value \(this Optimizer was made with constraints=1\), got 2"):
        opt.tell(trial, 1.0, constraints=[0.0, 1.0])
    opt.tell(trial, sphere(trial.x), constraints=[trial.x[0] - 0.5])
    drive_constrained = [opt.ask() for _ in range(2)]
    for t in drive_constrained:
        opt.tell(t, sphere(t.x), constraints=[t.x[0] - 0.5])
    result = opt.close()
    assert all(h["feasible"] == (h["constraints"][0] <= 0) for h in opt.history)
    assert result.feasible == any(h["feasible"] for h in opt.history)
    assert list_runs(db)[0].env_params["constraints"] == "told"
    with pytest.raises(ValueError, match="constraints must be an int >= 1|constraints"):
        Optimizer(BOUNDS, surrogate="random", db=None, constraints=0)


def test_several_named_objectives_are_told_by_name_and_give_a_front():
    opt = Optimizer(BOUNDS, surrogate="random", budget=5, seed=0, db=None, minimize={"cost": True, "gain": False})
    for _ in range(5):
        trial = opt.ask()
        opt.tell(trial, {"gain": float(trial.x[1]), "cost": float(trial.x[0] ** 2)})
    trial_values = [h["values"] for h in opt.history]
    front = opt.result()
    assert front.objective_names == ("cost", "gain") and len(trial_values) == 5
    assert front.front_values.tolist() and all(v in trial_values for v in front.front_values.tolist())
    with pytest.raises(RuntimeError, match="the run has ended"):
        opt.ask()


def test_an_error_in_a_with_block_fails_the_run_and_an_interrupt_marks_it_interrupted(tmp_path):
    db = str(tmp_path / "runs.db")
    with pytest.raises(ZeroDivisionError), Optimizer(BOUNDS, surrogate="random", budget=5, db=db) as opt:
        opt.tell(opt.ask(), 1.0)
        raise ZeroDivisionError("the lab's script")
    with pytest.raises(RunInterrupted) as caught, Optimizer(BOUNDS, surrogate="random", budget=5, db=db) as opt:
        opt.tell(opt.ask(), 1.0)
        raise KeyboardInterrupt
    failed, interrupted = list_runs(db)
    assert failed.status == "failed" and "ZeroDivisionError: the lab's script" in failed.error
    assert interrupted.status == "interrupted" and caught.value.saved == 1 and interrupted.n_steps == 1
    with Optimizer(BOUNDS, surrogate="random", budget=5, db=db) as opt:
        opt.tell(opt.ask(), 1.0)
    assert list_runs(db)[-1].status == "completed"


def test_a_run_is_continued_by_its_id_under_the_same_name_only(tmp_path):
    db = str(tmp_path / "runs.db")
    first = Optimizer(BOUNDS, surrogate="random", budget=4, seed=0, db=db, name="rig")
    drive(first, sphere)
    second = Optimizer(BOUNDS, surrogate="random", budget=4, seed=0, db=db, name="rig", initial=first.run_id)
    drive(second, sphere)
    before = {tuple(h["x"]) for h in first.history}
    assert not before & {tuple(h["x"]) for h in second.history}  # the design's next points, none again
    assert list_runs(db)[-1].policy_params["initial"] == 4
    with pytest.raises(ValueError, match="initial"):
        Optimizer(BOUNDS, surrogate="random", budget=4, db=db, name="another", initial=first.run_id)


def test_a_result_needs_a_successful_evaluation_and_a_trial_is_a_copy():
    opt = Optimizer(BOUNDS, surrogate="random", budget=4, seed=0, db=None)
    with pytest.raises(RuntimeError, match="no evaluation to report: 0 told"):
        opt.result()
    trial = opt.ask()
    assert isinstance(trial, Trial)
    x = trial.x.copy()
    trial.x[:] = 99.0  # the caller's copy: the point told is the one asked
    opt.tell(trial, error="broken")
    with pytest.raises(RuntimeError, match="1 told, every one failed"):
        opt.result()
    assert opt.history[0]["x"].tolist() == x.tolist()
    assert opt.close() is None
