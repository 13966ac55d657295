"""NPModel.observed_mean: the latent mean at the model's own observations, each observation
weighed against the NP's leave-one-out predictive there under the observation noise."""

import pytest
import torch
from botorch.models.transforms import Standardize

from npbandit import NPModel
from npbandit.models import observed
from npbandit.surrogates import build


def surrogate(name, seed=0):
    torch.manual_seed(seed)
    return build(name, 3, 1, size="tiny").eval()


def data(n=9, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 3, generator=g, dtype=torch.float64)
    return X, torch.sin(5 * X.sum(-1, keepdim=True)) + 0.3 * torch.randn(n, 1, generator=g, dtype=torch.float64)


@torch.no_grad()
def leave_one_out(net, X, Y):
    """The network's predictive mean and variance at each row from the others, computed apart
    through its public condition / predict, in the units of the model's standardised outputs."""
    Yn = (Y - Y.mean()) / Y.std()
    mean, var = [], []
    for i in range(len(X)):
        keep = torch.arange(len(X)) != i
        state = net.condition(X[keep].float()[None], Yn[keep].float()[None])
        dist = net.predict(state, X[i:i + 1].float()[None])
        mean.append(float(dist.loc))
        var.append(float(dist.variance))
    return torch.tensor(mean, dtype=torch.float64), torch.tensor(var, dtype=torch.float64), Y.mean(), Y.std()


@pytest.mark.parametrize("name", ["tnpd", "cmanp"])
def test_under_heavy_known_noise_each_mean_is_the_leave_one_out_prediction(name):
    net = surrogate(name)
    X, Y = data()
    mu, var, y_mean, y_std = leave_one_out(net, X, Y)
    # noise above every leave-one-out variance: one observation says nothing the others do not
    heavy = (var.max() * 10 * y_std ** 2).item()
    model = NPModel(net, X, Y, train_Yvar=torch.full_like(Y, heavy))
    expected = mu * y_std + y_mean
    assert torch.allclose(model.observed_mean().reshape(-1), expected, atol=1e-5 * float(y_std))  # float32 network


@pytest.mark.parametrize("name", ["tnpd", "cmanp"])
def test_with_almost_no_noise_each_mean_is_the_observation(name):
    net = surrogate(name)
    X, Y = data()
    model = NPModel(net, X, Y, train_Yvar=torch.full_like(Y, 1e-12))
    assert torch.allclose(model.observed_mean(), Y, atol=1e-6)


def test_with_the_noise_estimate_the_mean_weighs_observation_and_prediction_by_their_variances():
    net = surrogate("tnpd")
    X, Y = data(n=12, seed=3)
    model = NPModel(net, X, Y)
    mu, var, y_mean, y_std = leave_one_out(net, X, Y)
    noise = model.noise_variance()
    weight = ((var - noise) / var).clamp(0, 1)
    Yn = (Y.reshape(-1) - y_mean) / y_std
    expected = (mu + weight * (Yn - mu)) * y_std + y_mean
    assert torch.allclose(model.observed_mean().reshape(-1), expected, atol=1e-5)


def test_several_passes_give_the_one_pass_means(monkeypatch):
    net = surrogate("cmanp")
    X, Y = data(n=10)
    model = NPModel(net, X, Y)
    whole = model.observed_mean()
    monkeypatch.setattr(observed, "LOO_ELEMENTS", 3 * 10 * 10)  # three contexts a pass: four passes
    assert torch.allclose(NPModel(net, X, Y).observed_mean(), whole, atol=1e-6)


def test_means_come_in_the_units_and_outputs_the_posterior_reports():
    net = surrogate("tnpd")
    X, Y = data(n=8)
    Y2 = torch.cat([Y, 100 + 20 * Y.flip(0)], dim=-1)  # a second output on another scale
    model = NPModel(net, X, Y2, outcome_transform=Standardize(2), train_Yvar=torch.full_like(Y2, 1e-12))
    assert torch.allclose(model.observed_mean(), Y2, atol=1e-4)  # almost no noise: the observations themselves
    assert torch.allclose(model.subset_output([1]).observed_mean(), Y2[:, 1:], atol=1e-4)


def test_one_observation_gives_the_posterior_mean_and_a_fantasy_model_is_refused():
    net = surrogate("tnpd")
    X, Y = data(n=1)
    model = NPModel(net, X, Y)
    with torch.no_grad():
        assert torch.equal(model.observed_mean(), model.posterior(X.unsqueeze(-2)).mean.reshape(1, 1))
    X, Y = data(n=6)
    fantasy = NPModel(net, X, Y).condition_on_observations(torch.rand(2, 1, 3, dtype=torch.float64),
                                                            torch.rand(2, 1, 1, dtype=torch.float64))
    with pytest.raises(ValueError, match="unbatched"):
        fantasy.observed_mean()
