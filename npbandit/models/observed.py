"""The posterior mean of the latent function at an :class:`~npbandit.models.NPModel`'s own
observations, with their noise taken out.

Why the NP's predictive mean is not it
--------------------------------------
A GP's posterior mean at an observed point ``x_i`` weighs the observation ``y_i`` against
what the other points say about ``f(x_i)``, by their variances: on a noisy objective it
lies between them. A network conditioned on a context that holds ``(x_i, y_i)`` has no
such rule built in; the trained ones mostly stay close to ``y_i``, so the point with the
best predictive mean is, on a noisy objective, nearly always the luckiest draw.

What :meth:`ObservedMeanMixin.observed_mean` computes
-----------------------------------------------------
For each observed point, the NP's predictive of a new observation there from the *other*
points (leave one out), ``N(mu_i, v_i)``, is read as a Gaussian latent ``f(x_i)`` of
variance ``v_i - s2`` plus noise ``s2`` (the model's observation noise: the known noise
with ``train_Yvar``, else its estimate, :mod:`npbandit.models.likelihood`). Combined with
``y_i = f(x_i) + noise`` as for any Gaussian latent, the posterior mean of ``f(x_i)`` is

    ``mu_i + w_i (y_i - mu_i)``,  ``w_i = (v_i - s2) / v_i`` clipped to ``[0, 1]``,

which is exactly a GP's posterior mean at its own data when the NP is that GP's
predictive. Where the noise estimate is small against what the others leave unknown
(``v_i >> s2``: a noise-free objective, a point far from the others) the mean is ``y_i``;
where the others pin ``f(x_i)`` down more tightly than one noisy draw does, it leans to
them. All leave-one-out contexts are conditioned in batches, the views and outputs as
for any prediction, in the units the model's posterior reports.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["ObservedMeanMixin", "LOO_ELEMENTS"]

#: the most (contexts x context points^2) one batched leave-one-out pass holds (a bound on
#: the attention a batch of contexts costs); more contexts go in several passes
LOO_ELEMENTS = 1 << 24


class ObservedMeanMixin:
    """:class:`~npbandit.models.NPModel`'s de-noised means at its observations (see the module).

    A mixin of ``NPModel`` only: it reads ``train_X``, ``_train_Y_t``, ``_y_mean`` /
    ``_y_std``, ``_output_indices`` and ``batch_shape``, and predicts through
    ``_to_surrogate_inputs``, ``_normalise_outputs``, ``_absorb``, ``_predict`` and
    ``_observation_noise``."""

    def observed_mean(self) -> Tensor:
        """The posterior mean of the latent function at each training input, ``N x m``
        (float64; the rows of ``train_X``, outputs as :meth:`posterior` reports them, in the
        same units): each observation combined with the NP's leave-one-out predictive there
        under the model's observation noise (see the module). With one observation, the
        posterior mean there.

        Raises:
            ValueError: the model is batched (a fantasy model).
        """
        if self.batch_shape:
            raise ValueError("observed_mean needs an unbatched NPModel, not a batched (fantasy) one")
        X = self.train_X
        n = X.shape[-2]
        if n < 2:
            with torch.no_grad():
                return self.posterior(X.unsqueeze(-2)).mean.reshape(n, -1).to(torch.float64)
        self.eval()
        with torch.no_grad():
            X_in = self._to_surrogate_inputs(X)  # [n, x_dim]
            Y_n = self._normalise_outputs(self._train_Y_t)  # [n, m], network units
            positions = torch.arange(n, device=X_in.device)
            others = positions.expand(n, n)[positions[:, None] != positions[None, :]].reshape(n, n - 1)
            views = 1 if self._views is None else self._views.n_views
            per_pass = max(1, LOO_ELEMENTS // (views * self._tasks * n * n))
            means, variances = [], []
            for start in range(0, n, per_pass):
                rows = others[start:start + per_pass]
                state = self._absorb(None, X_in[rows], Y_n[rows])
                mean, var = self._predict(X_in[start:start + per_pass].unsqueeze(-2), state)  # [c, 1, m]
                means.append(mean[:, 0])
                variances.append(var[:, 0])
            mu = torch.cat(means).to(torch.float64)
            v = torch.cat(variances).to(torch.float64)
            y = Y_n.to(torch.float64)
            noise = self._observation_noise().to(v)
            weight = ((v - noise) / v).clamp(0.0, 1.0)
            latent = (mu + weight * (y - mu)).cpu() * self._y_std + self._y_mean  # [n, m], outcome-transformed units
            if hasattr(self, "outcome_transform"):
                latent = self.outcome_transform.untransform(latent)[0]
        if self._output_indices is not None:
            latent = latent[..., self._output_indices]
        return latent
