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
from botorch.posteriors import GPyTorchPosterior
from botorch.sampling import SobolQMCNormalSampler
from helpers import EmbedCounter, data_box

from npbandit import NPModel, load_surrogate
from npbandit.surrogates import build

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
@pytest.mark.slow
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


@pytest.mark.slow
def test_knowledge_gradient_runs_through_fantasies():
    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cand, value = optimize_acqf(qKnowledgeGradient(model, num_fantasies=4), BOUNDS, q=1, num_restarts=2,
                                    raw_samples=16)
    assert cand.shape == (1, D) and torch.isfinite(value)


@pytest.mark.parametrize("name", ["cmanp", "tnpd"])
def test_fantasy_models_are_differentiable_in_the_fantasy_points(name):
    # qKG's value depends on its candidate only through the fantasy model (as a GP's does),
    # and qNegIntegratedPosteriorVariance only through the fantasy model's variance
    from botorch.acquisition.active_learning import qNegIntegratedPosteriorVariance

    X, Y = data()
    model = NPModel(surrogate(name), X, Y)
    Xf = torch.rand(2, 1, D, dtype=torch.float64, requires_grad=True)
    fantasy = model.fantasize(Xf, SobolQMCNormalSampler(torch.Size([3]), seed=0))
    fantasy.posterior(torch.rand(4, D, dtype=torch.float64)).mean.sum().backward()
    assert Xf.grad is not None and Xf.grad.abs().sum() > 0
    Z = torch.rand(2, 1 + 4, D, dtype=torch.float64, requires_grad=True)
    qKnowledgeGradient(model, num_fantasies=4)(Z).sum().backward()
    assert Z.grad[:, 0].abs().sum() > 0  # the candidate, not only the fantasised maximisers
    Xr = torch.rand(2, 1, D, dtype=torch.float64, requires_grad=True)
    qNegIntegratedPosteriorVariance(model, mc_points=torch.rand(8, D, dtype=torch.float64))(Xr).sum().backward()
    assert Xr.grad.abs().sum() > 0


@pytest.mark.parametrize("name", ["cmanp", "tnpd"])
def test_model_dimensions_of_size_one_broadcast_against_t_batches(name):
    # a fantasy model of batch shape 4 x 1 read by t-batches of shape 3: element [i, j] is fantasy i's
    X, Y = data()
    model = NPModel(surrogate(name), X, Y)
    fantasy = model.fantasize(torch.rand(1, 1, D, dtype=torch.float64), SobolQMCNormalSampler(torch.Size([4]), seed=0))
    assert fantasy.batch_shape == torch.Size([4, 1])
    Xt = torch.rand(3, 2, D, dtype=torch.float64)
    together = fantasy.posterior(Xt).mean
    apart = torch.stack([fantasy.posterior(Xt[j:j + 1]).mean[:, 0] for j in range(3)], dim=1)
    assert together.shape == (4, 3, 2, 1) and torch.allclose(together, apart, atol=1e-6)
    Xs, Ys = torch.rand(3, 1, D, dtype=torch.float64), torch.rand(3, 1, 1, dtype=torch.float64)
    conditioned = fantasy.condition_on_observations(Xs, Ys)
    assert conditioned.batch_shape == torch.Size([4, 3])
    x0 = torch.rand(1, D, dtype=torch.float64)
    for j in range(3):
        alone = fantasy.condition_on_observations(Xs[j:j + 1], Ys[j:j + 1]).posterior(x0).mean[:, 0]
        assert torch.allclose(conditioned.posterior(x0).mean[:, j], alone, atol=1e-6)


def test_conditioning_on_no_points_changes_nothing():
    # BoTorch's fantasize supports an empty X (ModelList's decoupled fantasies produce it)
    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    x0 = torch.rand(2, D, dtype=torch.float64)
    fantasy = model.fantasize(torch.empty(0, D, dtype=torch.float64), SobolQMCNormalSampler(torch.Size([3])))
    assert fantasy.batch_shape == torch.Size([3])
    assert torch.allclose(fantasy.posterior(x0).mean, model.posterior(x0).mean.expand(3, 2, 1), atol=1e-6)
    assert model.posterior(torch.empty(3, 0, D, dtype=torch.float64)).mean.shape == (3, 0, 1)
    same = model.condition_on_observations(torch.empty(0, D, dtype=torch.float64),
                                           torch.empty(0, 1, dtype=torch.float64))
    count, mean, m2 = same._moments
    assert count == X.shape[0] and torch.isfinite(mean).all() and torch.isfinite(m2).all()
    assert torch.equal(same.posterior(x0).mean, model.posterior(x0).mean)


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
    model = NPModel(surrogate(), X, Y, input_transform=Normalize(D, bounds=data_box(X)),
                    outcome_transform=Standardize(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.train()
        model.eval()
        # points the Normalize maps into the box (beyond the data's range it maps them out: refused)
        model.posterior(X[:2].unsqueeze(-2))
    assert model.num_outputs == 1 and model.batch_shape == torch.Size()


def test_conditioning_in_training_mode_leaves_the_outcome_transform_as_learned():
    # a Standardize in training mode learns from what it is given: here the new Y alone
    X, Y = data()
    model = NPModel(surrogate(), X, Y, outcome_transform=Standardize(1))
    learned = (model.outcome_transform.means.clone(), model.outcome_transform.stdvs.clone())
    Xt = torch.rand(4, 1, D, dtype=torch.float64)
    before = model.posterior(Xt).mean
    X_new, Y_new = torch.rand(2, D, dtype=torch.float64), torch.tensor([[100.0], [200.0]], dtype=torch.float64)
    expected = model.condition_on_observations(X_new, Y_new).posterior(Xt).mean
    model.train()
    child = model.condition_on_observations(X_new, Y_new)
    assert torch.equal(model.outcome_transform.means, learned[0])
    assert torch.equal(model.outcome_transform.stdvs, learned[1])
    assert torch.equal(model.posterior(Xt).mean, before)
    assert torch.equal(child.posterior(Xt).mean, expected)


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
    with pytest.raises(ValueError, match="at most 6"):  # wider data is read in part only when asked
        NPModel(s, torch.rand(5, 7, dtype=torch.float64), Y[:5], columns="all")
    with pytest.raises(ValueError, match="2-D"):
        NPModel(s, X[None], Y[None])
    model = NPModel(s, X, Y)
    with pytest.raises(ValueError, match=r"batch_shape x q x 3"):
        model.posterior(torch.rand(4, 1, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="NaN"):
        model.posterior(torch.full((1, 1, D), float("nan"), dtype=torch.float64))
    with pytest.raises(ValueError, match="bounds"):
        NPModel(s, X, Y, bounds=torch.zeros(2, D))
    with pytest.raises(ValueError, match="bounds must be finite"):
        NPModel(s, X, Y, bounds=torch.tensor([[0.0] * D, [float("inf")] + [1.0] * (D - 1)]))
    with pytest.raises(ValueError, match="train_X .*outside bounds"):
        NPModel(s, 5 * X, Y, bounds=BOUNDS)
    with pytest.raises(ValueError, match="output_indices"):
        model.posterior(torch.rand(1, D, dtype=torch.float64), output_indices=[])
    with pytest.raises(ValueError, match="output_indices"):
        model.posterior(torch.rand(1, D, dtype=torch.float64), output_indices=[-1])
    with pytest.raises(TypeError, match="NeuralProcess"):
        NPModel(object(), X, Y)
    # a new observation outside the box is refused as train_X is; one inside streams in, and a
    # later load_state_dict (Ax) re-conditions on it
    transformed = NPModel(s, X, Y, outcome_transform=Standardize(1))
    with pytest.raises(ValueError, match=r"X row 0, column 0 is 1.2 .*outside input_domain"):
        transformed.condition_on_observations(torch.full((1, D), 1.2, dtype=torch.float64), Y[:1])
    streamed = transformed.condition_on_observations(torch.full((1, D), 0.7, dtype=torch.float64), Y[:1])
    streamed.load_state_dict(streamed.state_dict())


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
    # the wheel checkpoint reads symlog rewards: not a Gaussian posterior in reward units
    with pytest.raises(ValueError, match=r"outcome transform \(symlog\(y / 1\), zeros fill\)"):
        NPModel.from_pretrained("cmanp-wheel", X, Y)
    surrogate = load_surrogate("cmanp-wheel")
    surrogate.outcome_transform = None  # Y in the network's own units, on purpose
    model = NPModel.from_pretrained(surrogate, X, Y)
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


@pytest.mark.parametrize("n", [40, 400])
def test_a_streamed_iteration_reads_a_bounded_number_of_points(n):
    # the same work at both sizes: one point embedded (the update), at most noise_points
    # observed points predicted for the noise estimate, plus the query points
    X, Y = data(n=n + 1)
    s = surrogate()
    embedded, predicted = EmbedCounter(s.embed), EmbedCounter(s.decoder)
    model = NPModel(s, X[:n], Y[:n], noise_points=16)
    embedded.points = predicted.points = 0
    streamed = model.condition_on_observations(X[n:], Y[n:])
    streamed.posterior(torch.rand(5, 1, D, dtype=torch.float64))
    assert streamed._y_mean is model._y_mean  # no re-standardisation (that one is O(N) by design)
    assert embedded.points == 1
    assert predicted.points == 16 + 5
    # the estimate is over evenly spaced observed points, the first and the newest included, read
    # by the model it was streamed from (one point is less than NOISE_REFRESH of the n points)
    idx = torch.linspace(0, n - 1, 16, dtype=torch.float64).round().long()
    with torch.no_grad():
        var = s.predict(model._state, model._to_surrogate_inputs(X[idx]).unsqueeze(0)).variance
    assert torch.allclose(streamed.noise_variance(), var.min().double().reshape(1))
    assert model.noise_variance() is streamed.noise_variance()


def test_a_streamed_model_keeps_the_noise_estimate_until_its_points_grow_by_noise_refresh():
    from npbandit.models.likelihood import NOISE_REFRESH

    n = 20
    X, Y = data(n=30)
    s = surrogate()
    predicted = EmbedCounter(s.decoder)
    model = NPModel(s, X[:n], Y[:n], standardize=False)  # no re-standardisation: only the rule below
    kept = int((1 + NOISE_REFRESH) * n)  # the most points an inherited estimate is kept at
    streamed = model
    for i in range(n, kept - 1):
        streamed = streamed.condition_on_observations(X[i:i + 1], Y[i:i + 1])
    predicted.points = 0
    estimate = streamed.noise_variance()  # read by the model it was streamed from, though asked only now
    assert predicted.points == n and model.noise_variance() is estimate
    streamed = streamed.condition_on_observations(X[kept - 1:kept], Y[kept - 1:kept])  # kept points now
    predicted.points = 0
    assert streamed.noise_variance() is estimate and predicted.points == 0  # kept, as a GP keeps its noise
    streamed = streamed.condition_on_observations(X[kept:kept + 1], Y[kept:kept + 1])
    predicted.points = 0
    fresh = streamed.noise_variance()  # past the fraction: read afresh at every observed point
    assert predicted.points == kept + 1
    with torch.no_grad():
        var = s.predict(streamed._state, streamed._to_surrogate_inputs(X[:kept + 1]).unsqueeze(0)).variance
    assert torch.allclose(fresh, var.min().double().reshape(1))
    # a re-standardisation changes the units, so the estimate is read afresh after one
    model = NPModel(s, X[:n], Y[:n])
    model.noise_variance()
    shifted = model.condition_on_observations(X[n:n + 1], Y[n:n + 1] + 100 * model._y_std)
    assert shifted._y_mean is not model._y_mean and shifted._noise_var is None and shifted._noise_from is None


def test_streaming_appends_in_place_and_branches_copy():
    X, Y = data(n=16)
    X0 = X[:10].clone()
    model = NPModel(surrogate(), X0, Y[:10])
    a = model.condition_on_observations(X[10:11], Y[10:11])
    b = a.condition_on_observations(X[11:13], Y[11:13])
    c = b.condition_on_observations(X[13:14], Y[13:14])
    assert torch.equal(c.train_X, X[:14]) and torch.equal(c.train_Y, Y[:14])
    # one growing buffer: no copy of the old rows per update
    assert a.train_X.data_ptr() == b.train_X.data_ptr() == c.train_X.data_ptr()
    assert torch.equal(X0, X[:10]) and model.train_X.shape == (10, D)  # the caller's tensor is not written
    # a second branch from b leaves c's rows alone
    other = b.condition_on_observations(X[15:16], Y[15:16])
    assert torch.equal(other.train_X, torch.cat([X[:13], X[15:16]])) and torch.equal(c.train_X, X[:14])
    assert b.train_X.shape == (13, D) and torch.equal(b.train_Y, Y[:13])
    # the drift check's running moments are those of all the data
    from npbandit.transforms.moments import moment_statistics
    from npbandit.transforms.standardize import standardization

    mean, std = moment_statistics(c._moments)
    ref_mean, ref_std = standardization(Y[:14])
    assert torch.allclose(mean, ref_mean.squeeze(-2)) and torch.allclose(std, ref_std.squeeze(-2))


def test_fantasy_training_data_is_built_only_when_read():
    X, Y = data(n=12)
    model = NPModel(surrogate(), X, Y)
    fantasy = model.fantasize(torch.rand(4, 1, D, dtype=torch.float64), SobolQMCNormalSampler(torch.Size([3])))
    assert fantasy._pending is not None
    assert fantasy.train_X.shape == (3, 4, 13, D) and fantasy.train_Y.shape == (3, 4, 13, 1)
    assert fantasy._pending is None
    assert torch.equal(fantasy.train_X[2, 1, :12], X) and torch.equal(fantasy.train_Y[0, 3, :12], Y)


def test_latent_variance_is_measured_from_the_most_confident_observed_point():
    X, Y = data(n=20)
    s = surrogate()
    model = NPModel(s, X, Y)
    with torch.no_grad():
        at_data = s.predict(model._state, model._to_surrogate_inputs(X).unsqueeze(0)).variance.flatten().double()
    noise = model.noise_variance()
    assert torch.allclose(noise, at_data.min().reshape(1))
    # at the observed points the latent variance is >= 0: only the most confident one sits at the floor
    # (the median of the old rule put half of them there by construction)
    floor = 1.0001e-6 * model._y_std ** 2
    latent = model.posterior(X[:, None]).variance.flatten()
    assert int((latent <= floor).sum()) == 1
    noisy = model.posterior(X[:, None], observation_noise=True).variance.flatten()
    assert torch.allclose(noisy, at_data * model._y_std ** 2, rtol=1e-5)  # the NP's own predictive variance
    # most random points are above the floor; the old rule (noise = median at the data) clamped about half
    Xt = torch.rand(1000, 1, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    latent = model.posterior(Xt).variance.flatten()
    with torch.no_grad():
        var = s.predict(model._state, model._to_surrogate_inputs(Xt[:, 0]).unsqueeze(0)).variance.flatten().double()
    old_rule_floor = (var <= at_data.median()).double().mean()
    assert (latent <= floor).double().mean() < 0.15 < 0.4 < old_rule_floor


def test_noise_points_is_checked():
    X, Y = data()
    with pytest.raises(ValueError, match="noise_points"):
        NPModel(surrogate(), X, Y, noise_points=0)


@pytest.mark.parametrize("name", ["cmanp", "lbanp", "tnpd", "te-pt-tnp", "retreever"])
def test_posterior_can_be_differentiated_again_and_again(name):
    # the first posterior call runs with gradients on while the network's weights
    # require grad: nothing it computes may be cached with a graph (CMANP's block
    # latents were, and the second backward failed)
    X, Y = data()
    model = NPModel(surrogate(name), X, Y)
    assert any(p.requires_grad for p in model.surrogate.parameters())
    for _ in range(3):
        Xt = torch.rand(4, 1, D, dtype=torch.float64, requires_grad=True)
        model.posterior(Xt).mean.sum().backward()
        assert Xt.grad is not None and torch.isfinite(Xt.grad).all()
    streamed = model.condition_on_observations(X[:1] * 0.5, Y[:1])
    for _ in range(2):
        streamed.posterior(torch.rand(2, 1, D, dtype=torch.float64, requires_grad=True)).mean.sum().backward()


@pytest.mark.slow
def test_the_swap_is_one_line_in_a_botorch_script():
    # a user's BoTorch script (its README's shape) with only the model line changed:
    # the mll and fit_gpytorch_mll lines stay, and fitting a pretrained model does nothing
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    train_X = torch.rand(10, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    Y = 1 - (train_X - 0.5).norm(dim=-1, keepdim=True)
    Y = Y + 0.1 * torch.randn(Y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    bounds = torch.stack([torch.zeros(2), torch.ones(2)]).to(torch.double)
    for swapped in (False, True):
        if not swapped:
            model = SingleTaskGP(train_X=train_X, train_Y=Y, input_transform=Normalize(d=2, bounds=bounds),
                                 outcome_transform=Standardize(m=1))
        else:
            model = NPModel.from_pretrained("cmanp-bo", train_X=train_X, train_Y=Y,
                                            input_transform=Normalize(d=2, bounds=bounds),
                                            outcome_transform=Standardize(m=1))
        weights = {k: v.clone() for k, v in model.state_dict().items()}
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
        assert fit_gpytorch_mll(mll) is mll and not mll.training
        logEI = LogExpectedImprovement(model=model, best_f=Y.max())
        candidate, acq_value = optimize_acqf(logEI, bounds=bounds, q=1, num_restarts=5, raw_samples=20)
        assert candidate.shape == (1, 2) and (candidate >= 0).all() and (candidate <= 1).all()
        assert torch.isfinite(acq_value)
    assert model.state_dict().keys() == weights.keys()
    assert all(torch.equal(model.state_dict()[k], weights[k]) for k in weights)  # nothing was fitted


def test_likelihood_reports_the_noise_estimate():
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.mlls import ExactMarginalLogLikelihood

    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    ExactMarginalLogLikelihood(model.likelihood, model)  # constructs, like a GP's
    assert not isinstance(model.likelihood, GaussianLikelihood)  # nothing to set or learn
    assert list(model.likelihood.parameters()) == []
    expected = model.noise_variance() * model._y_std ** 2  # in the (outcome-transformed) units of train_Y
    assert torch.allclose(model.likelihood.noise, expected)
    # the likelihood applied to the latent posterior is the posterior of a new observation
    Xt = torch.rand(5, 1, D, dtype=torch.float64)
    noisy = model.likelihood(model.posterior(Xt).distribution)
    assert torch.allclose(noisy.variance, model.posterior(Xt, observation_noise=True).variance.squeeze(-1))
    streamed = model.condition_on_observations(X[:1] * 0.5, Y[:1])
    assert torch.allclose(streamed.likelihood.noise, streamed.noise_variance() * streamed._y_std ** 2)
    with pytest.raises(ValueError, match="mll"):
        model.custom_fit(ExactMarginalLogLikelihood(streamed.likelihood, streamed))
    with pytest.raises(TypeError, match="mll"):
        model.custom_fit(None)


def test_parameters_show_the_networks_device_and_dtype_and_nothing_to_fit():
    # code that reads a model's device from next(model.parameters()) (Ax's sensitivity analysis)
    # finds the network's; there is still nothing to fit, to count or to save
    from botorch.fit import fit_gpytorch_mll
    from gpytorch.mlls import ExactMarginalLogLikelihood

    X, Y = data()
    net = surrogate()  # float32, as load_surrogate gives it
    ref = next(net.parameters())
    model = NPModel(net, X, Y, input_transform=Normalize(D, bounds=data_box(X)), outcome_transform=Standardize(1))
    params = list(model.parameters())
    assert len(params) == 1 and params[0].numel() == 0 and not params[0].requires_grad
    assert (params[0].device, params[0].dtype) == (ref.device, ref.dtype) == (ref.device, torch.float32)
    assert sum(p.numel() for p in model.parameters() if p.requires_grad) == 0
    state = model.state_dict()
    assert not any("anchor" in key for key in state)  # the keys a state dict had before
    weights = {k: v.clone() for k, v in net.state_dict().items()}
    Xt = torch.rand(4, 1, D, dtype=torch.float64)
    before = model.posterior(Xt).mean
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    assert fit_gpytorch_mll(mll) is mll
    assert [p for p in mll.parameters() if p.requires_grad] == []  # nothing for an optimiser
    assert all(torch.equal(net.state_dict()[k], v) for k, v in weights.items())
    assert all(torch.equal(model.state_dict()[k], v) for k, v in state.items() if k != "_extra_state")
    assert torch.equal(model.posterior(Xt).mean, before)
    # moving the model (analytic acquisition functions call model.to(X)) leaves the network and its anchor
    model.to(torch.float64)
    assert next(model.parameters()).dtype == torch.float32 and ref.dtype == torch.float32
    # conditioned models show the same anchor; a state dict without one (every state dict) loads strictly
    child = model.condition_on_observations((X[:2] + X[2:4]) / 2, Y[:2])  # inside the data's range
    assert next(child.parameters()) is params[0] and next(model.subset_output([0]).parameters()) is params[0]
    model.load_state_dict(state, strict=True)
    assert next(model.parameters()) is params[0]


def test_conditioned_models_do_not_share_module_bookkeeping():
    # a conditioned model is built field by field, not by copying the parent's __dict__
    # (which shared torch's hook dictionaries between parent and child)
    X, Y = data()
    model = NPModel(surrogate(), X, Y, input_transform=Normalize(D, bounds=data_box(X)),
                    outcome_transform=Standardize(1))
    calls = []
    for child in (model.condition_on_observations((X[:2] + X[2:4]) / 2, Y[:2]),  # inside the box (the data's range)
                  model.fantasize(torch.rand(2, 1, D, dtype=torch.float64), SobolQMCNormalSampler(torch.Size([3]))),
                  model.subset_output([0])):
        child.register_load_state_dict_post_hook(lambda module, keys: calls.append(module))
        assert set(vars(child)) == set(vars(model))
        assert child.input_transform is model.input_transform and child.likelihood is not model.likelihood
    model.load_state_dict(model.state_dict())
    assert calls == []


def test_transforms_and_known_noise_are_positional_or_keyword_arguments():
    # Ax decides whether a model class "supports" a transform from getfullargspec(cls).args
    import inspect

    args = inspect.getfullargspec(NPModel).args
    assert {"train_X", "train_Y", "train_Yvar", "input_transform", "outcome_transform"} <= set(args)


def test_known_noise_is_the_observation_noise():
    X, Y = data()
    net = surrogate()
    Yvar = torch.full_like(Y, 0.04)
    plain = NPModel(net, X, Y, outcome_transform=Standardize(1))
    known = NPModel(net, X, Y, Yvar, outcome_transform=Standardize(1))
    Xt = torch.rand(6, 1, D, dtype=torch.float64)
    # the NP conditions on Y alone: the latent posterior is the same
    assert torch.allclose(plain.posterior(Xt).variance, known.posterior(Xt).variance)
    # a new observation's noise is the known one (raw units here, as the outcome transform is undone)
    noisy = known.posterior(Xt, observation_noise=True).variance - known.posterior(Xt).variance
    assert torch.allclose(noisy, torch.full_like(noisy, 0.04))
    assert torch.allclose(known.likelihood.noise, 0.04 / Y.std() ** 2)  # in the standardised units of train_Y
    streamed = known.condition_on_observations(X[:2] * 0.5, Y[:2])
    assert torch.allclose(streamed.likelihood.noise, known.likelihood.noise)
    with pytest.raises(ValueError, match="train_Yvar"):
        NPModel(net, X, Y, -Yvar)
    with pytest.raises(ValueError, match="train_Yvar"):
        NPModel(net, X, Y, Yvar[:3])


def test_state_dict_names_the_network_and_loading_reconditions():
    X, Y = data()
    X2, Y2 = data(seed=1)
    net = surrogate()
    a = NPModel(net, X, 3 * Y + 1, outcome_transform=Standardize(1))
    b = NPModel(net, X2, Y2, outcome_transform=Standardize(1))
    state = a.state_dict()
    assert state["_extra_state"].dtype == torch.uint8 and state["_extra_state"].shape == (32,)
    b.load_state_dict(state)
    # b keeps its own data and is conditioned on it through a's transform, nothing of a's data
    import copy

    transform = copy.deepcopy(a.outcome_transform).eval()
    expected = NPModel(net, X2, Y2, outcome_transform=transform)
    Xt = torch.rand(5, 1, D, dtype=torch.float64)
    assert torch.allclose(b.posterior(Xt).mean, expected.posterior(Xt).mean)
    assert torch.allclose(b.posterior(Xt).variance, expected.posterior(Xt).variance)
    other = NPModel(surrogate(seed=1), X2, Y2, outcome_transform=Standardize(1))
    with pytest.raises(ValueError, match="another network"):
        other.load_state_dict(state)


def test_rows_shared_by_all_t_batches_are_predicted_once_with_exact_gradients():
    # qNEI appends the observed points to every candidate: predicted once, the values and
    # each t-batch's gradient are those of predicting every row on its own
    X, Y = data()
    net = surrogate()
    model = NPModel(net, X, Y, covariance="diagonal")  # the marginal path caches shared rows
    counter = EmbedCounter(net.decoder)  # CMANP's decoder: the target points it predicts
    b, k = 16, X.shape[0]
    baseline = X.unsqueeze(0).repeat(b, 1, 1).requires_grad_(True)  # distinct leaves, equal values
    cand = torch.rand(b, 1, D, dtype=torch.float64, requires_grad=True)
    w = torch.randn(b, k + 1, dtype=torch.float64)

    def loss(post):
        return (w.reshape(post.mean.shape[:-1]) * (post.mean + 0.3 * post.variance).squeeze(-1)).sum()

    post = model.posterior(torch.cat([baseline, cand], dim=-2))
    grads = torch.autograd.grad(loss(post), [baseline, cand])
    rows = torch.cat([baseline, cand], dim=-2).detach().reshape(-1, 1, D).requires_grad_(True)
    ref = model.posterior(rows)
    ref_grad, = torch.autograd.grad((w.reshape(-1) * (ref.mean + 0.3 * ref.variance).reshape(-1)).sum(), rows)
    ref_grad = ref_grad.reshape(b, k + 1, D)
    assert torch.allclose(post.mean.reshape(-1), ref.mean.reshape(-1))
    assert torch.allclose(post.variance.reshape(-1), ref.variance.reshape(-1))
    assert torch.allclose(grads[0], ref_grad[:, :k], atol=1e-5)
    assert torch.allclose(grads[1], ref_grad[:, k:], atol=1e-5)
    counter.points = 0
    with torch.no_grad():
        model.posterior(torch.cat([baseline, cand], dim=-2))
    assert counter.points == b  # the shared rows' moments were kept: only the candidates are predicted
    counter.points = 0
    one = model.posterior(torch.cat([X, cand[0].detach()]).unsqueeze(0))  # one t-batch with the rows kept
    assert counter.points == 1
    assert torch.allclose(one.mean.reshape(-1), post.mean[0].reshape(-1))


def test_kept_moments_give_the_same_posterior_and_go_with_the_state():
    X, Y = data()
    net = surrogate()
    counter = EmbedCounter(net.decoder)
    model = NPModel(net, X, Y, input_transform=Normalize(D, bounds=BOUNDS), covariance="diagonal")
    b, k = 8, X.shape[0]
    cand = torch.rand(b, 1, D, dtype=torch.float64)

    def full(rows=X, c=cand):
        return torch.cat([rows.expand(b, -1, -1), c], dim=-2)

    def per_row(m, Xt):  # every row on its own: no rows shared, nothing kept
        post = m.posterior(Xt.reshape(-1, 1, D))
        return post.mean.reshape(Xt.shape[:-1]), post.variance.reshape(Xt.shape[:-1])

    with torch.no_grad():
        first = model.posterior(full())  # keeps the moments at X (values only)
        counter.points = 0
        again = model.posterior(full())
    assert counter.points == b
    assert torch.equal(first.mean, again.mean) and torch.equal(first.variance, again.variance)
    mean, var = per_row(model, full())
    assert torch.allclose(again.mean.squeeze(-1), mean) and torch.allclose(again.variance.squeeze(-1), var)
    # a gradient after a call without one: the kept rows get their Jacobian, the candidates theirs
    Xg = cand.clone().requires_grad_(True)
    qnei = qLogNoisyExpectedImprovement(model, X_baseline=X, prune_baseline=False)
    grad, = torch.autograd.grad(qnei(Xg).sum(), Xg)
    for _ in range(2):  # the kept entry holds no graph: differentiable again and again
        Xg = cand.clone().requires_grad_(True)
        assert torch.equal(torch.autograd.grad(qnei(Xg).sum(), Xg)[0], grad)
    fresh = NPModel(net, X, Y, input_transform=Normalize(D, bounds=BOUNDS), covariance="diagonal")
    rows = full().reshape(-1, 1, D).requires_grad_(True)
    post = fresh.posterior(rows)
    ref, = torch.autograd.grad((post.mean + 0.3 * post.variance).sum(), rows)
    Xg = full().requires_grad_(True)
    post = model.posterior(Xg)
    got, = torch.autograd.grad((post.mean + 0.3 * post.variance).sum(), Xg)
    assert torch.allclose(got.reshape(-1, D), ref.reshape(-1, D), atol=1e-6)
    # other rows, another dtype: not the kept entry
    mean2, var2 = per_row(model, full(X.flip(0)))
    assert torch.allclose(model.posterior(full(X.flip(0))).mean.squeeze(-1), mean2)
    counter.points = 0
    with torch.no_grad():
        single = model.posterior(full().float())
    assert counter.points == b + k  # the shared rows predicted once, not taken from the float64 entry
    assert single.mean.dtype == torch.float32
    # a conditioned model has another state: it predicts the rows again, from that state
    model.posterior(full())  # the float64 entry, kept again
    Xn = torch.rand(3, D, dtype=torch.float64)
    Yn = torch.sin(5 * Xn.sum(-1, keepdim=True))
    streamed = model.condition_on_observations(Xn, Yn)
    for m in (streamed, model.subset_output([0])):
        mean, var = per_row(m, full())
        post = m.posterior(full())
        assert torch.allclose(post.mean.squeeze(-1), mean) and torch.allclose(post.variance.squeeze(-1), var)
    assert not torch.allclose(streamed.posterior(full()).mean, first.mean)
    # load_state_dict re-conditions through the loaded transforms: the kept moments go
    other_bounds = torch.tensor([[-0.5] * D, [1.5] * D], dtype=torch.float64)
    other = NPModel(net, X, Y, input_transform=Normalize(D, bounds=other_bounds))
    model.posterior(full())
    model.load_state_dict(other.state_dict())
    expected = other.posterior(full())
    post = model.posterior(full())
    assert torch.allclose(post.mean, expected.mean) and torch.allclose(post.variance, expected.variance)
    assert not torch.allclose(post.mean, first.mean)


def test_shared_rows_that_come_back_are_kept_even_for_few_t_batches():
    # two restarts of a gradient optimisation: predicting the rows apart does not pay the first
    # time (their Jacobian costs more), but they come back in every evaluation
    X, Y = data()
    net = surrogate()
    counter = EmbedCounter(net.decoder)
    model = NPModel(net, X, Y, covariance="diagonal")
    b, k = 2, X.shape[0]
    cand = torch.rand(b, 1, D, dtype=torch.float64)
    qnei = qLogNoisyExpectedImprovement(model, X_baseline=X, prune_baseline=False)
    model.noise_variance()  # estimated once per model, from the observed points
    grads, points = [], []
    for _ in range(3):
        Xg = cand.clone().requires_grad_(True)
        counter.points = 0
        grads.append(torch.autograd.grad(qnei(Xg).sum(), Xg)[0])
        points.append(counter.points)
    assert points == [b * (k + 1), k + b, b]
    assert torch.allclose(grads[1], grads[0], atol=1e-6) and torch.equal(grads[2], grads[1])


@pytest.mark.parametrize("shape", [(5, 4, 3), (2, 3, 7, 2), (1, 1, 3)])
def test_equal_rows_are_found_by_pairs_as_by_sorting(shape):
    from npbandit.models.posterior import first_equal_rows

    g = torch.Generator().manual_seed(sum(shape))
    for _ in range(20):
        X = torch.randint(0, 2, shape, generator=g).double()  # many equal rows, some t-batches without
        pairs = first_equal_rows(X)
        sorted_ = first_equal_rows(X, pairwise_max=0)
        assert (pairs is None) == (sorted_ is None)
        if pairs is not None:
            assert torch.equal(pairs, sorted_)


@pytest.mark.parametrize("m", [1, 2])
def test_equal_points_share_one_draw(m):
    # f at one input is one random variable; observation noise stays independent
    X, Y = data(m=m)
    model = NPModel(surrogate(y_dim=m), X, Y)
    pts = torch.rand(3, 2, D, dtype=torch.float64)
    Xt = torch.cat([pts, pts[:, :1], X[:1].expand(3, 1, D)], dim=-2)  # point 0 twice; distinct points otherwise
    post = model.posterior(Xt)
    samples = post.rsample(torch.Size([64]))
    # one draw up to rounding (with several threads a matrix product's rows can differ in the last bits)
    torch.testing.assert_close(samples[..., 0, :], samples[..., 2, :], rtol=0, atol=1e-9)
    assert (samples[..., 0, :] - samples[..., 1, :]).abs().max() > 1e-3
    # the marginals are unchanged (float32 network: a few 1e-7 from predicting in another batch)
    single = model.posterior(Xt.reshape(-1, 1, D)).variance.reshape(post.variance.shape)
    assert torch.allclose(post.variance, single, atol=1e-6)
    noisy = model.posterior(Xt, observation_noise=True)
    covar = noisy.distribution.covariance_matrix  # interleaved (q, m) order
    latent = post.distribution.covariance_matrix
    assert torch.allclose(covar - latent, torch.diag_embed(torch.diagonal(covar - latent, dim1=-2, dim2=-1)))
    assert torch.allclose(latent[..., 0, 2 * m], post.variance[..., 0, 0])  # point 0 and its copy, output 0
    # qNEI no longer scores an observed point as a fresh draw at that point
    qnei = qLogNoisyExpectedImprovement(model if m == 1 else model.subset_output([0]), X_baseline=X,
                                        prune_baseline=False)
    assert qnei(X[:4].unsqueeze(-2)).max() < qnei(X[:4].unsqueeze(-2) + 1e-6).min()


def test_from_pretrained_takes_the_known_noise_where_single_task_gp_does():
    X, Y = data()
    Yvar = torch.full_like(Y, 0.01)
    by_position = NPModel.from_pretrained("tnpd-bo", X, Y, Yvar, n_views=1)  # as SingleTaskGP(X, Y, Yvar)
    by_name = NPModel.from_pretrained("tnpd-bo", X, Y, train_Yvar=Yvar, n_views=1)
    Xt = X[:3].unsqueeze(-2)
    noisy = by_position.posterior(Xt, observation_noise=True).variance
    assert torch.equal(noisy, by_name.posterior(Xt, observation_noise=True).variance)
    assert torch.allclose(noisy - by_position.posterior(Xt).variance, Yvar[:3].unsqueeze(-1), atol=1e-9)


def test_outputs_of_any_scale_give_the_same_posterior_in_their_units():
    # a network has no output scale to fit: outputs of order 1e-9 are standardised by their own
    # spread (not by 1, as a std below BoTorch's absolute 1e-8 would be), so the posterior scales with them
    X, Y = data()
    Xt = X[:3].unsqueeze(-2)
    unit, tiny = NPModel(surrogate(), X, Y).posterior(Xt), NPModel(surrogate(), X, Y * 1e-9).posterior(Xt)
    assert torch.allclose(tiny.mean, unit.mean * 1e-9, rtol=1e-5, atol=0)
    # GPyTorch reads any variance below its float64 floor (1e-10) as the floor, a GP's too; standardised by 1,
    # the network's unit spread would show instead (variance ~1e-3..1 here)
    assert (tiny.variance <= 1.0001e-10).all()
