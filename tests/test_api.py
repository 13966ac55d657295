"""npbandit.optimize and the optimize / bandit / report commands."""

import threading
import time

import numpy as np
import pytest
import torch
from helpers import BOUNDS, sphere, tiny_checkpoint

from npbandit import optimize
from npbandit.cli import main
from npbandit.storage import list_runs, run_steps
from npbandit.surrogates.pretrained import read_card


def test_optimize_with_an_np_checkpoint(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = str(tmp_path / "bo.db")
    result = optimize(sphere, BOUNDS, surrogate=str(card), budget=9, seed=0, db=db, progress=False)
    assert len(result.history) == 9 and result.run_id is not None
    assert np.all(result.best_x >= [-1, 0]) and np.all(result.best_x <= [1, 2])
    assert result.best_value == min(h["value"] for h in result.history) == pytest.approx(sphere(result.best_x))
    (run,) = list_runs(db)
    assert run.status == "completed" and run.surrogate == "cmanp-bo" and run.n_steps == 9
    assert [s["t"] for s in run_steps(db, run.id)] == list(range(9))


@pytest.mark.parametrize("surrogate,acquisition", [("random", "logei"), ("gp", "logei"), ("gp", "ucb")])
def test_optimize_baselines(tmp_path, surrogate, acquisition):
    result = optimize(sphere, BOUNDS, surrogate=surrogate, acquisition=acquisition, budget=8, seed=1, db=None,
                      progress=False)
    assert len(result.history) == 8 and result.run_id is None


def test_optimize_same_seed_same_initial_design(tmp_path):
    a = optimize(sphere, BOUNDS, surrogate="random", budget=5, seed=3, db=None, progress=False)
    b = optimize(sphere, BOUNDS, surrogate="gp", budget=5, seed=3, db=None, progress=False)
    assert all(np.allclose(h1["x"], h2["x"]) for h1, h2 in zip(a.history, b.history))  # 5 = 2d + 1 Sobol points


def test_seed_none_draws_a_seed_that_the_result_and_the_run_record_and_that_repeats_the_run(tmp_path):
    db = str(tmp_path / "runs.db")
    drawn = [optimize(sphere, BOUNDS, surrogate="random", budget=4, seed=None, db=db, progress=False) for _ in range(2)]
    seeds = [r.seed for r in drawn]
    assert all(isinstance(s, int) and 0 <= s < 2**31 for s in seeds) and seeds[0] != seeds[1]  # 1 in 2**31 alike
    assert [run.seed for run in list_runs(db)] == seeds
    again = optimize(sphere, BOUNDS, surrogate="random", budget=4, seed=drawn[1].seed, db=None, progress=False)
    assert [h["x"].tolist() for h in again.history] == [h["x"].tolist() for h in drawn[1].history]
    assert optimize(sphere, BOUNDS, surrogate="random", budget=2, seed=7, db=None, progress=False).seed == 7


def test_optimize_thompson_and_torch_points_and_maximise(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    seen = []

    def f(x):
        seen.append(type(x))
        return float(-(x ** 2).sum())

    result = optimize(f, BOUNDS, surrogate=str(card), acquisition="thompson", budget=7, minimize=False,
                      point_type="torch", db=None, progress=False)
    assert set(seen) == {torch.Tensor} and result.best_value == max(h["value"] for h in result.history)


def test_optimize_reports_failures(tmp_path):
    def bad(x):
        return float("inf") if x[0] > 0 else sphere(x)

    with pytest.raises(Exception, match="inf"):
        optimize(bad, BOUNDS, surrogate="random", budget=10, db=None, progress=False)
    result = optimize(bad, BOUNDS, surrogate="random", budget=10, db=None, on_error="skip", progress=False)
    assert any(h["failed"] for h in result.history) and np.isfinite(result.best_value)
    # a failed evaluation's best_value is the best so far (a curve of history[i]["best_value"] has no holes)
    best = None
    for h in result.history:
        if not h["failed"]:
            best = h["value"] if best is None else min(best, h["value"])
        assert h["best_value"] == best


def test_a_run_whose_every_evaluation_failed_is_recorded_failed_not_completed(tmp_path):
    from npbandit.storage import list_runs

    def broken(x):
        raise KeyError("no such column")

    db = str(tmp_path / "runs.db")
    optimize(sphere, BOUNDS, surrogate="random", budget=3, db=db, progress=False)
    with pytest.raises(Exception, match="every one of the 3 evaluations failed.*the first failed with: .*no such col"):
        optimize(broken, BOUNDS, surrogate="random", budget=3, db=db, on_error="skip", progress=False)
    done, failed = list_runs(db)
    assert done.status == "completed" and done.error is None
    assert failed.status == "failed" and failed.n_steps == 3
    assert "every one of the 3 evaluations failed" in failed.error and "no such column" in failed.error


@pytest.mark.parametrize("kwargs,error,match", [
    ({"bounds": [[1, 0], [0, 1]]}, ValueError, "lower bound"),
    ({"bounds": [[0, 0]]}, ValueError, "2 x d"),
    ({"objective": "sphere"}, TypeError, "callable"),
    ({"surrogate": "no-such-model"}, ValueError, "surrogate"),
    ({"acquisition": "pi"}, ValueError, "acquisition"),
    ({"budget": 0}, ValueError, "budget"),
    ({"minimize": "no"}, TypeError, "minimize"),
    ({"seed": "a"}, ValueError, "seed"),
    ({"seed": -1}, ValueError, "seed"),
])
def test_optimize_validates_arguments(kwargs, error, match):
    args = {"objective": sphere, "bounds": BOUNDS, "db": None, "progress": False, **kwargs}
    with pytest.raises(error, match=match):
        optimize(**args)


def test_a_pathlib_path_is_taken_as_db_where_a_file_path_is(tmp_path):
    """db's messages say 'an SQLAlchemy URL or a file path': a pathlib.Path is one, to optimize, an
    Optimizer and the readers alike (it was refused with that message)."""
    from npbandit import Optimizer
    from npbandit.report import report_text

    path = tmp_path / "runs.db"
    first = optimize(sphere, BOUNDS, surrogate="random", budget=2, db=path, progress=False)
    assert first.db == str(path)
    more = optimize(sphere, BOUNDS, surrogate="random", budget=1, db=path, progress=False, initial=first)
    assert list_runs(str(path))[-1].policy_params["initial"] == 2 and more.run_id == 2
    opt = Optimizer(BOUNDS, surrogate="random", budget=1, db=path)
    opt.tell(opt.ask(), 1.0)
    assert [run.id for run in list_runs(path)] == [1, 2, 3] and len(run_steps(path, 1)) == 2
    assert report_text(path).startswith(f"database: {path}")


def test_numpy_integers_are_taken_where_an_int_is_counted(tmp_path):
    """budget, seed, n_init, batch_size and commit_every as NumPy integers (an int read off an
    array) run as their ints do, recorded as plain ints; the same for an Optimizer."""
    from concurrent.futures import ThreadPoolExecutor

    from npbandit import Optimizer

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    plain = optimize(sphere, BOUNDS, surrogate="gp", budget=4, seed=3, n_init=2, db=None, progress=False)
    with ThreadPoolExecutor(1) as pool:
        held = optimize(sphere, BOUNDS, surrogate="gp", budget=np.int64(4), seed=np.int64(3), n_init=np.int32(2),
                        batch_size=np.int64(1), executor=pool, commit_every=np.int64(2), db=db, progress=False)
    assert [h["x"].tolist() for h in held.history] == [h["x"].tolist() for h in plain.history]
    assert type(held.seed) is int and held.seed == 3
    run = list_runs(db)[0]
    assert run.seed == 3 and run.policy_params["n_init"] == 2
    opt = Optimizer(BOUNDS, surrogate="random", budget=np.int64(2), seed=np.int64(1), db=None)
    assert opt.budget == 2 and type(opt.seed) is int


@pytest.mark.parametrize("kwargs,error,match", [
    ({"n_init": 0}, ValueError, "n_init"),
    ({"n_init": 2.5}, ValueError, "n_init"),
    ({"on_error": "ignore"}, ValueError, "on_error"),
    ({"progress": "yes"}, TypeError, "progress"),
    ({"commit_every": 0}, ValueError, "commit_every"),
    ({"surrogate": ""}, ValueError, "surrogate must be a non-empty name"),
    ({"surrogate": " "}, ValueError, "surrogate must be a non-empty name"),
    ({"surrogate": "no-such-model"}, ValueError, "surrogate"),
    ({"batch_size": 2}, ValueError, "batch_size"),
    ({"eval_timeout": 1.0}, ValueError, "eval_timeout"),
    ({"liar": "nobody"}, ValueError, "liar"),
    ({"name": ""}, ValueError, "name"),
    ({"optimal_value": float("nan")}, ValueError, "optimal_value"),
])
def test_a_refused_argument_leaves_no_database_behind(tmp_path, kwargs, error, match):
    db = tmp_path / "runs.db"
    args = {"objective": sphere, "bounds": BOUNDS, "surrogate": "gp", "budget": 4, "db": str(db),
            "progress": False, **kwargs}
    with pytest.raises(error, match=match):
        optimize(**args)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("returned", [None, "1.5", np.array([1.0, 2.0])], ids=["None", "str", "2-array"])
def test_a_wrong_return_type_is_a_failed_evaluation_that_skip_skips(tmp_path, returned):
    from npbandit.exceptions import ObjectiveError, ObjectiveReturnError

    db = str(tmp_path / "bo.db")
    calls = []

    def sometimes_wrong(x):
        calls.append(1)
        return returned if len(calls) == 2 else sphere(x)

    with pytest.warns(UserWarning, match=r"1 of 4 evaluations returned no number .*must return a float"):
        result = optimize(sometimes_wrong, BOUNDS, surrogate="random", budget=4, db=db, on_error="skip",
                          progress=False)
    assert [h["failed"] for h in result.history] == [False, True, False, False]
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert run.status == "completed" and [s["failed"] for s in steps] == [False, True, False, False]
    assert "must return a float" in steps[1]["error"] and [s["error"] for s in steps[::2]] == [None, None]
    assert [s["error_kind"] for s in steps] == [None, "returned", None, None]
    assert result.history[1]["error_kind"] == "returned" and "error_kind" not in result.history[0]
    calls.clear()
    with pytest.raises(ObjectiveReturnError, match="must return a float") as info:
        optimize(sometimes_wrong, BOUNDS, surrogate="random", budget=4, db=db, progress=False)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ObjectiveError)
    stopped = max(list_runs(db), key=lambda r: r.id)
    assert stopped.status == "failed" and [s["failed"] for s in run_steps(db, stopped.id)] == [False, True]


def test_an_objective_returning_several_numbers_is_pointed_to_several_directions():
    import numpy as np
    import torch

    from npbandit.envs.blackbox import objective_value
    from npbandit.exceptions import ObjectiveReturnError

    hint = r"for several objectives give one direction per value, optimize\(f, ..., minimize=\[True, False\]\) " \
           r"\(or an Optuna study with directions=\[...\] and npbandit.integrations.optuna.NPSampler\), or return " \
           r"one number that weighs them$"
    for several in ((1.0, 2.0), [1.0, np.float32(2.0)], np.array([1.0, 2.0]), torch.tensor([1.0, 2.0])):
        with pytest.raises(ObjectiveReturnError, match=r"objective must return a float.*" + hint):
            objective_value(several, [0.5])
    # not several objectives: the error stays as it was, without the hint
    for other in ("1.5", (1.0, "a"), (True, False), np.array([]), [], [True], ["1.5"], [[1.0, 2.0]]):
        with pytest.raises(ObjectiveReturnError) as info:
            objective_value(other, [0.5])
        assert "several" not in str(info.value)
    # one number however it comes: a 1-element list or tuple as a 1-element array or tensor is
    for one in (np.array([2.5]), torch.tensor([2.5]), [2.5], (2.5,), [np.float32(2.5)], [torch.tensor(2.5)]):
        assert objective_value(one, [0.5]) == 2.5


def test_cli_optimize_bandit_report(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "6", "--db", db]) == 0
    card = tiny_checkpoint(tmp_path, "cmanp", "wheel")
    assert main(["bandit", "--policies", str(card.with_suffix("")), "uniform", "linucb", "--deltas", "0.9",
                 "--seeds", "0", "1", "--steps", "60", "--db", db]) == 0
    png = tmp_path / "regret.png"
    assert main(["report", "--db", db, "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "Wheel bandit" in out and "uniform" in out and "100.00" in out and "branin" in out
    # bandit and black-box runs: one figure each, named after --plot's path
    assert all((tmp_path / f"regret-{q}.png").stat().st_size > 1000 for q in ("bandit", "bo"))
    assert main(["optimize", "--function", "nope", "--db", db]) == 2
    assert main(["optimize", "--objective", "math:nothing", "--bounds", "[[0],[1]]", "--db", db]) == 2
    assert main(["bandit", "--policies", "bogus", "--db", db]) == 2


def test_optimize_commits_every_evaluation(tmp_path):
    db = str(tmp_path / "bo.db")
    committed = []

    def f(x):
        runs = list_runs(db)  # what another process would see now
        committed.append(runs[0].n_steps if runs else None)
        return sphere(x)

    optimize(f, BOUNDS, surrogate="random", budget=6, db=db, progress=False)
    assert committed == [0, 1, 2, 3, 4, 5]
    optimize(f, BOUNDS, surrogate="random", budget=3, db=f"sqlite:///{tmp_path / 'b.db'}", progress=False,
             commit_every=10)
    with pytest.raises(ValueError, match="commit_every"):
        optimize(f, BOUNDS, surrogate="random", budget=3, db=db, progress=False, commit_every=0)


@pytest.mark.slow
def test_a_slow_evaluation_does_not_look_like_a_dead_run(tmp_path, monkeypatch):
    # a run on another host is judged by its heartbeat alone; one evaluation here
    # outlasts the (shortened) staleness window three times over. The window is twenty
    # heartbeats (production's is thirty), so only a heartbeat thread stalled for a whole
    # second, not a slow commit on a loaded machine, makes the run look dead
    import datetime as dt

    from sqlalchemy import select, update

    import npbandit.storage as storage
    from npbandit.storage import heartbeat

    monkeypatch.setattr(heartbeat, "HEARTBEAT_EVERY", 0.05)
    monkeypatch.setattr(heartbeat, "STALE_AFTER", dt.timedelta(seconds=1.0))
    db = str(tmp_path / "bo.db")
    evaluating, release = threading.Event(), threading.Event()

    def slow(x):
        evaluating.set()
        release.wait(120)  # set once the test has looked
        return sphere(x)

    worker = threading.Thread(target=optimize, args=(slow, BOUNDS),
                              kwargs={"surrogate": "random", "budget": 1, "db": db, "progress": False})
    worker.start()
    try:
        assert evaluating.wait(60)
        engine = storage.open_db(db)
        with engine.begin() as conn:
            conn.execute(update(storage.Run).values(host="another-host"))
            started = conn.execute(select(storage.Run.heartbeat_at)).scalar_one()
        for _ in range(6):
            time.sleep(0.5)
            (run,) = list_runs(db)
            assert run.status == "running" and run.n_steps == 0
        with engine.connect() as conn:
            assert conn.execute(select(storage.Run.heartbeat_at)).scalar_one() > started
    finally:
        release.set()
        worker.join(60)
    assert list_runs(db)[0].status == "completed"


def test_optimize_takes_values_past_what_float64_can_standardise(tmp_path):
    # a spread of values near 1e300 has a variance past float64; the surrogate sees them scaled by a power
    # of two (tests/test_api_scales.py), and the run, the result and the database keep the objective's units
    def huge(x):
        return 1e300 * float(np.sum(x) + 3.0)

    db = str(tmp_path / "bo.db")
    for surrogate in ("gp", str(tiny_checkpoint(tmp_path, "cmanp", "bo"))):
        result = optimize(huge, BOUNDS, surrogate=surrogate, budget=8, db=db, progress=False)
        assert result.best_value == huge(result.best_x) == min(s["value"] for s in run_steps(db, result.run_id))
    assert [run.status for run in list_runs(db)] == ["completed", "completed"]


@pytest.mark.parametrize("surrogate,bounds,match", [
    ("tnpd-gp1d", [[0.0], [1.0]], r"prior 'gp1d'.*raw output.*fit: cmanp-and-bo, cmanp-bo"),  # would run on raw y
    ("cmanp-wheel", BOUNDS, r"prior 'wheel'.*fit: cmanp-and-bo, cmanp-bo"),
    # wider than the bo width: still refused, and the bo checkpoints fit (any serves any d, through a subspace)
    ("tnpd-gp1d", [[0] * 8, [1] * 8], r"d=8\) needs a 'bo' checkpoint with 1 output; checkpoint 'tnpd-gp1d' has prior "
                                      r"'gp1d' \(not 'bo'\)\..*fit: cmanp-and-bo, cmanp-bo, retreever-bo"),
    ("cmanp-b0", BOUNDS, "did you mean 'cmanp-bo'"),
    ("cmnap", BOUNDS, "did you mean 'cmanp'"),
])
def test_optimize_refuses_checkpoints_that_do_not_fit(surrogate, bounds, match):
    with pytest.raises(ValueError, match=match):
        optimize(sphere, bounds, surrogate=surrogate, budget=3, db=None, progress=False)


def test_optimize_takes_a_loaded_surrogate_as_it_takes_its_checkpoint(tmp_path):
    # was "TypeError: surrogate must be a name"; NPModel and BOPolicy took loaded surrogates already
    from npbandit.surrogates import build
    from npbandit.surrogates.pretrained import load_surrogate

    card = tiny_checkpoint(tmp_path, "tnpd", "bo")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    by_path = optimize(sphere, BOUNDS, surrogate=str(card), budget=7, db=None, progress=False)
    # a pathlib.Path as train() returns it (TrainResult.card) and load_surrogate takes it (was refused: a TypeError)
    as_path = optimize(sphere, BOUNDS, surrogate=card, budget=7, db=None, progress=False)
    assert [h["x"].tolist() for h in as_path.history] == [h["x"].tolist() for h in by_path.history]
    loaded = load_surrogate(card)
    by_instance = optimize(sphere, BOUNDS, surrogate=loaded, budget=7, db=db, progress=False)
    assert [h["x"].tolist() for h in by_instance.history] == [h["x"].tolist() for h in by_path.history]
    (run,) = list_runs(db)
    assert run.surrogate == "tnpd-bo" and run.checkpoint_sha256 == read_card(card)["sha256"]
    with pytest.raises(TypeError, match="surrogate: a TNPD instance must be a checkpoint loaded by load_surrogate"):
        optimize(sphere, BOUNDS, surrogate=build("tnpd", 2, 1, size="tiny"), budget=3, db=None, progress=False)
    with pytest.raises(ValueError, match=r"prior 'wheel'"):
        optimize(sphere, BOUNDS, surrogate=load_surrogate(tiny_checkpoint(tmp_path, "cmanp", "wheel")), budget=3,
                 db=None, progress=False)
    with pytest.raises(TypeError, match="surrogate must be a name, a checkpoint path or a surrogate loaded by "):
        optimize(sphere, BOUNDS, surrogate=3, budget=3, db=None, progress=False)


def test_optimize_searches_more_inputs_than_the_checkpoint_takes(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    lower, upper = np.full(9, -2.0), np.linspace(1.0, 3.0, 9)
    result = optimize(lambda x: float(((x - 0.5) ** 2).sum()), [lower, upper], surrogate=str(card), budget=16,
                      db=None, progress=False)
    assert len(result.history) == 16
    for h in result.history:
        assert h["x"].shape == (9,) and (h["x"] >= lower).all() and (h["x"] <= upper).all()


def test_optimize_reports_a_missing_weights_file_as_missing(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    card.with_suffix(".safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="missing"):
        optimize(sphere, BOUNDS, surrogate=str(card), budget=3, db=None, progress=False)


@pytest.mark.parametrize("short,checkpoint", [("cmanp", "cmanp-bo"), ("tnpd", "tnpd-bo")])
def test_short_surrogate_names_run_their_shipped_bo_checkpoints(tmp_path, short, checkpoint):
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    optimize(sphere, BOUNDS, surrogate=short, budget=6, seed=0, db=db, progress=False)
    (run,) = list_runs(db)
    assert run.surrogate == checkpoint and run.checkpoint_sha256 == read_card(checkpoint)["sha256"]


def test_the_default_surrogate_is_the_one_that_steers(tmp_path):
    # tnpd-bo beats Sobol search on the whole BO suite, cmanp-bo on none of it (experiments/log/results.md):
    # a user who names no surrogate gets tnpd-bo, from optimize, the CLI and NPSampler alike
    import inspect

    from npbandit.cli import build_parser

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    optimize(sphere, BOUNDS, budget=6, seed=0, db=db, progress=False)
    (run,) = list_runs(db)
    assert run.surrogate == "tnpd-bo"
    assert build_parser().parse_args(["optimize", "--function", "branin"]).surrogate == "tnpd"
    optuna = pytest.importorskip("npbandit.integrations.optuna")
    assert inspect.signature(optuna.NPSampler).parameters["checkpoint"].default == "tnpd-bo"


def test_a_result_prints_its_outcome_and_the_size_of_its_history():
    from npbandit.api import OptimizeResult

    history = [{"t": t, "x": np.zeros(2), "value": float(t), "best_value": 0.0, "failed": t == 3} for t in range(40)]
    result = OptimizeResult(best_x=np.zeros(2), best_value=0.0, history=history, run_id=7)
    text = repr(result)
    assert "best_value=0.0" in text and "run_id=7" in text and "history=<40 evaluations, 1 failed>" in text
    assert len(text) < 400  # not the 40 rows


def test_a_budget_the_initial_design_fills_warns_that_the_model_proposes_nothing():
    with pytest.warns(UserWarning, match=r"budget=3 does not exceed n_init=10: .*the model proposes none"):
        optimize(sphere, BOUNDS, surrogate="gp", budget=3, n_init=10, db=None, progress=False)
    with pytest.warns(UserWarning, match=r"budget=3 \(and 1 initial point\) does not exceed n_init=10"):
        optimize(sphere, BOUNDS, surrogate="gp", budget=3, n_init=10, db=None, progress=False,
                 initial=[(np.zeros(len(BOUNDS[0])), 1.0)])


def test_a_checkpoint_given_by_its_card_path_names_the_policy_as_when_loaded(tmp_path):
    from npbandit import load_surrogate

    card = tiny_checkpoint(tmp_path)
    db = str(tmp_path / "runs.db")
    for surrogate in (str(card), load_surrogate(card)):
        with pytest.warns(UserWarning, match="does not exceed n_init=1"):  # nothing but the design: no model run
            optimize(sphere, BOUNDS, surrogate=surrogate, budget=1, n_init=1, db=db, progress=False)
    assert [r.policy for r in list_runs(db)] == ["cmanp-bo-tr-logei"] * 2  # one report row for one checkpoint


def test_the_parts_of_optimize_live_in_their_modules_and_api_re_exports_them():
    import npbandit.api as api
    from npbandit.objective_names import check_name, objective_label
    from npbandit.optimize_surrogate import SURROGATES, surrogate_checkpoint

    assert api.objective_label is objective_label and api.SURROGATES is SURROGATES
    assert surrogate_checkpoint("random", 2) == "random" and surrogate_checkpoint("tnpd", 2) == "tnpd-bo"
    with pytest.raises(ValueError, match=r"surrogate must be one of .*got 'tnp' -- did you mean 'tnpd'"):
        surrogate_checkpoint("tnp", 2)
    with pytest.raises(ValueError, match="name must be a non-empty, printable string"):
        check_name("two\nlines")
