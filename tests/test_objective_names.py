"""Named objectives: optimize(f, ..., minimize={"cost": True, "accuracy": False}) -- the names
checked, an objective returning its values by name, ParetoResult.objective_names, the run's
record and the warm starts that check the names -- and a list of directions kept as it was."""

import numpy as np
import pytest

from npbandit import ParetoResult, optimize
from npbandit.envs import BlackBoxEnv
from npbandit.envs.directions import named_directions
from npbandit.envs.outcomes import objective_values
from npbandit.exceptions import ObjectiveError, ObjectiveReturnError

BOX = [[0.0, 0.0], [1.0, 1.0]]
NAMED = {"cost": True, "accuracy": False}


def cost_and_accuracy(x):
    """Two objectives by name, returned in the other order than minimize names them."""
    x = np.asarray(x, dtype=np.float64)
    return {"accuracy": float(1 - ((x - 1) ** 2).sum()), "cost": float((x**2).sum())}


def expected(x):
    named = cost_and_accuracy(x)
    return [named["cost"], named["accuracy"]]


def run(objective=cost_and_accuracy, minimize=None, **kwargs):
    settings = {"surrogate": "random", "budget": 6, "seed": 0, "db": None, "progress": False, "name": "two",
                **kwargs}
    return optimize(objective, BOX, minimize=NAMED if minimize is None else minimize, **settings)


def test_an_objective_returning_its_values_by_name_is_read_in_the_order_minimize_names_them():
    result = run()
    assert result.objective_names == ("cost", "accuracy") and result.minimize == (True, False)
    assert [h["values"] for h in result.history] == [expected(h["x"]) for h in result.history]
    np.testing.assert_array_equal(result.front_values, [expected(x) for x in result.front_x])
    entry = result.front[0]
    assert result.values_by_name(entry) == dict(zip(("cost", "accuracy"), expected(entry["x"])))


def test_a_sequence_in_the_mappings_order_is_read_as_those_values():
    result = run(lambda x: expected(x))
    assert [h["values"] for h in result.history] == [expected(h["x"]) for h in result.history]


@pytest.mark.parametrize(("returned", "match"), [
    ({"cost": 1.0}, "it returned none for 'accuracy'"),
    ({"cost": 1.0, "accuracy": 2.0, "latency": 3.0}, "it returned 'latency', which names no objective"),
    ({"cost": 1.0, "acuracy": 2.0}, "it returned none for 'accuracy'"),
])
def test_a_missing_or_extra_name_fails_the_evaluation_naming_it(returned, match):
    with pytest.raises(ObjectiveReturnError, match=match):
        run(lambda x: returned)
    with pytest.warns(UserWarning, match="returned no number and counted as failed"):
        skipped = run(lambda x: returned if x[0] < 0.5 else expected(x), on_error="skip", budget=4)
    failed = [h for h in skipped.history if h["failed"]]
    assert failed and all(h["error_kind"] == "returned" and match in h["error"] for h in failed)


def test_a_mapping_is_refused_from_an_objective_whose_directions_are_a_list_saying_how_to_name_them():
    with pytest.raises(ObjectiveReturnError, match=r"objective must return 2 real numbers .*; to return the values "
                                                   r"by name, name the objectives: minimize=\{'accuracy': "):
        run(minimize=[True, False])


@pytest.mark.parametrize(("minimize", "error", "match"), [
    ({"": True, "accuracy": False}, ValueError, r"minimize\[''\]: an objective's name must be a non-empty"),
    ({"cost": True, " ": False}, ValueError, r"minimize\[' '\]"),
    ({"cost": True, "a\nb": False}, ValueError, r"minimize\['a\\nb'\]"),
    ({"cost": True, 3: False}, TypeError, r"entry 1 \(3\) is a int"),
    ({"cost": True, "accuracy": 1}, TypeError, r"minimize\['accuracy'\] must be a bool"),
    ({"cost": True}, ValueError, "needs at least two"),
])
def test_names_and_directions_are_checked_naming_the_entry(minimize, error, match):
    with pytest.raises(error, match=match):
        run(minimize=minimize)


def test_a_list_of_directions_keeps_the_names_of_their_positions():
    result = run(lambda x: expected(x), minimize=[True, False])
    assert result.objective_names == ("f0", "f1")
    assert "minimize=(True, False)" in repr(result)
    assert named_directions([True, False]) == ((True, False), 2, ("f0", "f1"))
    assert named_directions(True) == (True, 1, None)


def test_the_repr_shows_the_directions_by_name():
    assert "minimize={'cost': True, 'accuracy': False}" in repr(run())


def test_values_by_name_refuses_a_failed_entry():
    result = run()
    with pytest.raises(ValueError, match="did not fail"):
        result.values_by_name({"t": 0, "values": None, "failed": True})


def test_of_history_takes_the_names_from_a_mapping_and_checks_given_ones():
    history = [{"t": 0, "x": np.zeros(2), "values": [1.0, 2.0], "failed": False}]
    assert ParetoResult.of_history(history, NAMED, None).objective_names == ("cost", "accuracy")
    with pytest.raises(ValueError, match="objective_names names 3 objectives, minimize gives 2"):
        ParetoResult(history, history, (True, False), None, objective_names=("a", "b", "c"))


def test_the_env_reads_a_mapping_in_the_order_of_its_names():
    env = BlackBoxEnv(objective=cost_and_accuracy, bounds=BOX, minimize=NAMED, budget=2)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(np.array([0.5, 0.5]))
    assert env.objective_names == ("cost", "accuracy") and env.named_objectives
    assert info["values"] == expected([0.5, 0.5])
    np.testing.assert_array_equal(reward, [-0.5, 0.5])
    with pytest.raises(ObjectiveReturnError, match="none for 'cost'"):
        objective_values({"accuracy": 1.0}, [0.5], 2, ("cost", "accuracy"))


def test_the_run_records_the_names_and_a_run_of_a_list_records_none(tmp_path):
    from npbandit.storage import list_runs

    db = str(tmp_path / "runs.db")
    run(db=db)
    run(lambda x: expected(x), minimize=[True, False], db=db)
    named, listed = list_runs(db)
    assert named.env_params["objective_names"] == ["cost", "accuracy"]
    assert named.env_params["minimize"] == [True, False]
    assert "objective_names" not in listed.env_params


def test_a_warm_start_from_a_named_result_checks_the_names_naming_both_lists():
    first = run()
    with pytest.raises(ValueError, match=r"initial: the earlier result's objective_names are \['cost', 'accuracy'\], "
                                         r"this one's \['accuracy', 'cost'\]"):
        run(lambda x: expected(x)[::-1], minimize={"accuracy": False, "cost": True}, initial=first)
    with pytest.raises(ValueError, match=r"objective_names are \['cost', 'accuracy'\], this one's \['f0', 'f1'\]"):
        run(lambda x: expected(x), minimize=[True, False], initial=first)
    again = run(initial=first, budget=2)
    assert len(again.history) == 2
    X = np.array([np.asarray(x) for x in first.front_x])
    arrays = run(initial=(X, first.front_values), budget=2)  # arrays stay positional: not checked
    assert len(arrays.history) == 2


def test_continuing_a_run_by_id_checks_the_names(tmp_path):
    db = str(tmp_path / "runs.db")
    named = run(db=db)
    listed = run(lambda x: expected(x), minimize=[True, False], db=db)
    with pytest.raises(ValueError, match=rf"initial={named.run_id}: that run's objective_names are \['cost', "
                                         r"'accuracy'\], this one's \['accuracy', 'cost'\]"):
        run(lambda x: expected(x)[::-1], minimize={"accuracy": False, "cost": True}, initial=named.run_id, db=db)
    with pytest.raises(ValueError, match=rf"initial={listed.run_id}: that run's objective_names are \['f0', 'f1'\], "
                                         r"this one's \['cost', 'accuracy'\]"):
        run(initial=listed.run_id, db=db)
    more = run(initial=named.run_id, db=db, budget=2)
    assert len(more.history) == 2


def test_an_error_ending_a_named_run_carries_its_history():
    with pytest.raises(ObjectiveError) as caught:
        run(lambda x: {"cost": 1.0})
    assert caught.value.history and caught.value.history[-1]["failed"]


def test_a_warm_start_s_pairs_may_give_their_values_by_name_in_any_order():
    from npbandit.warm_start import initial_points

    by_name = [([0.2, 0.2], {"accuracy": 0.9, "cost": 0.3}), ([0.4, 0.1], {"cost": 0.5, "accuracy": 0.7})]
    listed = [([0.2, 0.2], [0.3, 0.9]), ([0.4, 0.1], [0.5, 0.7])]
    box = np.array(BOX)
    read = initial_points(by_name, box, None, (True, False), names=("cost", "accuracy"))
    np.testing.assert_array_equal([reward for _, reward, _, _ in read], [[-0.3, 0.9], [-0.5, 0.7]])
    same = initial_points(listed, box, None, (True, False), names=("cost", "accuracy"))
    np.testing.assert_array_equal([reward for _, reward, _, _ in same], [[-0.3, 0.9], [-0.5, 0.7]])
    assert len(run(initial=by_name, budget=2).history) == 2
    assert len(run(initial=listed, budget=2).history) == 2


@pytest.mark.parametrize(("values", "match"), [
    ({"cost": 0.3}, r"initial\[1\]: the values must hold a value for each objective named in minimize \('cost', "
                    r"'accuracy'\); they hold none for 'accuracy'"),
    ({"cost": 0.3, "accuracy": 0.9, "latency": 2.0}, r"initial\[1\]: .*they hold 'latency', which names no objective"),
])
def test_a_warm_start_s_values_by_name_need_exactly_the_names(values, match):
    with pytest.raises(ValueError, match=match):
        run(initial=[([0.1, 0.1], [0.2, 0.8]), ([0.2, 0.2], values)], budget=2)
    with pytest.raises(ValueError, match=r"initial\[0\]: the values must be 2 real numbers .* name the objectives"):
        run(lambda x: expected(x), minimize=[True, False], initial=[([0.2, 0.2], {"cost": 0.3, "accuracy": 0.9})])


def test_the_hypervolume_takes_a_reference_point_by_name():
    # cost minimised, accuracy maximised: (1, -3), (2, -2), (3, -1) up to (4, -4) dominate 3 + 2 + 1
    history = [{"t": t, "x": np.zeros(2), "values": v, "failed": False}
               for t, v in enumerate([[1.0, -3.0], [2.0, -2.0], [3.0, -1.0]])]
    result = ParetoResult.of_history(history, NAMED, None)
    by_name = result.hypervolume({"accuracy": -4.0, "cost": 4.0})
    assert by_name == result.hypervolume([4.0, -4.0]) and by_name == pytest.approx(6.0, rel=1e-12)
    for wrong in ({"cost": 4.0}, {"cost": 4.0, "accuracy": -4.0, "latency": 1.0}, {"cost": 4.0, "acuracy": -4.0}):
        with pytest.raises(ValueError, match=r"reference_point as a mapping needs exactly the objective names "
                                             r"\('cost', 'accuracy'\)"):
            result.hypervolume(wrong)
    with pytest.raises(ValueError, match=r"reference_point must be 2 finite numbers .*got \{'cost': 4.0, "):
        result.hypervolume({"cost": 4.0, "accuracy": float("nan")})
