"""The Gaussian posterior NPModel hands BoTorch (npbandit.models.posterior)."""

import warnings

import torch
from gpytorch import settings

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
