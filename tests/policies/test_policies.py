"""Policies: baselines learn, NP policies stream observations with update."""

import copy
import json
import math

import numpy as np
import pytest
import torch
from helpers import EmbedCounter, tiny_checkpoint

from npbandit import load_surrogate
from npbandit.envs import WheelBanditEnv
from npbandit.policies import LinUCBPolicy, NPBanditPolicy, UniformPolicy, make_bandit_policy
from npbandit.priors.wheel import RewardEncoding, RewardFill
from npbandit.surrogates import build
from npbandit.transforms import Bilog, Scale


def test_uniform_is_seeded():
    a, b = UniformPolicy(), UniformPolicy()
    a.reset(1)
    b.reset(1)
    x = np.zeros(2)
    assert [a.act(x) for _ in range(20)] == [b.act(x) for _ in range(20)]


def test_linucb_finds_the_best_arm_of_a_linear_bandit():
    rng = np.random.default_rng(0)
    policy = LinUCBPolicy(n_arms=3, context_dim=2, alpha=0.5)
    policy.reset(0)
    weights = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    picks = []
    for _ in range(600):
        x = rng.uniform(-1, 1, 2)
        a = policy.act(x)
        policy.observe(x, a, float(weights[a] @ x + 0.1 * rng.standard_normal()), {})
        picks.append(a == int(np.argmax(weights @ x)))
    assert np.mean(picks[-200:]) > 0.85


@pytest.mark.parametrize("rule", ["ucb", "thompson"])
def test_np_policy_streams_each_observation_once(tmp_path, rule):
    surrogate = load_surrogate(tiny_checkpoint(tmp_path, "cmanp", "wheel"))
    counter = EmbedCounter(surrogate.embed)
    policy = NPBanditPolicy(surrogate, rule=rule)
    env = WheelBanditEnv(horizon=40)
    obs, _ = env.reset(seed=0)
    policy.reset(0)
    for _ in range(40):
        action = policy.act(obs)
        assert 0 <= action < 5
        next_obs, reward, _, _, info = env.step(action)
        policy.observe(obs, action, reward, info)
        obs = next_obs
    assert policy.state.num_points == 40
    assert counter.points == 40  # one embedding per observation: never re-conditioned from scratch


def test_np_policy_decides_as_the_modules_would(tmp_path):
    # the policy's steps run CMANP's fused inference path; each UCB decision is the argmax of
    # the scores the modules give (autograd on) on the same history, equal to float32 rounding
    surrogate = load_surrogate(tiny_checkpoint(tmp_path, "cmanp", "wheel"))
    with torch.no_grad():  # as if trained: LayerNorm affines that are not the identity
        for module in surrogate.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.3, 0.3)
    policy = NPBanditPolicy(surrogate)
    env = WheelBanditEnv(horizon=15)
    obs, _ = env.reset(seed=1)
    policy.reset(1)
    reference = surrogate.condition(torch.zeros(1, 0, 2), torch.zeros(1, 0, 5))
    for t in range(15):
        action = policy.act(obs)
        x = torch.as_tensor(obs).reshape(1, 1, 2)
        if t > 0:
            dist = surrogate.predict(reference, x).encoded
            scores = (dist.loc + dist.scale)[0, 0].detach()
            with torch.inference_mode():
                fused = surrogate.predict(policy.state, x).encoded
            assert torch.allclose(fused.loc + fused.scale, scores, rtol=0, atol=1e-5)
            top = scores.sort(descending=True).values
            assert action == int(scores.argmax()) or top[0] - top[1] < 1e-5
        next_obs, reward, _, _, info = env.step(action)
        y = torch.zeros(1, 1, 5)
        y[0, 0, action] = reward  # the zeros fill of the tiny wheel checkpoint
        policy.observe(obs, action, reward, info)
        reference = surrogate.update(reference, x, y)
        obs = next_obs
    assert policy.state.fused is not None and reference.fused is None


def test_np_policy_refuses_a_context_its_surrogate_cannot_hold(tmp_path):
    # act skips the surrogate's own checks of the target it builds: it checks the context itself
    policy = NPBanditPolicy(load_surrogate(tiny_checkpoint(tmp_path, "cmanp", "wheel")))
    policy.reset(0)
    policy.observe(np.array([0.1, 0.2]), 1, 0.5, {})
    for bad in (np.array([1e39, 0.0]), np.array([np.nan, 0.0]), np.array([0.1, 0.2, 0.3])):
        with pytest.raises(ValueError, match="obs"):
            policy.act(bad)


def test_np_policy_fills_unplayed_arms_with_noise(tmp_path):
    surrogate = load_surrogate(tiny_checkpoint(tmp_path, "lbanp", "wheel"))
    surrogate.outcome_transform = RewardEncoding(50.0, "identity", "noise")
    policy = NPBanditPolicy(surrogate)
    policy.reset(0)
    policy.observe(np.array([0.1, 0.2], dtype=np.float32), 3, 7.5, {})
    y = policy.state.yc[0, 0]  # what the network read
    assert policy.encoding == RewardEncoding(50.0, "identity", "noise")  # the surrogate's
    assert policy.params()["reward_fill"] == "noise"
    assert torch.isclose(y[3], torch.tensor(7.5 / 50)) and torch.isfinite(y).all()
    assert (y[[0, 1, 2, 4]] != 0).all()
    # a bare transform names no fill: the policy is told one, and records both as the encoding
    surrogate.outcome_transform = Scale(50.0)
    with pytest.raises(ValueError, match="fill is required"):
        NPBanditPolicy(surrogate)
    policy = NPBanditPolicy(surrogate, fill="noise")
    assert policy.fill == RewardFill("noise") and policy.encoding == RewardEncoding(50.0, "identity", "noise")
    assert NPBanditPolicy(surrogate, fill=RewardFill("zeros")).params()["reward_fill"] == "zeros"
    surrogate.outcome_transform = Bilog(2.0)
    assert NPBanditPolicy(surrogate, fill="zeros").encoding == RewardEncoding(2.0, "symlog", "zeros")


def test_np_policy_fills_unplayed_arms_as_its_prior_did(tmp_path):
    surrogate = load_surrogate(tiny_checkpoint(tmp_path, "lbanp", "wheel"))
    policy = NPBanditPolicy(surrogate)  # the wheel prior's default, declared by the card
    assert policy.encoding == surrogate.outcome_transform == RewardEncoding(1.0, "symlog", "zeros")
    assert policy.params()["reward_fill"] == "zeros"
    policy.reset(0)
    policy.observe(np.array([0.1, 0.2], dtype=np.float32), 2, 1.2, {})
    y = policy.state.yc[0, 0]
    assert torch.isclose(y[2], torch.tensor(math.log(2.2)))
    assert (y[[0, 1, 3, 4]] == 0).all()


def test_np_policy_leaves_the_encoding_to_its_surrogate(tmp_path, monkeypatch):
    """The network sees encoded rewards; decisions are argmax(mu + beta sigma) of its own
    Gaussian. The policy passes raw rewards: a surrogate without a transform is refused."""
    surrogate = load_surrogate(tiny_checkpoint(tmp_path, "lbanp", "wheel"))
    policy = NPBanditPolicy(surrogate)
    seen = []
    real_predict = surrogate.predict

    def predict(state, x, **kwargs):
        dist = real_predict(state, x, **kwargs)
        seen.append((dist.encoded.loc[0, 0].clone(), dist.encoded.scale[0, 0].clone()))
        return dist

    monkeypatch.setattr(surrogate, "predict", predict)
    policy.reset(3)
    policy.observe(np.array([0.5, 0.5], dtype=np.float32), 1, 50.0, {})
    assert torch.isclose(policy.state.yc[0, 0, 1], torch.tensor(math.log(51.0)))
    action = policy.act(np.array([0.6, 0.6], dtype=np.float32))
    loc, scale = seen[-1]
    assert action == int(torch.argmax(loc + scale))
    bare = build("lbanp", 2, 5, size="tiny")
    with pytest.raises(ValueError, match="outcome_transform"):
        NPBanditPolicy(bare)
    with pytest.raises(TypeError, match="outcome_transform"):
        bare.outcome_transform = {"reward_scale": 1.0}
    with pytest.raises(ValueError, match="reward_scale"):
        RewardEncoding(0.0)
    with pytest.raises(ValueError, match="reward_transform"):
        RewardEncoding(1.0, "log")
    with pytest.raises(ValueError, match="reward_fill"):
        RewardEncoding(1.0, "identity", "nan")
    for beta in (float("nan"), float("inf"), -1.0):  # NaN passed `beta < 0` and UCB then played one arm
        with pytest.raises(ValueError, match="beta"):
            NPBanditPolicy(surrogate, beta=beta)


def _old_policy_actions(model, rule, delta, seed, steps):
    """The pre-refactor NPBanditPolicy, written out: the policy fills the unplayed arms
    and encodes the row itself, then feeds the network model units (a copy of ``model``
    without its transform)."""
    from npbandit.envs import WheelBanditEnv

    bare = copy.deepcopy(model)
    encoding, bare.outcome_transform = bare.outcome_transform, None
    rng = np.random.default_rng(seed)
    torch_rng = torch.Generator().manual_seed(int(rng.integers(2**62)))
    env = WheelBanditEnv(delta=delta, horizon=steps)
    obs, _ = env.reset(seed=seed)
    state = bare.condition(torch.zeros(1, 0, 2), torch.zeros(1, 0, 5))
    actions = []
    for _ in range(steps):
        x = torch.as_tensor(obs, dtype=torch.float32).reshape(1, 1, -1)
        if state.num_points == 0:
            action = int(rng.integers(5))
        else:
            dist = bare.predict(state, x)
            mu, sigma = dist.loc[0, 0], dist.scale[0, 0]
            noise = 1.0 if rule == "ucb" else torch.randn(mu.shape, generator=torch_rng, dtype=mu.dtype)
            action = int(torch.argmax(mu + sigma * noise))
        obs_next, reward, _, _, _ = env.step(action)
        if encoding.fill == "zeros":
            y = torch.zeros((1, 1, 5), dtype=torch.float32)
        else:
            y = torch.randn((1, 1, 5), generator=torch_rng, dtype=torch.float32)
        y[0, 0, action] = float(reward)
        z = y / encoding.scale
        state = bare.update(state, x, torch.sign(z) * torch.log1p(z.abs()) if encoding.transform == "symlog" else z)
        actions.append(action)
        obs = obs_next
    return actions


# lbanp-wheel: the noise-fill path (see test_np_policy_fills_unplayed_arms_with_noise)
@pytest.mark.parametrize("name, rule", [("cmanp-wheel", "ucb"), ("tnpd-wheel", "thompson"),
                                        ("lbanp-wheel", "thompson")])
@pytest.mark.slow
def test_np_policy_acts_as_the_hand_encoding_policy_did(name, rule):
    """Moving the encoding into the surrogate changes no decision: same seed, same actions."""
    from npbandit.envs import WheelBanditEnv
    from npbandit.loop import run_episode

    model = load_surrogate(name)
    for seed, delta in ((0, 0.95), (1, 0.5)):
        result = run_episode(WheelBanditEnv(delta=delta, horizon=60), NPBanditPolicy(model, rule=rule), seed=seed)
        assert [s["action"] for s in result.steps] == _old_policy_actions(model, rule, delta, seed, 60)


def test_make_bandit_policy_names(tmp_path):
    assert make_bandit_policy("uniform").name == "uniform"
    assert make_bandit_policy("linucb").name == "linucb"
    with pytest.raises(ValueError, match="policy must be"):
        make_bandit_policy("nonsense-wheel")
    with pytest.raises(ValueError, match="rule"):
        NPBanditPolicy(load_surrogate(tiny_checkpoint(tmp_path, "cmanp", "wheel")), rule="greedy")


@pytest.mark.parametrize("name", ["cmanp-wheel", "tnpd-wheel"])  # lbanp-wheel: arm 0 inside in 0.71 of these probes
def test_shipped_wheel_checkpoints_read_delta_from_the_history(name):
    """After 300 random rounds at δ = 0.5, UCB plays arm 0 well inside the wheel and the
    quadrant's 50-reward arm well outside. A wrong reward encoding (scale, transform or
    fill) between the prior and the policy breaks one side or the other."""
    from npbandit.priors.wheel import (
        LARGE_REWARD_STD,
        SMALL_REWARD_STD,
        quadrant_arm,
        sample_unit_disc,
        wheel_mean_rewards,
    )

    policy = NPBanditPolicy(load_surrogate(name))
    policy.reset(0)
    g = torch.Generator().manual_seed(0)
    delta = torch.tensor(0.5)
    x = sample_unit_disc(g, 300).double()
    means, large = wheel_mean_rewards(x, delta)
    arms = torch.randint(0, 5, (300,), generator=g)
    for xi, a, m, big in zip(x, arms, means, large):
        reward = float(m[a] + (LARGE_REWARD_STD if big[a] else SMALL_REWARD_STD) * torch.randn((), generator=g))
        policy.observe(xi.float().numpy(), int(a), reward, {})
    probe = sample_unit_disc(g, 400)
    radius = probe.norm(dim=-1)
    inside, outside = probe[radius < 0.35], probe[radius > 0.65]
    assert len(inside) > 30 and len(outside) > 100
    inside_ok = sum(policy.act(p.numpy()) == 0 for p in inside) / len(inside)
    outside_ok = sum(policy.act(p.numpy()) == int(quadrant_arm(p)) for p in outside) / len(outside)
    assert outside_ok >= 0.95, f"{name}: quadrant arm outside the wheel only {outside_ok:.2f} of the time"
    assert inside_ok >= 0.8, f"{name}: arm 0 inside the wheel only {inside_ok:.2f} of the time"


@pytest.mark.parametrize("name", ["cmanp-wheel", "lbanp-wheel", "tnpd-wheel"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.slow
def test_shipped_wheel_checkpoints_find_the_large_arms_in_the_loop(name, seed):
    """UCB on its own history (the benchmark's path, first action random) must not lock
    onto one arm: an LBANP trained with zeros fill played arm 0 for 1999 of 2000 rounds."""
    from npbandit.envs import WheelBanditEnv
    from npbandit.loop import run_episode

    result = run_episode(WheelBanditEnv(delta=0.5, horizon=300), NPBanditPolicy(load_surrogate(name)), seed=seed)
    uniform = 300 * (0.25 * 0.16 + 0.75 * 39.16)
    assert result.cumulative_regret < 0.1 * uniform, \
        f"{name}: regret {result.cumulative_regret:.0f} vs Uniform ≈ {uniform:.0f}"


def test_policies_refuse_an_action_that_is_not_an_arm_rather_than_credit_another_arm():
    from npbandit.policies import GPUCBPolicy

    surrogate = load_surrogate("tnpd-wheel")
    for policy in (LinUCBPolicy(), GPUCBPolicy(), NPBanditPolicy(surrogate)):
        policy.reset(0)
        for action, match in ((-1, "action"), (5, "action"), (1.7, "action"), (True, "action")):
            with pytest.raises(ValueError, match=match):
                policy.observe(np.zeros(2), action, 1.0, {})
        with pytest.raises(ValueError, match="reward"):
            policy.observe(np.zeros(2), 0, float("nan"), {})
        policy.observe(np.zeros(2), np.int64(4), 1.0, {})  # NumPy ints are arms too


@pytest.mark.slow
def test_gp_ucb_refits_every_arms_hyperparameters_as_its_data_grows():
    from npbandit.policies import GPUCBPolicy

    policy = GPUCBPolicy(refit_every=5)
    policy.reset(0)
    rng = np.random.default_rng(0)
    for t in range(75):  # round robin: 15 points per arm
        policy.observe(rng.uniform(-1, 1, 2), t % 5, float(rng.normal()), {})
        policy.act(rng.uniform(-1, 1, 2))
    # every arm's hyperparameters were fitted on at least 10 of its 15 points: at 1, 2, 4, 8, then refit_every
    # later, at 13 (doubling alone would stop at 8; the old schedule refit only the arm played on a multiple of
    # refit_every rounds: in a round robin always the same one, the others kept a fit made on their first point)
    assert all(n >= 10 for n in policy.fitted_on), policy.fitted_on


def test_gp_ucb_tries_again_an_arm_seen_once_far_from_its_one_context():
    """An arm's GP sees its rewards on the scale of every arm's (their mean and std) with a prior
    mean of that mean: after one low reward, far from that reward's context the arm is as uncertain
    as the prior, so UCB tries it there. Standardised by its own single reward, the arm's prior mean
    was that reward and its prior std 1 in reward units, and an arm whose first reward fell 2 below
    the others' never scored above them again."""
    from npbandit.policies import GPUCBPolicy

    policy = GPUCBPolicy(n_arms=2, bounds=[[0.0], [1.0]])
    policy.reset(0)
    for i, x in enumerate(np.linspace(0.0, 1.0, 20)):  # arm 0 is known to pay about 0 everywhere
        policy.observe(np.array([x]), 0, 0.01 * (-1) ** i, {})
    policy.observe(np.array([0.0]), 1, -2.0, {})  # arm 1, once, at the other end
    assert policy.act(np.array([1.0])) == 1


def test_make_bandit_policy_reads_paths_without_hyphens_and_gives_linucb_the_exploration_weight(tmp_path,
                                                                                                   monkeypatch):
    from npbandit.policies import parse_bandit_policy_name

    source = tiny_checkpoint(tmp_path / "ckpt", model="tnpd", prior="wheel")
    plain = tmp_path / "ckpt" / "mywheel"  # no hyphen in the last part of the path
    plain.mkdir()
    card = json.loads(source.read_text())
    (plain / "mywheel.json").write_text(source.read_text())
    (plain / card["weights"]).write_bytes((source.parent / card["weights"]).read_bytes())
    monkeypatch.chdir(tmp_path / "ckpt")  # a relative path without a hyphen anywhere (tmp_path has some)
    path = "mywheel/mywheel.json"
    assert parse_bandit_policy_name(path) == (path, "ucb")
    assert parse_bandit_policy_name("cmanp") == ("cmanp-wheel", "ucb")
    assert make_bandit_policy(path).surrogate.card["sha256"] == card["sha256"]
    assert make_bandit_policy("linucb", beta=2.5).alpha == 2.5
    with pytest.raises(ValueError, match="baseline"):
        parse_bandit_policy_name("linucb-thompson")


# -- BOPolicy's model factory ----------------------------------------------------------------------------------

def _run_bo(policy, steps, seed=0):
    policy.reset(seed)
    for _ in range(steps):
        x = policy.act(None)
        policy.observe(None, x, float(-np.sum((x - 0.3) ** 2)), {})
    return np.array(policy.X)


def test_bo_policy_builds_its_model_with_an_injected_factory():
    """A callable (train_X, train_Y) -> Model is called before every proposal with what the
    model sees; its name and params() are the run's; the GP's factory runs as model="gp"."""
    from npbandit.policies import BOPolicy
    from npbandit.policies.factories import GPModelFactory
    from npbandit.policies.gp import fit_single_task_gp

    calls = []

    class Counting:
        name = "counted-gp"

        def __call__(self, train_X, train_Y):
            calls.append((train_X.clone(), train_Y.clone()))
            return fit_single_task_gp(train_X, train_Y, noise_free=True)

        def params(self):
            return {"model": self.name, "fits": "per proposal"}

    policy = BOPolicy(2, model=Counting(), n_init=3, num_restarts=2, raw_samples=32)
    assert policy.name == "counted-gp-logei" and policy.trust_region is False and policy.surrogate is None
    X = _run_bo(policy, 5)
    assert len(calls) == 2  # one per proposal after the 3-point design
    for i, (train_X, train_Y) in enumerate(calls):
        assert torch.equal(train_X, torch.as_tensor(X[:3 + i])) and train_Y.shape == (3 + i, 1)
    params = policy.params()
    assert params["model"] == "counted-gp" and params["fits"] == "per proposal" and "noise_free" not in params
    # the injected GP factory is model="gp": the same points on the same seed, the same logged settings
    injected = BOPolicy(2, model=GPModelFactory(noise_free=True, kernel="matern52"), n_init=3, num_restarts=2,
                        raw_samples=32)
    named = BOPolicy(2, model="gp", noise_free=True, gp_kernel="matern52", n_init=3, num_restarts=2, raw_samples=32)
    assert np.array_equal(_run_bo(injected, 5), _run_bo(named, 5))
    assert injected.params() == named.params() and injected.name == named.name == "gp-logei"
    assert (injected.noise_free, injected.gp_kernel) == (True, "matern52")
    assert BOPolicy(2, model=lambda X, Y: None).name == "<lambda>-logei"
    with pytest.raises(ValueError, match="configure the GP"):
        BOPolicy(2, model=Counting(), noise_free=True)
    with pytest.raises(TypeError, match="model factory"):
        BOPolicy(2, model=3)
    with pytest.raises(ValueError, match="gp_kernel must be one of"):
        GPModelFactory(kernel="periodic")


def test_model_names_resolve_through_the_registry_and_an_np_factory_streams_like_its_name(tmp_path):
    from npbandit.policies import BOPolicy
    from npbandit.policies.factories import GPModelFactory, NPModelFactory, model_factory

    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    gp = model_factory("gp", noise_free=True)
    assert isinstance(gp, GPModelFactory) and gp.params() == {"noise_free": True, "gp_kernel": "rbf"}
    np_factory = model_factory(card)
    assert isinstance(np_factory, NPModelFactory) and np_factory.name == card and np_factory.params() == {}
    with pytest.raises(ValueError, match="GP"):
        model_factory(card, noise_free=True)
    with pytest.raises(TypeError, match="surrogate"):
        NPModelFactory(object())
    # an injected NP factory is a checkpoint name: trust region on by default, checkpoint logged,
    # and without a region the model built once and streamed, the same points on the same seed
    injected = BOPolicy(2, model=NPModelFactory(load_surrogate(card), name="tiny"), num_restarts=2, raw_samples=32,
                        trust_region=False)
    named = BOPolicy(2, model=card, num_restarts=2, raw_samples=32, trust_region=False)
    assert injected.name == "tiny-logei" and injected.checkpoint == named.checkpoint
    assert BOPolicy(2, model=NPModelFactory(load_surrogate(card))).trust_region is True
    assert np.array_equal(_run_bo(injected, 7), _run_bo(named, 7))
    assert injected.np_model is not None and injected.np_model.train_X.shape[-2] == 7  # streamed
    assert injected.params() == named.params()


def test_a_model_is_a_name_or_a_factory_named_by_itself():
    from npbandit.policies.factories import GPModelFactory, as_model_factory

    factory, name = as_model_factory("gp", noise_free=True)
    assert isinstance(factory, GPModelFactory) and factory.noise_free and name == "gp"

    def fit(X, Y):
        return None

    assert as_model_factory(fit) == (fit, "fit")
    named = GPModelFactory()
    assert as_model_factory(named) == (named, "gp")
    with pytest.raises(TypeError, match="model must be a name or a model factory"):
        as_model_factory(3)
    with pytest.raises(ValueError, match="noise_free and gp_kernel configure the GP"):
        as_model_factory(fit, gp_kernel="matern52")


def test_a_subspace_needs_its_width_from_the_model_or_its_d_e():
    from npbandit.acquisition.subspace import CountSketch
    from npbandit.acquisition.wide_spaces import default_subspace, subspace_and_width

    assert subspace_and_width(None, 6, 4, None) == (None, 6)  # fits: no subspace
    assert subspace_and_width(None, None, 40, None) == (None, None)  # a model of any width
    wide, width = subspace_and_width(None, 6, 40, None)
    assert type(wide) is type(default_subspace()) and width == 6
    sketch = CountSketch(d_e=5)
    assert subspace_and_width(sketch, None, 40, None) == (sketch, 5)
    with pytest.raises(ValueError, match="subspace needs its d_e with a model other than an NP checkpoint"):
        subspace_and_width(CountSketch(), None, 40, None)


def test_bo_policy_takes_a_checkpoint_path_as_a_path(tmp_path):
    # what train() returns (TrainResult.card, a Path) goes straight to the policy, as to optimize
    from npbandit.policies.bo import BOPolicy

    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    by_path, by_str = BOPolicy(2, model=card), BOPolicy(2, model=str(card))
    assert by_path.model_name == by_str.model_name == str(card) and by_path.trust_region
    by_path.reset(0)
    assert by_path.act(None).shape == (2,)
