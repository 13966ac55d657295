"""How an :class:`~npbandit.models.NPModel` talks to its network: raw inputs onto the box
the network was trained on, outputs standardised, states conditioned and updated, and
predictions read -- in every symmetric view when the model has views.

Inputs and outputs
------------------
* **Inputs** are mapped onto the box the surrogate was trained on (``[0, 1]^d`` for
  ``*-bo``): from ``bounds`` when given, after a BoTorch ``input_transform`` (e.g.
  ``Normalize``) when given; with neither, ``train_X`` must already lie in the box.
  The columns the network reads (all, or those ``columns`` chose: "Wider data") are
  zero-padded to the surrogate's input width (the ``bo`` prior was trained that way).
* **Outputs** go through the optional BoTorch ``outcome_transform`` and then, for
  surrogates whose prior standardised outputs (``*-bo``), are standardised with
  the training data's mean and std (:mod:`npbandit.transforms.standardize`), as in training.

Wider data
----------
A network reads at most ``width`` inputs (its ``x_dim``: 6 for the ``*-bo`` checkpoints).
For ``train_X`` with more columns the model conditions on a set ``S`` of at most ``width``
of them, chosen once from the training data (``columns``; by default, for ``d > width``,
the most relevant ones: :class:`~npbandit.models.columns.RelevantColumns`), and reads
``X[..., S]`` of every point it predicts at, after the ``input_transform`` and ``bounds``
(which stay ``d`` wide). Its posterior is therefore flat in the other columns: an
acquisition optimised over all ``d`` columns sets those of ``S`` and leaves the others
wherever its optimiser puts them, and points equal in ``S`` are one point to it (they
share a draw, as equal points do). Streamed observations and fantasies keep ``S``; a
model built on new data (Ax builds one per trial) chooses again.
:attr:`~npbandit.models.NPModel.columns` says which columns were read.

Symmetric views
---------------
The ``bo`` prior is unchanged by permuting the input dimensions and by reflecting any
of them about the box's centre, so its posterior predictive is the same in every such
view of the data; a trained network is only approximately so, and its errors differ
from view to view. With ``n_views = K > 1`` the model conditions the network on ``K``
views of the data at once (view 0 the data as given, the others fixed symmetries:
:class:`~npbandit.surrogates.views.InputViews`; one batched network call serves them
all) and predicts the moments of the equal-weight mixture of the ``K`` predictives:
the mean of the means, and the mean variance plus the variance of the means.
``from_pretrained`` and ``construct_inputs`` use the number the checkpoint's card
recommends (``card["use"]["n_views"]``, default 1; fewer for ``d = 1``, whose box has two
symmetries): views raise the held-out log-likelihood on the ``bo`` prior for some more
network time per call, so a card recommends them where a search improved with them.
Streaming updates, fantasies and the noise estimate work view by view, and update cost
stays constant in ``N`` (``K`` constant states). Joint-predictive surrogates take no
views (a mixture of their joints is not the Gaussian joint the posterior gives BoTorch).

Threads
-------
Every network call (conditioning, updates, predictions) runs inside
:class:`~npbandit.threads.torch_threads`: one torch thread unless ``NPBANDIT_THREADS`` /
``OMP_NUM_THREADS`` say otherwise, the caller's count given back afterwards. Gradients
flow back through these calls outside the block, with the caller's count: a BoTorch
loop of the user's own runs entirely at npbandit's count when wrapped in
``with torch_threads():`` itself.

dtype and device
----------------
The network stays in its own dtype (float32 from ``load_surrogate``) and is held
outside the model's parameters (:class:`~npbandit.models.cache.HeldNetwork`), so
``model.to(X)`` -- which analytic acquisition functions call -- cannot silently upcast
it: inputs and outputs are converted to the network's dtype and device here, and
predictions back to the caller's. ``next(model.parameters())`` is an empty, frozen
parameter on the network's device and in its dtype, which moving the model leaves too
(:class:`~npbandit.models.cache.NetworkAnchor`). Inputs of any floating dtype are accepted;
posteriors come back in ``X``'s dtype. ``construct_inputs`` loads a named checkpoint in
float32 too unless told otherwise (``network_dtype``). In float32 the acquisition value
is smooth only to about 1e-7, so BoTorch's L-BFGS-B ends a few more restarts "ABNORMAL"
and ``optimize_acqf`` starts again more often than in float64; a float64 network call
costs more than those retries.
"""

from __future__ import annotations

import torch
from torch import Tensor

from npbandit.surrogates.base import NPState
from npbandit.threads import torch_threads
from npbandit.transforms.standardize import standardization

__all__ = ["NetworkMixin"]


class NetworkMixin:
    """:class:`~npbandit.models.NPModel`'s side of the network: input mapping, output
    standardisation, conditioning and prediction (with views, the mixture over them).

    A mixin of ``NPModel`` only: it reads the model's options (``_bounds``,
    ``_input_domain``, ``_standardize``, ``_views``, ``_columns``), its ``surrogate`` and ``_state``, and
    sets ``_y_mean`` / ``_y_std`` (``m`` float64 values each)."""

    def _read_columns(self, X: Tensor) -> Tensor:
        """The columns of ``X`` (``... x d``) the network reads: ``... x len(model.columns)``."""
        return X if self._columns is None else X[..., list(self._columns)]

    def _to_surrogate_inputs(self, X: Tensor, check: str | None = None) -> Tensor:
        """Raw ``... x d`` inputs -> the surrogate's inputs ``... x x_dim`` in its dtype/device
        (the columns it reads, zero-padded).

        ``check``: the name of the argument ``X`` came from, when it must lie in ``bounds``
        (or, without them, in the box the surrogate was trained on): ``train_X`` at
        construction, where data far outside is most likely unscaled."""
        X = self.transform_inputs(X)
        outside = check is not None and X.numel() > 0
        if self._bounds is not None:
            lo, hi = self._bounds.to(X)
            X = (X - lo) / (hi - lo)
            if outside and (X.min() < -1e-6 or X.max() > 1 + 1e-6):
                raise ValueError(f"{check} (after any input_transform) lies outside bounds, which are mapped onto "
                                 "the box the surrogate was trained on; pass bounds that contain the data")
            low, high = self._input_domain
            X = low + X * (high - low)
        elif outside:
            low, high = self._input_domain
            if X.min() < low - 1e-6 or X.max() > high + 1e-6:
                raise ValueError(f"{check} (after any input_transform) lies outside [{low}, {high}]^d, the box the "
                                 "surrogate was trained on; pass bounds=<2 x d tensor> or a Normalize input_transform")
        ref = next(self.surrogate.parameters())
        X = self._read_columns(X).to(device=ref.device, dtype=ref.dtype)
        pad = self.surrogate.x_dim - X.shape[-1]
        if pad:
            X = torch.cat([X, X.new_zeros(X.shape[:-1] + (pad,))], dim=-1)
        return X

    def _set_statistics(self, Y_t: Tensor) -> None:
        if self._standardize:
            mean, std = standardization(Y_t.detach().to(torch.float64))
            self._y_mean, self._y_std = mean.squeeze(-2), std.squeeze(-2)
        else:
            self._y_mean = torch.zeros(Y_t.shape[-1], dtype=torch.float64)
            self._y_std = torch.ones(Y_t.shape[-1], dtype=torch.float64)

    def _normalise_outputs(self, Y_t: Tensor) -> Tensor:
        ref = next(self.surrogate.parameters())
        Y = (Y_t.to(torch.float64) - self._y_mean.to(Y_t.device)) / self._y_std.to(Y_t.device)
        return Y.to(device=ref.device, dtype=ref.dtype)

    def _condition(self, X_in: Tensor, Y_t: Tensor) -> NPState:
        with torch.no_grad():
            return self._absorb(None, X_in.unsqueeze(0), self._normalise_outputs(Y_t).unsqueeze(0))

    def _absorb(self, state: NPState | None, X_in: Tensor, Y_n: Tensor) -> NPState:
        """The network's state after conditioning on (``state is None``) or adding
        ``X_in [b, n, x_dim]``, ``Y_n [b, n, m]`` (network units), in every view."""
        if self._views is not None:
            X_in, Y_n = self._views.inputs(X_in), self._views.outputs(Y_n)
        with torch_threads():
            if state is None:
                return self.surrogate.condition(X_in, Y_n)
            return self.surrogate.update(state, X_in, Y_n)

    def _predict(self, X_in: Tensor) -> tuple[Tensor, Tensor]:
        """The network's predictive mean and variance at ``X_in [b, M, x_dim]`` (``[b, M, m]``
        each): with views, the moments of the mixture over them."""
        with torch_threads():
            if self._views is None:
                dist = self.surrogate.predict(self._state, X_in)
                return dist.loc, dist.variance
            dist = self.surrogate.predict(self._state, self._views.inputs(X_in))
            return self._views.combine(dist.loc, dist.variance)

