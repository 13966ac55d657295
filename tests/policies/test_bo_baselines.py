"""The BO benchmark's baselines: the Optuna rows' wiring and the GP row's configuration."""

import numpy as np
import pytest
import torch

from npbandit.envs import BlackBoxEnv
from npbandit.loop import run_episode
from npbandit.policies import BOPolicy
from npbandit.policies.gp import NOISE_FREE_VAR


def test_noise_free_gp_runs_with_a_fixed_tiny_noise(monkeypatch):
    import botorch.optim
    from gpytorch.likelihoods import FixedNoiseGaussianLikelihood

    seen = []
    real = botorch.optim.optimize_acqf

    def spy(acq, bounds, **kwargs):
        seen.append((acq, kwargs))
        return real(acq, bounds, **kwargs)

    monkeypatch.setattr(botorch.optim, "optimize_acqf", spy)
    env = BlackBoxEnv(function="branin", budget=2 * 2 + 3)
    policy = BOPolicy(2, model="gp", noise_free=True)
    result = run_episode(env, policy, seed=0)
    assert len(result.steps) == 7 and len(seen) == 2  # 2d + 1 Sobol points, then two LogEI steps
    for acq, kwargs in seen:
        model = acq.model
        assert isinstance(model.likelihood, FixedNoiseGaussianLikelihood)
        assert torch.allclose(model.likelihood.noise, torch.tensor(NOISE_FREE_VAR, dtype=torch.float64))
        assert (kwargs["num_restarts"], kwargs["raw_samples"]) == (10, 512)
        # LogEI's best_f is the best reward, on the scale the (untransformed) posterior is on
        assert float(acq.best_f) == max(s["reward"] for s in result.steps[:len(model.train_targets)])
    assert policy.params()["noise_free"] is True
    assert BOPolicy(2, model="gp").params()["noise_free"] is False  # BoTorch's inferred noise stays the default
    with pytest.raises(ValueError, match="GP"):
        BOPolicy(2, model="cmanp-bo", noise_free=True)


def test_gp_kernel_builds_a_matern_52_with_the_dimension_scaled_prior():
    from gpytorch.kernels import MaternKernel, RBFKernel

    from npbandit.policies.gp import fit_single_task_gp

    X = torch.rand(8, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = X.sum(-1, keepdim=True)
    rbf = fit_single_task_gp(X, Y, noise_free=True)
    matern = fit_single_task_gp(X, Y, noise_free=True, kernel="matern52")
    assert isinstance(rbf.covar_module, RBFKernel)  # SingleTaskGP's own default stays the default
    assert isinstance(matern.covar_module, MaternKernel) and matern.covar_module.nu == 2.5
    assert matern.covar_module.lengthscale.shape == (1, 3)  # one lengthscale per input (ARD)
    assert torch.equal(matern.covar_module.lengthscale_prior.loc, rbf.covar_module.lengthscale_prior.loc)  # same prior
    with pytest.raises(ValueError, match="kernel must be one of"):
        fit_single_task_gp(X, Y, kernel="matern")
    assert BOPolicy(2, model="gp", gp_kernel="matern52").params()["gp_kernel"] == "matern52"
    assert BOPolicy(2, model="gp").params()["gp_kernel"] == "rbf"
    with pytest.raises(ValueError, match="gp_kernel must be one of"):
        BOPolicy(2, model="gp", gp_kernel="periodic")
    with pytest.raises(ValueError, match="GP"):
        BOPolicy(2, model="cmanp-bo", gp_kernel="matern52")


def test_gp_run_depends_on_its_seed_alone():
    """The GP's fit restarts and optimize_acqf's start points draw from torch's global
    generator; the policy seeds it from the run's seed, so earlier work in the process
    (another run, another test) leaves the run unchanged."""

    def actions(global_seed):
        torch.manual_seed(global_seed)
        result = run_episode(BlackBoxEnv(function="branin", budget=2 * 2 + 3), BOPolicy(2, model="gp", noise_free=True),
                             seed=5)
        return [s["action"].tolist() for s in result.steps]

    assert actions(0) == actions(1)


@pytest.mark.slow
def test_propose_depends_on_model_and_seed_alone(tmp_path):
    """optimize_acqf draws from torch's global generator besides its own seed, and so does a
    Thompson draw; the shared proposal step (BOPolicy, optimize, NPSampler) seeds it, so a
    point depends on the model and the seed alone, and the caller's generator is untouched."""
    from helpers import tiny_checkpoint

    from npbandit import NPModel
    from npbandit.acquisition.proposal import propose

    g = torch.Generator().manual_seed(0)
    X = torch.rand(9, 2, generator=g, dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    # a tiny random-weight CMANP card: the seeding is the same whatever the weights
    model = NPModel.from_pretrained(str(tiny_checkpoint(tmp_path, "cmanp", "bo")), X, Y)
    for acquisition in ("logei", "thompson"):
        points = []
        for global_seed in (1, 2):
            torch.manual_seed(global_seed)
            before = torch.random.get_rng_state()
            points.append(propose(model, acquisition, dim=2, best_f=Y.max(), seed=5, num_restarts=2, raw_samples=64))
            assert torch.equal(torch.random.get_rng_state(), before)
        assert np.array_equal(points[0], points[1]), acquisition
        assert points[0].shape == (2,) and np.all((points[0] >= 0) & (points[0] <= 1))
    with pytest.raises(ValueError, match="acquisition"):
        propose(model, "ei", dim=2, best_f=Y.max(), seed=5)


@pytest.mark.slow
def test_propose_never_returns_an_observed_point_when_told_what_was_observed():
    from npbandit import NPModel
    from npbandit.acquisition.proposal import REPEAT_DISTANCE, propose

    g = torch.Generator().manual_seed(0)
    X = torch.rand(9, 2, generator=g, dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    free = propose(model, "logei", dim=2, best_f=Y.max(), seed=5, num_restarts=4, raw_samples=64)
    # every restart lands on the free proposal: then it is the observation to stay away from
    crowded = torch.cat([X, torch.as_tensor(free).unsqueeze(0)])
    point = propose(model, "logei", dim=2, best_f=Y.max(), seed=5, num_restarts=4, raw_samples=64, observed=crowded)
    assert np.linalg.norm(crowded.numpy() - point, axis=1).min() >= REPEAT_DISTANCE
    assert np.array_equal(point, propose(model, "logei", dim=2, best_f=Y.max(), seed=5, num_restarts=4,
                                         raw_samples=64, observed=crowded))  # still seeded
    far = propose(model, "logei", dim=2, best_f=Y.max(), seed=5, num_restarts=4, raw_samples=64,
                  observed=torch.full((1, 2), 5.0, dtype=torch.float64))
    assert np.array_equal(far, free)  # nothing observed nearby: the proposal is unchanged
    with pytest.raises(ValueError, match="observed"):
        propose(model, "logei", dim=2, best_f=Y.max(), seed=5, observed=X[:, :1])


def test_when_every_restart_returns_to_an_observation_the_best_new_sobol_point_is_taken(monkeypatch):
    import botorch.optim
    from botorch.acquisition import LogExpectedImprovement

    from npbandit import NPModel
    from npbandit.acquisition.proposal import REPEAT_DISTANCE, propose

    g = torch.Generator().manual_seed(1)
    X = torch.rand(9, 2, generator=g, dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    monkeypatch.setattr(botorch.optim, "optimize_acqf",  # every restart ends on the first observation
                        lambda acq, bounds, q, num_restarts, **kw: (X[:1].expand(num_restarts, 1, 2),
                                                                    torch.zeros(num_restarts)))
    point = propose(model, "logei", dim=2, best_f=Y.max(), seed=3, raw_samples=64, observed=X)
    pool = torch.quasirandom.SobolEngine(2, scramble=True, seed=3).draw(64, dtype=torch.float64)
    pool = pool[torch.cdist(pool, X).amin(-1) >= REPEAT_DISTANCE]
    with torch.no_grad():
        best = pool[int(torch.argmax(LogExpectedImprovement(model, best_f=Y.max())(pool.unsqueeze(-2))))]
    assert np.array_equal(point, best.numpy())


@pytest.mark.slow
def test_gp_thompson_draw_is_one_function_across_the_candidates():
    """A GP Thompson draw is one function (drawn path-wise): nearly identical candidates
    get nearly identical values, and each value follows the posterior. The independent
    per-candidate draw it replaces put them about a posterior std apart, which over
    thousands of candidates makes the argmax an optimistic UCB."""
    from npbandit.acquisition.proposal import propose
    from npbandit.acquisition.thompson import thompson_draw
    from npbandit.policies.gp import fit_single_task_gp

    g = torch.Generator().manual_seed(0)
    X = torch.rand(8, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    gp = fit_single_task_gp(X, Y)
    base = torch.rand(32, 2, generator=g, dtype=torch.float64)
    candidates = torch.cat([base, base + 1e-5])
    with torch.no_grad():
        posterior = gp.posterior(base)
        draws = []
        for seed in range(60):
            torch.manual_seed(seed)
            draws.append(thompson_draw(gp, candidates, seed))
    draws = torch.stack(draws)
    std = posterior.variance.sqrt().reshape(-1)
    assert ((draws[:, :32] - draws[:, 32:]).abs() < 0.02 * std).all()
    z = (draws[:, :32] - posterior.mean.reshape(-1)) / std
    assert abs(float(z.mean())) < 0.3 and 0.7 < float(z.std()) < 1.3
    point = propose(gp, "thompson", dim=2, best_f=Y.max(), seed=3, thompson_candidates=256)
    assert point.shape == (2,) and np.all((point >= 0) & (point <= 1))


def test_np_thompson_draw_is_the_joint_models_joint_sample(tmp_path, monkeypatch):
    """With a not-diagonal NP (CMANP-AND) a Thompson draw is one joint sample over every
    candidate from the surrogate's sampler; a diagonal NP keeps its independent draw."""
    from helpers import tiny_checkpoint

    from npbandit import NPModel
    from npbandit.acquisition.proposal import propose
    from npbandit.acquisition.thompson import THOMPSON_BLOCK_SIZE, thompson_draw

    g = torch.Generator().manual_seed(0)
    X = torch.rand(6, 2, generator=g, dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    candidates = torch.rand(50, 2, generator=g, dtype=torch.float64)
    joint = NPModel.from_pretrained(str(tiny_checkpoint(tmp_path, "cmanp-and", "bo")), X, Y)
    calls = []
    sample = type(joint.surrogate).sample

    def spy(self, state, xt, num_samples, generator=None, **kw):
        calls.append(xt.shape)
        # the measured block, not the paper's 5: by default all the candidates in one
        assert kw["block_size"] == (xt.shape[1] if THOMPSON_BLOCK_SIZE is None else THOMPSON_BLOCK_SIZE)
        return sample(self, state, xt, num_samples, generator, **kw)

    monkeypatch.setattr(type(joint.surrogate), "sample", spy)
    with torch.no_grad():
        draw = thompson_draw(joint, candidates, seed=4)
        again = thompson_draw(joint, candidates, seed=4)
    assert calls == [(1, 50, 6), (1, 50, 6)]  # all candidates in one joint draw
    assert draw.shape == (50,) and draw.dtype == torch.float64 and torch.equal(draw, again)
    point = propose(joint, "thompson", dim=2, best_f=Y.max(), seed=4, thompson_candidates=64)
    assert point.shape == (2,) and len(calls) == 3

    diagonal = NPModel.from_pretrained(str(tiny_checkpoint(tmp_path, "cmanp", "bo")), X, Y)
    with torch.no_grad():
        torch.manual_seed(0)
        ours = thompson_draw(diagonal, candidates, seed=4)
        torch.manual_seed(0)
        independent = diagonal.posterior(candidates.unsqueeze(-2)).rsample().reshape(-1)
    assert torch.equal(ours, independent)


def test_thompson_draw_validates_its_inputs():
    from npbandit.acquisition.thompson import thompson_draw
    from npbandit.policies.gp import fit_single_task_gp

    gp = fit_single_task_gp(torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64))
    with pytest.raises(TypeError, match="candidates"):
        thompson_draw(gp, torch.rand(5, dtype=torch.float64), 0)
    with pytest.raises(TypeError, match="seed"):
        thompson_draw(gp, torch.rand(5, 2, dtype=torch.float64), 0.5)


def test_a_gp_on_equal_observations_does_not_call_them_unstandardised():
    # a bandit arm that always paid 0: BoTorch's "not standardized" warning is nothing a user can act on
    import warnings

    from botorch.exceptions.warnings import InputDataWarning

    from npbandit.policies.gp import fit_single_task_gp

    X = torch.rand(4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputDataWarning)
        model = fit_single_task_gp(X, torch.zeros(4, 1, dtype=torch.float64))
    assert torch.allclose(model.posterior(X).mean, torch.zeros(4, 1, dtype=torch.float64), atol=1e-6)


def test_a_gp_on_outcomes_of_the_callers_scale_has_a_prior_mean_of_zero():
    # standardize=False: no outcome transform and a zero prior mean, so far from its one point the GP
    # predicts 0 with the prior's variance (1, the kernel's), not the point's value
    from npbandit.policies.gp import fit_single_task_gp

    X, Y = torch.zeros(1, 1, dtype=torch.float64), torch.full((1, 1), -3.0, dtype=torch.float64)
    model = fit_single_task_gp(X, Y, standardize=False)
    assert getattr(model, "outcome_transform", None) is None
    far = model.posterior(torch.full((1, 1), 1e3, dtype=torch.float64))
    assert float(far.mean) == 0.0 and abs(float(far.variance) - 1.0) < 1e-6
    standardised = fit_single_task_gp(X, Y).posterior(torch.full((1, 1), 1e3, dtype=torch.float64))
    assert abs(float(standardised.mean) + 3.0) < 1e-9  # standardised by its own point: that point's value
    with pytest.raises(TypeError, match="standardize must be a bool"):
        fit_single_task_gp(X, Y, standardize=1)
