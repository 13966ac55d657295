"""npbandit.optimize over a search space (npbandit.space): the objective gets typed dicts, every
point handed out decodes to valid values, runs record parameters by name, and plain-bounds
calls are unchanged."""

import json
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from npbandit import optimize
from npbandit.cli import main
from npbandit.policies import BOPolicy
from npbandit.policies.design import SobolPolicy
from npbandit.space import Choice, Float, Int, SearchSpace, as_search_space
from npbandit.storage import list_runs, run_steps

SPACE = SearchSpace({"lr": Float(1e-4, 1e-1, log=True), "layers": Int(1, 4), "act": Choice(["relu", "tanh", "gelu"]),
                     "dropout": Float(0.0, 0.5, step=0.1)})
COST = {"relu": 0.0, "tanh": 0.5, "gelu": 1.0}


def score(p):
    """A tuning-like objective of SPACE's parameters; refuses anything of the wrong type."""
    assert set(p) == set(SPACE) and type(p["layers"]) is int and type(p["lr"]) is float
    assert p["act"] in COST and type(p["dropout"]) is float
    return (math.log10(p["lr"]) + 2) ** 2 + (p["layers"] - 3) ** 2 + COST[p["act"]] + (p["dropout"] - 0.2) ** 2


def _valid(space, action, params):
    """``action`` is snapped (the encoding of what it decodes to) and decodes to ``params``, which are valid."""
    u = torch.as_tensor(action, dtype=torch.float64)
    assert torch.equal(space.snap(u), u)
    assert space.decode(action) == params == space.check(params)


def test_the_objective_receives_typed_dicts_and_the_result_is_one(tmp_path):
    seen = []
    result = optimize(lambda p: seen.append(dict(p)) or score(p), SPACE, surrogate="random", budget=12, seed=0,
                      db=None, progress=False)
    assert [h["x"] for h in result.history] == seen and len(seen) == 12
    assert isinstance(result.best_x, dict) and result.best_value == pytest.approx(score(result.best_x))
    assert {p["act"] for p in seen} == set(COST)  # a one-hot choice's design reaches each value
    assert all(round(p["dropout"] * 10) / 10 == p["dropout"] for p in seen)


@pytest.mark.parametrize("surrogate", ["tnpd", "gp"])
def test_every_proposal_decodes_to_valid_values_and_is_recorded_by_name(tmp_path, surrogate):
    db = str(tmp_path / "runs.db")
    # the shipped tnpd-bo: d = 1 + 1 + 3 + 1 = 6 cube columns, 3 design points, 2 proposals
    result = optimize(score, space=SPACE, surrogate=surrogate, budget=5, n_init=3, seed=1, db=db, progress=False)
    (run,) = list_runs(db)
    assert run.env_params["space"] == SPACE.describe() and "bounds" not in run.env_params
    assert run.env_params["dim"] == SPACE.dim == 6
    steps = run_steps(db, run.id)
    for step, h in zip(steps, result.history, strict=True):
        _valid(SPACE, step["action"], step["params"])
        assert step["params"] == h["x"]
    keys = [json.dumps(s["params"], sort_keys=True) for s in steps]
    assert len(set(keys[3:])) == 2 and not set(keys[3:]) & set(keys[:3])  # no proposal repeats a point


def test_a_run_records_params_by_name_with_their_types_and_failures_too(tmp_path):
    db = str(tmp_path / "runs.db")

    def flaky(p):
        if p["act"] == "gelu":
            raise RuntimeError("diverged")
        return score(p)

    result = optimize(flaky, SPACE, surrogate="random", budget=8, seed=0, db=db, progress=False, on_error="skip")
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert [s["params"] for s in steps] == [h["x"] for h in result.history]
    failed = [s for s in steps if s["failed"]]
    assert failed and all(s["params"]["act"] == "gelu" for s in failed)
    assert all(type(s["params"]["layers"]) is int for s in steps)  # JSON keeps an int an int
    assert as_search_space(run.env_params["space"]) == SPACE  # the record reads back as the space


def test_plain_bounds_record_their_point_as_x0_x1(tmp_path):
    db = str(tmp_path / "runs.db")
    result = optimize(lambda x: float(np.sum(x ** 2)), [[-1.0, 0.0], [1.0, 2.0]], surrogate="random", budget=3,
                      db=db, progress=False)
    assert isinstance(result.best_x, np.ndarray)
    (run,) = list_runs(db)
    assert run.env_params["bounds"] == [[-1.0, 0.0], [1.0, 2.0]]
    assert run.env_params["space"] == {"x0": {"type": "float", "low": -1.0, "high": 1.0},
                                       "x1": {"type": "float", "low": 0.0, "high": 2.0}}
    for step, h in zip(run_steps(db, run.id), result.history, strict=True):
        assert step["params"] == {"x0": h["x"][0], "x1": h["x"][1]}  # exactly the point evaluated


def test_a_continuous_space_and_the_asynchronous_loop(tmp_path):
    space = {"c": Float(1e-3, 1e3, log=True), "g": Float(-1.0, 1.0)}
    with ThreadPoolExecutor(2) as pool:
        result = optimize(lambda p: (math.log10(p["c"]) - 1) ** 2 + p["g"] ** 2, space, surrogate="random",
                          budget=6, db=None, progress=False, executor=pool, batch_size=2)
    assert all(set(h["x"]) == {"c", "g"} and 1e-3 <= h["x"]["c"] <= 1e3 for h in result.history)


@pytest.mark.parametrize("kwargs,error,match", [
    ({"bounds": [[0.0], [1.0]], "space": {"x": Float(0, 1)}}, ValueError, "not both"),
    ({}, ValueError, "bounds is required"),
    ({"space": [[0.0], [1.0]]}, TypeError, "space must be a SearchSpace"),
    ({"space": {"x": (0, 1)}}, TypeError, r"space\['x'\] must be a Float, Int or Choice"),
    ({"space": {"x": Float(0, 1)}, "point_type": "torch"}, ValueError, "point_type='torch' is for bounds"),
])
def test_bad_spaces_are_refused_naming_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        optimize(score, surrogate="random", budget=2, db=None, progress=False, **kwargs)


def test_policies_hand_out_snapped_points():
    space = SearchSpace({"n": Int(0, 2), "k": Choice(["a", "b", "c"])})
    for policy in (SobolPolicy(space.dim, snap=space.snap), BOPolicy(space.dim, model="gp", snap=space.snap)):
        policy.reset(0)
        for _ in range(4):
            point = policy.act(np.zeros(space.dim + 1))
            assert torch.equal(space.snap(torch.as_tensor(point)), torch.as_tensor(point))
    with pytest.raises(TypeError, match="snap must be None or a callable"):
        BOPolicy(2, model="gp", snap="round")


def test_the_cli_takes_a_space_as_json_or_a_file(tmp_path, monkeypatch, capsys):
    (tmp_path / "tuning.py").write_text("def f(p):\n    return (p['n'] - 2) ** 2 + (p['k'] == 'b')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    record = {"n": {"type": "int", "low": 0, "high": 4}, "k": {"type": "choice", "values": ["a", "b"]}}
    (tmp_path / "space.json").write_text(json.dumps(record))
    db = str(tmp_path / "runs.db")
    for given in (json.dumps(record), "space.json"):
        assert main(["optimize", "--objective", "tuning:f", "--space", given, "--surrogate", "random", "--budget",
                     "3", "--db", db]) == 0
        assert "at n=" in capsys.readouterr().out
    assert all(run.env_params["space"] == record for run in list_runs(db))
    assert main(["optimize", "--objective", "tuning:f", "--space", '{"n": {"type": "int", "low": 0}}', "--db", db]) == 2
    err = capsys.readouterr().err
    assert "--space" in err and "missing high" in err


def test_a_warm_start_is_observed_before_the_first_proposal(tmp_path):
    db = str(tmp_path / "runs.db")
    sobol = optimize(score, SPACE, surrogate="random", budget=4, seed=0, db=None, progress=False)
    earlier = optimize(score, SPACE, surrogate="random", budget=4, seed=5, db=None, progress=False)
    cold = optimize(score, SPACE, surrogate="gp", budget=1, n_init=3, seed=0, db=None, progress=False)
    assert cold.history[0]["x"] == sobol.history[0]["x"]  # the design's first point
    pairs = [(h["x"], h["value"]) for h in earlier.history]
    warm = optimize(score, SPACE, surrogate="gp", budget=1, n_init=3, seed=0, db=db, progress=False, initial=pairs)
    # four earlier evaluations complete a 3-point design: the first evaluation is already the model's
    assert warm.history[0]["x"] != sobol.history[0]["x"] and warm.history[0]["x"] not in [x for x, _ in pairs]
    assert len(warm.history) == 1 and list_runs(db)[0].policy_params["initial"] == 4
    # an earlier result's history serves as it is, its failed entries carried as failures
    db2 = str(tmp_path / "again.db")
    crashed = SPACE.decode(np.zeros(SPACE.dim))
    again = optimize(score, SPACE, surrogate="gp", budget=1, n_init=3, seed=0, db=db2, progress=False,
                     initial=[*earlier.history, {"x": crashed, "value": None, "failed": True, "error": "boom"}])
    assert list_runs(db2)[0].policy_params["initial"] == 5 and again.history[0]["x"] != crashed


@pytest.mark.parametrize("where,initial,match", [
    ([[0.0], [1.0]], [([1.5], 0.0)], r"initial\[0\]: x is outside the bounds: x\[0\] = 1.5 is not in \[0.0, 1.0\]"),
    ([[0.0], [1.0]], [([0.5, 0.5], 0.0)], r"initial\[0\]: x must be a finite point of shape \[1\]"),
    ([[0.0], [1.0]], [("a", 0.0)], r"initial\[0\]: x must be a finite point of shape \[1\], got 'a'"),
    ([[0.0, 0.0], [1.0, 1.0]], [([None, 0.5], 0.0)], r"initial\[0\]: x must be a finite point of shape \[2\]"),
    ([[0.0], [1.0]], [({"x1": 0.5}, 0.0)], r"initial\[0\]: .*keys x0 .. x0"),
    ([[0.0], [1.0]], (np.zeros((3, 1)), np.zeros(2)), r"Y must have shape \[3\] or \[3, 1\]"),
    (SPACE, (np.zeros((3, 4)), np.zeros(3)), r"arrays are for a box"),
    ([[0.0], [1.0]], [([0.5], math.nan)], r"initial\[0\]: the value must be a finite real number"),
    ([[0.0], [1.0]], [([0.5], 1.0), [0.5]], r"initial\[1\] must be an \(x, value\) pair"),
    (SPACE, [({"lr": 0.5, "layers": 2, "act": "relu", "dropout": 0.0}, 1.0)], r"initial\[0\]: params\['lr'\]"),
])
def test_a_bad_warm_start_is_refused_naming_the_entry(where, initial, match):
    with pytest.raises(ValueError, match=match):
        optimize(score, where, surrogate="random", budget=1, db=None, progress=False, initial=initial)


def test_a_warm_start_takes_arrays_and_a_run_s_steps_as_it_takes_pairs(tmp_path):
    from npbandit.storage import run_steps

    box, db = [[-1.0, 0.0], [1.0, 2.0]], str(tmp_path / "runs.db")

    def sphere(x):
        return float(np.sum((np.asarray(x) - 0.5) ** 2))

    earlier = optimize(sphere, box, surrogate="random", budget=5, seed=3, db=db, progress=False)
    pairs = [(h["x"], h["value"]) for h in earlier.history]
    X, Y = np.stack([x for x, _ in pairs]), np.array([v for _, v in pairs])
    runs = [optimize(sphere, box, surrogate="gp", budget=1, seed=0, db=None, progress=False, initial=initial)
            for initial in (pairs, (X, Y), (torch.as_tensor(X), torch.as_tensor(Y)[:, None]),
                            run_steps(db, earlier.run_id))]  # a run's steps: params by name, {"x0": ...}
    assert all(np.array_equal(r.history[0]["x"], runs[0].history[0]["x"]) for r in runs[1:])
    # a space's run continues from its steps too (params dicts in the user's units)
    first = optimize(score, SPACE, surrogate="random", budget=4, seed=5, db=db, progress=False)
    by_pairs = optimize(score, SPACE, surrogate="gp", budget=1, n_init=3, seed=0, db=None, progress=False,
                        initial=[(h["x"], h["value"]) for h in first.history])
    by_steps = optimize(score, SPACE, surrogate="gp", budget=1, n_init=3, seed=0, db=None, progress=False,
                        initial=run_steps(db, first.run_id))
    assert by_steps.history[0]["x"] == by_pairs.history[0]["x"]


def test_a_warm_start_over_bounds_takes_points_in_the_bounds():
    box = [[-1.0, 0.0], [1.0, 2.0]]

    def sphere(x):
        return float(np.sum((np.asarray(x) - 0.5) ** 2))

    first = optimize(sphere, box, surrogate="random", budget=1, seed=0, db=None, progress=False).history[0]["x"]
    earlier = [(x, sphere(x)) for x in ([-1.0, 0.0], [1.0, 2.0], [0.0, 1.0], [0.5, 0.5], [-0.5, 1.5])]
    warm = optimize(sphere, box, surrogate="gp", budget=1, seed=0, db=None, progress=False, initial=earlier)
    assert not np.allclose(warm.history[0]["x"], first)  # 5 = 2d + 1 earlier points: the design is done


def test_the_design_hands_out_each_value_of_a_small_discrete_space_once_before_any_repeat():
    # 2 x 3 = 6 values and a design of 2 * 4 + 1 = 9 points: a snapped Sobol sequence repeated
    # values within the first six; now the first six are the six values, then repeats are allowed
    small = SearchSpace({"flag": Choice([False, True]), "k": Choice(["a", "b", "c"])})
    for policy in (SobolPolicy(small.dim, snap=small.snap),
                   BOPolicy(small.dim, snap=small.snap, n_init=9, model=lambda X, Y: None)):
        policy.reset(seed=0)
        points = [policy.act(None) for _ in range(9)]
        values = [tuple(sorted(small.decode(p).items())) for p in points]
        assert len(set(values[:6])) == 6 and len(values) == 9


def test_a_discrete_space_smaller_than_the_default_design_is_designed_over_once(tmp_path):
    # 2 x 3 = 6 points in 4 columns: the default design (2 * 4 + 1 = 9) would repeat three of them
    small = SearchSpace({"flag": Choice([False, True]), "k": Choice(["a", "b", "c"])})
    assert small.size == 6 and SearchSpace({"k": Int(1, 4), "x": Float(0.0, 1.0)}).size == math.inf
    assert SearchSpace({"k": Int(1, 7, step=3), "x": Float(0.0, 1.0, step=0.5), "c": Float(2.0, 2.0)}).size == 9
    with pytest.warns(RuntimeWarning, match="every point of the discrete search space"):  # the 7th repeats
        result = optimize(lambda p: float(p["flag"]) + "abc".index(p["k"]), small, surrogate="tnpd", budget=7,
                          seed=0, db=str(tmp_path / "s.db"))
    (run,) = list_runs(str(tmp_path / "s.db"))
    assert run.policy_params["n_init"] == 6
    designed = [tuple(sorted(step["x"].items())) for step in result.history[:6]]
    assert len(set(designed)) == 6  # every point once
    # a space with a continuous parameter keeps 2 d + 1; so does a given n_init
    with pytest.warns(UserWarning, match="does not exceed n_init=5"):
        optimize(lambda p: p["x"], SearchSpace({"k": Choice(["a", "b"]), "x": Float(0.0, 1.0)}), surrogate="tnpd",
                 budget=3, seed=0, db=str(tmp_path / "w.db"))
    assert list_runs(str(tmp_path / "w.db"))[0].policy_params["n_init"] == 5
    with pytest.warns(UserWarning, match="does not exceed n_init=8"):
        optimize(lambda p: float(p["flag"]), small, surrogate="tnpd", budget=3, n_init=8, seed=0,
                 db=str(tmp_path / "g.db"))
    assert list_runs(str(tmp_path / "g.db"))[0].policy_params["n_init"] == 8


def test_two_points_in_flight_on_one_value_are_settled_one_each():
    # two hand-outs that snap to the same value are two entries: observing the first leaves the second in flight
    small = SearchSpace({"k": Choice(["a", "b"])})
    policy = BOPolicy(small.dim, snap=small.snap, n_init=4, model=lambda X, Y: None)
    policy.reset(seed=0)
    first, second, third = (policy.act(None) for _ in range(3))
    assert len({p.tobytes() for p in (first, second)}) == 2 and third.tobytes() in {first.tobytes(), second.tobytes()}
    policy.observe(None, third, 1.0, {})
    assert policy.hand_outs.handed[third.tobytes()] == [None]  # the other hand-out of that value is still in flight
    policy.observe(None, third, 2.0, {})
    assert third.tobytes() not in policy.hand_outs.handed and policy.hand_outs.spent == 3


def _sphere(x):
    return float(np.sum((np.asarray(x) - 0.5) ** 2))


def test_a_warm_start_from_a_run_of_the_other_direction_is_refused(tmp_path):
    db, box = str(tmp_path / "runs.db"), [[-1.0, 0.0], [1.0, 2.0]]
    earlier = optimize(_sphere, box, surrogate="random", budget=3, seed=0, minimize=False, db=db, progress=False)
    assert earlier.history[1]["best_value"] > earlier.history[1]["value"]  # the first entry that says it maximised
    steps = run_steps(db, earlier.run_id)
    for initial, field, i in ((steps, "reward", 0), (earlier.history, "best_value", 1)):
        with pytest.raises(ValueError, match=rf"initial\[{i}\]: its run's \(as its {field} says\) minimize is False, "
                                             r"this one's True \(a run .* give them as \(x, value\) pairs"):
            optimize(_sphere, box, surrogate="random", budget=1, db=None, progress=False, initial=initial)
    for initial in (steps, earlier.history):  # they continue a maximisation
        optimize(_sphere, box, surrogate="random", budget=1, minimize=False, db=None, progress=False, initial=initial)
    # pairs say nothing of their run: taken as the objective's values, whichever way it was optimised
    optimize(_sphere, box, surrogate="random", budget=1, db=None, progress=False,
             initial=[(h["x"], h["value"]) for h in earlier.history])


def test_a_record_says_its_run_s_direction_only_where_it_can():
    from npbandit.warm_start import initial_points

    box = np.array([[0.0], [1.0]])
    silent = [{"x": [0.5], "value": 2.0, "best_value": 2.0},  # its own best: either way
              {"x": [0.5], "value": 2.0, "best_value": 5.0, "feasible": False},  # infeasible: not in best_value
              {"x": [0.5], "value": 2.0, "best_value": None, "failed": True},
              {"params": {"x0": 0.5}, "action": [0.5], "value": 0.0, "reward": 0.0}]  # 0 is its own negation
    for minimize in (True, False):  # the failed entry carried as a failure, its value unread
        assert [error for *_, error in initial_points(silent, box, None, minimize)] == [None, None, "failed earlier",
                                                                                        None]
    maximised = [{"x": [0.5], "value": 2.0, "best_value": 5.0},
                 {"params": {"x0": 0.5}, "action": [0.5], "value": 2.0, "reward": 2.0}]
    for entry in maximised:
        assert initial_points([entry], box, None, minimize=False)[0][1] == 2.0
        with pytest.raises(ValueError, match=r"initial\[0\]: its run's .* minimize is False, this one's True"):
            initial_points([entry], box, None, minimize=True)


def test_a_run_s_steps_over_other_bounds_or_another_space_are_refused(tmp_path):
    db, box, wider = str(tmp_path / "runs.db"), [[-1.0, 0.0], [1.0, 2.0]], [[-1.0, 0.0], [1.0, 3.0]]
    earlier = optimize(_sphere, box, surrogate="random", budget=2, seed=0, db=db, progress=False)
    with pytest.raises(ValueError, match=r"initial\[0\]: the step's action .* is \{'x0': .*\} in its run but .* in "
                                         r"these bounds: its run searched other bounds"):
        optimize(_sphere, wider, surrogate="random", budget=1, db=None, progress=False,
                 initial=run_steps(db, earlier.run_id))
    # on purpose, as pairs: the same points in a wider box
    optimize(_sphere, wider, surrogate="random", budget=1, db=None, progress=False,
             initial=[(h["x"], h["value"]) for h in earlier.history])
    first = optimize(score, SPACE, surrogate="random", budget=2, seed=0, db=db, progress=False)
    steps = run_steps(db, first.run_id)
    for other, match in ((SearchSpace({**SPACE, "lr": Float(1e-4, 1.0, log=True)}), r"in this space: its run "
                          r"searched another space"),
                         (SearchSpace({**SPACE, "act": Choice(["relu", "tanh", "gelu", "silu"])}),
                          r"is not a point of the unit cube \[7\] of this space: its run searched another space")):
        with pytest.raises(ValueError, match=r"initial\[0\]: the step's action .*" + match):
            optimize(score, other, surrogate="random", budget=1, db=None, progress=False, initial=steps)


def _design_points(history):
    return [np.asarray(h["x"]).tolist() for h in history]


@pytest.mark.parametrize("surrogate", ["random", "gp"])
def test_a_run_continued_inside_its_design_goes_on_with_the_design_s_next_points(tmp_path, surrogate):
    # the design's Sobol sequence restarts with the seed: the earlier run's points are passed over,
    # not evaluated again, whether they come back as a history, a run's steps or (x, value) pairs
    db, box = str(tmp_path / "runs.db"), [[-1.0, 0.0], [1.0, 2.0]]
    cold = _design_points(optimize(_sphere, box, surrogate="random", budget=5, seed=0, db=None,
                                   progress=False).history)
    earlier = optimize(_sphere, box, surrogate="random", budget=2, seed=0, db=db, progress=False)
    assert _design_points(earlier.history) == cold[:2]
    for initial in (earlier.history, run_steps(db, earlier.run_id), [(h["x"], h["value"]) for h in earlier.history]):
        later = optimize(_sphere, box, surrogate=surrogate, n_init=5, budget=3, seed=0, db=None, progress=False,
                         initial=initial)
        assert _design_points(later.history) == cold[2:]


def test_a_failed_earlier_evaluation_is_carried_and_not_evaluated_again(tmp_path):
    from npbandit.warm_start import WarmStart, initial_points

    db, box = str(tmp_path / "runs.db"), [[-1.0, 0.0], [1.0, 2.0]]
    cold = _design_points(optimize(_sphere, box, surrogate="random", budget=3, seed=0, db=None,
                                   progress=False).history)
    crash_at = cold[1]

    def crashes(x):
        if np.asarray(x).tolist() == crash_at:
            raise RuntimeError("simulator crashed")
        return _sphere(x)

    earlier = optimize(crashes, box, surrogate="random", budget=2, seed=0, db=db, on_error="skip", progress=False)
    assert [h["failed"] for h in earlier.history] == [False, True]
    for initial in (earlier.history, run_steps(db, earlier.run_id)):
        later = optimize(crashes, box, surrogate="gp", n_init=5, budget=1, seed=0, db=None, progress=False,
                         initial=initial)  # on_error="raise": the crashing point proposed again would stop it
        assert _design_points(later.history) == cold[2:]
        bo = WarmStart(BOPolicy(2, model="gp", n_init=5), initial_points(initial, np.array(box), None, True))
        bo.reset(seed=0)
        assert len(bo.inner.X) == 1 and len(bo.inner.failed) == 1 and "simulator crashed" in bo.observations[1][3]


def test_a_discrete_space_evaluated_everywhere_says_its_proposals_repeat():
    with pytest.warns(RuntimeWarning, match="every point of the discrete search space"):
        result = optimize(lambda p: float((p["i"] - 2) ** 2), {"i": Int(0, 3)}, budget=7, db=None, progress=False,
                          seed=0)
    values = [h["x"]["i"] for h in result.history]
    assert sorted(set(values[:4])) == [0, 1, 2, 3]  # every point once before any repeat


@pytest.mark.parametrize("kwargs", [{"trust_region": False}, {"surrogate": "gp"}, {"minimize": [True, False]}])
def test_a_discrete_space_evaluated_everywhere_says_so_without_a_trust_region_too(kwargs):
    # one global model (trust_region=False, the GP's default) and a search of several objectives repeat alike
    def objective(p):
        return float((p["i"] - 2) ** 2) if "minimize" not in kwargs else (float(p["i"]), float(p["i"] ** 2))

    with pytest.warns(RuntimeWarning, match="every point of the discrete search space"):
        result = optimize(objective, {"i": Int(0, 3)}, budget=7, db=None, progress=False, seed=0, **kwargs)
    values = [h["x"]["i"] for h in result.history]
    assert sorted(set(values[:4])) == [0, 1, 2, 3]


def test_a_fixed_range_is_passed_to_every_evaluation_and_recorded_with_its_value(tmp_path):
    db = str(tmp_path / "runs.db")
    space = {"lr": Float(1e-4, 1e-1, log=True), "layers": Int(4, 4), "momentum": Float(0.9, 0.9)}
    seen = []

    def objective(p):
        seen.append(p)
        return (math.log10(p["lr"]) + 2) ** 2

    result = optimize(objective, space=space, surrogate="gp", budget=6, n_init=3, seed=0, db=db, progress=False)
    assert len(seen) == 6 and all(p["layers"] == 4 and type(p["layers"]) is int and p["momentum"] == 0.9
                                  for p in seen)
    assert len({p["lr"] for p in seen}) == 6  # the one free parameter is searched
    assert result.best_x["layers"] == 4 and result.best_x["momentum"] == 0.9
    assert all(s["params"]["momentum"] == 0.9 for s in run_steps(db, list_runs(db)[0].id))
