"""NPModel called as a GPyTorch GP: ``model(X)`` in eval mode is the latent posterior (what
GIBBON reads with pending points); training mode, transforms and several outputs are refused."""

import warnings

import pytest
import torch
from botorch.acquisition.max_value_entropy_search import qLowerBoundMaxValueEntropy
from botorch.models.transforms import Normalize, Standardize
from botorch.optim import optimize_acqf
from conftest import tiny_model
from gpytorch.distributions import MultivariateNormal

from npbandit import NPModel, load_surrogate

D = 2
UNIT = torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.float64)


def _data(n=10, m=1):
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, D, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X[:, :1]) + X[:, 1:] ** 2 + 0.1 * torch.arange(m, dtype=torch.float64)
    return X, Y


def _model(name="tnpd", covariance="diagonal", **kwargs):
    X, Y = _data(m=kwargs.pop("m", 1))
    return NPModel(tiny_model(name, x_dim=D), X, Y, covariance=covariance, **kwargs)


@pytest.mark.parametrize("name,covariance", [("tnpd", "diagonal"), ("tnpd", "conditioning"),
                                             ("cmanp", "conditioning"), ("cmanp-and", "diagonal")])
def test_model_x_in_eval_mode_is_the_latent_posterior(name, covariance):
    model = _model(name, covariance)
    X = torch.rand(3, 4, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    X[:, 3] = X[:, 0]  # equal points share one draw in both
    mvn = model(X)
    expected = model.posterior(X).distribution
    assert isinstance(mvn, MultivariateNormal) and mvn.batch_shape == (3,) and mvn.event_shape == (4,)
    assert torch.equal(mvn.mean, expected.mean)
    assert torch.equal(mvn.covariance_matrix, expected.covariance_matrix)
    # the likelihood adds the noise a new observation has, as for a GP
    noisy = model.posterior(X, observation_noise=True).distribution
    assert torch.allclose(model.likelihood(mvn).covariance_matrix, noisy.covariance_matrix, rtol=1e-12, atol=0)


def test_model_x_is_refused_in_training_mode_with_transforms_and_for_several_outputs():
    model = _model()
    X = torch.rand(2, D, dtype=torch.float64)
    model.train()
    with pytest.raises(NotImplementedError, match=r"no GPyTorch forward in training mode.*model.posterior\(X\)"):
        model(X)
    model.eval()
    assert model(X).event_shape == (2,)
    with pytest.raises(NotImplementedError, match=r"with an input_transform: .*bounds=bounds"):
        _model(input_transform=Normalize(D, bounds=UNIT))(X)
    with pytest.raises(NotImplementedError, match=r"with an outcome_transform: .*model.posterior\(X\)"):
        _model(outcome_transform=Standardize(1))(X)
    two = _model(m=2)
    with pytest.raises(NotImplementedError, match=r"one-output NPModel only \(this one has 2.*subset_output"):
        two(X)
    assert torch.allclose(two.subset_output([1])(X).mean, two.posterior(X).mean[..., 1], rtol=1e-12, atol=0)


@pytest.mark.parametrize("covariance", ["diagonal", "conditioning"])
def test_gibbon_with_a_pending_point_reads_the_posterior_s_covariance_with_it(covariance):
    X, Y = _data(n=15)
    # a trained network (its conditioning correlates near points), in float64 for exact comparisons
    model = NPModel.from_pretrained(load_surrogate("tnpd-bo", dtype=torch.float64), X, Y, covariance=covariance)
    torch.manual_seed(0)
    acq = qLowerBoundMaxValueEntropy(model, torch.rand(64, D, dtype=torch.float64))
    pending = torch.tensor([[0.3, 0.6]], dtype=torch.float64)
    X = torch.cat([pending, torch.tensor([[0.32, 0.6]], dtype=torch.float64)]).unsqueeze(-2)  # 2 x 1 x d
    alone = acq(X)
    acq.set_X_pending(pending)
    beside = acq(X)
    # GIBBON's repulsion: 0.5 log(1 - c^2 / (v_x v_p)), c the latent covariance of the candidate
    # with the pending point, v the variances of new observations there
    noisy = model.posterior(X, observation_noise=True).variance.reshape(2)
    v_p = model.posterior(pending, observation_noise=True).variance.reshape(())
    c = model.posterior(torch.cat([X, pending.expand(2, 1, D)], dim=-2)).distribution.covariance_matrix[:, 0, 1]
    expected = alone + 0.5 * torch.log1p(-(c ** 2) / (noisy * v_p))
    assert torch.allclose(beside, expected, rtol=1e-9, atol=1e-12)
    assert beside[0] < alone[0]  # the pending point itself: one shared draw, fully correlated
    if covariance == "diagonal":  # a distinct point counts as unrelated to it
        assert torch.equal(beside[1], alone[1])
    else:
        assert c[1] != 0 and beside[1] < alone[1]


def test_gibbon_chooses_a_sequential_batch():
    model = _model(covariance="conditioning")
    torch.manual_seed(0)
    acq = qLowerBoundMaxValueEntropy(model, torch.rand(64, D, dtype=torch.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # optimize_acqf's notes on restarts
        batch, _ = optimize_acqf(acq, UNIT, q=2, num_restarts=2, raw_samples=16, sequential=True)
    assert batch.shape == (2, D) and ((UNIT[0] <= batch) & (batch <= UNIT[1])).all()
