"""Gymnasium environments: the Env contract of every registered env, the wheel protocol,
black-box faults. Where a black-box objective runs is tested in test_evaluation.py."""

import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.envs import BlackBoxEnv, ObjectiveError, WheelBanditEnv, available_functions, make_test_function
from npbandit.space import Choice, Float, Int, SearchSpace

# every environment the package registers, with the arguments a contract check builds it with
REGISTERED = {
    "npbandit/WheelBandit-v0": [{"horizon": 30}, {"delta": 0.2, "horizon": 7, "small_reward_std": 0.0}],
    "npbandit/LinearBandit-v0": [{"horizon": 20}, {"context_dim": 7, "n_arms": 2, "horizon": 5, "noise_std": 0.0}],
    # a bundled data set (scikit-learn's, read offline) and one of the user's, labels not numbered from 0
    "npbandit/ClassificationBandit-v0": [{"dataset": "iris", "horizon": 20},
                                         {"X": [[0.0, 1.0], [2.0, 1.0], [4.0, 1.0], [1.0, 1.0]],
                                          "y": ["b", "a", "c", "a"], "horizon": 12}],
    "npbandit/BlackBox-v0": [{"function": "branin", "budget": 10},
                             {"function": "hartmann", "budget": 6, "noise_std": 0.1},
                             {"objective": lambda x: float(np.sin(x).sum()), "bounds": [[-2.0], [3.0]], "budget": 5,
                              "minimize": False},
                             {"objective": lambda p: p["n"] + len(p["act"]) * p["lr"], "budget": 6,
                              "space": {"lr": Float(1e-3, 1.0, log=True), "n": Int(1, 3),
                                        "act": Choice(["relu", "tanh", "gelu"])}}],
}
CASES = [(env_id, kwargs) for env_id, many in REGISTERED.items() for kwargs in many]
CASE_IDS = [f"{env_id.split('/')[1]}-{i}" for env_id, many in REGISTERED.items() for i in range(len(many))]
# Gymnasium's checker calls any unbounded Box "probably" wrong; BlackBox's observation holds the
# reward, which has no bounds, so these two are the one expected complaint
UNBOUNDED = ("minimum value is -infinity", "maximum value is infinity")


@pytest.fixture
def strict_gymnasium():
    """Every warning Gymnasium (its checkers) or npbandit raises is an error inside the block,
    but the documented unbounded reward coordinate."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", module="gymnasium")
        warnings.filterwarnings("error", module="npbandit")
        for text in UNBOUNDED:
            warnings.filterwarnings("ignore", message=f".*{text}", category=UserWarning)
        yield


def test_every_registered_env_is_covered_by_the_contract_tests():
    ours = {env_id for env_id in gym.registry if env_id.startswith("npbandit/")}
    assert ours == set(REGISTERED)
    for env_id in ours:
        spec = gym.spec(env_id)
        assert not spec.disable_env_checker  # gym.make wraps ours in Gymnasium's passive checker


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=CASE_IDS)
def test_every_registered_env_passes_gymnasiums_checker(env_id, kwargs, strict_gymnasium):
    env = gym.make(env_id, **kwargs)
    check_env(env.unwrapped, skip_render_check=True)
    assert env.unwrapped.metadata["render_modes"] == [] and env.unwrapped.render_mode is None


def _episode(env, seed, actions=None):
    """One whole episode through ``env``: (reset obs, [(obs, reward, terminated, truncated, info)])."""
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    steps, truncated, t = [], False, 0
    while not truncated:
        action = env.action_space.sample() if actions is None else actions[t]
        steps.append(env.step(action))
        truncated, t = steps[-1][3], t + 1
    return obs, steps


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=CASE_IDS)
def test_an_episode_keeps_the_documented_spaces_types_and_length(env_id, kwargs, strict_gymnasium):
    env = gym.make(env_id, **kwargs)  # through Gymnasium's passive checker and order enforcing
    base = env.unwrapped
    if env_id == "npbandit/WheelBandit-v0":
        assert env.observation_space == gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        assert env.action_space == gym.spaces.Discrete(5)
        length = base.horizon
    elif env_id == "npbandit/LinearBandit-v0":
        assert env.observation_space == gym.spaces.Box(-1.0, 1.0, shape=(base.context_dim,), dtype=np.float32)
        assert env.action_space == gym.spaces.Discrete(base.n_arms)
        length = base.horizon
    elif env_id == "npbandit/ClassificationBandit-v0":
        low, high = base.features.min(0), base.features.max(0)
        constant = low == high  # a constant feature's interval is [-1, 1]
        assert env.observation_space == gym.spaces.Box(np.where(constant, -1.0, low).astype(np.float32),
                                                       np.where(constant, 1.0, high).astype(np.float32),
                                                       dtype=np.float32)
        assert env.action_space == gym.spaces.Discrete(len(base.classes))
        length = base.horizon
    else:
        d = base.dim
        assert env.action_space == gym.spaces.Box(0.0, 1.0, shape=(d,), dtype=np.float64)
        low, high = np.r_[np.zeros(d), -np.inf], np.r_[np.ones(d), np.inf]
        assert env.observation_space == gym.spaces.Box(low, high, dtype=np.float64)
        length = base.budget
    first, steps = _episode(env, seed=0)
    assert len(steps) == length
    for obs in [first] + [s[0] for s in steps]:
        assert obs in env.observation_space and obs.dtype == env.observation_space.dtype
    for t, (_, reward, terminated, truncated, info) in enumerate(steps):
        assert type(reward) is float and np.isfinite(reward)
        assert terminated is False and truncated is (t == length - 1)  # plain bools, not numpy's
        assert info["t"] == t
    with pytest.raises(RuntimeError, match="reset"):
        base.step(env.action_space.sample())  # the episode is over


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=CASE_IDS)
def test_reset_with_a_seed_replays_the_episode_and_without_one_continues_the_stream(env_id, kwargs):
    env = gym.make(env_id, **kwargs).unwrapped
    length = env.budget if env_id == "npbandit/BlackBox-v0" else env.horizon
    env.action_space.seed(1)
    actions = [env.action_space.sample() for _ in range(length)]

    def rewards(seed):
        return [s[1] for s in _episode(env, seed, actions)[1]]

    def observations(seed):
        first, steps = _episode(env, seed, actions)
        return np.stack([first] + [s[0] for s in steps])

    np.testing.assert_array_equal(observations(3), observations(3))
    assert rewards(3) == rewards(3)
    drawn = env_id != "npbandit/BlackBox-v0" or env.noise_std > 0  # a bandit draws its run, noise or not
    if drawn:  # the seed decides the draws: another seed, other draws
        assert rewards(3) != rewards(4)
        # reset() without a seed keeps drawing from the generator the last seed started
        seeded = rewards(3)
        unseeded = [s[1] for s in _unseeded_episode(env, actions)]
        assert unseeded != seeded
        assert rewards(3) == seeded and [s[1] for s in _unseeded_episode(env, actions)] == unseeded
    else:  # nothing random: every seed gives the same episode
        assert rewards(3) == rewards(4)


def _unseeded_episode(env, actions):
    env.reset()
    return [env.step(a) for a in actions]


def test_wheel_reset_is_deterministic_and_replays_the_same_table():
    env = WheelBanditEnv(delta=0.9, horizon=100)
    obs1, _ = env.reset(seed=3)
    table1 = env.rewards.copy()
    obs2, _ = env.reset(seed=3)
    assert np.array_equal(obs1, obs2) and np.array_equal(table1, env.rewards)
    env.reset(seed=4)
    assert not np.array_equal(table1, env.rewards)
    env.reset(seed=3, options={"delta": 0.5})
    assert env.delta == 0.5


def test_wheel_step_reports_regret_and_truncates():
    env = WheelBanditEnv(delta=0.5, horizon=5)
    obs, _ = env.reset(seed=0)
    total = 0.0
    for t in range(5):
        best = int(np.argmax(env.means[t]))
        _, reward, terminated, truncated, info = env.step(0)
        assert info["optimal_action"] == best
        assert info["regret"] == pytest.approx(env.rewards[t, best] - reward)
        assert info["expected_regret"] == pytest.approx(env.means[t, best] - env.means[t, 0])
        assert not terminated and truncated == (t == 4)
        total += info["regret"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(ValueError, match="action"):
        WheelBanditEnv(horizon=3).step(7)


def test_wheel_uniform_regret_matches_the_analytic_value():
    # docs/protocols.md §3: Uniform's expected regret per step is δ²·0.16 + (1 − δ²)·39.16
    env = WheelBanditEnv(delta=0.7, horizon=20000)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    regrets = [env.step(int(rng.integers(5)))[4]["expected_regret"] for _ in range(20000)]
    assert np.mean(regrets) == pytest.approx(0.49 * 0.16 + 0.51 * 39.16, rel=0.03)


def test_wheel_rejects_bad_parameters():
    with pytest.raises(ValueError, match="delta"):
        WheelBanditEnv(delta=1.5)
    with pytest.raises(ValueError, match="delta"):
        WheelBanditEnv(delta=True)
    assert WheelBanditEnv(delta=np.float32(0.5)).delta == 0.5
    with pytest.raises(ValueError, match="horizon"):
        WheelBanditEnv(horizon=0)
    with pytest.raises(ValueError, match="horizon"):
        WheelBanditEnv(horizon=True)
    for std in (float("nan"), -1.0, "0.1"):
        with pytest.raises(ValueError, match="small_reward_std"):
            WheelBanditEnv(small_reward_std=std)
    env = WheelBanditEnv(horizon=5)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)  # nothing drawn yet: the zero tables would pay 0 with no regret
    with pytest.raises(ValueError, match="detla"):
        env.reset(seed=0, options={"detla": 0.3})
    assert env.reset(seed=0, options={"delta": 0.3})[1]["delta"] == 0.3


@pytest.mark.parametrize("env_id", ["npbandit/WheelBandit-v0", "npbandit/LinearBandit-v0", "npbandit/BlackBox-v0",
                                    "npbandit/ClassificationBandit-v0"])
def test_render_mode_is_taken_and_only_none_accepted(env_id):
    kwargs = {"BlackBox": {"function": "branin"}, "Classification": {"dataset": "iris"}}.get(
        env_id.split("/")[1].removesuffix("Bandit-v0").removesuffix("-v0"), {})
    assert gym.make(env_id, **kwargs).unwrapped.render_mode is None
    with pytest.raises(ValueError, match="render_mode"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Gymnasium warns first that the mode is not in metadata
            gym.make(env_id, render_mode="human", **kwargs)


def test_blackbox_maps_actions_to_bounds_and_negates_for_minimisation():
    calls = []
    env = BlackBoxEnv(objective=lambda x: calls.append(x) or float(x.sum()), bounds=[[-1, 10], [1, 20]], budget=3)
    env.reset(seed=0)
    obs, reward, _, truncated, info = env.step(np.array([0.5, 0.0]))
    assert np.allclose(calls[0], [0.0, 10.0]) and reward == -10.0 and info["value"] == 10.0 and not truncated
    env.step(np.array([1.0, 1.0]))
    _, _, _, truncated, info = env.step(np.array([0.0, 0.0]))
    assert truncated and info["best_value"] == 9.0
    maximise = BlackBoxEnv(objective=lambda x: float(x.sum()), bounds=[[0], [1]], minimize=False)
    maximise.reset(seed=0)
    assert maximise.step(np.array([0.25]))[1] == 0.25


def test_blackbox_over_a_space_calls_the_objective_with_params_and_reports_them():
    space = SearchSpace({"lr": Float(1e-3, 1.0, log=True), "n": Int(1, 3), "act": Choice(["relu", "tanh", "gelu"])})
    calls = []
    env = BlackBoxEnv(objective=lambda p: calls.append(p) or p["n"] * p["lr"], space=space, budget=2)
    assert env.dim == space.dim == 5 and env.bounds is None and env.has_space
    assert env.action_space == gym.spaces.Box(0.0, 1.0, shape=(5,), dtype=np.float64)
    assert env.reset(seed=0)[1] == {"space": space.describe()}
    action = np.array([1.0, 0.9, 0.1, 0.7, 0.2])
    _, reward, _, _, info = env.step(action)
    assert calls == [{"lr": 1.0, "n": 3, "act": "tanh"}] == [info["x"]] == [info["params"]] == [env.point(action)]
    assert reward == -3.0 and type(info["x"]["n"]) is int
    with pytest.raises(TypeError, match="point"):
        env.to_bounds(action)
    failing = BlackBoxEnv(objective=lambda p: 1 / 0, space=space)
    failing.reset(seed=0)
    with pytest.raises(ObjectiveError, match=r"ZeroDivisionError.*at x=\{'lr'") as caught:
        failing.step(action)
    assert caught.value.x == {"lr": 1.0, "n": 3, "act": "tanh"}
    box = BlackBoxEnv(objective=lambda x: float(x.sum()), bounds=[[-1, 10], [1, 20]])
    assert box.space == SearchSpace.from_bounds([[-1, 10], [1, 20]]) and not box.has_space
    assert box.params([0.5, 0.25]) == {"x0": 0.0, "x1": 12.5}
    for kwargs, match in (({"objective": lambda p: 0.0, "space": space, "bounds": [[0], [1]]}, "space= goes with"),
                          ({"function": "branin", "space": space}, "space= goes with"),
                          ({"objective": lambda p: 0.0}, "bounds .* or space"),
                          ({"objective": lambda p: 0.0, "space": space, "dim": 3}, "5-dimensional space")):
        with pytest.raises(ValueError, match=match):
            BlackBoxEnv(**kwargs)


def test_blackbox_records_the_known_minimum_only_where_it_is_the_optimum():
    # the test function's minimum is the optimum of a minimisation over its own box, of nothing else
    assert BlackBoxEnv(function="branin").optimal_value == pytest.approx(0.397887, abs=1e-6)
    assert BlackBoxEnv(function="branin", minimize=False).optimal_value is None
    assert BlackBoxEnv(function="branin", bounds=[[5, 5], [6, 6]]).optimal_value is None
    assert BlackBoxEnv(function="branin", minimize=False, optimal_value=308.1).optimal_value == 308.1
    env = BlackBoxEnv(function="branin", budget=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(np.full((1, 2), 0.5))  # not a point of the action space


def test_blackbox_named_function_reports_simple_regret():
    env = gym.make("npbandit/BlackBox-v0", function="branin", budget=2).unwrapped
    env.reset(seed=0)
    info = env.step(np.array([0.5, 0.5]))[4]
    assert info["simple_regret"] == pytest.approx(info["value"] - 0.397887, abs=1e-4)


def test_blackbox_faults_raise_objective_error():
    env = BlackBoxEnv(objective=lambda x: float("nan"), bounds=[[0], [1]])
    env.reset(seed=0)
    with pytest.raises(ObjectiveError, match="nan"):
        env.step(np.array([0.5]))

    def broken(x):
        raise KeyError("sensor offline")

    env = BlackBoxEnv(objective=broken, bounds=[[0], [1]])
    env.reset(seed=0)
    with pytest.raises(ObjectiveError, match="sensor offline"):
        env.step(np.array([0.5]))


def test_step_evaluated_is_a_deprecated_alias_of_step_with_the_outcome_handed_over():
    """The old asynchronous door: the transition, the checks and the failures are step's, and it warns."""
    here, there = BlackBoxEnv(function="branin", budget=3), BlackBoxEnv(function="branin", budget=3)
    here.reset(seed=0), there.reset(seed=0)
    for a in ([0.2, 0.7], [0.9, 0.1]):
        a = np.array(a)
        out = there.objective(there.to_bounds(a))
        with pytest.warns(DeprecationWarning, match="step_evaluated is deprecated"):
            got = there.step_evaluated(a, True, out)
        for g, want in zip(got, here.step(a)):
            np.testing.assert_equal(g, want)
    assert there.evaluator is None  # put back
    with pytest.warns(DeprecationWarning), pytest.raises(ObjectiveError, match="sensor offline"):
        there.step_evaluated(np.array([0.5, 0.5]), False, KeyError("sensor offline"))
    assert there.t == 3  # a failed evaluation spends budget, as in step
    env = BlackBoxEnv(objective=lambda x: 0.0, bounds=[[0], [1]])
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ObjectiveError, match="returned nan"):
            env.step_evaluated(np.array([0.5]), True, float("nan"))
        with pytest.raises(TypeError, match="ok must be a bool"):
            env.step_evaluated(np.array([0.5]), 1, 0.0)
        with pytest.raises(TypeError, match="outcome must be the exception"):
            env.step_evaluated(np.array([0.5]), False, "failed")


@pytest.mark.parametrize("kwargs,error,match", [
    ({"objective": lambda x: 0.0, "bounds": [[1, 0], [0, 1]]}, ValueError, "lower bound"),
    ({"objective": lambda x: 0.0, "bounds": [[0, 0, 0]]}, ValueError, "2 x d"),
    ({"objective": 3, "bounds": [[0], [1]]}, TypeError, "callable"),
    ({"function": "not-a-function"}, ValueError, "function must be one of"),
    ({"objective": lambda x: 0.0}, ValueError, "bounds"),
    ({}, ValueError, "exactly one"),
    ({"function": "branin", "noise_std": float("nan")}, ValueError, "noise_std"),
    ({"function": "branin", "noise_std": float("inf")}, ValueError, "noise_std"),
    ({"function": "branin", "noise_std": "0.1"}, ValueError, "noise_std"),
    ({"function": "branin", "optimal_value": float("nan")}, ValueError, "optimal_value"),
    ({"function": "branin", "minimize": "no"}, TypeError, "minimize"),
    ({"function": "branin", "budget": True}, ValueError, "budget"),
    ({"function": "branin", "bounds": [[0, 0, 0], [1, 1, 1]]}, ValueError, "branin takes 2"),
    ({"objective": lambda x: 0.0, "bounds": [[0], [1]], "dim": 5}, ValueError, "dim=5"),
])
def test_blackbox_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        BlackBoxEnv(**kwargs)


@pytest.mark.parametrize("out,expected", [
    (1.5, 1.5), (2, 2.0), (np.float32(2.5), 2.5), (np.int64(3), 3.0), (np.array(4.0), 4.0),
    (np.array([5.0]), 5.0), (np.array([[6.0]]), 6.0), (torch.tensor([7.0]), 7.0),
    (torch.tensor(8.0, requires_grad=True), 8.0),
])
def test_blackbox_accepts_one_real_number_in_any_common_wrapping(out, expected):
    env = BlackBoxEnv(objective=lambda x: out, bounds=[[0], [1]])
    env.reset(seed=0)
    assert env.step(np.array([0.5]))[4]["value"] == expected


@pytest.mark.parametrize("out,match", [
    ("1.5", "return a float, got str"), (True, "got bool"), (np.bool_(False), "got bool"),
    (np.array([1.0, 2.0]), r"1-element array\), got an array of shape \(2,\)"),
    (torch.tensor([1.0, 2.0]), "tensor of shape"), (1 + 2j, "got complex"), (None, "got NoneType"),
    (np.array(["1.5"]), "got ndarray"),
])
def test_blackbox_rejects_anything_but_one_real_number(out, match):
    env = BlackBoxEnv(objective=lambda x: out, bounds=[[0], [1]])
    env.reset(seed=0)
    with pytest.raises(TypeError, match=match):  # a TypeError, not a failed evaluation: on_error="skip" cannot hide it
        env.step(np.array([0.5]))


def test_only_usable_test_functions_are_offered():
    offered = available_functions()
    assert {"branin", "hartmann", "ackley"} <= set(offered)
    # each reason says what runs such a problem instead: its constraints given as constraints=, its
    # integer inputs as a search space's Int parameters (both of which optimize takes)
    runs_it = {"integer": "integer / binary inputs.*search space with Int parameters",
               "constrained": r"constrained problem.*constraints=\.\.\."}
    for name, reason in [("labs", runs_it["integer"]), ("ackleymixed", runs_it["integer"]),
                         ("pressurevessel", runs_it["constrained"]), ("constrainedhartmann", runs_it["constrained"])]:
        assert name not in offered
        with pytest.raises(ValueError, match=f"{name}' is not offered: .*{reason}"):
            make_test_function(name)
        with pytest.raises(ValueError, match="not offered"):
            BlackBoxEnv(function=name)
    with pytest.raises(ValueError, match="did you mean 'branin'"):
        make_test_function("brannin")
    for name in offered:  # every offered problem evaluates at the centre of its box
        problem = make_test_function(name)
        centre = (problem.bounds[0] + problem.bounds[1]) / 2
        assert torch.isfinite(problem.evaluate_true(centre[None].double())).all(), name


def test_a_dim_for_a_function_of_fixed_dimension_says_so_and_names_those_that_take_one():
    from npbandit.envs.blackbox import functions_taking_dim

    takes = functions_taking_dim()
    assert {"ackley", "rosenbrock", "hartmann"} <= set(takes) and "branin" not in takes
    with pytest.raises(ValueError, match=r"function 'branin' has a fixed dimension \(2\); dim applies only to the "
                                         r"functions that take one: ackley, "):
        make_test_function("branin", 3)
    assert make_test_function("ackley", 5).dim == 5


def test_linear_bandit_pays_each_arms_linear_mean_and_reports_its_gap():
    env = gym.make("npbandit/LinearBandit-v0", context_dim=3, n_arms=4, horizon=5, noise_std=0.0).unwrapped
    x, _ = env.reset(seed=0)
    for arm in (0, 3):
        means = env.theta @ x.astype(np.float64)
        x_next, reward, terminated, truncated, info = env.step(arm)
        assert reward == pytest.approx(means[arm], abs=1e-12) and not terminated
        assert info["optimal_action"] == int(np.argmax(means))
        assert info["regret"] == info["expected_regret"] == pytest.approx(means.max() - means[arm], abs=1e-12)
        x = x_next


@pytest.mark.parametrize("kwargs, match", [({"context_dim": 0}, "context_dim"), ({"n_arms": 1}, "n_arms"),
                                           ({"horizon": 0}, "horizon"), ({"noise_std": -0.1}, "noise_std")])
def test_linear_bandit_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("npbandit/LinearBandit-v0", **kwargs)


@pytest.mark.parametrize("pairs", [[(-5, 5), (-1, 1)], [(0, 1)] * 3, [(0, 1)], [(-2, 2)] * 5])
def test_scipy_style_bounds_are_refused_with_their_transpose_named(pairs):
    # (low, high) pairs per input, as scipy.optimize takes them: at every d the same hint, naming what was
    # passed, the layout expected and the transpose that fixes it (at d = 2 the pairs are a 2 x 2 array
    # too, ambiguous, and never read as pairs: refused only when its rows are not lower then upper)
    from npbandit.envs.bounds import as_bounds

    array = np.asarray(pairs, dtype=np.float64)
    shape = re.escape(f"must have shape 2 x d (lower row, upper row), got {array.shape}: " if len(pairs) != 2 else
                      f"below its upper bound, got {array.tolist()}: ")
    with pytest.raises(ValueError, match=shape + re.escape(
            f"{array.tolist()} reads as {len(pairs)} (low, high) pair{'s' if len(pairs) > 1 else ''}, one per input "
            f"(scipy.optimize's layout), but bounds takes the lower bounds as one row and the upper bounds as the "
            f"other (BoTorch's layout): pass the transpose, bounds={array.T.tolist()}") + "$"):
        as_bounds(pairs)
    with pytest.raises(ValueError, match=r"below its upper bound, got \[\[1.0, 0.0\], \[0.0, 1.0\]\]$"):
        as_bounds([[1.0, 0.0], [0.0, 1.0]])  # not a transpose either: no hint
    assert as_bounds([(0, 2), (1, 3)]).tolist() == [[0.0, 2.0], [1.0, 3.0]]  # ordered rows: a box, as given


def test_the_pairs_hint_names_the_callers_other_way_and_shortens_a_wide_transpose():
    from npbandit.envs.bounds import as_bounds

    with pytest.raises(ValueError, match=r"bounds=\[\[0.0, 0.0, 0.0\], \[1.0, 1.0, 1.0\]\]; or give names$"):
        as_bounds([(0, 1)] * 3, named="give names")
    with pytest.raises(ValueError, match=r"got \(20, 2\): it reads as 20 \(low, high\) pairs.*pass the transpose "
                                         r"\(bounds\.T for a numpy array\)$"):
        as_bounds(np.tile([0.0, 1.0], (20, 1)))


BANDITS = [(env_id, kwargs) for env_id, kwargs in CASES if env_id != "npbandit/BlackBox-v0"]


@pytest.mark.parametrize(("env_id", "kwargs"), BANDITS)
def test_a_bandit_takes_an_arm_as_an_int_and_refuses_a_bool_or_an_arm_it_lacks(env_id, kwargs):
    """Gymnasium's Discrete.contains takes True (an int to isinstance): step(True) paid arm 1
    and a run logged the action as JSON true."""
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    n = env.action_space.n
    for bad in (True, np.bool_(False), -1, n, 1.0, np.array([0])):
        with pytest.raises(ValueError, match=rf"action must be an arm index \(int\) in \[0, {n}\), got"):
            env.step(bad)
    for good in (1, np.int64(1), np.array(1)):  # a 0-d integer array, as Discrete.sample's kin return
        _, reward, _, _, info = env.step(good)
        assert isinstance(reward, float) and info["regret"] >= 0.0
