"""CMANP-AND: CMANP with an autoregressive not-diagonal head (Feng et al., 2023).

CMANP's encoder and target path (held, not re-implemented: ``self.cmanp``) give each
target a representation ``h_i``; three heads read it:

- the mean ``mu_i`` and a diagonal scale ``s_i`` (CMANP's own Gaussian head);
- ``r`` covariance factors ``phi_i = W(h_i) / sqrt(r)`` per output (``rank`` = ``r``).

The joint predictive of a block of targets is the *low-rank-plus-diagonal* Gaussian

    y ~ N(mu, Phi Phi^T + diag(s^2)),   Phi = [phi_1; ...; phi_M]  ([M dy, r]).

Why this parameterisation (the ND papers offer it beside a Cholesky one,
``tril(P P^T)`` over a self-attention among the block's targets; the released CMANP-AND
configs use the Cholesky one):

- *positive definite by construction*: ``s >= min_std`` bounds the spectrum below,
  where ``tril(P P^T)`` can put zeros on its diagonal and needs a bound on it;
- *consistent*: ``phi_i`` depends on target ``i`` and the context only, so the joint of
  any set of targets is the sub-block of one Gaussian process given the context. The
  joint of a block does not depend on which other targets share it or their order
  (the Cholesky form depends on the order), and each target's marginal
  ``N(mu_i, s_i^2 + |phi_i|^2)`` is the same in every block: ``predict`` is that
  marginal, exactly, and keeps the protocol's "one at a time = all together";
- *linear in M*: its log-density (Woodbury and the matrix determinant lemma) costs
  ``O(M r^2 + r^3)`` and a draw ``O(M r)``, never an ``M x M`` matrix.

What it gives up: targets do not attend to each other, so within one block the
covariance has rank at most ``r`` plus the diagonal. The autoregressive deployment
lifts that across blocks.

Deployment ("AND"): targets are taken in blocks of ``b_Q`` (``block_size``, 5 by
default as in the paper's GP table). A block is drawn jointly from the head, then its
values are folded into the context with CMANP's exact constant-cost ``update`` before
the next block is predicted. Memory is constant in the context size ``N`` and linear in
the number of targets ``M``. With ``b_Q >= M`` this is one draw from the one-shot joint
above. ``joint_log_prob`` scores given values the same way (folding the true values,
teacher forcing, as the paper evaluates).

Training: the joint Gaussian log-likelihood of each task's whole target set in one
block, divided by its number of targets (the papers' reporting convention; it keeps the
loss on the per-target scale of the diagonal models, so one learning-rate and
gradient-clipping recipe serves all). By the consistency above, this trains the joint
of every sub-block at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import torch
from torch import Tensor
from torch.distributions import LowRankMultivariateNormal, Normal

from npbandit.surrogates.base import NeuralProcess, config_differences
from npbandit.surrogates.cmanp import CMANP, CMANPConfig, CMANPState
from npbandit.surrogates.gaussian import hold_out_noise
from npbandit.surrogates.layers import mlp
from npbandit.surrogates.states import NPState

__all__ = ["CMANPANDConfig", "CMANPAND", "expected_joint_log_prob", "FACTOR_INIT_SCALE"]

#: the factor head's output layer, relative to its initialisation, when a CMANP-AND starts
#: from a trained CMANP (:meth:`CMANPAND.initialise_from`)
FACTOR_INIT_SCALE = 0.01


@dataclass(frozen=True)
class CMANPANDConfig(CMANPConfig):
    """CMANP's hyperparameters plus the not-diagonal head's.

    Attributes:
        rank: ``r``, covariance factors per target and output (20, the ND papers'
            projection width for GP data).
        block_size: ``b_Q``, targets drawn jointly per autoregressive step (5, the
            paper's GP table); ``sample`` / ``joint_log_prob`` default to it.
    """

    rank: int = 20
    block_size: int = 5

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("rank", "block_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")

    def encoder_config(self) -> CMANPConfig:
        """The CMANP part of this config."""
        return CMANPConfig(**{f.name: getattr(self, f.name) for f in fields(CMANPConfig)})


def _check_block_size(block_size: Any) -> None:
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")


class CMANPAND(NeuralProcess):
    """CMANP-AND: CMANP's encoder with a low-rank-plus-diagonal joint head, deployed
    autoregressively in blocks of ``block_size`` targets (see the module docstring).

    The state is CMANP's (:class:`~npbandit.surrogates.cmanp.CMANPState`): constant in
    the number of context points, exact streaming ``update``.

    Args:
        x_dim, y_dim: input and output dimensions.
        config: :class:`CMANPANDConfig` (paper sizes when omitted).
    """

    config_class = CMANPANDConfig
    name = "cmanp-and"
    joint_predictive = True

    def __init__(self, x_dim: int, y_dim: int, config: CMANPANDConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.cmanp = CMANP(x_dim, y_dim, c.encoder_config())
        self.factor = mlp(c.d_model, c.d_ff, y_dim * c.rank, c.emb_depth, c.activation)

    def initialise_from(self, source: NeuralProcess) -> None:
        """Start from a CMANP-AND (every weight) or from a trained CMANP with this model's
        encoder config (``npbandit train --model cmanp-and --init-from cmanp-bo``): the
        CMANP's weights become ``self.cmanp`` and the factor head's output layer is scaled
        down to ``FACTOR_INIT_SCALE`` of its initialisation (bias zero), so the model starts
        as nearly that CMANP with nearly independent targets, and training has to learn the
        covariance, not the encoder again. Not zero: the joint log-density's gradient in
        ``Phi`` is proportional to ``Phi``, so ``Phi = 0`` would never move; from a small
        ``Phi``, Adam's step, whose size does not depend on the gradient's scale, grows it.

        Raises:
            ValueError: any other model, or a CMANP with another config.
        """
        if not isinstance(source, CMANP):
            super().initialise_from(source)
            return
        ours = (self.x_dim, self.y_dim, self.config.encoder_config().to_dict())
        if (source.x_dim, source.y_dim, source.config.to_dict()) != ours:
            raise ValueError(f"the source is a cmanp ({source.x_dim} -> {source.y_dim}) with config "
                             f"{source.config.to_dict()}; this cmanp-and ({self.x_dim} -> {self.y_dim}) starts only "
                             f"from a cmanp with config {ours[2]}"
                             f"{config_differences(source.config.to_dict(), ours[2])}")
        self.cmanp.load_state_dict(source.state_dict())
        last = self.factor[-1]
        with torch.no_grad():
            last.weight.mul_(FACTOR_INIT_SCALE)
            last.bias.zero_()

    # -- context: CMANP's ----------------------------------------------------------------

    def condition(self, xc: Tensor, yc: Tensor, *, chunk_size: int | None = None) -> CMANPState:
        """Encode ``xc [B, N, dx]``, ``yc [B, N, dy]`` (see :meth:`CMANP.condition`)."""
        yc = self._model_outputs("xc", xc, "yc", yc)
        return self.cmanp.condition(xc, yc, chunk_size=chunk_size)

    def _condition(self, xc: Tensor, yc: Tensor) -> CMANPState:
        return self.cmanp._condition(xc, yc)

    def _update(self, state: NPState, xu: Tensor, yu: Tensor) -> CMANPState:
        return self.cmanp._update(state, xu, yu)

    # -- the heads -------------------------------------------------------------------------

    def _heads(self, state: NPState, xt: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Mean ``[B, M, dy]``, diagonal scale ``[B, M, dy]`` and factors ``[B, M, dy, r]``."""
        if not isinstance(state, CMANPState):
            raise TypeError(f"state must be a CMANPState, got {type(state).__name__}")
        h = self.cmanp.features(state, xt)
        diagonal = self.cmanp.decoder.head(h)
        r = self.config.rank
        # scaled so the factors' share of the variance starts O(1) whatever the rank
        factors = self.factor(h).unflatten(-1, (self.y_dim, r)) / math.sqrt(r)
        return diagonal.loc, diagonal.scale, factors

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        loc, scale, factors = self._heads(state, xt)
        return Normal(loc, (scale.pow(2) + factors.pow(2).sum(-1)).sqrt())

    @staticmethod
    def _joint_from(loc: Tensor, scale: Tensor, factors: Tensor) -> LowRankMultivariateNormal:
        # target-major flattening: variable i * dy + j is output j of target i
        return LowRankMultivariateNormal(loc.flatten(-2), factors.flatten(-3, -2), scale.pow(2).flatten(-2))

    def joint(self, state: NPState, xt: Tensor) -> LowRankMultivariateNormal:
        """The one-shot joint of the targets ``xt [B, M, dx]`` given ``state``, over the
        ``M * dy`` values flattened target-major (``yt.flatten(-2)`` for ``yt [B, M, dy]``),
        in model units (the network's; see ``outcome_transform``).

        Batch shape ``[B]``; ``cov_factor [B, M dy, r]``, ``cov_diag [B, M dy]``."""
        self._check_targets(state, xt)
        if xt.shape[1] == 0:
            raise ValueError("xt must hold at least one target point")
        return self._joint_from(*self._heads(state, xt))

    # -- autoregressive deployment -----------------------------------------------------------

    def _block_size(self, block_size: Any) -> int:
        block_size = self.config.block_size if block_size is None else block_size
        _check_block_size(block_size)
        return block_size

    def joint_log_prob(self, state: NPState, xt: Tensor, yt: Tensor, *, block_size: int | None = None) -> Tensor:
        """``log p(yt | state)``, ``[B]``, for ``xt [B, M, dx]``, ``yt [B, M, dy]``, taken in
        blocks of ``block_size`` targets (default ``config.block_size``): each block's joint
        density given the context and the earlier blocks' true values, folded in with
        ``update``. ``block_size >= M`` gives the one-shot joint's log-density. ``yt`` in
        data units (see :meth:`NeuralProcess.joint_log_prob`)."""
        self._check_targets(state, xt)
        yt, log_det = self._model_targets(xt, yt)
        return self._joint_log_prob(state, xt, yt, block_size=block_size) + log_det

    def _joint_log_prob(self, state: NPState, xt: Tensor, yt: Tensor, block_size: int | None = None) -> Tensor:
        step = self._block_size(block_size)
        total = xt.new_zeros(xt.shape[0])
        for start in range(0, xt.shape[1], step):
            x, y = xt[:, start:start + step], yt[:, start:start + step]
            total = total + self._joint_from(*self._heads(state, x)).log_prob(y.flatten(-2))
            if start + step < xt.shape[1]:
                state = self._update(state, x, y)
        return total

    def joint_log_likelihood(self, xc: Tensor, yc: Tensor, xt: Tensor, yt: Tensor, *,
                             block_size: int | None = None) -> Tensor:
        """:meth:`joint_log_prob` of each task's targets given its context, divided by the
        number of targets and averaged over tasks (the papers' joint metric). A scalar."""
        self._check_task(xc, yc, xt, yt)
        state = self._condition(xc, yc)
        return (self._joint_log_prob(state, xt, yt, block_size=block_size) / xt.shape[1]).mean()

    def sample(self, state: NPState, xt: Tensor, num_samples: int, generator: torch.Generator | None = None, *,
               block_size: int | None = None, noise: Tensor | float | None = None) -> Tensor:
        """Joint draws at ``xt [B, M, dx]``: ``[num_samples, B, M, dy]``.

        Blocks of ``block_size`` targets (default ``config.block_size``) are drawn from
        the head's joint given the context and the draw's earlier blocks, which are
        folded in with ``update``: memory is constant in the context size and linear in
        ``M``. ``block_size >= M``: one draw from :meth:`joint`. Per block, ``r`` then
        ``b dy`` standard normals per draw come from ``generator`` (on ``xt``'s device;
        ``None``: torch's global generator). Differentiable in ``xt`` and the weights
        (reparameterised) when autograd is on.

        ``noise`` (a variance, a float or one per output ``[dy]``): draw the latent values
        under the observations. Each block is drawn from its joint with ``noise`` held
        out (:func:`~npbandit.surrogates.gaussian.hold_out_noise`) and folded into the context
        with fresh noise of that variance added (``b dy`` more normals per draw, for every
        block but the last), since the context holds observations. Within a block the
        latent joint is exact; across blocks the covariance is that of conditioning on the
        earlier blocks' noisy values, smaller than the latent one by the share the noise
        takes (``K (K + noise)^-1`` for a GP), negligible when the noise is small.
        """
        self._check_targets(state, xt)
        self._check_sampling(num_samples, generator)
        step = self._block_size(block_size)
        noise = None if noise is None else self._check_noise(noise, xt)
        batch, m = xt.shape[0], xt.shape[1]
        # draw k of task b is batch element k * B + b of the tiled state (NPState.repeat)
        state = state.repeat(num_samples) if num_samples > 1 else state
        targets = xt.repeat(num_samples, 1, 1)
        blocks = []
        for start in range(0, m, step):
            x = targets[:, start:start + step]
            loc, scale, factors = self._heads(state, x)
            if noise is not None:
                factors, diag = hold_out_noise(factors, scale.pow(2), noise)
                scale = diag.sqrt()
            shared = torch.randn((x.shape[0], self.config.rank), generator=generator, dtype=loc.dtype,
                                 device=loc.device)
            own = torch.randn(loc.shape, generator=generator, dtype=loc.dtype, device=loc.device)
            y = loc + (factors @ shared[:, None, :, None]).squeeze(-1) + scale * own
            blocks.append(y)
            if start + step < m:
                if noise is not None:
                    y = y + noise.sqrt() * torch.randn(loc.shape, generator=generator, dtype=loc.dtype,
                                                       device=loc.device)
                state = self._update(state, x, y)
        if not blocks:
            return xt.new_zeros((num_samples, batch, 0, self.y_dim))
        return self._data_draws(torch.cat(blocks, dim=1).unflatten(0, (num_samples, batch)))

    # -- training ----------------------------------------------------------------------------

    def training_loss(self, xc: Tensor, yc: Tensor, xt: Tensor, yt: Tensor, yt_var: Tensor | None = None,
                      yt_cov_factor: Tensor | None = None) -> Tensor:
        """Minus the one-shot joint log-likelihood of each task's targets, per target,
        averaged over tasks (see the module docstring).

        With ``yt_cov_factor`` ``F`` (``[B, M, M]``, ``dy = 1``; the trainer's
        ``loss="expected"``), ``yt`` is the targets' mean given the context and the loss is
        the expected negative joint log-likelihood over ``y ~ N(yt, F F^T)``
        (:func:`expected_joint_log_prob`): the same optimum as the sampled loss, without
        the draw's noise. ``yt_var`` alone is refused: the expectation of a joint
        log-density needs the joint covariance, not only its diagonal."""
        if yt_var is not None and yt_cov_factor is None:
            raise ValueError("yt_var: the expected loss of a joint model needs the targets' joint covariance "
                             "(yt_cov_factor); priors that carry only per-target variances train it with "
                             "loss='sampled'")
        self._check_task(xc, yc, xt, yt)
        joint = self._joint_from(*self._heads(self._condition(xc, yc), xt))
        if yt_cov_factor is None:
            return -(joint.log_prob(yt.flatten(-2)) / xt.shape[1]).mean()
        if self.y_dim != 1:
            raise ValueError(f"yt_cov_factor: the expected joint loss is for one output, the model has {self.y_dim}")
        m = xt.shape[1]
        if yt_cov_factor.shape != (xt.shape[0], m, m):
            raise ValueError(f"yt_cov_factor must have shape {(xt.shape[0], m, m)}, got {tuple(yt_cov_factor.shape)}")
        return -(expected_joint_log_prob(joint, yt.flatten(-2), yt_cov_factor) / m).mean()


def expected_joint_log_prob(dist: LowRankMultivariateNormal, mean: Tensor, factor: Tensor) -> Tensor:
    """``E[log q(y)]`` over ``y ~ N(mean, F F^T)`` for ``q = dist``: ``[B]``.

    ``mean`` ``[B, n]``, ``factor`` ``F`` ``[B, n, k]`` (any factor of the covariance).
    For ``q = N(m, S)``: ``E[log q(y)] = log q(mean) - tr(S^-1 F F^T) / 2``, and the trace
    is the sum of the Mahalanobis norms of ``F``'s columns, each
    ``2 (log q(m) - log q(m + f_j))``. Computed through ``dist.log_prob`` (Woodbury on the
    low-rank-plus-diagonal ``S``), so it costs ``k + 2`` log-densities, never an ``n x n``
    inverse.
    """
    columns = dist.loc.unsqueeze(0) + factor.movedim(-1, 0)  # [k, B, n]: m + f_j
    trace = 2.0 * (dist.log_prob(dist.loc).unsqueeze(0) - dist.log_prob(columns)).sum(0)
    return dist.log_prob(mean) - 0.5 * trace
