"""Joint predictions where they are used: NPModel's q-batch posterior of a joint-predictive
surrogate, its latent joint draws (BO Thompson sampling), the wheel's joint Thompson
policy, and the noise held out of a low-rank-plus-diagonal joint."""

import math

import numpy as np
import pytest
import torch
from botorch.acquisition import qKnowledgeGradient, qLogExpectedImprovement, qLogNoisyExpectedImprovement
from botorch.models.transforms import Standardize
from botorch.optim import optimize_acqf
from botorch.posteriors import GPyTorchPosterior
from botorch.sampling import SobolQMCNormalSampler
from conftest import random_set, tiny_model
from helpers import tiny_checkpoint
from torch.distributions import LowRankMultivariateNormal, Normal

from npbandit import NPModel
from npbandit.policies import NPBanditPolicy, make_bandit_policy
from npbandit.policies.bandit import parse_bandit_policy_name
from npbandit.surrogates import build
from npbandit.surrogates.base import MIN_LATENT_VAR, ContextSetState, NeuralProcess, hold_out_noise
from npbandit.surrogates.gaussian import DIAGONAL_SHARE

D = 3


class BumpRegression(NeuralProcess):
    """A smooth joint model in closed form: Bayesian linear regression on 40 Gaussian bumps
    over ``[0, 1]`` (a GP whose kernel is a sum of bumps, correlation length ~0.1), with
    observation noise ``NOISE``. Its ``joint`` is exact and consistent, as CMANP-AND's."""

    name = "bump-regression"
    joint_predictive = True
    NOISE = 1e-2

    def __init__(self, n_bumps: int = 40, width: float = 0.06) -> None:
        super().__init__(1, 1)
        self.register_buffer("centres", torch.linspace(-0.1, 1.1, n_bumps, dtype=torch.float64))
        self.width = width
        spacing = 1.2 / (n_bumps - 1)
        self.norm = (math.sqrt(math.pi) * width / spacing) ** -0.5  # prior variance about 1
        self.anchor = torch.nn.Parameter(torch.zeros((), dtype=torch.float64), requires_grad=False)

    def features(self, x):
        return self.norm * torch.exp(-(((x - self.centres) / self.width) ** 2) / 2)

    def _condition(self, xc, yc):
        phi = self.features(xc)
        precision = torch.eye(phi.shape[-1], dtype=phi.dtype) + phi.mT @ phi / self.NOISE
        cov = torch.cholesky_inverse(torch.linalg.cholesky(precision))
        return ContextSetState(xc, yc, ((cov @ phi.mT @ yc).squeeze(-1) / self.NOISE, torch.linalg.cholesky(cov)))

    def _parts(self, state, xt):
        mean, root = state.encoding
        phi = self.features(xt)
        return phi @ mean.unsqueeze(-1), phi @ root  # [B, M, 1], [B, M, K]

    def _predict(self, state, xt):
        loc, factor = self._parts(state, xt)
        return Normal(loc, (factor.pow(2).sum(-1, keepdim=True) + self.NOISE).sqrt())

    def joint(self, state, xt):
        loc, factor = self._parts(state, xt)
        return LowRankMultivariateNormal(loc.flatten(-2), factor, torch.full_like(loc.flatten(-2), self.NOISE))


class DiagonalBumps(BumpRegression):
    """The same marginals, declared diagonal: NPModel's posterior is then independent across q."""

    joint_predictive = False


BUMP_X = torch.tensor([[0.05], [0.2], [0.45], [0.6], [0.9]], dtype=torch.float64)
BUMP_Y = torch.sin(6 * BUMP_X)


def assert_latent_variances_agree(model, Xt, joint_var):
    """The joint posterior's variances ``joint_var`` at ``Xt`` (``b x q x d``) are the marginal
    posterior's, to the float32 rounding that separates the two paths.

    Both subtract the noise estimate from the network's predictive variance
    ``var_y = s^2 + |w|^2`` (diagonal ``s^2``, ``r`` covariance factors ``w``) in float64, but
    they read ``var_y`` differently: the marginal path gets it from the network's ``predict``,
    which sums the ``r + 1`` squares in float32 and returns a std that ``Normal.variance``
    squares again (``r + 3`` float32 roundings at most, each within half an eps of ``var_y``);
    the joint path squares and sums the float32 parts in float64 (one rounding, of ``s^2``).
    The latent variance is the difference ``var_y - noise``, so its error is a few float32
    eps of ``var_y`` however small the difference is: near the observed points, where
    ``var_y`` is mostly noise, it is a large part of the latent variance, and no relative
    tolerance on the latent variance holds. ``var_y`` in the user's units is the
    ``q = 1`` posterior with observation noise (exact wherever the latent variance is above
    the floor, and the floor only narrows the gap)."""
    points = Xt.reshape(-1, 1, Xt.shape[-1])
    marginal = model.posterior(points).variance.reshape(-1)
    var_y = model.posterior(points, observation_noise=True).variance.reshape(-1)
    bound = (model.surrogate.config.rank + 4) / 2 * torch.finfo(torch.float32).eps * var_y
    assert ((joint_var.reshape(-1) - marginal).abs() <= bound).all()


def correlation(cov):
    std = cov.diagonal(dim1=-2, dim2=-1).sqrt()
    return cov / std.unsqueeze(-1) / std.unsqueeze(-2)


def and_model(y_dim=1, seed=0, **kwargs):
    torch.manual_seed(seed)
    net = build("cmanp-and", 6, y_dim, size="tiny").eval()
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(12, D, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X.sum(-1, keepdim=True)) * torch.arange(1, y_dim + 1, dtype=torch.float64)
    return NPModel(net, X, Y, **kwargs), X, Y


# -- the noise held out of a low-rank-plus-diagonal joint ------------------------------------


def test_hold_out_noise_keeps_the_marginal_latent_variance_and_is_cov_minus_noise_where_it_can():
    g = torch.Generator().manual_seed(0)
    factor = torch.randn(4, 7, 3, generator=g, dtype=torch.float64)
    factor[0, 0] = 0.0  # no factors at all
    diag = torch.rand(4, 7, generator=g, dtype=torch.float64) + 0.05
    noise = torch.tensor(0.3, dtype=torch.float64)
    new_factor, new_diag = hold_out_noise(factor, diag, noise)
    cov = new_factor @ new_factor.mT + torch.diag_embed(new_diag)
    var = (diag + factor.pow(2).sum(-1) - noise).clamp_min(MIN_LATENT_VAR)
    assert torch.allclose(cov.diagonal(dim1=-2, dim2=-1), var)
    assert (new_diag >= DIAGONAL_SHARE * var * (1 - 1e-12)).all() and (torch.linalg.eigvalsh(cov) > 0).all()
    regular = diag - noise >= DIAGONAL_SHARE * var
    assert regular.any() and (~regular).any()
    # where the diagonal carries the noise: the observations' covariance minus noise * I
    y_cov = factor @ factor.mT + torch.diag_embed(diag) - noise * torch.eye(7, dtype=torch.float64)
    both = regular.unsqueeze(-1) & regular.unsqueeze(-2)
    assert torch.allclose(cov[both], y_cov[both])
    # gradients stay finite, also for a variable without factors
    leaf = factor.clone().requires_grad_(True)
    sum(t.sum() for t in hold_out_noise(leaf, diag, noise)).backward()
    assert torch.isfinite(leaf.grad).all()


def test_sample_with_noise_draws_latent_values_and_folds_in_noisy_ones():
    model = tiny_model("cmanp-and")
    xc, yc = random_set(2, 6, seed=1)
    xt, _ = random_set(2, 5, seed=2)
    state = model.condition(xc, yc)
    noise = torch.tensor([0.05], dtype=torch.float64)
    draws = model.sample(state, xt, 1, torch.Generator().manual_seed(3), block_size=3, noise=noise)
    g = torch.Generator().manual_seed(3)
    x_all, y_all, blocks = xc, yc, []
    for start in (0, 3):
        x = xt[:, start:start + 3]
        joint = model.joint(model.condition(x_all, y_all), x)
        factor, diag = hold_out_noise(joint.cov_factor, joint.cov_diag, noise)
        shared = torch.randn((2, model.config.rank), generator=g, dtype=torch.float64)
        own = torch.randn((2, x.shape[1], 1), generator=g, dtype=torch.float64)
        f = joint.loc + (factor @ shared.unsqueeze(-1)).squeeze(-1) + diag.sqrt() * own.flatten(-2)
        blocks.append(f.unsqueeze(-1))
        if start == 0:  # the context holds observations: the latent values plus fresh noise
            y = blocks[-1] + noise.sqrt() * torch.randn((2, 3, 1), generator=g, dtype=torch.float64)
            x_all, y_all = torch.cat([x_all, x], 1), torch.cat([y_all, y], 1)
    assert torch.allclose(draws[0], torch.cat(blocks, 1), atol=1e-10)
    with pytest.raises(ValueError, match="noise"):
        model.sample(state, xt, 1, noise=torch.tensor([-1.0], dtype=torch.float64))
    with pytest.raises(ValueError, match="noise"):
        model.sample(state, xt, 1, noise=torch.ones(3, dtype=torch.float64))


def test_diagonal_sample_with_noise_has_the_latent_marginal_scale():
    model = tiny_model("cmanp")
    xc, yc = random_set(1, 6, seed=1)
    xt, _ = random_set(1, 4, seed=2)
    with torch.no_grad():
        state = model.condition(xc, yc)
        dist = model.predict(state, xt)
    noise = float(dist.variance.min()) * 0.9
    draws = model.sample(state, xt, 1, torch.Generator().manual_seed(0), noise=noise)
    eps = torch.randn((1, 1, 4, 1), generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert torch.allclose(draws, dist.loc + (dist.variance - noise).clamp_min(MIN_LATENT_VAR).sqrt() * eps)


# -- NPModel's joint posterior ---------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, D), (2, 4, D), (3, 2, 4, D)])
def test_joint_posterior_shapes_and_positive_definite_covariance(shape):
    model, _, _ = and_model()
    Xt = torch.rand(*shape, dtype=torch.float64)
    post = model.posterior(Xt)
    assert isinstance(post, GPyTorchPosterior)
    assert post.mean.shape == (*shape[:-1], 1) and post.variance.shape == (*shape[:-1], 1)
    cov = post.distribution.covariance_matrix
    assert cov.shape == (*shape[:-2], 4, 4)
    assert torch.allclose(cov, cov.mT) and (torch.linalg.eigvalsh(cov) > 0).all()
    assert post.base_sample_shape == (*shape[:-2], 4)  # q values per draw, as for a GP
    assert post.rsample(torch.Size([5])).shape == (5, *shape[:-1], 1)
    # not diagonal: the points are correlated
    off = cov - torch.diag_embed(cov.diagonal(dim1=-2, dim2=-1))
    assert off.abs().max() > 1e-3


def test_joint_posterior_is_the_surrogates_joint_with_the_noise_held_out():
    """Mean and covariance are the surrogate's one-shot joint in the user's units, with the
    noise estimate held out as on the marginal path; its marginals are the q = 1 posterior's;
    t-batches do not interact."""
    model, _, _ = and_model()
    Xt = torch.rand(3, 4, D, dtype=torch.float64)
    post = model.posterior(Xt)
    single = model.posterior(Xt.reshape(-1, 1, D))
    assert torch.allclose(post.mean.reshape(-1), single.mean.reshape(-1), atol=1e-6)
    assert torch.allclose(post.variance.reshape(-1), single.variance.reshape(-1), rtol=1e-5, atol=1e-9)
    with torch.no_grad():
        joint = model.surrogate.joint(model._state.repeat(3), model._to_surrogate_inputs(Xt))
    factor, diag = hold_out_noise(joint.cov_factor.double(), joint.cov_diag.double(), model.noise_variance())
    std = model._y_std
    expected = (factor @ factor.mT + torch.diag_embed(diag)) * std**2
    assert torch.allclose(post.distribution.covariance_matrix, expected, rtol=1e-5, atol=1e-8)
    assert torch.allclose(post.mean.squeeze(-1), joint.loc.double() * std + model._y_mean, atol=1e-6)
    alone = model.posterior(Xt[1])
    assert torch.allclose(alone.distribution.covariance_matrix, post.distribution.covariance_matrix[1])
    noisy = model.posterior(Xt, observation_noise=True)
    extra = noisy.distribution.covariance_matrix - post.distribution.covariance_matrix
    assert torch.allclose(extra, torch.diag_embed(model.likelihood.noise.expand(3, 4)), atol=1e-10)


def test_q_of_one_and_diagonal_models_keep_the_marginal_posterior():
    model, _, _ = and_model()
    Xt = torch.rand(5, 1, D, dtype=torch.float64)
    mean, var = model._marginals(Xt)
    post = model.posterior(Xt)
    assert torch.equal(post.variance, (var - model.noise_variance()).clamp_min(MIN_LATENT_VAR) * model._y_std**2)
    diagonal = NPModel(DiagonalBumps(), BUMP_X, BUMP_Y, covariance="diagonal")
    cov = diagonal.posterior(torch.rand(2, 4, 1, dtype=torch.float64)).distribution.covariance_matrix
    assert torch.equal(cov, torch.diag_embed(cov.diagonal(dim1=-2, dim2=-1)))


def test_a_joint_predictive_surrogate_without_a_joint_is_refused():
    class NoJoint(BumpRegression):
        joint = None

    model = NPModel(NoJoint(), BUMP_X, BUMP_Y)
    assert model.posterior(torch.rand(3, 1, 1, dtype=torch.float64)).mean.shape == (3, 1, 1)  # q = 1: marginal
    with pytest.raises(TypeError, match="joint"):
        model.posterior(torch.rand(2, 1, dtype=torch.float64))


def test_joint_posterior_multi_output_subsets_and_equal_points():
    model, X, Y = and_model(y_dim=2)
    pts = torch.rand(2, 2, D, dtype=torch.float64)
    Xt = torch.cat([pts, pts[:, :1]], dim=-2)  # point 0 twice
    post = model.posterior(Xt)
    assert post.mean.shape == (2, 3, 2) and post.base_sample_shape == (2, 3, 2)
    samples = post.rsample(torch.Size([32]))
    torch.testing.assert_close(samples[..., 0, :], samples[..., 2, :], rtol=0, atol=1e-9)  # one draw of f
    assert (samples[..., 0, :] - samples[..., 1, :]).abs().max() > 1e-3
    cov = post.distribution.covariance_matrix  # interleaved (q, m)
    assert (torch.linalg.eigvalsh(cov) > -1e-9).all()
    assert_latent_variances_agree(model, Xt, post.variance)
    first = model.subset_output([1]).posterior(Xt)
    assert first.mean.shape == (2, 3, 1)
    assert torch.allclose(first.variance.squeeze(-1), post.variance[..., 1], rtol=1e-5)
    noisy = model.posterior(Xt, observation_noise=True).rsample(torch.Size([16]))
    assert (noisy[..., 0, :] - noisy[..., 2, :]).abs().max() > 1e-6  # observation noise stays independent


def test_joint_posterior_through_an_outcome_transform():
    model, X, Y = and_model(y_dim=2, outcome_transform=Standardize(2))
    Xt = torch.rand(2, 3, D, dtype=torch.float64)
    post = model.posterior(Xt)
    single = model.posterior(Xt.reshape(-1, 1, D))
    assert torch.allclose(post.mean.reshape(-1), single.mean.reshape(-1), atol=1e-6)
    assert_latent_variances_agree(model, Xt, post.variance)
    plain = and_model(y_dim=2)[0].posterior(Xt)  # Standardize(2) then the model's own standardisation
    assert torch.allclose(correlation(post.distribution.covariance_matrix),
                          correlation(plain.distribution.covariance_matrix), atol=1e-6)


def test_joint_posterior_is_deterministic_under_fixed_base_samples_and_differentiable():
    model, X, _ = and_model()
    Xt = torch.rand(4, 3, D, dtype=torch.float64, requires_grad=True)
    sampler = SobolQMCNormalSampler(torch.Size([64]), seed=0)
    post = model.posterior(Xt)
    a = sampler(post)
    b = sampler(model.posterior(Xt))
    assert torch.equal(a, b)
    # a point's draw does not depend on its t-batch's position (the base samples are shared)
    c = sampler(model.posterior(Xt.flip(0)))
    assert torch.allclose(c.flip(1), a)
    a.sum().backward()
    assert Xt.grad is not None and torch.isfinite(Xt.grad).all() and Xt.grad.abs().sum() > 0


def test_mc_acquisitions_and_fantasies_run_on_a_joint_model():
    model, X, Y = and_model()
    bounds = torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.float64)
    for acq in (qLogExpectedImprovement(model, best_f=Y.max()), qLogNoisyExpectedImprovement(model, X_baseline=X)):
        cand, value = optimize_acqf(acq, bounds, q=3, num_restarts=2, raw_samples=32, options={"maxiter": 20})
        assert cand.shape == (3, D) and torch.isfinite(value)
    kg = qKnowledgeGradient(model, num_fantasies=4)
    value = kg(torch.rand(2, 2 + 4, D, dtype=torch.float64))  # q = 2 plus the fantasies' points
    assert value.shape == (2,) and torch.isfinite(value).all()
    fantasy = model.fantasize(torch.rand(2, D, dtype=torch.float64), SobolQMCNormalSampler(torch.Size([3])))
    post = fantasy.posterior(torch.rand(3, D, dtype=torch.float64))
    assert post.distribution.covariance_matrix.shape == (3, 3, 3)


def test_a_smooth_joint_model_correlates_near_points_and_not_distant_ones():
    """Samples at two nearby inputs are strongly correlated, at distant ones nearly
    independent: in the posterior's covariance and in its draws. Declared diagonal, the
    same model's draws are independent everywhere."""
    model = NPModel(BumpRegression(), BUMP_X, BUMP_Y)
    pts = torch.tensor([[0.30], [0.31], [0.80]], dtype=torch.float64)
    post = model.posterior(pts)
    corr = correlation(post.distribution.covariance_matrix)
    assert corr[0, 1] > 0.98 and corr[0, 2].abs() < 0.05 and corr[1, 2].abs() < 0.05
    draws = post.rsample(torch.Size([4000])).squeeze(-1)
    empirical = torch.corrcoef(draws.T)
    assert empirical[0, 1] > 0.97 and empirical[0, 2].abs() < 0.1 and empirical[1, 2].abs() < 0.1
    diagonal = NPModel(DiagonalBumps(), BUMP_X, BUMP_Y, covariance="diagonal")
    independent = torch.corrcoef(diagonal.posterior(pts).rsample(torch.Size([4000])).squeeze(-1).T)
    assert independent[0, 1].abs() < 0.1


def test_qlognei_with_q_2_spreads_its_points_on_a_joint_model():
    """The issue's symptom: with a diagonal posterior, qLogNEI (q = 2) puts both points on
    the same spot (two independent draws beat one); with the joint they spread out."""
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    gaps = {}
    for cls in (BumpRegression, DiagonalBumps):
        model = NPModel(cls(), BUMP_X, BUMP_Y, covariance="diagonal")
        acq = qLogNoisyExpectedImprovement(model, X_baseline=BUMP_X)
        cand, _ = optimize_acqf(acq, bounds, q=2, num_restarts=4, raw_samples=64, options={"seed": 0})
        gaps[cls.__name__] = float((cand[0] - cand[1]).abs())
    assert gaps["BumpRegression"] > 0.05, gaps
    assert gaps["DiagonalBumps"] < 0.01, gaps  # the failure the joint posterior removes


@pytest.mark.slow
def test_cmanp_and_gp1d_checkpoint_correlates_near_points_and_not_distant_ones():
    """The trained checkpoint on the smooth GP prior: nearby inputs strongly correlated,
    distant ones nearly independent, in the one-shot posterior and in autoregressive
    draws whose near pair falls in different blocks (b_Q = 5)."""
    from npbandit.surrogates.pretrained import WEIGHTS_DIR, load_surrogate

    if not all((WEIGHTS_DIR / f"cmanp-and-gp1d.{ext}").exists() for ext in ("json", "safetensors")):
        pytest.skip("cmanp-and-gp1d is not shipped in this checkout")
    g = torch.Generator().manual_seed(0)
    X = torch.tensor([[-1.5], [-1.0], [0.2], [1.4]], dtype=torch.float64)
    Y = torch.sin(2 * X) + 0.02 * torch.randn(4, 1, generator=g, dtype=torch.float64)
    model = NPModel.from_pretrained(load_surrogate("cmanp-and-gp1d", dtype=torch.float64), X, Y)
    pts = torch.tensor([[0.70], [-1.95], [1.95], [-0.5], [0.0], [1.0], [0.72], [-0.2]], dtype=torch.float64)
    with torch.no_grad():
        corr = correlation(model.posterior(pts).distribution.covariance_matrix)
        draws = model.joint_sample(pts, 300, torch.Generator().manual_seed(1)).squeeze(-1)
    assert corr[0, 6] > 0.9 and corr[1, 2].abs() < 0.3, corr
    empirical = torch.corrcoef(draws.T)  # points 0 and 6: blocks 1 and 2
    assert empirical[0, 6] > 0.85 and empirical[1, 2].abs() < 0.3, empirical


# -- joint draws for Thompson sampling -----------------------------------------------------


def test_joint_sample_draws_the_latent_joint_in_user_units():
    model, X, _ = and_model(outcome_transform=Standardize(1))
    pts = torch.rand(4, D, dtype=torch.float64)  # 4 <= block_size: one block, the one-shot joint
    draws = model.joint_sample(pts, 20000, torch.Generator().manual_seed(0))
    assert draws.shape == (20000, 4, 1) and draws.dtype == torch.float64
    with torch.no_grad():
        post = model.posterior(pts)
        cov = post.distribution.covariance_matrix
    scale = float(cov.diagonal().max())
    assert torch.allclose(draws.mean(0).squeeze(-1), post.mean.squeeze(-1), atol=5 * scale**0.5 / 20000**0.5)
    assert torch.allclose(torch.cov(draws.squeeze(-1).T), cov.to(draws), atol=0.05 * scale)
    # a diagonal model's draws: independent, with the marginal posterior's moments
    torch.manual_seed(0)
    diagonal = NPModel(build("cmanp", 6, 1, size="tiny").eval(), X, model.train_Y)
    independent = diagonal.joint_sample(pts, 20000, torch.Generator().manual_seed(0)).squeeze(-1)
    with torch.no_grad():
        marginal = diagonal.posterior(pts.unsqueeze(-2))
    assert torch.allclose(independent.var(0), marginal.variance.reshape(-1).to(independent), rtol=0.05)
    assert (torch.corrcoef(independent.T) - torch.eye(4, dtype=torch.float64)).abs().max() < 0.05
    again = model.joint_sample(pts, 3, torch.Generator().manual_seed(1))
    assert torch.equal(again, model.joint_sample(pts, 3, torch.Generator().manual_seed(1)))
    # block_size reaches the surrogate's sampler: one block of all four is the one-shot joint
    one_shot = model.joint_sample(pts, 3, torch.Generator().manual_seed(1), block_size=4)
    assert torch.equal(one_shot, again)
    blocked = model.joint_sample(pts, 3, torch.Generator().manual_seed(1), block_size=1)
    assert blocked.shape == again.shape and not torch.equal(blocked, again)
    with pytest.raises(ValueError, match="block_size"):
        diagonal.joint_sample(pts, 3, block_size=2)
    with pytest.raises(ValueError, match="block_size"):
        model.joint_sample(pts, 3, block_size=0)
    with pytest.raises(ValueError, match="X must have shape"):
        model.joint_sample(pts.unsqueeze(0))
    with pytest.raises(ValueError, match="batch shape"):
        model.fantasize(pts[:1], SobolQMCNormalSampler(torch.Size([2]))).joint_sample(pts)


def test_bo_policy_thompson_on_a_joint_np_is_one_latent_joint_draw(tmp_path, monkeypatch):
    from npbandit.policies import BOPolicy
    from npbandit.surrogates.cmanp_and import CMANPAND

    calls = []
    sample = CMANPAND.sample

    def spy(self, state, xt, num_samples, generator=None, **kw):
        calls.append((tuple(xt.shape), num_samples, kw.get("noise")))
        return sample(self, state, xt, num_samples, generator, **kw)

    monkeypatch.setattr(CMANPAND, "sample", spy)
    policy = BOPolicy(2, model=str(tiny_checkpoint(tmp_path, "cmanp-and", "bo")), acquisition="thompson",
                      thompson_candidates=300, trust_region=False)  # the streamed global model, read below
    policy.reset(0)
    rng = np.random.default_rng(0)
    for _ in range(policy.n_init + 2):
        x = policy.act(None)
        policy.observe(None, x, float(-np.sum((x - 0.3) ** 2) + 0.01 * rng.standard_normal()), {})
    assert [c[:2] for c in calls] == [((1, 300, 6), 1)] * 2  # every candidate in one joint draw
    assert all(torch.allclose(c[2], policy.np_model.noise_variance().float(), rtol=0.5) for c in calls)


def test_thompson_draw_of_the_shipped_joint_model_is_calibrated_over_many_candidates():
    """BOPolicy's Thompson draw from cmanp-and-bo over 1,024 candidates sits where the latent
    marginals say: mean |z| ~ sqrt(2 / pi) = 0.80 (z: the draw's distance from the marginal
    mean in marginal standard deviations). In autoregressive blocks of 25 the same draws
    drift to a mean |z| of 1.8-4.2, which is why the draw is one block."""
    from npbandit.acquisition.thompson import THOMPSON_BLOCK_SIZE, thompson_draw
    from npbandit.surrogates.pretrained import WEIGHTS_DIR

    if not all((WEIGHTS_DIR / f"cmanp-and-bo.{ext}").exists() for ext in ("json", "safetensors")):
        pytest.skip("cmanp-and-bo is not shipped in this checkout")
    assert THOMPSON_BLOCK_SIZE is None
    X = torch.quasirandom.SobolEngine(2, scramble=True, seed=1).draw(30, dtype=torch.float64)
    Y = torch.sin(6 * X[:, :1]) * torch.cos(4 * X[:, 1:])
    model = NPModel.from_pretrained("cmanp-and-bo", X, Y)
    candidates = torch.quasirandom.SobolEngine(2, scramble=True, seed=2).draw(1024, dtype=torch.float64)
    with torch.no_grad():
        post = model.posterior(candidates.unsqueeze(-2))
        mean, std = post.mean.reshape(-1), post.variance.reshape(-1).sqrt()
        z = torch.stack([((thompson_draw(model, candidates, seed=s) - mean) / std).abs() for s in range(6)])
    assert 0.65 < float(z.mean()) < 0.95, z.mean(-1)
    assert 0.65 < float(z[:, -256:].mean()) < 0.95  # the last candidates drawn as well as the first


@pytest.mark.slow
def test_bo_policy_qlognei_proposes_q_points_at_once_and_hands_them_out_in_order(tmp_path, monkeypatch):
    """acquisition="qlognei": one joint qLogNEI optimisation per q points (in the trust
    region too), its points evaluated in the order proposed; q is validated."""
    import npbandit.acquisition.proposal as proposal
    import npbandit.policies.bo as bo
    from npbandit.policies import BOPolicy

    proposals = []
    maximise = proposal.maximise_batch  # propose calls it by this name (its home: acquisition.maximise)

    def spy(model, q, seed, num_restarts, raw_samples, bounds, *rest):  # rest: constraints, polytope
        points = maximise(model, q, seed, num_restarts, raw_samples, bounds, *rest)
        assert points.shape == (q, 2) and (points >= bounds[0].numpy()).all() and (points <= bounds[1].numpy()).all()
        proposals.append(points)
        return points

    monkeypatch.setattr(proposal, "maximise_batch", spy)
    checkpoint = str(tiny_checkpoint(tmp_path, "cmanp-and", "bo"))
    for trust_region in (False, True):
        proposals.clear()
        policy = BOPolicy(2, model=checkpoint, acquisition="qlognei", num_restarts=2, raw_samples=16,
                          trust_region=trust_region)
        assert policy.q == bo.Q_BATCH == 4 and policy.params()["q"] == 4 and policy.name.endswith("-qlognei")
        policy.reset(0)
        acted = []
        for _ in range(policy.n_init + 6):
            x = policy.act(None)
            acted.append(x)
            policy.observe(None, x, float(-np.sum((x - 0.3) ** 2)), {})
        assert len(proposals) == 2  # 6 points: one batch of 4, then the first 2 of the next
        if not trust_region:  # in the region the points are mapped back from the model's cube
            assert np.array_equal(np.array(acted[policy.n_init:]), np.concatenate(proposals)[:6])
    assert "q" not in BOPolicy(2, model=checkpoint).params()
    with pytest.raises(ValueError, match="batch acquisition"):
        BOPolicy(2, model=checkpoint, acquisition="logei", q=2)
    with pytest.raises(ValueError, match="q must be"):
        BOPolicy(2, model=checkpoint, acquisition="qlognei", q=0)


def test_bo_policy_marginal_thompson_draws_each_candidate_alone_from_a_joint_np(tmp_path, monkeypatch):
    """The ablation of the joint draw: the same joint model, every candidate from its marginal
    (no joint sample), the same argmax otherwise."""
    from npbandit.acquisition.thompson import thompson_draw
    from npbandit.policies import BOPolicy
    from npbandit.surrogates.cmanp_and import CMANPAND

    def refuse(*args, **kwargs):
        raise AssertionError("marginal-thompson must not draw jointly")

    monkeypatch.setattr(CMANPAND, "sample", refuse)
    policy = BOPolicy(2, model=str(tiny_checkpoint(tmp_path, "cmanp-and", "bo")), acquisition="marginal-thompson",
                      thompson_candidates=300, trust_region=False)
    assert policy.name.endswith("-marginal-thompson")
    policy.reset(0)
    for _ in range(policy.n_init + 2):
        x = policy.act(None)
        assert x.shape == (2,) and ((0 <= x) & (x <= 1)).all()
        policy.observe(None, x, float(-np.sum((x - 0.3) ** 2)), {})
    pts = torch.rand(50, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    torch.manual_seed(0)
    draw = thompson_draw(policy.np_model, pts, 0, joint=False)
    torch.manual_seed(0)
    assert torch.equal(draw, policy.np_model.posterior(pts.unsqueeze(-2)).rsample().reshape(-1))
    with pytest.raises(TypeError, match="joint"):
        thompson_draw(policy.np_model, pts, 0, joint=1)


# -- the wheel: joint Thompson across the arms -----------------------------------------------


def test_wheel_thompson_draws_the_arms_jointly_from_a_joint_model(tmp_path, monkeypatch):
    from npbandit.envs import WheelBanditEnv

    surrogate = make_bandit_policy(str(tiny_checkpoint(tmp_path, "cmanp-and", "wheel")) + "-thompson").surrogate
    assert surrogate.joint_predictive and surrogate.y_dim == 5
    policy = NPBanditPolicy(surrogate, rule="thompson")
    env = WheelBanditEnv(horizon=12)
    obs, _ = env.reset(seed=0)
    policy.reset(0)
    draws = []
    original = type(surrogate).sample

    def spy(self, state, xt, num_samples, generator=None, **kw):
        out = original(self, state, xt, num_samples, generator, **kw)
        draws.append(out)
        return out

    monkeypatch.setattr(type(surrogate), "sample", spy)
    for _ in range(12):
        action = policy.act(obs)
        if policy.state.num_points:
            assert draws[-1].shape == (1, 1, 1, 5) and action == int(draws[-1].argmax())
        next_obs, reward, _, _, info = env.step(action)
        policy.observe(obs, action, reward, info)
        obs = next_obs
    assert len(draws) == 11  # the first round is uniform
    # the draw is the joint across the arms: the low-rank factor term is shared by all five
    x = torch.as_tensor(obs, dtype=torch.float32).reshape(1, 1, -1)
    state = torch.Generator().set_state(policy.torch_rng.get_state())
    with torch.no_grad():
        joint = surrogate.joint(policy.state, x)
        shared = torch.randn((1, surrogate.config.rank), generator=state)
        own = torch.randn((1, 1, 5), generator=state)
        expected = (joint.loc + (joint.cov_factor @ shared.unsqueeze(-1)).squeeze(-1)
                    + joint.cov_diag.sqrt() * own.flatten(-2))
    assert policy.act(obs) == int(expected.argmax())


def test_wheel_marginal_thompson_and_diagonal_thompson_draw_each_arm_alone(tmp_path):
    for model, rule in (("cmanp-and", "marginal-thompson"), ("cmanp", "thompson")):
        policy = make_bandit_policy(str(tiny_checkpoint(tmp_path, model, "wheel")) + f"-{rule}")
        assert policy.rule == rule and policy.name.endswith(rule)
        policy.reset(3)
        x = np.array([0.2, -0.4])
        policy.observe(x, 1, 1.2, {})
        rng = torch.Generator().set_state(policy.torch_rng.get_state())
        xt = torch.as_tensor(x, dtype=torch.float32).reshape(1, 1, -1)
        with torch.no_grad():
            dist = policy.surrogate.predict(policy.state, xt).encoded  # the policy decides in model units
        mu, sigma = dist.loc[0, 0], dist.scale[0, 0]
        expected = int(torch.argmax(mu + sigma * torch.randn(mu.shape, generator=rng)))
        assert policy.act(x) == expected
    assert parse_bandit_policy_name("cmanp-and-wheel-marginal-thompson") == ("cmanp-and-wheel", "marginal-thompson")
    assert parse_bandit_policy_name("cmanp-and-wheel-thompson") == ("cmanp-and-wheel", "thompson")
    with pytest.raises(ValueError, match="rule"):
        NPBanditPolicy(build("cmanp-and", 2, 5, size="tiny"), rule="joint")
