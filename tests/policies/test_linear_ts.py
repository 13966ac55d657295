"""LinearTSPolicy (``lin-ts``): its posterior is the batch Normal-Inverse-Gamma fit, its draws
follow that posterior, it runs in the loop, and it refuses bad input naming the argument."""

import numpy as np
import pytest

from npbandit.envs import WheelBanditEnv
from npbandit.exceptions import PolicyNotResetError
from npbandit.loop import run_episode
from npbandit.policies import LinearTSPolicy, make_bandit_policy
from npbandit.policies.bandit import parse_bandit_policy_name
from npbandit.policies.linear_ts import cholesky_add
from npbandit.storage import RunLogger, list_runs


def _fed(rows: int = 40, seed: int = 0, **kwargs) -> tuple[LinearTSPolicy, dict[int, tuple[np.ndarray, np.ndarray]]]:
    """A 3-arm, 4-D policy fed ``rows`` random rounds, and each arm's rows ``(Z [n, 5], y [n])``."""
    rng = np.random.default_rng(seed)
    policy = LinearTSPolicy(n_arms=3, context_dim=4, **kwargs)
    policy.reset(seed)
    seen: dict[int, tuple[list, list]] = {0: ([], []), 1: ([], []), 2: ([], [])}
    for _ in range(rows):
        x, arm = rng.normal(size=4), int(rng.integers(2))  # arm 2 is never played
        reward = float(rng.normal(loc=3.0 * x[0] - x[2] + 1.0, scale=0.5))
        policy.observe(x, arm, reward, {})
        seen[arm][0].append(np.append(x, 1.0))
        seen[arm][1].append(reward)
    return policy, {a: (np.array(z).reshape(-1, 5), np.array(y)) for a, (z, y) in seen.items()}


def test_cholesky_add_is_the_factor_of_the_sum():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(6, 6))
    precision = a @ a.T + np.eye(6)
    factor = np.linalg.cholesky(precision)
    z = rng.normal(size=6)
    cholesky_add(factor, z)
    assert np.allclose(np.triu(factor, 1), 0.0) and (np.diag(factor) > 0).all()
    # float64 factors of a matrix with condition number ~1e2: rounding errors ~1e-13 of its size
    np.testing.assert_allclose(factor, np.linalg.cholesky(precision + np.outer(z, z)), rtol=0, atol=1e-10)


def test_posterior_is_the_batch_normal_inverse_gamma_fit():
    policy, seen = _fed(rows=200, a0=2.0, b0=3.0, prior_precision=0.5)
    for arm, (z, y) in seen.items():
        precision = 0.5 * np.eye(5) + z.T @ z
        mean = np.linalg.solve(precision, z.T @ y)
        a = 2.0 + len(y) / 2
        b = 3.0 + 0.5 * (y @ y - mean @ precision @ mean)
        got_mean, got_precision, got_a, got_b = policy.posterior(arm)
        # rank-one Cholesky updates of a well-conditioned 5 x 5 precision (entries ~1e2) in float64:
        # errors are some 1e-13 relative; 1e-9 leaves a wide margin and still catches any wrong term
        np.testing.assert_allclose(got_precision, precision, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(got_mean, mean, rtol=1e-9, atol=1e-9)
        assert got_a == a and got_b == pytest.approx(b, rel=1e-9)
    # the arm never played holds its prior
    mean, precision, a, b = policy.posterior(2)
    assert (mean == 0).all() and np.allclose(precision, 0.5 * np.eye(5)) and (a, b) == (2.0, 3.0)


def test_draws_follow_the_posterior_mean_and_covariance():
    """Weights drawn jointly with the noise variance are multivariate t: mean m, covariance
    E[sigma^2] P^-1 with E[sigma^2] = b / (a - 1). Each sample moment is compared with its
    expectation within 6 of its exact standard errors (a scale mixture of Gaussians has
    Var(w_i w_j) = E[sigma^4] (S_ii S_jj + 2 S_ij^2) - E[sigma^2]^2 S_ij^2, S = P^-1, about the
    known mean), so a correct sampler fails with probability below 1e-7 per moment."""
    policy, _ = _fed(rows=30)
    mean, precision, a, b = policy.posterior(0)
    cov = np.linalg.inv(precision)
    n = 40_000
    draws = [policy.sample(0) for _ in range(n)]
    w = np.array([d[0] for d in draws])
    variance = np.array([d[1] for d in draws])
    e1, e2 = b / (a - 1), b**2 / ((a - 1) * (a - 2))  # E[sigma^2], E[sigma^4] of InvGamma(a, b)
    assert abs(variance.mean() - e1) < 6 * np.sqrt((e2 - e1**2) / n)
    assert np.all(np.abs(w.mean(axis=0) - mean) < 6 * np.sqrt(e1 * np.diag(cov) / n))
    centred = w - mean
    sample_cov = centred.T @ centred / n
    diag = np.diag(cov)
    spread = np.sqrt((e2 * (np.outer(diag, diag) + 2 * cov**2) - e1**2 * cov**2) / n)
    assert np.all(np.abs(sample_cov - e1 * cov) < 6 * spread)


def test_a_seeded_run_in_the_loop_is_logged_and_repeats(tmp_path):
    db = str(tmp_path / "runs.db")
    env = WheelBanditEnv(delta=0.5, horizon=30)
    policy = make_bandit_policy("lin-ts", env=env)
    assert isinstance(policy, LinearTSPolicy) and (policy.n_arms, policy.context_dim) == (5, 2)
    first = run_episode(env, policy, seed=3, logger=RunLogger(db))
    again = run_episode(env, policy, seed=3)
    assert [s["action"] for s in first.steps] == [s["action"] for s in again.steps]
    assert len(first.steps) == 30 and policy.counts.sum() == 30
    (run,) = list_runs(db)
    assert (run.policy, run.status, run.n_steps) == ("lin-ts", "completed", 30)
    assert run.policy_params == {"n_arms": 5, "a0": 6.0, "b0": 6.0, "prior_precision": 0.25, "initial_pulls": 2}


def test_lin_ts_finds_the_best_arm_of_a_linear_bandit():
    rng = np.random.default_rng(0)
    policy = LinearTSPolicy(n_arms=3, context_dim=2)
    policy.reset(0)
    weights = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    picks = []
    for _ in range(600):
        x = rng.uniform(-1, 1, 2)
        arm = policy.act(x)
        policy.observe(x, arm, float(weights[arm] @ x + 0.1 * rng.standard_normal()), {})
        picks.append(arm == int(np.argmax(weights @ x)))
    assert np.mean(picks[-200:]) > 0.85


@pytest.mark.parametrize("kwargs, match", [
    ({"n_arms": 1}, "n_arms"), ({"context_dim": 0}, "context_dim"), ({"a0": 0.0}, "a0 must be positive"),
    ({"b0": -1.0}, "b0 must be positive"), ({"prior_precision": float("nan")}, "prior_precision must be a finite"),
    ({"a0": "6"}, "a0 must be a finite"), ({"initial_pulls": -1}, "initial_pulls"),
])
def test_bad_settings_are_refused_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LinearTSPolicy(**kwargs)


def test_bad_steps_are_refused_naming_the_argument():
    policy = LinearTSPolicy(n_arms=3, context_dim=2)
    with pytest.raises(PolicyNotResetError, match="policy 'lin-ts' has not been reset"):
        policy.act(np.zeros(2))
    policy.reset(0)
    for call, match in [(lambda: policy.act(np.zeros(3)), r"obs must be a context of shape \(2,\)"),
                        (lambda: policy.act(np.array([0.0, np.nan])), "obs must be finite"),
                        (lambda: policy.observe(np.zeros(2), 3, 1.0, {}), "action must be an arm index"),
                        (lambda: policy.observe(np.zeros(2), 0, float("inf"), {}), "reward must be a finite"),
                        (lambda: policy.observe(np.zeros(2), 0, 1e200, {}), "reward 1e[+]?200 is too large"),
                        (lambda: policy.posterior(-1), "arm must be an arm index"),
                        (lambda: policy.sample(True), "arm must be an arm index")]:
        with pytest.raises(ValueError, match=match):
            call()
    assert policy.counts.sum() == 0 and (policy.zy == 0).all()  # nothing refused was taken in
    with pytest.raises(ValueError, match="baseline with its own rule"):
        parse_bandit_policy_name("lin-ts-thompson")


def test_each_arm_is_played_in_turn_before_the_first_draw():
    policy = LinearTSPolicy(n_arms=3, context_dim=2, initial_pulls=2)
    policy.reset(0)
    arms = []
    for t in range(6):
        x = np.array([0.1 * t, -0.2])
        arms.append(policy.act(x))
        policy.observe(x, arms[-1], 1.0 if arms[-1] == 2 else 0.0, {})
    assert arms == [0, 1, 2, 0, 1, 2]
    # the turns drew nothing from the policy's generator
    assert policy.rng.bit_generator.state == np.random.default_rng(0).bit_generator.state
    assert LinearTSPolicy(n_arms=3, context_dim=2, initial_pulls=0).params()["initial_pulls"] == 0
