"""TNP-D: Transformer Neural Process with a diagonal Gaussian head (Nguyen & Grover, 2022).

A masked transformer over context tokens ``[x, y, 0]`` and target tokens
``[x, 0, 1]`` (the last entry flags a target; the paper's tokens have no flag and
give targets ``y = 0``). Every token attends to the context tokens only. Because
context tokens never see targets, their per-layer values are computed once in
``condition`` and cached (as the keys and values the layer's attention reads of them,
the same projection the context's own self-attention uses); each target then runs
through the *same* layers cross-attending to the cached context of that layer. This is exactly the masked
transformer, without ever building the ``(N + M)^2`` mask, and makes targets
independent of each other by construction. Cost ``O(N^2)`` to condition, ``O(N M)``
to predict; ``update`` re-conditions.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import AttentionBlock
from npbandit.surrogates.base import NeuralProcess, NPConfig
from npbandit.surrogates.layers import GaussianHead, mlp
from npbandit.surrogates.states import ContextSetState, NPState

__all__ = ["TNPDConfig", "TNPD"]


@dataclass(frozen=True)
class TNPDConfig(NPConfig):
    """TNP-D hyperparameters (the shared transformer fields only)."""


class TNPD(NeuralProcess):
    """TNP-D; state = context + what the targets read of each layer's context tokens: their
    normalised keys and values (``[B, H, N, d_head]`` each, per layer), so a prediction
    projects only its targets.

    Args:
        x_dim, y_dim: input and output dimensions.
        config: :class:`TNPDConfig` (paper defaults when omitted).
    """

    config_class = TNPDConfig
    name = "tnpd"

    def __init__(self, x_dim: int, y_dim: int, config: TNPDConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.embed = mlp(x_dim + y_dim + 1, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.layers = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers)
        )
        self.norm = nn.LayerNorm(c.d_model)
        self.head = GaussianHead(c.d_model, c.d_ff, y_dim, c.min_std, c.activation)

    def _condition(self, xc: Tensor, yc: Tensor) -> ContextSetState:
        h = self.embed(torch.cat([xc, yc, xc.new_zeros(xc.shape[:-1] + (1,))], dim=-1))
        per_layer = []
        for layer in self.layers[:-1]:
            h, keys, values = layer.attend_self(h)
            per_layer.append((keys, values))
        # the last layer's output for the context is read by no one: only its keys and values
        per_layer.append(self.layers[-1].memory_keys_values(h))
        return ContextSetState(xc, yc, tuple(per_layer))

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        if not isinstance(state, ContextSetState):
            raise TypeError(f"state must be a ContextSetState, got {type(state).__name__}")
        flags = xt.new_zeros(xt.shape[:-1] + (self.y_dim,)), xt.new_ones(xt.shape[:-1] + (1,))
        h = self.embed(torch.cat([xt, *flags], dim=-1))
        for layer, (keys, values) in zip(self.layers, state.encoding):
            h = layer.read(h, keys, values)
        return self.head(self.norm(h))
