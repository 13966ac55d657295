"""What bandit policies make of their inputs (issue 48's review): GP-UCB reads contexts mapped
onto the unit cube from its bounds; every policy refuses act / observe before reset, bad arms,
rewards and contexts, and bounds narrower than the env's Box, each with a one-line error
naming what to change."""

import copy
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from helpers import LinearBandit, drive_bandit, tiny_checkpoint

from npbandit import load_surrogate
from npbandit.exceptions import PolicyNotResetError
from npbandit.loop import run_episode
from npbandit.policies import (
    BOPolicy,
    GPUCBPolicy,
    LinearTSPolicy,
    LinUCBPolicy,
    NPBanditPolicy,
    PerArmNPPolicy,
    SobolPolicy,
    UniformPolicy,
    make_bandit_policy,
)
from npbandit.policies.problem import check_bandit_spaces, check_bounds, check_bounds_cover
from npbandit.storage import RunLogger

UNIT_CUBE = "not contained to the unit cube"


@pytest.fixture(scope="module")
def cards(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt")
    return {prior: str(tiny_checkpoint(root / prior, "cmanp", prior)) for prior in ("bo", "wheel")}


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text, text
    return text


class _Shifted(gym.Env):
    """4 arms, contexts of width ``d`` far from unit scale: ``loc + scale * N(0, 1)`` in ``Box(low, high)``."""

    def __init__(self, d=3, loc=5.0, scale=3.0, low=-10.0, high=20.0):
        self.observation_space = gym.spaces.Box(low, high, shape=(d,), dtype=np.float64)
        self.action_space = gym.spaces.Discrete(4)
        self.loc, self.scale = loc, scale

    def _context(self):
        box = self.observation_space
        return np.clip(self.loc + self.scale * self.np_random.standard_normal(box.shape), box.low, box.high)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.theta = self.np_random.standard_normal((4, self.observation_space.shape[0]))
        self.x = self._context()
        return self.x, {}

    def step(self, arm):
        means = self.theta @ ((self.x - self.loc) / self.scale)
        self.x = self._context()
        return self.x, float(means[arm]), False, False, {"regret": float(means.max() - means[arm])}


# -- item 3: GP-UCB reads its contexts on the unit cube ---------------------------------------------------------

def test_gp_ucb_reads_contexts_mapped_from_its_bounds_onto_the_unit_cube():
    env = _Shifted()
    policy = make_bandit_policy("gp-ucb", env=env)
    np.testing.assert_array_equal(policy.bounds, [[-10.0] * 3, [20.0] * 3])  # the Box's
    assert policy.params()["bounds"] == [[-10.0] * 3, [20.0] * 3]
    rounds = drive_bandit(env, policy, seed=0, steps=10)
    for arm, model in enumerate(policy.models):
        if model is None:
            continue
        X = np.array([x for x, a, _ in rounds if a == arm])
        np.testing.assert_allclose(model.train_inputs[0].numpy(), (X + 10.0) / 30.0, rtol=0, atol=1e-15)
        assert model.train_inputs[0].min() >= 0 and model.train_inputs[0].max() <= 1


def test_gp_ucb_on_a_unit_box_reads_contexts_as_they_come():
    """Contexts in [0, 1]^d map onto themselves exactly: the same arms as a GP-UCB without bounds."""
    env = _Shifted(d=2, loc=0.5, scale=0.2, low=0.0, high=1.0)
    mapped = make_bandit_policy("gp-ucb", env=env)
    raw = GPUCBPolicy(n_arms=4, context_dim=2)
    assert raw.bounds is None and mapped.bounds is not None
    assert [a for _, a, _ in drive_bandit(env, mapped, 0, 9)] == [a for _, a, _ in drive_bandit(env, raw, 0, 9)]


def test_gp_ucb_shows_a_warning_of_its_fits_once_not_once_a_round():
    """BoTorch's warning that the inputs are not in the unit cube came every round (the fit's
    catch_warnings clears Python's memory of warnings shown); on the unit cube it does not come,
    and on raw contexts (no bounds) once per policy."""
    env = _Shifted()
    for policy, expected in ((make_bandit_policy("gp-ucb", env=env), 0), (GPUCBPolicy(n_arms=4, context_dim=3), 1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            drive_bandit(env, policy, seed=0, steps=8)
            drive_bandit(env, policy, seed=1, steps=4)  # a second run: still shown once per policy
        assert sum(UNIT_CUBE in str(w.message) for w in caught) == expected, [str(w.message) for w in caught]


def test_gp_ucb_refuses_a_context_outside_its_bounds_and_bad_bounds():
    policy = GPUCBPolicy(n_arms=4, bounds=[[0.0] * 3, [1.0] * 3])
    assert policy.context_dim == 3
    policy.reset(0)
    with pytest.raises(ValueError, match=r"obs \[0.5, 1.5, 0.5\] lies outside the policy's context bounds") as err:
        policy.act(np.array([0.5, 1.5, 0.5]))
    _one_line(err)
    with pytest.raises(ValueError, match=r"bounds must have shape \[2, 2\]"):
        GPUCBPolicy(n_arms=4, context_dim=2, bounds=[[0.0] * 3, [1.0] * 3])


# -- item 6: act / observe before reset -------------------------------------------------------------------------

def _every_policy(cards):
    bandits = [UniformPolicy(), LinUCBPolicy(), LinearTSPolicy(), GPUCBPolicy(),
               NPBanditPolicy(load_surrogate(cards["wheel"])),
               PerArmNPPolicy(load_surrogate(cards["bo"]), [[-1.0] * 2, [1.0] * 2], 5)]
    return [(p, np.zeros(2), 0, 1.0) for p in bandits] + [
        (BOPolicy(2, model="gp"), np.zeros(3), np.full(2, 0.5), 1.0),
        (SobolPolicy(2), np.zeros(3), np.full(2, 0.5), 1.0)]


def test_every_policy_refuses_act_and_observe_before_reset_with_one_error(cards):
    for policy, obs, action, reward in _every_policy(cards):
        for args in ((obs,), (obs, action, reward, {})):  # act, then observe
            with pytest.raises(PolicyNotResetError, match=rf"policy '{policy.name}' has not been reset: call "
                               r"reset\(seed\) before act / observe") as err:
                (policy.act if len(args) == 1 else policy.observe)(*args)
            _one_line(err)
        policy.reset(0)
        policy.observe(obs, action, reward, {})
        policy.act(obs)


def test_a_policy_not_reset_still_answers_attribute_questions_and_copies():
    policy = LinUCBPolicy()
    assert not hasattr(policy, "A_inv") and getattr(policy, "b", None) is None  # an AttributeError too
    assert isinstance(copy.deepcopy(policy), LinUCBPolicy) and isinstance(pickle.loads(pickle.dumps(policy)),
                                                                          LinUCBPolicy)
    policy.reset(0)
    with pytest.raises(AttributeError, match="no attribute 'nothing'") as err:
        policy.nothing  # noqa: B018 - a missing attribute after reset is a plain AttributeError
    assert not isinstance(err.value, PolicyNotResetError)


# -- item 7: uniform and early GP-UCB check their input --------------------------------------------------------

@pytest.mark.parametrize("make", [lambda: UniformPolicy(n_arms=4, context_dim=3),
                                  lambda: GPUCBPolicy(n_arms=4, context_dim=3)], ids=["uniform", "gp-ucb"])
def test_uniform_and_gp_ucb_refuse_bad_arms_rewards_and_contexts(make):
    policy = make()
    policy.reset(0)
    x = np.zeros(3)
    for action, reward, match in ((4, 1.0, "action must be an arm index"), (-1, 1.0, "action must be an arm index"),
                                  (0, float("nan"), "reward must be a finite real number"),
                                  (0, "1", "reward must be a finite real number")):
        with pytest.raises(ValueError, match=match) as err:
            policy.observe(x, action, reward, {})
        _one_line(err)
    for obs, match in ((np.zeros((3, 1)), r"obs must be a context of shape \(3,\)"),
                       (np.zeros(2), r"obs must be a context of shape \(3,\)"),
                       (np.array([0.0, np.nan, 0.0]), "obs must be finite")):
        for args in ((obs,), (obs, 0, 1.0, {})):  # act (from the first round on), then observe
            with pytest.raises(ValueError, match=match) as err:
                (policy.act if len(args) == 1 else policy.observe)(*args)
            _one_line(err)


@pytest.mark.parametrize("name", ["uniform", "linucb", "lin-ts", "gp-ucb"])
def test_a_reward_or_arm_held_in_a_tensor_or_array_is_refused_saying_how_to_pass_it(name):
    """A reward computed with torch (or NumPy) arrives as a 0-d tensor (or array); it is refused,
    as no number is converted, with the type named and the way to pass it: ``.item()``."""
    import torch

    policy = make_bandit_policy(name, n_arms=4, context_dim=3)
    policy.reset(0)
    x = np.zeros(3)
    for action, reward, match in ((0, torch.tensor(0.5), r"reward must be a finite real number, got tensor\(0.5000\), "
                                                         r"a torch.Tensor: pass a number \(\.item\(\)\)"),
                                  (0, np.array(0.5), r"got array\(0.5\), a numpy.ndarray: pass a number \(\.item"),
                                  (torch.tensor(1), 0.5, r"action must be an arm index \(int\) in \[0, 4\), got "
                                                         r"tensor\(1\), a torch.Tensor: pass a number \(\.item\(\)\)")):
        with pytest.raises(ValueError, match=match) as err:
            policy.observe(x, action, reward, {})
        _one_line(err)
    with pytest.raises(ValueError, match=r"got 'abc'$"):  # other values are named as they were
        policy.observe(x, 0, "abc", {})


@pytest.mark.parametrize("rule", ["ucb", "thompson"])
def test_a_wheel_checkpoint_policy_checks_its_first_rounds_context_too(rule):
    """Before its first observation NPBanditPolicy.act drew an arm without reading the
    context, so a NaN, another width or a str passed on the first round went unnoticed."""
    policy = NPBanditPolicy(load_surrogate("cmanp-wheel"), rule=rule)
    policy.reset(0)
    for obs, match in ((np.array([np.nan, 0.0]), "obs must be finite"),
                       (np.zeros(3), r"obs must be a context of shape \(2,\)"),
                       ("ab", r"obs must be a context of shape \(2,\), got str"),
                       (np.array([5.0, 0.0]), r"obs \[5.0, 0.0\] lies outside the inputs .*: dimension 0 is 5, "
                                             r"its bounds \[-1, 1\]")):
        with pytest.raises(ValueError, match=match) as err:
            policy.act(obs)
        _one_line(err)
    assert policy.act(np.zeros(2)) in range(5)


@pytest.mark.parametrize("name", ["uniform", "linucb", "lin-ts", "gp-ucb", "bo", "wheel"])
def test_every_bandit_policy_refuses_a_context_outside_the_box_it_was_built_for(cards, name):
    # LinUCB, lin-ts and uniform read any finite context, whatever the env's Box said; every policy now makes one
    # check (check_bandit_context): a wheel checkpoint against the inputs it was trained on, the others the Box
    env = LinearBandit(context_dim=2, n_arms=5)  # the wheel's shape, its Box [-1, 1]^2
    policy = make_bandit_policy(cards.get(name, name), env=env)
    policy.reset(0)
    policy.observe(np.array([0.5, -1.0]), 0, 1.0, {})  # on the Box's face
    for call in (policy.act, lambda x: policy.observe(x, 0, 1.0, {})):
        with pytest.raises(ValueError, match=r"^obs \[0.5, 1.5\] lies outside .*: dimension 1 is 1.5, its bounds "
                                             r"\[-1, 1\]; ") as err:
            call(np.array([0.5, 1.5]))
        _one_line(err)
    assert policy.act(np.array([0.5, 1.0 + 1e-9])) in range(5)  # a rounding error past a face is inside
    if name in ("uniform", "linucb", "lin-ts"):  # as gp-ucb and the per-arm policy: a Box they do not contain
        narrow = make_bandit_policy(name, env=env, bounds=[[-1.0, -1.0], [1.0, 1.0]])
        with pytest.raises(ValueError, match=rf"bounds of policy '{name}' .* do not contain env.observation_space"):
            narrow.check_spaces(LinearBandit(context_dim=2, n_arms=5, high=2.0).observation_space, env.action_space)


def test_without_a_width_a_run_keeps_its_first_contexts():
    policy = UniformPolicy(n_arms=2)
    policy.reset(0)
    policy.observe(np.zeros(3), 0, 1.0, {})
    with pytest.raises(ValueError, match=r"obs must be a context of shape \(3,\)"):
        policy.act(np.zeros(2))
    policy.reset(1)
    policy.act(np.zeros(2))  # a new run, another width


def test_uniform_built_for_another_width_is_refused_before_the_run(tmp_path):
    env = LinearBandit(context_dim=3, n_arms=4)
    with pytest.raises(ValueError, match=r"env.observation_space .*3-D contexts.* built for 7-D") as err:
        run_episode(env, make_bandit_policy("uniform", n_arms=4, context_dim=7), seed=0,
                    logger=RunLogger(str(tmp_path / "runs.db")))
    _one_line(err)
    assert list(tmp_path.iterdir()) == []


# -- item 8: bounds narrower than the env's Box ----------------------------------------------------------------

def test_bounds_narrower_than_the_box_are_refused_before_the_run(tmp_path, cards):
    env = _Shifted()
    narrow = [[0.0] * 3, [10.0] * 3]
    gp = make_bandit_policy("gp-ucb", n_arms=4, context_dim=3, bounds=narrow)
    with pytest.raises(ValueError, match=r"bounds of policy 'gp-ucb' \(lower \[0.0, 0.0, 0.0\], upper \[10.0, 10.0, "
                       r"10.0\]\) do not contain env.observation_space Box.*: its dimension 0 spans \[-10, 20\], the "
                       r"bounds \[0, 10\] and 2 more") as err:
        run_episode(env, gp, seed=0, steps=3, logger=RunLogger(str(tmp_path / "runs.db")))
    _one_line(err)
    assert list(tmp_path.iterdir()) == []  # no failed 0-step run
    for name in ("gp-ucb", cards["bo"]):  # with env=, when the policy is built
        with pytest.raises(ValueError, match=r"bounds \(lower .*\) do not contain env.observation_space") as err:
            make_bandit_policy(name, env=env, bounds=narrow)
        _one_line(err)
    wide = make_bandit_policy("gp-ucb", env=env, bounds=[[-20.0] * 3, [30.0] * 3])  # a box that holds the Box
    run_episode(env, wide, seed=0, steps=3)


def test_bounds_cover_compares_only_the_boxs_finite_sides():
    bounds = check_bounds("bounds", [[-1.0, -1.0], [1.0, 1.0]])
    def box(low, high):
        return gym.spaces.Box(np.array(low), np.array(high), dtype=np.float64)

    check_bounds_cover(bounds, box([-np.inf] * 2, [np.inf] * 2))  # unbounded: the caller's bounds stand
    check_bounds_cover(bounds, box([-1.0, -np.inf], [1.0 + 1e-9, 0.5]))  # a rounding error out: inside
    with pytest.raises(ValueError, match=r"dimension 1 spans \[-inf, 2\], the bounds \[-1, 1\]"):
        check_bounds_cover(bounds, box([-1.0, -np.inf], [1.0, 2.0]))


def test_a_bandit_policys_spaces_are_checked_arms_then_contexts_then_bounds():
    arms, box = gym.spaces.Discrete(3), gym.spaces.Box(-2.0, 2.0, shape=(2,), dtype=np.float64)
    bounds = check_bounds("bounds", [[-1.0, -1.0], [1.0, 1.0]])
    check_bandit_spaces(box, arms, 3, 2, "policy 'p'")
    check_bandit_spaces(box, arms, 3, None, "policy 'p'")  # any width
    with pytest.raises(ValueError, match=r"^env.action_space is Discrete\(3\) \(3 arms\) but policy 'p' was built"):
        check_bandit_spaces(box, arms, 4, 3, "policy 'p'", bounds)  # arms first
    with pytest.raises(ValueError, match=r"^env.observation_space is .* \(2-D contexts\) but policy 'p' was built"):
        check_bandit_spaces(box, arms, 3, 3, "policy 'p'", bounds)  # then the width
    with pytest.raises(ValueError, match=r"^bounds of policy 'p' \(lower .*\) do not contain env.observation_space"):
        check_bandit_spaces(box, arms, 3, 2, "policy 'p'", bounds)  # then the bounds, when given


# -- item 10: messages ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["linucb", "lin-ts", "gp-ucb", "uniform"])
def test_make_bandit_policy_names_beta_as_the_caller_passed_it(name):
    for beta in (float("nan"), -1.0):
        with pytest.raises(ValueError, match="^beta must be"):
            make_bandit_policy(name, beta=beta)



def test_a_per_arm_np_policy_with_bounds_narrower_than_the_box_is_refused_before_the_run(tmp_path, cards):
    from npbandit.policies import PerArmNPPolicy

    policy = PerArmNPPolicy(load_surrogate(cards["bo"]), [[0.0] * 3, [10.0] * 3], 4)  # built without the env
    with pytest.raises(ValueError, match=r"bounds of policy .* do not contain env.observation_space") as err:
        run_episode(_Shifted(), policy, seed=0, steps=3, logger=RunLogger(str(tmp_path / "runs.db")))
    _one_line(err)
    assert list(tmp_path.iterdir()) == []  # no failed 0-step run


def test_a_wide_context_s_error_names_the_dimension_and_stays_short():
    """On digits (64 features) a NaN or out-of-bounds context's error listed every value, and
    the bounds' 2 x 64 (about 4,000 characters); now the first values and the dimension."""
    policy = GPUCBPolicy(n_arms=3, bounds=[[-1.0] * 64, [1.0] * 64])
    policy.reset(0)
    x = np.zeros(64)
    x[[40, 50]] = [np.nan, np.inf]
    with pytest.raises(ValueError, match=r"obs must be finite, got \[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, ...\] "
                                         r"\(64 values\): dimension 40 is nan and 1 more$") as err:
        policy.act(x)
    x[[40, 50, 63]] = [1.5, 2.0, 0.5]
    with pytest.raises(ValueError, match=r"obs \[0.0, .*\] \(64 values\) lies outside the policy's context bounds: "
                                         r"dimension 40 is 1.5, its bounds \[-1, 1\] \(and 1 more dimensions\); "
                                         "build it with bounds that contain every context$") as err:
        policy.act(x)
    assert len(_one_line(err)) < 250
    policy = GPUCBPolicy(n_arms=3, bounds=[[-1.0] * 3, [1.0] * 3])
    policy.reset(0)
    with pytest.raises(ValueError, match=r"obs \[0.0, 1.5, 0.0\] lies outside .*: dimension 1 is 1.5, its bounds "
                                         r"\[-1, 1\]; build"):  # a narrow context is shown whole
        policy.act(np.array([0.0, 1.5, 0.0]))
