"""optimize(..., minimize=[...]): several objectives end to end -- the front, the directions,
what is refused, failures, constraints, wide and mixed spaces, batches -- and the pieces it
runs on (BlackBoxEnv's vector reward, ParetoBOPolicy, ParetoResult)."""

import concurrent.futures as cf
import warnings

import numpy as np
import pytest
import torch
from helpers import tiny_checkpoint

from npbandit import ParetoResult, optimize
from npbandit.envs import BlackBoxEnv
from npbandit.envs.outcomes import objective_values
from npbandit.exceptions import ObjectiveError, ObjectiveReturnError
from npbandit.policies import ParetoBOPolicy
from npbandit.policies.pareto import ParetoObservations
from npbandit.space import Choice, Float, Int

BOX = [[0.0, 0.0], [1.0, 1.0]]


def near_far(x):
    """Two objectives in conflict: the distance to the origin and to (1, 1), squared."""
    x = np.asarray(x, dtype=np.float64)
    return float((x**2).sum()), float(((x - 1) ** 2).sum())


def non_dominated(values, minimize):
    """Brute force: indices of the rows no other row beats (as good in all, better in one)."""
    signs = np.where(minimize, -1.0, 1.0)
    v = np.asarray(values) * signs
    return [i for i in range(len(v)) if not any((v[j] >= v[i]).all() and (v[j] > v[i]).any() for j in range(len(v)))]


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    return str(tiny_checkpoint(tmp_path_factory.mktemp("tiny")))


@pytest.mark.parametrize("minimize", [(True, True), (True, False), (False, True)])
def test_the_front_is_every_non_dominated_evaluation_in_the_directions_given(minimize):
    result = optimize(near_far, BOX, surrogate="random", budget=12, seed=1, db=None, progress=False,
                      minimize=list(minimize))
    assert isinstance(result, ParetoResult) and result.minimize == minimize
    values = [h["values"] for h in result.history]
    assert all(v == list(near_far(h["x"])) for v, h in zip(values, result.history))
    expected = non_dominated(values, minimize)
    assert [h["t"] for h in result.front] == [result.history[i]["t"] for i in expected]
    np.testing.assert_array_equal(result.front_values, np.array(values)[expected])
    assert all(np.array_equal(x, result.history[i]["x"]) for x, i in zip(result.front_x, expected))
    # a list of points as x is (here arrays [d]), as the guide says: np.stack makes the array [p, d]
    assert isinstance(result.front_x, list) and np.stack(result.front_x).shape == (len(expected), 2)


def test_an_np_search_of_two_objectives_runs_and_repeats_with_its_seed(card):
    first = optimize(near_far, BOX, surrogate=card, budget=9, seed=3, db=None, progress=False, minimize=[True, True])
    again = optimize(near_far, BOX, surrogate=card, budget=9, seed=3, db=None, progress=False, minimize=[True, True])
    points = np.array([h["x"] for h in first.history])
    np.testing.assert_array_equal(points, np.array([h["x"] for h in again.history]))
    assert len({p.tobytes() for p in points}) == len(points)  # the repeat check holds
    assert len(first.history) == 9 and not any(h["failed"] for h in first.history)
    assert first.front  # a non-empty front of evaluated points


def test_a_gp_search_of_two_objectives_runs():
    result = optimize(near_far, BOX, surrogate="gp", budget=7, n_init=5, seed=0, db=None, progress=False,
                      minimize=[True, False])
    assert len(result.history) == 7 and result.front


def test_a_pareto_result_has_no_single_best_and_says_where_the_front_is():
    result = optimize(near_far, BOX, surrogate="random", budget=3, db=None, progress=False, minimize=[True, True])
    for name in ("best_x", "best_value", "recommended_x"):
        with pytest.raises(AttributeError, match=f"has no {name}: several objectives have a front"):
            getattr(result, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        result.nothing  # noqa: B018
    assert "front=<" in repr(result) and "history=<3 evaluations, 0 failed>" in repr(result)


def test_the_hypervolume_of_a_known_front():
    # minimised (1, 3), (2, 2), (3, 1) up to (4, 4): three unit-high strips of widths 3, 2, 1
    history = [{"t": t, "x": np.zeros(1), "values": v, "failed": False} for t, v in
               enumerate([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0], [3.5, 3.5]])]
    result = ParetoResult.of_history(history, (True, True), None)
    assert [h["t"] for h in result.front] == [0, 1, 2]
    assert result.hypervolume([4.0, 4.0]) == pytest.approx(6.0, rel=1e-12)
    # the second maximised: the same volume with its values and reference mirrored
    mirrored = [{**h, "values": [h["values"][0], -h["values"][1]]} for h in history]
    assert ParetoResult.of_history(mirrored, (True, False), None).hypervolume([4.0, -4.0]) == pytest.approx(6.0)
    assert result.hypervolume([0.5, 0.5]) == 0.0  # no point dominates it
    with pytest.raises(ValueError, match="reference_point must be 2 finite numbers"):
        result.hypervolume([4.0])
    for wrong in (["4", "4"], [4.0, object()], [True, 4.0]):  # not real numbers: refused naming the argument
        with pytest.raises(ValueError, match="reference_point must be 2 finite numbers"):
            result.hypervolume(wrong)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"acquisition": "ucb"}, "acquisition='ucb' is for a search of one objective"),
    ({"trust_region": True}, "trust_region=True is for a search of one objective"),
    ({"output_warp": "yeo-johnson"}, "output_warp='yeo-johnson' is for a search of one objective"),
    ({"liar": "worst"}, "liar='worst' is for a search of one objective"),
    ({"optimal_value": 0.0}, "optimal_value=0.0 is for a search of one objective"),
])
def test_settings_of_one_objective_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        optimize(near_far, BOX, budget=3, db=None, progress=False, minimize=[True, True], **kwargs)


@pytest.mark.parametrize(("minimize", "error", "match"), [
    ([True], ValueError, "needs at least two"),
    ([True, 1], TypeError, r"minimize\[1\] must be a bool"),
    ("min", TypeError, "minimize must be a bool, or a sequence of bools"),
    (None, TypeError, "minimize must be a bool"),
])
def test_directions_are_checked(minimize, error, match):
    with pytest.raises(error, match=match):
        optimize(near_far, BOX, budget=3, db=None, progress=False, minimize=minimize)


def test_trust_region_false_is_what_several_objectives_do_anyway():
    result = optimize(near_far, BOX, surrogate="random", budget=3, db=None, progress=False, minimize=[True, True],
                      trust_region=False)
    assert len(result.history) == 3


@pytest.mark.parametrize("returned", [1.0, (1.0, 2.0, 3.0), ("a", 1.0), (True, 1.0), [[1.0, 2.0]], "12"])
def test_a_return_of_another_shape_is_refused_naming_what_came_back(returned):
    with pytest.raises(ObjectiveReturnError, match="objective must return 2 real numbers"):
        objective_values(returned, [0.5], 2)


def test_values_of_every_numeric_form_are_read():
    for given in ((1, 2.5), [np.float32(1.0), np.int64(2)], np.array([1.0, 2.5]), torch.tensor([1.0, 2.5])):
        assert objective_values(given, [0.5], 2).tolist() == [float(v) for v in np.asarray(given, dtype=float)]


def test_a_sequence_of_zero_dimensional_tensors_or_arrays_is_read_as_the_values():
    # an objective of point_type="torch" naturally returns (x[0], x[1]): a tuple of 0-d tensors
    for given in ((torch.tensor(1.0), torch.tensor(2.5, dtype=torch.float64)), [np.array(1.0), np.array(2.5)],
                  (torch.tensor(1.0, requires_grad=True), 2.5)):
        assert objective_values(given, [0.5], 2).tolist() == [1.0, 2.5]
    result = optimize(lambda x: (x[0], 1 - x[1]), BOX, surrogate="random", budget=3, db=None, progress=False,
                      minimize=[True, True], point_type="torch")
    assert [h["values"] for h in result.history] == [[float(h["x"][0]), 1 - float(h["x"][1])]
                                                     for h in result.history]
    for wrong in ((torch.tensor([1.0]), 2.0), (torch.tensor(True), 2.0), (np.array(1 + 2j), 2.0)):
        with pytest.raises(ObjectiveReturnError, match="objective must return 2 real numbers"):
            objective_values(wrong, [0.5], 2)


def test_an_evaluation_with_a_nan_fails_and_is_seen_at_the_worst_values(card):
    def sometimes_nan(x):
        a, b = near_far(x)
        return (float("nan"), b) if x[0] > 0.6 else (a, b)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = optimize(sometimes_nan, BOX, surrogate=card, budget=10, seed=0, db=None, progress=False,
                          minimize=[True, True], on_error="skip")
    failed = [h for h in result.history if h["failed"]]
    assert failed and all(h["error_kind"] == "nonfinite" and h["values"] is None for h in failed)
    assert all(not h["failed"] for h in result.front)
    with pytest.raises(ObjectiveError, match=r"objective returned \[nan, .*\] at x=.*\(NaN or infinite\)"):
        optimize(sometimes_nan, BOX, surrogate="random", budget=10, seed=0, db=None, progress=False,
                 minimize=[True, True])


def test_failures_are_seen_at_each_outputs_worst_value():
    seen = ParetoObservations(2)
    seen.add(np.array([0.1]), np.array([1.0, -2.0]), np.array([0.5]))
    seen.add(np.array([0.2]), np.array([-3.0, 4.0]), np.array([-1.0]))
    seen.failed.append(np.array([0.9]))
    X, Y = seen.data()
    assert X[:, 0].tolist() == [0.1, 0.2, 0.9]
    # the objectives' worst is their smallest reward, a constraint's its largest value
    assert Y.tolist() == [[1.0, -2.0, 0.5], [-3.0, 4.0, -1.0], [-3.0, -2.0, 0.5]]


def test_constraints_keep_infeasible_points_off_the_front(card):
    def upper(x):
        return [float(0.5 - x[1])]  # feasible where x1 >= 0.5

    result = optimize(near_far, BOX, surrogate=card, budget=10, seed=0, db=None, progress=False,
                      minimize=[True, True], constraints=upper)
    assert all(h["feasible"] == (h["x"][1] >= 0.5) for h in result.history)
    feasible = [h for h in result.history if h["feasible"]]
    assert result.feasible and [h["t"] for h in result.front] == [
        feasible[i]["t"] for i in non_dominated([h["values"] for h in feasible], (True, True))]


def test_no_feasible_evaluation_leaves_an_empty_front_with_a_warning():
    with pytest.warns(RuntimeWarning, match="no evaluation of the 4 satisfied the constraints; the front is empty"):
        result = optimize(near_far, BOX, surrogate="random", budget=4, db=None, progress=False,
                          minimize=[True, True], constraints=lambda x: [1.0])
    assert not result.feasible and result.front == [] and result.front_values.shape == (0, 2)


def test_a_space_wider_than_the_checkpoint_is_read_on_its_relevant_columns(card):
    def wide(x):
        return float((x[:2] ** 2).sum()), float(((x[:2] - 1) ** 2).sum())

    policy = ParetoBOPolicy(8, 2, model=card)
    assert policy.width == 6 and policy.n_init == 13 and policy.params()["columns"] == "relevant"
    result = optimize(wide, [[0.0] * 8, [1.0] * 8], surrogate=card, budget=15, seed=0, db=None, progress=False,
                      minimize=[True, True])
    assert len(result.history) == 15 and result.front


def test_a_mixed_space_is_searched_on_its_values(card):
    space = {"lr": Float(1e-3, 1.0, log=True), "layers": Int(1, 4), "act": Choice(["relu", "tanh"])}

    def f(p):
        return float(np.log10(p["lr"]) ** 2 + p["layers"]), float(p["layers"] * (p["act"] == "relu") + p["lr"])

    result = optimize(f, space=space, surrogate=card, budget=10, seed=0, db=None, progress=False,
                      minimize=[True, True])
    assert all(isinstance(h["x"]["layers"], int) and h["x"]["act"] in ("relu", "tanh") for h in result.history)
    assert all(h["values"] == list(f(h["x"])) for h in result.history)
    assert isinstance(result.front_x, list) and all(isinstance(x, dict) for x in result.front_x)  # a space's dicts


def test_a_long_run_shows_the_np_at_most_its_context_limit():
    shapes = []

    def factory(X, Y):
        shapes.append(tuple(Y.shape))
        from npbandit.policies.gp import fit_single_task_gp

        return fit_single_task_gp(X, Y)

    policy = ParetoBOPolicy(2, 2, model=factory, n_init=4, max_context=5)
    optimize_with = BlackBoxEnv(objective=near_far, bounds=BOX, minimize=(True, True), budget=8)
    from npbandit.loop import run_episode

    run_episode(optimize_with, policy, seed=0)
    assert shapes and all(n <= 5 and m == 2 for n, m in shapes) and shapes[-1][0] == 5


def test_a_batch_in_flight_is_believed_and_never_proposed_twice(card):
    with cf.ThreadPoolExecutor(2) as pool:
        result = optimize(near_far, BOX, surrogate=card, budget=10, seed=0, db=None, progress=False,
                          minimize=[True, True], batch_size=2, executor=pool)
    points = [np.asarray(h["x"]).tobytes() for h in result.history]
    assert len(points) == 10 and len(set(points)) == 10


def test_callbacks_see_each_evaluations_values():
    seen = []
    optimize(near_far, BOX, surrogate="random", budget=4, db=None, progress=False, minimize=[True, True],
             callbacks=lambda history: seen.append([h["values"] for h in history]))
    assert [len(s) for s in seen] == [1, 2, 3, 4] and all(v is not None for v in seen[-1])


def test_a_callback_that_changes_what_it_sees_leaves_the_result_as_evaluated():
    # the callbacks' history is fresh down to each entry's values, constraints and point
    def meddle(history):
        history[-1]["values"][0] = -1e9
        history[-1]["constraints"][0] = -1e9
        history[-1]["x"][0] = 7.0

    result = optimize(near_far, BOX, surrogate="random", budget=3, db=None, progress=False, minimize=[True, True],
                      constraints=lambda x: [x[0] - 0.5], callbacks=meddle)
    for h in result.history:
        assert h["values"] == list(near_far(h["x"])) and h["constraints"] == [h["x"][0] - 0.5]
        assert 0 <= h["x"][0] <= 1
    assert -1e9 not in result.front_values


def test_the_env_returns_a_reward_per_objective_each_maximised():
    env = BlackBoxEnv(objective=near_far, bounds=BOX, minimize=[True, False], budget=2)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4,) and env.observation_space.shape == (4,) and env.objectives == 2
    obs, reward, _, _, info = env.step(np.array([0.25, 0.5]))
    a, b = near_far([0.25, 0.5])
    assert reward.tolist() == [-a, b] and info["values"] == [a, b] and "value" not in info
    assert obs[2:].tolist() == [-a, b] and "best_value" not in info
    with pytest.raises(ValueError, match="a named function .* has one objective"):
        BlackBoxEnv(function="branin", minimize=[True, True])
    with pytest.raises(ValueError, match="optimal_value is one objective's optimum"):
        BlackBoxEnv(objective=near_far, bounds=BOX, minimize=[True, True], optimal_value=0.0)


def test_the_policy_checks_what_it_observes():
    policy = ParetoBOPolicy(2, 2, model="gp")
    policy.reset(seed=0)
    with pytest.raises(ValueError, match=r"one finite reward per objective, an array of shape \(2,\)"):
        policy.observe(None, np.array([0.1, 0.2]), 1.0, {})
    with pytest.raises(ValueError, match="objectives must be an int >= 2"):
        ParetoBOPolicy(2, 1)
    constrained = ParetoBOPolicy(2, 2, model="gp", constrained=True)
    constrained.reset(seed=0)
    with pytest.raises(ValueError, match=r"observes each point's constraint values in info\['constraints'\]"):
        constrained.observe(None, np.array([0.1, 0.2]), np.array([1.0, 2.0]), {})
    assert policy.recommend() is None


def test_a_search_of_several_objectives_starts_from_earlier_values_in_each_form(card):
    first = optimize(near_far, BOX, surrogate="random", budget=5, seed=0, db=None, progress=False,
                     minimize=[True, False])
    pairs = [(h["x"], h["values"]) for h in first.history]
    X = np.array([h["x"] for h in first.history])
    Y = np.array([h["values"] for h in first.history])
    for initial in (pairs, first.history, first, (X, Y)):
        again = optimize(near_far, BOX, surrogate=card, budget=3, seed=0, db=None, progress=False,
                         minimize=[True, False], initial=initial)
        assert len(again.history) == 3  # the given points spend no budget, and are not evaluated again
        assert not {np.asarray(h["x"]).tobytes() for h in again.history} & {x.tobytes() for x in X}


@pytest.mark.parametrize(("initial", "match"), [
    ([([0.5, 0.5], 1.0)], r"initial\[0\]: the values must be 2 real numbers"),
    ([([0.5, 0.5], [1.0, float("nan")])], r"initial\[0\]: the values must be finite"),
    ([{"x": np.array([0.5, 0.5]), "value": 1.0, "best_value": 1.0, "failed": False}],
     r"initial\[0\]: the entry holds the value of one objective, this run has 2"),
    ((np.zeros((3, 2)), np.zeros(3)), r"Y must have shape \[3, 2\]"),
])
def test_earlier_values_of_another_kind_are_refused(initial, match):
    with pytest.raises(ValueError, match=match):
        optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False, minimize=[True, True],
                 initial=initial)


def test_an_earlier_result_of_other_directions_is_refused_naming_both():
    # its history says nothing of the directions, but the result does: minimising what it maximised is refused
    first = optimize(near_far, BOX, surrogate="random", budget=3, db=None, progress=False, minimize=[True, False])
    with pytest.raises(ValueError, match=r"initial: the earlier result's minimize is \[True, False\], this one's "
                                         r"\[True, True\] \(a run continues only a run of the same problem\)"):
        optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False, minimize=[True, True],
                 initial=first)
    again = optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False, minimize=[True, False],
                     initial=first)
    assert len(again.history) == 2
    pairs = [(h["x"], h["values"]) for h in first.history]  # on purpose, as pairs: taken as they are
    optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False, minimize=[True, True],
             initial=pairs)


def test_the_front_is_this_calls_and_the_guides_recipe_joins_an_earlier_one():
    # as docs/guides/optimize.md says: a warm start's points are not on the front, nor take anything off it
    point = np.array([0.5, 0.5])
    result = optimize(near_far, BOX, surrogate="random", budget=4, seed=3, db=None, progress=False,
                      minimize=[True, True], initial=[(point, [-1.0, -1.0])])  # better than anything evaluated
    assert result.front and all(h in result.history for h in result.front)
    earlier = [{"t": 0, "x": point, "values": [-1.0, -1.0], "failed": False}]
    assert ParetoResult.of_history(earlier + result.history, result.minimize, None).front == earlier


def test_a_history_of_other_constraints_is_refused_with_the_forms_of_several_objectives():
    # the way out the message names must be one this search takes: values, not a value
    constrained = optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False,
                           minimize=[True, True], constraints=lambda x: [x[0] - 0.5])
    with pytest.raises(ValueError, match=r"on purpose, give them as \(x, values\) pairs, each in its objective's "
                                         r"units$"):
        optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False, minimize=[True, True],
                 initial=constrained.history)
    free = optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False, minimize=[True, True])
    with pytest.raises(ValueError, match=r"as \(x, values, constraints\) triples$"):
        optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False, minimize=[True, True],
                 initial=free.history, constraints=lambda x: [x[0] - 0.5])


def test_of_history_checks_the_directions_against_the_values():
    history = [{"t": 0, "x": np.zeros(1), "values": [1.0, 2.0, 3.0], "failed": False},
               {"t": 1, "x": np.zeros(1), "values": None, "failed": True}]
    with pytest.raises(ValueError, match=r"history\[0\] holds 3 values, minimize gives 2 directions"):
        ParetoResult.of_history(history, (True, True), None)
    with pytest.raises(TypeError, match="minimize must be a bool, or a sequence of bools"):
        ParetoResult.of_history(history, "min", None)
    with pytest.raises(ValueError, match="needs at least two"):
        ParetoResult.of_history(history, [True], None)
    assert ParetoResult.of_history(history, [True, False, True], None).minimize == (True, False, True)


@pytest.mark.parametrize("minimize", [True, [True, True]])
def test_arrays_given_with_constraints_are_refused_saying_they_carry_none(minimize):
    X = np.array([[0.2, 0.3], [0.6, 0.1]])
    Y = np.array([1.0, 2.0]) if minimize is True else np.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match=r"initial=\(X, Y\) arrays carry no constraint values; with constraints "
                                         r"give \(x, values?, constraints\) triples"):
        optimize(lambda x: near_far(x) if minimize is not True else 1.0, BOX, surrogate="random", budget=2, db=None,
                 progress=False, minimize=minimize, initial=(X, Y), constraints=lambda x: [x[0] - 0.5])


def test_a_search_of_one_objective_refuses_a_history_of_several():
    first = optimize(near_far, BOX, surrogate="random", budget=2, db=None, progress=False, minimize=[True, True])
    with pytest.raises(ValueError, match=r"initial\[0\]: the entry holds values .* of several objectives, this run "
                                         r"has one"):
        optimize(lambda x: 1.0, BOX, surrogate="random", budget=2, db=None, progress=False, initial=first.history)


def test_a_run_of_several_objectives_is_recorded_and_continued_from_the_database(tmp_path, card):
    from npbandit.storage import list_runs, run_steps

    db = str(tmp_path / "runs.db")
    first = optimize(near_far, BOX, surrogate="random", budget=4, seed=0, db=db, progress=False,
                     minimize=[True, False])
    (run,) = list_runs(db)
    assert run.env_params["minimize"] == [True, False] and run.env_params["objectives"] == 2
    steps = run_steps(db, first.run_id)
    assert [s["values"] for s in steps] == [h["values"] for h in first.history]
    assert all(s["value"] is None and s["reward"] is None for s in steps)
    more = optimize(near_far, BOX, surrogate=card, budget=3, seed=0, db=db, progress=False, minimize=[True, False],
                    initial=first.run_id)
    assert len(more.history) == 3 and list_runs(db)[-1].policy_params["initial"] == 4
    assert not {np.asarray(h["x"]).tobytes() for h in more.history} & {np.asarray(h["x"]).tobytes()
                                                                      for h in first.history}
    with pytest.raises(ValueError, match="initial=1: that run's minimize is \\[True, False\\], this one's "
                                         "\\[True, True\\]"):
        optimize(near_far, BOX, surrogate="random", budget=2, db=db, progress=False, minimize=[True, True],
                 initial=first.run_id)


def test_directions_given_as_a_numpy_array_of_bools_are_read_as_its_list():
    from npbandit.envs.directions import directions

    assert directions(np.array([True, False])) == ((True, False), 2)
    with pytest.raises(TypeError, match=r"minimize\[0\] must be a bool"):
        directions(np.array([1, 0]))
