"""The Gaussian posterior NPModel hands BoTorch (npbandit.models.posterior)."""

import warnings

import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms import Standardize
from conftest import tiny_model
from gpytorch import settings

from npbandit import NPModel
from npbandit.models.posterior import IndependentOutputs, gaussian_posterior


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


def test_independent_outputs_multiply_elementwise_as_their_dense_matrix_does():
    """``w * covar`` with a row, a column or a batch of rows broadcast to the covariance's shape
    (BoTorch's scalarisation of ``q > 1`` points) is the dense product, still held as a diagonal
    of its own kind; a constant, a matrix of its shape and a diagonal too; a shape that does not
    broadcast is refused."""
    g = torch.Generator().manual_seed(0)
    diag = torch.rand(2, 6, generator=g, dtype=torch.float64) + 0.1
    covar = IndependentOutputs(diag)
    shapes = [(1, 6), (6, 1), (2, 1, 6), (6, 6), ()]  # a row, a column, a batch of rows, a matrix, a constant
    for other in (torch.randn(shape, generator=g, dtype=torch.float64) for shape in shapes):
        for product in (covar * other, other * covar):
            torch.testing.assert_close(product.to_dense(), torch.diag_embed(diag) * other, rtol=0.0, atol=0.0)
    weights = torch.randn(1, 6, generator=g, dtype=torch.float64)
    scaled = weights * covar * weights.transpose(-1, -2)
    assert isinstance(scaled, IndependentOutputs)
    torch.testing.assert_close(scaled.diagonal(), diag * weights[0] * weights[0], rtol=0.0, atol=0.0)
    with pytest.raises(RuntimeError, match="Cannot multiply"):
        covar * torch.ones(4, 5, dtype=torch.float64)
