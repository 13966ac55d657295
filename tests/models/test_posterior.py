"""The Gaussian posterior NPModel hands BoTorch (npbandit.models.posterior)."""

import warnings

import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Standardize
from conftest import tiny_model
from gpytorch import settings

from npbandit import NPModel
from npbandit.models.posterior import gaussian_posterior


def test_a_variance_below_gpytorch_s_floor_is_raised_to_it_without_a_warning():
    floor = settings.min_variance.value(torch.float64)
    mean = torch.zeros(3, 1, dtype=torch.float64)
    var = torch.tensor([[2e-13], [0.5], [1e-10]], dtype=torch.float64)  # tiny but positive, as near an optimum
    for same in (None, torch.tensor([0, 1, 2])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # gpytorch warns of "negative variance" when it has to raise one
            variance = gaussian_posterior(mean, var, same=same).variance
        # the diagonal path keeps the values; the root path squares their square roots (rounding)
        torch.testing.assert_close(variance.reshape(-1), torch.tensor([floor, 0.5, 1e-10], dtype=torch.float64),
                                   rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("covariance", ["diagonal", "conditioning"])
@pytest.mark.parametrize("name", ["tnpd", "retreever", "cmanp-and"])  # retreever's network refuses no targets
def test_a_posterior_over_no_points_has_a_gp_s_shapes(name, covariance):
    g = torch.Generator().manual_seed(0)
    X = torch.rand(10, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X[:, :1])
    gp = SingleTaskGP(X, Y)
    for transform in (None, Standardize(m=1)):
        model = NPModel(tiny_model(name, x_dim=2), X, Y, outcome_transform=transform, covariance=covariance)
        for shape in [(0, 3, 2), (0, 1, 2), (2, 0, 3, 2), (0, 2), (4, 0, 2)]:  # empty t-batches, q = 0
            Xe = torch.empty(shape, dtype=torch.float64)
            for noise in (False, True):
                ours, gp_s = model.posterior(Xe, observation_noise=noise), gp.posterior(Xe, observation_noise=noise)
                for read in (lambda p: p.mean, lambda p: p.variance, lambda p: p.covariance_matrix,
                             lambda p: p.rsample(torch.Size([5]))):
                    assert read(ours).shape == read(gp_s).shape
                    assert read(ours).dtype == torch.float64
