"""The ``bo`` prior's Bayes predictive as a BO surrogate: the search a perfectly trained ``*-bo`` network would make.

A ``*-bo`` checkpoint is trained to predict as the Bayes posterior of the ``bo`` prior does
(GP functions with unknown kernel, lengthscales and noise). ``BOPrior.bayes_posterior``
computes that posterior for one context by importance sampling the hyperparameters, so
wrapping it as a BoTorch model and running it where the NPs run (``BOPolicy``'s trust
region, LogEI) shows how far better training of the same prior could take a search:
``experiments/benchmarks/bo.py --methods bayes-gp-tr``. A benchmark yardstick, not a product
surrogate: it refits ``num_samples`` GPs per proposal (cubic in the observations).
"""

from __future__ import annotations

from typing import Any

import torch
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal

from npbandit.policies.bo import BOPolicy
from npbandit.priors import BOPrior

#: hyperparameter draws per model (the yardstick uses 4096 per task; a BO run refits per proposal)
NUM_SAMPLES = 1024
#: components kept for predicting: those within this many nats of the heaviest (relative weight >= 1e-9)
KEEP_NATS = 20.0


class PriorBayesModel(Model):
    """``BOPrior(dims=(d,)).bayes_posterior`` on ``X [n, d]`` (unit cube), ``Y [n, 1]``, as a
    one-output BoTorch model whose posterior is Gaussian with the mixture's moments (the
    latent value's: no observation noise). With fewer than 3 observations (a small trust
    region's box may hold two) the prior's predictive: the observations' mean, unit variance
    in their standardised units. It takes no new observations after it is built
    (``condition_on_observations``), so it serves sequential runs, not points in flight."""

    num_outputs = 1

    def __init__(self, X: torch.Tensor, Y: torch.Tensor, num_samples: int = NUM_SAMPLES,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.train_X = X.double()
        y = Y.double().reshape(-1)
        self._mean = y.mean()
        self._std = y.std() if len(y) > 1 and float(y.std()) > 0 else torch.ones((), dtype=torch.float64)
        self._posterior = None
        if len(y) >= 3:
            posterior = BOPrior(dims=(X.shape[-1],)).bayes_posterior(
                self.train_X, ((y - self._mean) / self._std).unsqueeze(-1), num_samples=num_samples,
                generator=generator)
            self._posterior = posterior.keep(posterior.log_weight >= posterior.log_weight.max() - KEEP_NATS)

    @property
    def batch_shape(self) -> torch.Size:
        return torch.Size()

    def posterior(self, X: torch.Tensor, output_indices: Any = None, observation_noise: Any = False,
                  posterior_transform: Any = None, **kwargs: Any) -> GPyTorchPosterior:
        if posterior_transform is not None or output_indices not in (None, [0]):
            raise NotImplementedError("PriorBayesModel has one output and no posterior transforms")
        shape = X.shape[:-1]
        flat = X.reshape(-1, X.shape[-1]).double()
        if self._posterior is None:
            mean, var = torch.zeros(len(flat), dtype=torch.float64), torch.ones(len(flat), dtype=torch.float64)
        else:
            mean, var = self._posterior.moments(flat, observation_noise=bool(observation_noise))
        mean = (self._mean + self._std * mean).reshape(shape)
        var = (self._std.pow(2) * var).reshape(shape)
        return GPyTorchPosterior(MultivariateNormal(mean, torch.diag_embed(var)))


class PriorBayesFactory:
    """The model factory ``BOPolicy`` is given (``model=``): a :class:`PriorBayesModel` on the
    observations the policy's model sees, its hyperparameter draws seeded from torch's global
    generator, which ``BOPolicy`` seeds from the run's generator before every proposal for a
    model that is not an NP checkpoint."""

    name = "bayes-gp"

    def __init__(self, num_samples: int = NUM_SAMPLES) -> None:
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples < 1:
            raise ValueError(f"num_samples must be a positive int, got {num_samples!r}")
        self.num_samples = num_samples

    def __call__(self, X: torch.Tensor, Y: torch.Tensor) -> PriorBayesModel:
        seed = int(torch.randint(2**62, (1,)))
        return PriorBayesModel(X, Y, self.num_samples, torch.Generator().manual_seed(seed))

    def params(self) -> dict[str, Any]:
        return {"model": self.name, "bayes_samples": self.num_samples, "bayes_keep_nats": KEEP_NATS}


class PriorBayesPolicy(BOPolicy):
    """``BOPolicy`` (LogEI, repeats avoided, a trust region as the NP rows search) with
    :class:`PriorBayesModel` as its model (:class:`PriorBayesFactory`); run name ``bayes-gp[-tr]-logei``."""

    def __init__(self, dim: int, trust_region: bool = True, num_samples: int = NUM_SAMPLES,
                 budget: int | None = None) -> None:
        super().__init__(dim, model=PriorBayesFactory(num_samples), trust_region=trust_region, budget=budget)
        self.num_samples = num_samples
