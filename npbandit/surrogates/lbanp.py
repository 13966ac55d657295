"""LBANP: Latent Bottlenecked Attentive Neural Process (Feng et al., 2023).

Perceiver-style iterative attention: ``L`` learned latents read the embedded context
(the same embeddings in every layer), then attend among themselves; targets read the
latents of every layer through :class:`LatentQueryDecoder`. Encoding costs
``O(N L)``; each target ``O(L)`` per layer. ``update`` re-conditions on the union
(a reference baseline for CMANP's constant-cost update).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import AttentionBlock
from npbandit.surrogates.base import NeuralProcess, NPConfig
from npbandit.surrogates.layers import LatentQueryDecoder, mlp
from npbandit.surrogates.states import ContextSetState, NPState

__all__ = ["LBANPConfig", "LBANP"]


@dataclass(frozen=True)
class LBANPConfig(NPConfig):
    """LBANP hyperparameters. ``n_latents``: the bottleneck size ``L`` (the papers
    report L = 8 and L = 128; 128 is the default here, as for CMANP)."""

    n_latents: int = 128

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.n_latents, int) or isinstance(self.n_latents, bool) or self.n_latents < 1:
            raise ValueError(f"n_latents must be a positive int, got {self.n_latents!r}")


class LBANP(NeuralProcess):
    """Latent Bottlenecked Attentive Neural Process; state = context + what the targets
    read of the per-layer latents (their keys and values, a
    :class:`~npbandit.surrogates.layers.DecoderMemory`), projected once in ``condition``.

    Args:
        x_dim, y_dim: input and output dimensions.
        config: :class:`LBANPConfig` (paper defaults when omitted).
    """

    config_class = LBANPConfig
    name = "lbanp"

    def __init__(self, x_dim: int, y_dim: int, config: LBANPConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.embed = mlp(x_dim + y_dim, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.initial_latents = nn.Parameter(0.02 * torch.randn(c.n_latents, c.d_model))
        self.read_context = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=True) for _ in range(c.n_layers)
        )
        self.latent_self = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers)
        )
        self.decoder = LatentQueryDecoder(x_dim, y_dim, c.d_model, c.n_heads, c.d_ff, c.n_layers, c.emb_depth,
                                          c.min_std, activation=c.activation)

    def _condition(self, xc: Tensor, yc: Tensor) -> ContextSetState:
        context = self.embed(torch.cat([xc, yc], dim=-1))
        z = self.initial_latents.unsqueeze(0).expand(xc.shape[0], -1, -1)
        latents = []
        for read, mix in zip(self.read_context, self.latent_self):
            z = mix(read(z, context))
            latents.append(z)
        return ContextSetState(xc, yc, self.decoder.memory(latents))

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        if not isinstance(state, ContextSetState):
            raise TypeError(f"state must be a ContextSetState, got {type(state).__name__}")
        return self.decoder(xt, state.encoding)
