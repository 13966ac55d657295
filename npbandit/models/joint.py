"""The posterior of a joint-predictive surrogate (``surrogate.joint_predictive``, CMANP-AND)
inside :class:`~npbandit.models.NPModel`, and its joint draws.

For ``q > 1`` the posterior is the surrogate's one-shot joint across each t-batch's ``q``
points, with the noise held out as on the marginal path
(:meth:`JointPosteriorMixin._joint_posterior`), so qLogEI, qLogNEI and qKG see points that
move together; ``q = 1`` takes the marginal path (:mod:`npbandit.models.posterior`).
:meth:`JointPosteriorMixin.joint_sample` draws the latent objective jointly at thousands of
points through the surrogate's autoregressive ``sample`` (BO Thompson sampling).
"""

from __future__ import annotations

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.posteriors import Posterior
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from linear_operator.operators import DiagLinearOperator, RootLinearOperator
from torch import Tensor

from npbandit.models.posterior import first_equal_rows, low_rank_root
from npbandit.surrogates.gaussian import MIN_LATENT_VAR, hold_out_noise

__all__ = ["JointPosteriorMixin"]


class JointPosteriorMixin:
    """:class:`~npbandit.models.NPModel`'s joint path: the posterior of a joint-predictive
    surrogate for ``q > 1``, and :meth:`joint_sample`. Kept apart from the marginal path
    (:class:`~npbandit.models.posterior.MarginalPosteriorMixin`), which diagonal surrogates
    (and ``q = 1``) take unchanged.

    A mixin of ``NPModel`` only: it reads the model's state (``_state``, ``_d``, ``_views``,
    ``_y_mean`` / ``_y_std``, ``_output_indices``) and its methods (``_as_targets``,
    ``_joint``, ``_sample``, ``_to_surrogate_inputs``, ``_read_columns``, ``_predict``, ``noise_variance``,
    ``_observation_variance``)."""

    def _joint_parts(self, X: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The surrogate's one-shot joint at ``X`` (``batch_shape x q x d``), each t-batch's
        ``q`` points together, in standardised units and ``X``'s dtype: mean
        ``out_batch x q x m``, covariance factors ``out_batch x q x m x r`` and diagonal
        ``out_batch x q x m`` (``out_batch = broadcast(batch_shape, model.batch_shape)``)."""
        out_batch = torch.broadcast_shapes(X.shape[:-2], self.batch_shape)
        flat, unflatten = self._as_targets(X.expand(*out_batch, *X.shape[-2:]))
        loc, factor, diag = self._joint(flat)
        return unflatten(loc), unflatten(factor, factor.shape[-1]), unflatten(diag)

    def _joint_posterior(self, X: Tensor, output_indices: list[int] | None, observation_noise: bool | Tensor,
                         posterior_transform: PosteriorTransform | None) -> Posterior:
        """The posterior of a joint-predictive surrogate at ``X`` (``batch_shape x q x d``,
        ``q > 1``), joint across each t-batch's ``q`` points.

        It is the surrogate's *one-shot* joint -- the low-rank-plus-diagonal Gaussian
        ``N(mu, Phi Phi^T + diag(s^2))`` its head gives the ``q`` points together, the
        joint CMANP-AND is trained on -- with the noise estimate held out as on the
        marginal path (:func:`~npbandit.surrogates.gaussian.hold_out_noise`: its marginals are
        the ``q = 1`` posterior's, and it is ``Cov(y) - noise I`` wherever the diagonal
        carries the noise), put in the user's units, and returned as a
        ``GPyTorchPosterior`` over a multivariate normal whose covariance is a root
        ``R R^T`` with ``R`` square (``q m x q m``).

        Why a Gaussian posterior and not draws through the surrogate's autoregressive
        ``sample``: BoTorch's MC acquisition functions draw ``mu + R z`` from fixed
        quasi-MC base samples ``z`` of the posterior's ``base_sample_shape`` (here ``q m``
        values, as for a GP), so an acquisition value is a smooth deterministic function of
        ``X`` that L-BFGS-B can optimise, and posterior and outcome transforms, fantasies
        and ``covariance_matrix`` work as for any GP. The autoregressive draw is not
        Gaussian (no transform or scalarisation could act on it), depends on the order of
        the points, and costs one ``update`` per block, per MC sample and per t-batch --
        on the ``N + q`` points qNEI scores per t-batch that is far too slow for an
        acquisition optimiser. For ``q`` up to ``block_size`` (5) the two are the same
        distribution; beyond it the one-shot joint is what the head was trained on. The
        autoregressive draw is for thousands of points at once: :meth:`joint_sample`.

        Equal points within a t-batch share one latent draw, as on the marginal path;
        observation noise stays independent. The root is dense, ``q m x q m`` per t-batch
        (like a GP's posterior), and rows the t-batches share are predicted in each."""
        indices = self._state_outputs(output_indices)
        loc, factor, diag = self._joint_parts(X)
        noise = self.noise_variance().to(diag)
        y_mean, y_std = self._y_mean.to(loc), self._y_std.to(loc)
        obs_var = self._observation_variance(observation_noise, diag)
        if indices is not None:
            loc, diag, factor = loc[..., indices], diag[..., indices], factor[..., indices, :]
            noise, y_mean, y_std = noise[indices], y_mean[indices], y_std[indices]
            obs_var = None if obs_var is None else obs_var[..., indices]
        factor, diag = hold_out_noise(factor, diag, noise)
        read = self._read_columns(X)  # points equal in the columns the network reads are one point to it
        same = first_equal_rows(read.expand(*loc.shape[:-2], *read.shape[-2:]))
        if same is not None:  # equal points take the first one's moments (as gaussian_posterior)
            loc, diag = (t.gather(-2, same.unsqueeze(-1).expand_as(t)) for t in (loc, diag))
            factor = factor.gather(-3, same[..., None, None].expand_as(factor))
        mean = loc * y_std + y_mean
        root = low_rank_root(factor * y_std.unsqueeze(-1), diag * y_std**2, same)
        covar = RootLinearOperator(root)
        if obs_var is not None:
            covar = covar + DiagLinearOperator((obs_var * y_std**2).flatten(-2))
        if mean.shape[-1] == 1:
            posterior = GPyTorchPosterior(MultivariateNormal(mean.squeeze(-1), covar))
        else:
            posterior = GPyTorchPosterior(MultitaskMultivariateNormal(mean, covar, interleaved=True))
        posterior = self._untransformed(posterior, indices, X)
        if posterior_transform is not None:
            posterior = posterior_transform(posterior)
        return posterior

    def joint_sample(self, X: Tensor, num_samples: int = 1, generator: torch.Generator | None = None, *,
                     block_size: int | None = None) -> Tensor:
        """Joint draws of the latent objective at ``X`` (``n x d``, raw inputs): ``num_samples
        x n x m``, in ``X``'s dtype and the user's units (any outcome transform undone).

        Through the surrogate's ``sample`` with the noise estimate held out
        (``noise=``, as the posterior holds it out): a joint-predictive surrogate draws
        the points autoregressively in blocks (CMANP-AND: ``block_size`` points per block,
        folded into its state with the constant-cost ``update``), so ``n`` may be thousands
        and memory does not grow with the number of observations; a diagonal surrogate's
        draws are independent across points -- its own joint, which is what makes an argmax
        over many of them optimistic. ``generator`` lives on the network's device (CPU for
        the shipped checkpoints); ``None`` uses torch's global generator. ``block_size``:
        points per autoregressive block of a joint-predictive surrogate (``None``: its
        ``config.block_size``); refused for a diagonal one, which has no blocks. Over many
        points prefer one block (``block_size=n``), as ``BOPolicy``'s Thompson draw does:
        the shipped ``cmanp-and-bo`` barely narrows its spread at the values folded in, so
        draws in many blocks drift away from the marginals.

        The model must not be batched (a fantasy model) and ``X`` must be 2-D; a point
        outside the box is drawn with a warning, as the posterior predicts it (see "Input
        domain" in :mod:`npbandit.models.network`).
        """
        if not isinstance(X, Tensor) or not X.is_floating_point():
            raise TypeError(f"X must be a floating-point torch.Tensor, got {type(X).__name__}")
        if X.dim() != 2 or X.shape[-1] != self._d or X.shape[0] == 0:
            raise ValueError(f"X must have shape n x {self._d} with n >= 1, got {tuple(X.shape)}")
        if not torch.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values")
        if self.batch_shape:
            raise ValueError(f"joint_sample needs a model without batch shape, got {tuple(self.batch_shape)}")
        blocks = {}
        if block_size is not None:
            if not self.surrogate.joint_predictive:
                raise ValueError(f"block_size is for a joint-predictive surrogate (cmanp-and); "
                                 f"{type(self.surrogate).__name__} draws every point independently")
            blocks["block_size"] = block_size
        self.eval()
        self._check_inputs("X", X, refuse=False)
        X_in = self._to_surrogate_inputs(X).unsqueeze(0)
        noise = self.noise_variance().to(X_in)
        if self._views is None:
            draws = self._sample(X_in, num_samples, generator, noise, **blocks)
        else:  # a diagonal surrogate's draw, from the mixture's moments (as the posterior's)
            mean, var = self._predict(X_in)
            std = (var - noise).clamp_min(MIN_LATENT_VAR).sqrt()
            draws = mean + std * torch.randn((num_samples, *mean.shape), generator=generator, dtype=mean.dtype,
                                             device=mean.device)
        draws = draws.squeeze(1).to(X.dtype) * self._y_std.to(X) + self._y_mean.to(X)
        if hasattr(self, "outcome_transform"):
            draws, _ = self.outcome_transform.untransform(draws)
        if self._output_indices is not None:
            draws = draws[..., self._output_indices]
        return draws
