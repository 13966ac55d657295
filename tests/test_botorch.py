"""NPModel as a BoTorch Model: acquisition functions, shapes, fantasies, streaming, traps."""

import warnings

import pytest
import torch
from botorch.acquisition import (
    ExpectedImprovement,
    LogExpectedImprovement,
    PosteriorMean,
    ProbabilityOfImprovement,
    UpperConfidenceBound,
    qExpectedImprovement,
    qKnowledgeGradient,
    qLogExpectedImprovement,
    qLogNoisyExpectedImprovement,
    qUpperConfidenceBound,
)
from botorch.acquisition.objective import ScalarizedPosteriorTransform
from botorch.models.transforms import Normalize, Standardize
from botorch.optim import optimize_acqf
from botorch.sampling import SobolQMCNormalSampler
from botorch.posteriors import GPyTorchPosterior

from npbandit import NPModel
from npbandit.surrogates import build

from helpers import EmbedCounter

D = 3


def surrogate(name="cmanp", x_dim=6, y_dim=1, seed=0):
    torch.manual_seed(seed)
    return build(name, x_dim, y_dim, size="tiny").eval()


def data(n=12, d=D, dtype=torch.float64, seed=0, m=1):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=dtype)
    Y = torch.sin(5 * X.sum(-1, keepdim=True)) + 0.1 * torch.randn(n, 1, generator=g, dtype=dtype)
    return X, Y.expand(n, m) * torch.arange(1, m + 1, dtype=dtype)


BOUNDS = torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.float64)


def analytic(model, Y):
    best = Y.max()
    return [ExpectedImprovement(model, best_f=best), LogExpectedImprovement(model, best_f=best),
            UpperConfidenceBound(model, beta=2.0), ProbabilityOfImprovement(model, best_f=best), PosteriorMean(model)]


def monte_carlo(model, X, Y):
    best = Y.max()
    return [qExpectedImprovement(model, best_f=best), qLogExpectedImprovement(model, best_f=best),
            qLogNoisyExpectedImprovement(model, X_baseline=X), qUpperConfidenceBound(model, beta=2.0)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_every_acquisition_function_optimises_in_bounds(dtype):
    X, Y = data(dtype=dtype)
    model = NPModel(surrogate(), X, Y)
    bounds = BOUNDS.to(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # untrained weights make EI tiny; BoTorch warns about restarts
        for acq in analytic(model, Y):
            cand, _ = optimize_acqf(acq, bounds, q=1, num_restarts=2, raw_samples=16)
            assert cand.shape == (1, D) and cand.dtype == dtype
            assert (cand >= 0).all() and (cand <= 1).all(), type(acq).__name__
        for acq in monte_carlo(model, X, Y):
            cand, _ = optimize_acqf(acq, bounds, q=2, num_restarts=2, raw_samples=16)
            assert cand.shape == (2, D) and (cand >= 0).all() and (cand <= 1).all(), type(acq).__name__
    assert next(model.surrogate.parameters()).dtype == torch.float32  # self.to(X) did not upcast the network


def test_knowledge_gradient_runs_through_fantasies():
    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cand, value = optimize_acqf(qKnowledgeGradient(model, num_fantasies=4), BOUNDS, q=1, num_restarts=2,
                                    raw_samples=16)
    assert cand.shape == (1, D) and torch.isfinite(value)


@pytest.mark.parametrize("shape", [(5, D), (4, 5, D), (2, 3, 5, D)])
def test_posterior_shapes(shape):
    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    post = model.posterior(torch.rand(*shape, dtype=torch.float64))
    assert isinstance(post, GPyTorchPosterior)
    assert post.mean.shape == post.variance.shape == shape[:-1] + (1,)
    assert post.rsample(torch.Size([7])).shape == (7,) + shape[:-1] + (1,)
    assert (post.variance > 0).all()


def test_posterior_is_deterministic_and_t_batches_do_not_interact():
    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    Xt = torch.rand(10, 1, D, dtype=torch.float64)
    a, b = model.posterior(Xt), model.posterior(Xt)
    assert torch.equal(a.mean, b.mean) and torch.equal(a.variance, b.variance)
    alone = model.posterior(Xt[3:4])
    assert torch.allclose(alone.mean, a.mean[3:4]) and torch.allclose(alone.variance, a.variance[3:4])


def test_gradients_flow_to_X():
    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    Xt = torch.rand(4, 1, D, dtype=torch.float64, requires_grad=True)
    LogExpectedImprovement(model, best_f=Y.max())(Xt).sum().backward()
    assert Xt.grad is not None and torch.isfinite(Xt.grad).all() and Xt.grad.abs().sum() > 0


def test_observation_noise_adds_the_noise_estimate():
    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    Xt = torch.rand(6, 1, D, dtype=torch.float64)
    latent, noisy = model.posterior(Xt).variance, model.posterior(Xt, observation_noise=True).variance
    noise = model.noise_variance() * model._y_std ** 2
    assert torch.allclose(noisy - latent, noise.expand_as(latent), rtol=1e-6)
    assert (noise > 0).all()
    given = model.posterior(Xt, observation_noise=torch.full((1, 1), 0.5, dtype=torch.float64)).variance
    assert torch.allclose(given - latent, torch.full_like(latent, 0.5), atol=1e-8)


def test_eval_and_train_raise_no_warnings():
    X, Y = data()
    model = NPModel(surrogate(), X, Y, input_transform=Normalize(D), outcome_transform=Standardize(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.train()
        model.eval()
        model.posterior(torch.rand(2, 1, D, dtype=torch.float64))
    assert model.likelihood is None and model.num_outputs == 1 and model.batch_shape == torch.Size()


def test_transforms_and_bounds_map_inputs_to_the_unit_cube():
    X, Y = data()
    scale = torch.tensor([10.0, 20.0, 5.0], dtype=torch.float64)
    raw_X = X * scale - 3
    bounds = torch.stack([torch.full((D,), -3.0, dtype=torch.float64), scale - 3])
    s = surrogate()
    reference = NPModel(s, X, Y)
    with pytest.raises(ValueError, match="outside"):
        NPModel(s, raw_X, Y)
    by_bounds = NPModel(s, raw_X, Y, bounds=bounds)
    by_transform = NPModel(s, raw_X, Y, input_transform=Normalize(D, bounds=bounds))
    Xt = torch.rand(5, 1, D, dtype=torch.float64)
    expected = reference.posterior(Xt).mean
    assert torch.allclose(by_bounds.posterior(Xt * scale - 3).mean, expected, atol=1e-5)
    assert torch.allclose(by_transform.posterior(Xt * scale - 3).mean, expected, atol=1e-5)
    # an outcome transform is undone in the posterior
    std = NPModel(s, X, Y, outcome_transform=Standardize(1))
    assert torch.allclose(std.posterior(Xt).mean, expected, atol=1e-4)


def test_condition_on_observations_equals_a_fresh_model_on_the_union():
    X, Y = data(n=20)
    s = surrogate()
    model = NPModel(s, X[:12], Y[:12], standardize=False)
    streamed = model.condition_on_observations(X[12:], Y[12:])
    fresh = NPModel(s, X, Y, standardize=False)
    Xt = torch.rand(6, 1, D, dtype=torch.float64)
    assert torch.allclose(streamed.posterior(Xt).mean, fresh.posterior(Xt).mean, atol=1e-5)
    assert torch.allclose(streamed.posterior(Xt, observation_noise=True).variance,
                          fresh.posterior(Xt, observation_noise=True).variance, atol=1e-5)
    assert streamed.train_X.shape == (20, D) and model.train_X.shape == (12, D)  # the parent is unchanged


def test_cmanp_streaming_does_not_reencode_old_points():
    X, Y = data(n=40)
    s = surrogate()
    counter = EmbedCounter(s.embed)
    model = NPModel(s, X[:30], Y[:30], standardize=False)
    assert counter.points == 30
    model = model.condition_on_observations(X[30:31], Y[30:31])
    assert counter.points == 31  # one new point embedded; the 30 old ones were not touched
    fantasy = model.fantasize(torch.rand(4, 1, D, dtype=torch.float64), SobolQMCNormalSampler(torch.Size([3])))
    assert fantasy.batch_shape == torch.Size([3, 4])
    assert counter.points == 31 + 12  # 3 fantasies x 4 batches x 1 point
    post = fantasy.posterior(torch.rand(3, 4, 2, D, dtype=torch.float64))
    assert post.mean.shape == (3, 4, 2, 1)


def test_standardisation_is_kept_until_it_drifts():
    X, Y = data(n=30)
    s = surrogate()
    model = NPModel(s, X[:20], Y[:20])
    mean0 = model._y_mean.clone()
    similar = model.condition_on_observations(X[20:22], Y[20:22])
    assert torch.equal(similar._y_mean, mean0)  # small change: constant-cost update, statistics kept
    shifted = model.condition_on_observations(X[20:30], Y[20:30] + 10.0)
    assert not torch.equal(shifted._y_mean, mean0)  # large drift: re-standardised and re-conditioned
    fresh = NPModel(s, torch.cat([X[:20], X[20:30]]), torch.cat([Y[:20], Y[20:30] + 10.0]))
    Xt = torch.rand(5, 1, D, dtype=torch.float64)
    assert torch.allclose(shifted.posterior(Xt).mean, fresh.posterior(Xt).mean, atol=1e-5)


def test_multi_output_and_scalarisation():
    X, Y = data(m=5)
    model = NPModel(surrogate(x_dim=3, y_dim=5), X, Y, standardize=False)
    assert model.num_outputs == 5
    post = model.posterior(torch.rand(4, 2, D, dtype=torch.float64))
    assert post.mean.shape == (4, 2, 5)
    weights = torch.tensor([1.0, 0.0, 0.5, 0.0, 0.0], dtype=torch.float64)
    scalar = model.posterior(torch.rand(4, 2, D, dtype=torch.float64),
                             posterior_transform=ScalarizedPosteriorTransform(weights))
    assert scalar.mean.shape == (4, 2, 1)
    sub = model.subset_output([2, 4])
    assert sub.num_outputs == 2 and sub.posterior(torch.rand(3, 1, D, dtype=torch.float64)).mean.shape == (3, 1, 2)
    ucb = UpperConfidenceBound(model, beta=1.0, posterior_transform=ScalarizedPosteriorTransform(weights))
    assert ucb(torch.rand(3, 1, D, dtype=torch.float64)).shape == (3,)


def test_invalid_input_is_refused():
    X, Y = data()
    s = surrogate()
    with pytest.raises(ValueError, match="same number of rows"):
        NPModel(s, X, Y[:-1])
    bad = Y.clone()
    bad[3] = float("nan")
    with pytest.raises(ValueError, match="train_Y contains NaN"):
        NPModel(s, X, bad)
    with pytest.raises(ValueError, match="at most 6"):
        NPModel(s, torch.rand(5, 7, dtype=torch.float64), Y[:5])
    with pytest.raises(ValueError, match="column"):
        NPModel(s, X, torch.cat([Y, Y], -1))
    with pytest.raises(ValueError, match="2-D"):
        NPModel(s, X[None], Y[None])
    model = NPModel(s, X, Y)
    with pytest.raises(ValueError, match=r"batch_shape x q x 3"):
        model.posterior(torch.rand(4, 1, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="NaN"):
        model.posterior(torch.full((1, 1, D), float("nan"), dtype=torch.float64))
    with pytest.raises(ValueError, match="bounds"):
        NPModel(s, X, Y, bounds=torch.zeros(2, D))
    with pytest.raises(TypeError, match="NeuralProcess"):
        NPModel(object(), X, Y)


def test_posterior_calls_never_reencode_the_training_data():
    X, Y = data(n=25)
    s = surrogate()
    counter = EmbedCounter(s.embed)
    model = NPModel(s, X, Y)
    model.posterior(torch.rand(3, 1, D, dtype=torch.float64))  # first call also estimates the noise
    seen = counter.points
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optimize_acqf(LogExpectedImprovement(model, best_f=Y.max()), BOUNDS, q=1, num_restarts=2, raw_samples=32)
    assert counter.points == seen == 25


def test_from_pretrained_bo_checkpoint():
    X, Y = data(n=15)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    assert model._input_domain == (0.0, 1.0) and model._standardize
    post = model.posterior(torch.rand(8, 1, D, dtype=torch.float64))
    assert post.mean.shape == (8, 1, 1) and post.mean.dtype == torch.float64
    # a trained model interpolates: near the training points its mean is close to the data
    near = model.posterior(X[:, None, :]).mean.squeeze()
    assert (near - Y.squeeze()).abs().mean() < Y.std()


def test_from_pretrained_wheel_checkpoint_is_multi_output():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(30, 2, generator=g, dtype=torch.float64) - 0.5
    Y = torch.ones(30, 5, dtype=torch.float64)
    model = NPModel.from_pretrained("cmanp-wheel", X, Y)
    assert model.num_outputs == 5 and model._input_domain == (-1.0, 1.0) and not model._standardize
    assert model.posterior(torch.rand(4, 1, 2, dtype=torch.float64) - 0.5).mean.shape == (4, 1, 5)


@pytest.mark.parametrize("name", ["lbanp", "tnpd"])
def test_reconditioning_surrogates_fantasise_too(name):
    X, Y = data(n=10)
    model = NPModel(surrogate(name), X, Y)
    fantasy = model.fantasize(torch.rand(2, 1, D, dtype=torch.float64), SobolQMCNormalSampler(torch.Size([3])))
    assert fantasy.batch_shape == torch.Size([3, 2])
    assert fantasy.posterior(torch.rand(3, 2, 1, D, dtype=torch.float64)).mean.shape == (3, 2, 1, 1)
    streamed = model.condition_on_observations(X[:2] * 0.5, Y[:2])
    assert streamed.train_X.shape == (12, D)
