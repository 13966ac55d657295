"""Bandit policies on a user's bandit of another shape than the wheel's (3-D contexts, 4 arms):
make_bandit_policy reads the env's spaces, every policy name runs through run_episode, the
per-arm NP policy's arm models are separately conditioned NPModels, and bad env / policy
pairings fail before a run with one-line errors naming the argument."""

import warnings

import gymnasium as gym
import numpy as np
import pytest
from helpers import LinearBandit, drive_bandit, per_arm_replay, tiny_checkpoint

from npbandit import load_surrogate
from npbandit.envs import WheelBanditEnv
from npbandit.exceptions import CheckpointError
from npbandit.loop import run_episode
from npbandit.policies import (
    WHEEL,
    BanditProblem,
    GPUCBPolicy,
    LinearTSPolicy,
    LinUCBPolicy,
    PerArmNPPolicy,
    UniformPolicy,
    make_bandit_policy,
)
from npbandit.policies.context_projection import working_box
from npbandit.policies.problem import bandit_problem


@pytest.fixture(scope="module")
def bo_card(tmp_path_factory):
    return str(tiny_checkpoint(tmp_path_factory.mktemp("ckpt"), "cmanp", "bo"))


def _one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text, text
    return text


@pytest.mark.parametrize("name, steps", [("uniform", 30), ("linucb", 30), ("lin-ts", 30), ("gp-ucb", 8), ("{bo}", 30),
                                         ("{bo}-ucb", 30), ("{bo}-thompson", 30)])
def test_every_policy_name_runs_on_a_3d_4_arm_bandit(bo_card, name, steps):
    env = LinearBandit(context_dim=3, n_arms=4, horizon=steps)
    policy = make_bandit_policy(name.format(bo=bo_card), env=env)
    result = run_episode(env, policy, seed=0)
    assert len(result.steps) == steps and {s["action"] for s in result.steps} <= {0, 1, 2, 3}
    assert result.cumulative_regret == pytest.approx(sum(s["regret"] for s in result.steps))
    assert policy.n_arms == 4
    if isinstance(policy, PerArmNPPolicy):
        assert policy.name == f"cmanp-bo-{'thompson' if 'thompson' in name else 'ucb'}"
        assert policy.context_dim == 3 and sum(policy.counts) == steps
        assert all(m is not None for m in policy.models)  # every arm reached its n_init rounds and has a model
        assert policy.params()["bounds"] == [[-1.0] * 3, [1.0] * 3]  # the Box's


def test_make_bandit_policy_reads_the_env_or_takes_the_shape():
    env = LinearBandit(context_dim=3, n_arms=4)
    linucb = make_bandit_policy("linucb", env=env)
    assert isinstance(linucb, LinUCBPolicy) and (linucb.n_arms, linucb.context_dim) == (4, 3)
    gp = make_bandit_policy("gp-ucb", n_arms=6, context_dim=2, beta=2.0)
    assert isinstance(gp, GPUCBPolicy) and (gp.n_arms, gp.context_dim, gp.beta) == (6, 2, 2.0)
    assert make_bandit_policy("uniform", env=gym.wrappers.TimeLimit(env, 10)).n_arms == 4  # a wrapped env too
    # none of them: the wheel, as before
    assert bandit_problem() is WHEEL and (WHEEL.n_arms, WHEEL.context_dim) == (5, 2)
    default = make_bandit_policy("linucb")
    assert (default.n_arms, default.context_dim) == (5, 2)
    problem = bandit_problem(LinearBandit(low=-np.inf))
    assert problem.bounds is None and problem.describe() == "3-D contexts, 4 arms"


@pytest.mark.parametrize("n_views", [1, 3])
def test_each_arms_predictions_are_a_separately_conditioned_models(bo_card, n_views):
    """Arm a's predictive is that of an NPModel conditioned on arm a's rounds alone: built on
    its rounds at the last rebuild, in the box of the contexts seen, rewards on the scale of
    all arms' rewards then, and streamed the rest."""
    env = LinearBandit(context_dim=3, n_arms=4, horizon=40)
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[-1.0] * 3, [1.0] * 3], 4, n_init=3, n_views=n_views)
    rebuilds = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # e.g. torch's on a read-only NumPy array
        rounds = drive_bandit(env, policy, seed=1, steps=40, rebuilds=rebuilds)
    built = rebuilds[-1]
    assert built < 40 and policy.counts == [sum(a == arm for _, a, _ in rounds) for arm in range(4)]
    rewards = np.array([r for _, _, r in rounds[:built]])
    np.testing.assert_allclose(policy.scale, (rewards.mean(), rewards.std(ddof=1)), rtol=1e-12)
    X = np.array([x for x, _, _ in rounds])
    # narrow contexts are read as they are, in a box around the contexts seen (from the last fit or widening)
    outer = working_box(X)
    assert (outer[0] <= policy.box[0]).all() and (policy.box[0] <= X.min(0)).all()
    assert (X.max(0) <= policy.box[1]).all() and (policy.box[1] <= outer[1]).all()
    for x in np.random.default_rng(0).uniform(X.min(0), X.max(0), (5, 3)):  # inside the box: predict widens none
        mean, var = per_arm_replay(policy, rounds, built, x)
        np.testing.assert_array_equal(policy.predict(x), (mean, var))


def test_an_arm_model_is_rebuilt_only_by_a_fit_a_widening_or_a_rescaling(bo_card):
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[0.0] * 2, [10.0] * 2], 3, n_init=2)
    policy.reset(0)
    for t, arm in enumerate((0, 0, 1, 1, 2, 2)):
        policy.observe(np.array([1.0 + t, 9.0 - t]), arm, 2.0 * (t % 2), {})
    assert policy.refits == [6]
    probe = np.array([3.0, 5.0])
    before, models = policy.predict(probe), list(policy.models)
    for t in range(4):  # arm 2 plays on, its rewards leaving the pooled mean and std where they were
        policy.observe(np.array([2.0 + t, 6.0]), 2, 2.0 * (t % 2), {})
    after = policy.predict(probe)
    assert policy.rescalings == 0 and policy.widenings == 0 and policy.refits == [6]
    assert policy.models[:2] == models[:2] and policy.models[2] is not models[2]
    np.testing.assert_array_equal(after[0][:2], before[0][:2])
    np.testing.assert_array_equal(after[1][:2], before[1][:2])
    assert after[0][2] != before[0][2] and policy.counts == [2, 2, 6]


def test_every_arm_is_on_the_scale_of_all_rewards_and_rescaled_when_it_drifts(bo_card):
    """Two nearly equal rewards do not make an arm's scale tiny (its model sees them on the
    scale of all arms' rewards); a drift of the pooled mean re-conditions every arm."""
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[0.0] * 2, [10.0] * 2], 2, n_init=2, n_views=1)
    policy.reset(0)
    data = [((1.0, 1.0), 0, 1.0), ((2.0, 3.0), 0, 1.001), ((5.0, 5.0), 1, 0.0), ((8.0, 2.0), 1, 2.0)]
    for x, arm, r in data:
        policy.observe(np.array(x), arm, r, {})
    rewards = np.array([r for _, _, r in data])
    center, std = rewards.mean(), rewards.std(ddof=1)
    np.testing.assert_allclose(policy.scale, (center, std), rtol=1e-12)
    np.testing.assert_allclose(policy.models[0].train_Y.flatten().numpy(), (rewards[:2] - center) / std)
    assert policy.rescalings == 0
    policy.observe(np.array([3.0, 3.0]), 1, 10.0, {})  # the pooled mean moves by far more than RESCALE_TOL stds
    rewards = np.append(rewards, 10.0)
    assert policy.rescalings == 1
    np.testing.assert_allclose(policy.scale, (rewards.mean(), rewards.std(ddof=1)), rtol=1e-12)
    np.testing.assert_allclose(policy.models[1].train_Y.flatten().numpy(),
                               (rewards[[2, 3, 4]] - rewards.mean()) / rewards.std(ddof=1))


def test_the_models_read_the_box_of_the_contexts_seen_not_a_loose_bounds(bo_card):
    """A Box far wider than the contexts (here +-1000 around contexts within 5 +- 1) would crowd
    them into one point of the cube; the models read the box of the contexts seen."""
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[-1000.0] * 3, [1000.0] * 3], 2, n_views=1)
    rounds = drive_bandit(LinearBandit(context_dim=3, n_arms=2, horizon=12), policy, seed=0, steps=12)
    X = 5 + np.array([x for x, _, _ in rounds])  # LinearBandit's contexts lie in [-1, 1]: the test moves them
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[-1000.0] * 3, [1000.0] * 3], 2, n_views=1)
    policy.reset(0)
    for x, (_, arm, r) in zip(X, rounds):
        policy.observe(x, arm, r, {})
    assert policy.refits == [4, 8]
    np.testing.assert_array_equal(policy.box, working_box(X[:8]))
    assert (policy.box[1] - policy.box[0] < 3).all()


def test_until_every_arm_has_n_init_rounds_the_policy_plays_those_that_have_not(bo_card):
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[-1.0] * 3, [1.0] * 3], 4, n_init=2)
    policy.reset(3)
    x = np.zeros(3)
    mean, _ = policy.predict(x)
    assert np.isnan(mean).all()  # no arm has a model yet
    for arm in (0, 0, 1, 1, 2):
        policy.observe(x, arm, 1.0, {})
    assert {policy.act(x) for _ in range(20)} == {2, 3}
    mean, _ = policy.predict(x)
    assert np.isnan(mean).all() and policy.map is None  # the models come with the first fit
    for arm in (2, 3, 3):
        policy.observe(x, arm, 1.0, {})
    assert policy.refits == [8] and np.isfinite(policy.predict(x)[0]).all()


def test_a_streamed_round_is_folded_in_not_reconditioned(bo_card):
    """Past the first rounds an arm's model takes each round through the surrogate's update:
    the points conditioned from scratch (the first model, rare re-standardisations) stay a
    small multiple of the rounds, where re-conditioning every round would grow as T^2."""
    surrogate = load_surrogate(bo_card)
    conditioned, updated = [0], [0]
    condition, update = surrogate.condition, surrogate.update

    def counting_condition(xc, yc, **kwargs):
        conditioned[0] += xc.shape[1]
        return condition(xc, yc, **kwargs)

    def counting_update(state, xu, yu):
        updated[0] += xu.shape[1]
        return update(state, xu, yu)

    surrogate.condition, surrogate.update = counting_condition, counting_update
    policy = PerArmNPPolicy(surrogate, [[-1.0] * 3, [1.0] * 3], 4, n_views=1)
    conditioned[0] = 0  # the option check's probe model
    drive_bandit(LinearBandit(horizon=120), policy, seed=0, steps=120)
    assert updated[0] >= 120 - 4 * 2 - conditioned[0] and conditioned[0] < 3 * 120, (conditioned, updated)


BAD_ENVS = [
    (LinearBandit(), {"observation_space": gym.spaces.Discrete(3)}, TypeError, "env.observation_space"),
    (LinearBandit(), {"action_space": gym.spaces.Box(0, 1, (4,))}, TypeError, "env.action_space"),
    (LinearBandit(), {"observation_space": gym.spaces.Box(-1, 1, (2, 3))}, ValueError, "env.observation_space"),
    (LinearBandit(), {"action_space": gym.spaces.Discrete(4, start=1)}, ValueError, "env.action_space"),
    (LinearBandit(), {"action_space": gym.spaces.Discrete(1)}, ValueError, "env.action_space"),
]


@pytest.mark.parametrize("env, spaces, error, match", BAD_ENVS,
                         ids=[f"{b[3]}-{i}" for i, b in enumerate(BAD_ENVS)])
def test_an_env_that_is_no_box_discrete_bandit_is_refused_naming_its_space(env, spaces, error, match):
    for key, space in spaces.items():
        setattr(env, key, space)
    for name in ("uniform", "linucb", "cmanp-bo"):
        with pytest.raises(error, match=match) as err:
            make_bandit_policy(name, env=env)
        _one_line(err)


@pytest.mark.parametrize("call, error, match", [
    (lambda bo: make_bandit_policy(bo, env=LinearBandit(low=-np.inf)), ValueError, "bounds are required"),
    (lambda bo: make_bandit_policy(bo, n_arms=4, context_dim=3), ValueError, "bounds are required"),
    (lambda bo: make_bandit_policy("linucb", env=LinearBandit(), projection="principal-components"), ValueError,
     "projection is for a 'bo' checkpoint's per-arm policy"),
    (lambda bo: make_bandit_policy(bo, env=LinearBandit(context_dim=7), projection="pca"), ValueError,
     "projection must be one of"),
    (lambda bo: make_bandit_policy(bo, env=LinearBandit(context_dim=7), projection=3), TypeError,
     "projection must be a ContextProjection"),
    (lambda bo: make_bandit_policy("cmanp-wheel", env=LinearBandit()), CheckpointError, "3 input.*4 output"),
    (lambda bo: make_bandit_policy("tnpd-wheel-thompson", env=LinearBandit()), CheckpointError,
     r"No shipped checkpoint fits\. For 3-dimensional contexts and 4 arms, name a policy that fits one regression "
     r"per arm .*'cmanp-bo'"),
    (lambda bo: make_bandit_policy(f"{bo}-marginal-thompson", env=LinearBandit()), ValueError, "-thompson"),
    (lambda bo: make_bandit_policy("linucb", env=LinearBandit(), n_arms=4), ValueError, "env or n_arms"),
    (lambda bo: make_bandit_policy("linucb", n_arms=4), ValueError, "context_dim is required"),
    (lambda bo: make_bandit_policy("linucb", bounds=[[0.0], [1.0]]), ValueError, "bounds needs env"),
    (lambda bo: make_bandit_policy("linucb", env="LinearBandit"), TypeError, "env must be a gymnasium.Env"),
    (lambda bo: make_bandit_policy("linucb", n_arms=1, context_dim=3), ValueError, "n_arms"),
    (lambda bo: make_bandit_policy(bo, env=LinearBandit(), bounds=[[0.0, 0.0], [1.0, 1.0]]), ValueError,
     r"bounds must have shape \[2, 3\]"),
    (lambda bo: make_bandit_policy(bo, env=LinearBandit(), bounds=[[0.0] * 3, [1.0, 0.0, 1.0]]), ValueError,
     "bounds: every lower bound must be below its upper bound"),
    (lambda bo: PerArmNPPolicy(load_surrogate("tnpd-wheel"), [[0.0] * 2, [1.0] * 2], 5), CheckpointError,
     "needs a 'bo' checkpoint"),
])
def test_a_bad_pairing_is_one_line_naming_what_to_change(bo_card, call, error, match):
    with pytest.raises(error, match=match) as err:
        call(bo_card)
    _one_line(err)


def test_a_policy_built_for_another_shape_is_refused_before_the_run(tmp_path):
    """What the issue saw: wheel-shaped policies run on a 3-D / 4-arm env failed on their first
    step with a tensor-shape or NumPy broadcast error; now run_episode refuses them up front."""
    from npbandit.storage import RunLogger

    env = LinearBandit(context_dim=3, n_arms=4)
    db = str(tmp_path / "runs.db")
    for policy, match in [(make_bandit_policy("linucb"), "env.action_space is Discrete.4. .4 arms. but policy "
                           "'linucb' was built for 5 arms"),
                          (make_bandit_policy("cmanp-wheel"), "env.action_space"),
                          (LinUCBPolicy(n_arms=4, context_dim=2), "env.observation_space .*3-D contexts"),
                          (LinearTSPolicy(n_arms=4, context_dim=2), "env.observation_space .*3-D contexts"),
                          (GPUCBPolicy(n_arms=4, context_dim=2), "env.observation_space"),
                          (UniformPolicy(n_arms=5), "env.action_space")]:
        with pytest.raises(ValueError, match=match) as err:
            run_episode(env, policy, seed=0, logger=RunLogger(db))
        _one_line(err)
    assert list(tmp_path.iterdir()) == []  # nothing logged
    run_episode(env, UniformPolicy(n_arms=4), seed=0)  # uniform reads no context: any observation space


def test_a_context_of_another_width_or_outside_the_bounds_is_refused_naming_obs(bo_card):
    per_arm = PerArmNPPolicy(load_surrogate(bo_card), [[-1.0] * 3, [1.0] * 3], 4)
    for policy in (LinUCBPolicy(n_arms=4, context_dim=3), LinearTSPolicy(n_arms=4, context_dim=3), per_arm,
                   GPUCBPolicy(n_arms=4, context_dim=3)):
        policy.reset(0)
        for obs, match in ((np.zeros(2), r"obs must be a context of shape \(3,\)"),
                           (np.array([0.0, np.nan, 0.0]), "obs must be finite")):
            with pytest.raises(ValueError, match=match) as err:
                policy.observe(obs, 0, 1.0, {})
            _one_line(err)
    with pytest.raises(ValueError, match="obs .* lies outside the policy's context bounds") as err:
        per_arm.act(np.array([0.0, 1.5, 0.0]))
    _one_line(err)


def test_the_per_arm_policy_checks_a_round_s_context_once(bo_card, monkeypatch):
    import npbandit.policies.per_arm as per_arm_module

    calls = []
    real = per_arm_module.check_bandit_context

    def spy(obs, context_dim, bounds=None, **message):
        calls.append(obs)
        return real(obs, context_dim, bounds, **message)

    monkeypatch.setattr(per_arm_module, "check_bandit_context", spy)
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[-1.0] * 3, [1.0] * 3], 2, n_init=1)
    policy.reset(0)
    rng = np.random.default_rng(0)
    for _ in range(4):  # two rounds before the arms' models exist, two after
        obs = rng.uniform(-1, 1, 3)
        policy.observe(obs, policy.act(obs), 1.0, {})
    assert len(calls) == 4 and sum(policy.counts) == 4
    # a context act did not check, or one changed since, is checked in observe, as before
    for changed, match in ((np.array([0.0, np.nan, 0.0]), "obs must be finite"),
                           (np.array([0.0, 1.5, 0.0]), "obs .* lies outside the policy's context bounds")):
        obs = np.zeros(3)
        action = policy.act(obs)
        obs[:] = changed
        with pytest.raises(ValueError, match=match):
            policy.observe(obs, action, 1.0, {})
        with pytest.raises(ValueError, match=match):
            policy.observe(changed.copy(), action, 1.0, {})
    assert sum(policy.counts) == 4


def test_the_per_arm_policy_serves_the_wheel_too(bo_card):
    """A bo checkpoint's per-arm policy is a bandit policy like any other: on the wheel by default."""
    policy = make_bandit_policy(f"{bo_card}-thompson")
    assert isinstance(policy, PerArmNPPolicy) and policy.params()["bounds"] == WHEEL.bounds.tolist()
    result = run_episode(WheelBanditEnv(horizon=15), policy, seed=0)
    assert len(result.steps) == 15 and policy.checkpoint["name"] == "cmanp-bo"


def test_bandit_problem_checks_its_fields():
    problem = BanditProblem(3, 2, [[0, 0], [1, 2]])
    assert problem.bounds.dtype == np.float64 and not problem.bounds.flags.writeable
    with pytest.raises(ValueError, match="context_dim"):
        BanditProblem(3, 0)
    with pytest.raises(ValueError, match="bounds must be finite"):
        BanditProblem(3, 1, [[0.0], [np.inf]])


def test_a_wheel_checkpoint_refuses_contexts_outside_the_inputs_it_was_trained_on():
    """A wheel checkpoint on a wheel-shaped bandit (2-D, 5 arms) whose Box is [-10, 10]^2 ran,
    its network reading contexts up to ten times outside the inputs it was trained on,
    [-1, 1]^2; now the Box is refused before a run, and a context outside at act / observe."""
    wide = LinearBandit(context_dim=2, n_arms=5, low=-10.0, high=10.0)
    with pytest.raises(ValueError, match=r"leaves the inputs policy 'cmanp-wheel-ucb' .* was trained on, \[-1, 1\] "
                                         r"in every dimension: its dimension 0 spans \[-10, 10\]") as err:
        make_bandit_policy("cmanp-wheel", env=wide)
    _one_line(err)
    with pytest.raises(ValueError, match="leaves the inputs"):
        run_episode(wide, make_bandit_policy("cmanp-wheel"), seed=0)
    # an unbounded Box is not compared (its contexts are, one by one); these are drawn in [-1, 1]^2
    unbounded = LinearBandit(context_dim=2, n_arms=5, low=-np.inf, high=np.inf)
    assert run_episode(unbounded, make_bandit_policy("cmanp-wheel", env=unbounded), seed=0, steps=3).n_steps == 3
    policy = make_bandit_policy("cmanp-wheel")
    policy.reset(0)
    policy.observe(np.array([0.5, -1.0]), 0, 1.0, {})
    for call in (lambda x: policy.observe(x, 0, 1.0, {}), policy.act):
        with pytest.raises(ValueError, match=r"obs \[0.0, 1.5\] lies outside the inputs policy 'cmanp-wheel-ucb''s "
                                             r"checkpoint was trained on: dimension 1 is 1.5, its bounds \[-1, 1\]"):
            call(np.array([0.0, 1.5]))
