"""The per-arm NP policy on contexts wider than its checkpoint: the context projections
(what they fit, from what), the refit schedule, the box the arms' models read (widened for a
context outside it, never clipped), the arms re-conditioned in the new coordinates, and the
errors for bad projections. Tiny random-weight checkpoints: the plumbing, not the decisions."""

import numpy as np
import pytest
from helpers import LinearBandit, drive_bandit, per_arm_replay, tiny_checkpoint

from npbandit import load_surrogate
from npbandit.loop import run_episode
from npbandit.policies import PerArmNPPolicy, PrincipalComponents, RewardDirections, make_bandit_policy
from npbandit.policies.context_projection import (
    BOX_MARGIN,
    ContextProjection,
    Identity,
    ProjectionMap,
    default_projection,
    working_box,
)

WIDE = 20  # wider than the tiny bo checkpoint (6, as the shipped ones)
BOX = [[-1.0] * WIDE, [1.0] * WIDE]


@pytest.fixture(scope="module")
def bo_card(tmp_path_factory):
    return str(tiny_checkpoint(tmp_path_factory.mktemp("ckpt"), "cmanp", "bo"))


class Recording(PrincipalComponents):
    """Principal components that keep a copy of every set of rows they were fitted on."""

    def __init__(self):
        self.seen = []

    def fit(self, contexts, arms, rewards, n_arms, width):
        self.seen.append((contexts.copy(), arms.copy(), rewards.copy()))
        return super().fit(contexts, arms, rewards, n_arms, width)


@pytest.mark.parametrize("name", ["{bo}", "{bo}-ucb", "{bo}-thompson"])
def test_every_np_policy_name_runs_on_a_20d_4_arm_bandit(bo_card, name):
    env = LinearBandit(context_dim=WIDE, n_arms=4, horizon=40)
    policy = make_bandit_policy(name.format(bo=bo_card), env=env)
    result = run_episode(env, policy, seed=0)
    assert isinstance(policy, PerArmNPPolicy) and len(result.steps) == 40
    assert (policy.context_dim, policy.model_dim) == (WIDE, 6) and sum(policy.counts) == 40
    assert type(policy.projection) is type(default_projection())
    assert policy.params()["projection"] == {**default_projection().params(), "width": 6}
    assert policy.map.matrix.shape == (WIDE, 6) and all(m is not None for m in policy.models)


def test_the_projection_is_refitted_when_the_rows_double_on_the_rows_seen_only(bo_card):
    """The first fit once every arm has n_init rounds and the rows outnumber the model's width
    (2 arms x n_init 2 = 4 rows are too few for 6 directions: 7), then at 14, 28, 56; each on
    exactly the rounds observed before it, in order."""
    projection = Recording()
    policy = PerArmNPPolicy(load_surrogate(bo_card), BOX, 2, projection=projection)
    rounds = drive_bandit(LinearBandit(context_dim=WIDE, n_arms=2, horizon=60), policy, seed=1, steps=60)
    assert policy.refits == [7, 14, 28, 56] and len(projection.seen) == 4
    for n, (contexts, arms, rewards) in zip(policy.refits, projection.seen):
        np.testing.assert_array_equal(contexts, np.array([x for x, _, _ in rounds[:n]]))
        np.testing.assert_array_equal(arms, [a for _, a, _ in rounds[:n]])
        np.testing.assert_array_equal(rewards, [r for _, _, r in rounds[:n]])


def test_before_the_first_fit_the_arms_without_n_init_rounds_play_then_any(bo_card):
    policy = PerArmNPPolicy(load_surrogate(bo_card), BOX, 2, n_init=2, projection="principal-components")
    policy.reset(0)
    x = np.zeros(WIDE)
    assert np.isnan(policy.predict(x)[0]).all()
    for arm in (0, 0, 1):
        policy.observe(x, arm, 1.0, {})
    assert {policy.act(x) for _ in range(10)} == {1}  # arm 1 still lacks a round
    policy.observe(x, 1, 0.0, {})
    assert {policy.act(x) for _ in range(30)} == {0, 1} and policy.map is None  # 4 rows: too few to fit 6 directions


def test_each_arm_is_re_conditioned_in_the_new_coordinates_then_streamed(bo_card):
    """After a fit, arm a's predictive is an NPModel conditioned on arm a's rows in the fitted
    map's coordinates, in the box of the rows then, rewards on the scale of all rewards then,
    with its later rows streamed in; a widening or a re-scaling rebuilds every arm the same way."""
    policy = PerArmNPPolicy(load_surrogate(bo_card), BOX, 3, n_views=1, projection=RewardDirections())
    rebuilds = []
    rounds = drive_bandit(LinearBandit(context_dim=WIDE, n_arms=3, horizon=27), policy, seed=2, steps=27,
                          rebuilds=rebuilds)
    assert policy.refits == [7, 14] and 14 in rebuilds and rebuilds[-1] < 27
    X = np.array([x for x, _, _ in rounds])
    probe = X.mean(0)  # inside the box: the rows' range holds their mean
    np.testing.assert_array_equal(policy.predict(probe), per_arm_replay(policy, rounds, rebuilds[-1], probe))


def test_a_context_outside_the_box_widens_it_and_is_never_clipped(bo_card):
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[-10.0] * WIDE, [10.0] * WIDE], 2, n_views=1)
    drive_bandit(LinearBandit(context_dim=WIDE, n_arms=2, horizon=10), policy, seed=3, steps=10)
    assert policy.refits == [7]
    before = policy.widenings
    far = np.full(WIDE, 9.0)  # inside the bounds, far outside every row seen
    z = policy.map(far)
    assert ((z < policy.box[0]) | (z > policy.box[1])).any()
    arm = policy.act(far)
    assert policy.widenings == before + 1 and ((policy.box[0] < z) & (z < policy.box[1])).all()
    assert policy.box[1].max() - policy.box[0].min() > 0
    policy.observe(far, arm, 1.0, {})  # streamed as it is, inside the widened box
    np.testing.assert_array_equal(policy.models[arm].train_X[-1].numpy(), z)
    assert policy.widenings == before + 1


def test_principal_components_are_the_leading_directions_of_the_standardised_rows():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 8)) @ np.diag([5, 4, 3, 2, 1, 0.5, 0.2, 0.1]) * np.arange(1, 9) + 3.0
    fitted = PrincipalComponents().fit(X, np.zeros(200, int), np.zeros(200), 2, 3)
    mean, std = X.mean(0), X.std(0)
    np.testing.assert_allclose(fitted.center, mean)
    directions = fitted.matrix * std[:, None]  # back in standardised units: orthonormal
    np.testing.assert_allclose(directions.T @ directions, np.eye(3), atol=1e-12)
    _, s, vt = np.linalg.svd((X - mean) / std, full_matrices=False)
    np.testing.assert_allclose(np.abs(directions.T @ vt[:3].T), np.eye(3), atol=1e-8)  # the same, up to sign
    variance = fitted(X).var(0)
    np.testing.assert_allclose(variance, s[:3] ** 2 / 200, rtol=1e-10)


def test_reward_directions_span_the_arms_linear_indices_then_principal_components():
    """Arms whose mean reward is linear in two directions of a 20-D context: the fitted map's
    first two columns span those directions (to the ridge's shrinkage), the rest are
    principal components orthogonal to them."""
    rng = np.random.default_rng(1)
    n = 3000
    X = rng.standard_normal((n, WIDE))
    w = np.zeros((WIDE, 2))
    w[3, 0] = w[11, 1] = 1.0
    arms = rng.integers(3, size=n)
    means = np.stack([X @ w[:, 0], X @ w[:, 1], -X @ w[:, 0] - X @ w[:, 1]], 1)
    rewards = means[np.arange(n), arms] + 0.1 * rng.standard_normal(n)
    fitted = RewardDirections().fit(X, arms, rewards, 3, 6)
    directions = fitted.matrix * X.std(0)[:, None]
    np.testing.assert_allclose(directions.T @ directions, np.eye(6), atol=1e-10)
    span = directions[:, :2]
    # the true directions lie in the fitted span: their projections keep almost all of their length
    assert np.linalg.norm(span.T @ w, axis=0).min() > 0.999
    assert np.abs(directions[:, 2:].T @ w).max() < 0.05
    B = RewardDirections().coefficients((X - X.mean(0)) / X.std(0), arms, rewards, 3)
    assert B.shape == (WIDE, 3) and np.linalg.matrix_rank(B, tol=0.05) == 2
    with pytest.raises(ValueError, match="ridge must be > 0"):
        RewardDirections(ridge=0.0)


def test_more_arms_than_the_width_keep_the_leading_reward_directions():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((500, 12))
    arms = np.arange(500) % 8
    rewards = X[np.arange(500), arms]  # arm a pays feature a: 8 directions, 3 kept
    fitted = RewardDirections().fit(X, arms, rewards, 8, 3)
    assert fitted.matrix.shape == (12, 3)
    assert np.abs(fitted.matrix[8:]).max() < 0.1  # the features no arm reads are left out


class Wrong(ContextProjection):
    def __init__(self, result):
        self.result = result

    def fit(self, contexts, arms, rewards, n_arms, width):
        return self.result


@pytest.mark.parametrize("result, error, match", [
    (np.eye(WIDE)[:, :6], TypeError, "Wrong.fit must return a ProjectionMap"),
    (ProjectionMap(np.zeros(WIDE), np.eye(WIDE)[:, :7]), ValueError, r"1 <= k <= 6, got shapes \(20,\) and \(20, 7\)"),
    (ProjectionMap(np.zeros(3), np.eye(WIDE)[:, :6]), ValueError, "center"),
    (ProjectionMap(np.zeros(WIDE), np.full((WIDE, 2), np.nan)), ValueError, "non-finite"),
])
def test_a_projection_that_fits_a_bad_map_is_refused_by_name(bo_card, result, error, match):
    policy = PerArmNPPolicy(load_surrogate(bo_card), BOX, 2, projection=Wrong(result))
    with pytest.raises(error, match=match):
        drive_bandit(LinearBandit(context_dim=WIDE, n_arms=2, horizon=10), policy, seed=0, steps=10)


def test_contexts_that_fit_are_read_as_they_are_unless_a_projection_is_given(bo_card):
    narrow = make_bandit_policy(bo_card, env=LinearBandit(context_dim=3, n_arms=4))
    assert isinstance(narrow.projection, Identity) and narrow.model_dim == 3
    assert narrow.params()["projection"] == {"name": "identity", "width": 3}
    run_episode(LinearBandit(context_dim=3, n_arms=4, horizon=20), narrow, seed=0)
    np.testing.assert_array_equal(narrow.map.matrix, np.eye(3))
    given = make_bandit_policy(bo_card, env=LinearBandit(context_dim=3, n_arms=4), projection=RewardDirections(2.0))
    assert given.model_dim == 3 and given.params()["projection"] == {"name": "reward-directions", "ridge": 2.0,
                                                                      "width": 3}
    result = run_episode(LinearBandit(context_dim=3, n_arms=4, horizon=20), given, seed=0)
    assert len(result.steps) == 20 and given.refits == [8, 16] and given.map.matrix.shape == (3, 3)
    with pytest.raises(ValueError, match="at most width"):
        Identity().fit(np.zeros((8, 7)), np.zeros(8, int), np.zeros(8), 2, 6)


def test_a_round_observed_without_act_outside_the_box_widens_it_and_is_kept_once(bo_card):
    policy = PerArmNPPolicy(load_surrogate(bo_card), [[-10.0] * 3, [10.0] * 3], 2, n_views=1)
    drive_bandit(LinearBandit(context_dim=3, n_arms=2, horizon=10), policy, seed=3, steps=10)
    assert policy.refits == [4, 8]
    far = np.full(3, 9.0)
    rows, widenings = policy.models[0].train_X.shape[0], policy.widenings
    policy.observe(far, 0, 1.0, {})  # no act: observe maps it, widening the box on the rows before it
    assert policy.widenings == widenings + 1 and policy.models[0].train_X.shape[0] == rows + 1
    np.testing.assert_array_equal(policy.models[0].train_X[-1].numpy(), far)


def test_the_box_is_the_rows_range_widened_by_the_margin():
    Z = np.array([[0.0, 1.0], [2.0, 1.0]])
    np.testing.assert_allclose(working_box(Z), [[-2 * BOX_MARGIN, 0.0], [2 + 2 * BOX_MARGIN, 2.0]])
