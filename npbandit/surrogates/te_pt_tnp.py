"""TE-PT-TNP: translation-equivariant pseudo-token transformer NP (Ashman et al., 2024).

Tokens embed only ``y`` and a context/target flag (``[y, 0]`` for context points,
``[0, 1]`` for targets); locations enter only through differences, in
:class:`~npbandit.surrogates.attention.TranslationEquivariantAttention`. ``M`` learned
pseudo-tokens sit at pseudo-locations placed equivariantly: a learned offset plus an
attention-weighted mean of the context locations (the weights depend on the tokens,
which do not see ``x``). Each layer is IST-style:

1. pseudo-tokens <- context;  2. context <- pseudo-tokens;  3. targets <- pseudo-tokens.

Every attention is between ``M`` pseudo-tokens and ``N`` points, so a layer costs
``O(M (N_c + N_t))`` and no ``N_c x N_c`` or ``N_t x N_c`` tensor is ever built.
Shifting every context and target input by the same vector leaves the predictions
unchanged (exactly, up to rounding) -- except with an empty context, where there is
no location to be relative to and the pseudo-locations are the offsets themselves.
``update`` re-conditions.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import AttentionBlock, TranslationEquivariantAttention
from npbandit.surrogates.base import NeuralProcess, NPConfig
from npbandit.surrogates.layers import ACTIVATIONS, GaussianHead, mlp
from npbandit.surrogates.states import ContextSetState, NPState

__all__ = ["TEPTTNPConfig", "TEPTTNP"]


@dataclass(frozen=True)
class TEPTTNPConfig(NPConfig):
    """TE-PT-TNP hyperparameters. ``n_pseudo``: ``M`` (32, as in the paper);
    ``update_locations``: the optional location update rule (off, as in the paper's
    released configs); ``pseudo_offset_range``: where the pseudo-locations' learned
    offsets start -- ``None``: ``0.5 * N(0, 1)`` per coordinate; ``a``: uniform on
    ``[-a, a]`` per coordinate, evenly spaced when ``x_dim == 1``, so that the
    pseudo-tokens start out covering a domain of half-width ``a`` around the context
    (only the initialisation: a trained checkpoint's offsets are its own)."""

    n_pseudo: int = 32
    update_locations: bool = False
    pseudo_offset_range: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.n_pseudo, int) or isinstance(self.n_pseudo, bool) or self.n_pseudo < 1:
            raise ValueError(f"n_pseudo must be a positive int, got {self.n_pseudo!r}")
        if not isinstance(self.update_locations, bool):
            raise ValueError(f"update_locations must be a bool, got {self.update_locations!r}")
        if self.pseudo_offset_range is not None and (
                isinstance(self.pseudo_offset_range, bool) or not isinstance(self.pseudo_offset_range, (int, float))
                or not self.pseudo_offset_range > 0):
            raise ValueError(f"pseudo_offset_range must be None or a positive number, got {self.pseudo_offset_range!r}")


class TEPTTNP(NeuralProcess):
    """Translation-equivariant pseudo-token TNP; state = context + per layer, what the targets
    read of the pseudo-tokens (their normalised keys and values, ``[B, H, M, d_head]``
    each) and the pseudo-locations ``[B, M, dx]``.

    Args:
        x_dim, y_dim: input and output dimensions.
        config: :class:`TEPTTNPConfig` (paper defaults when omitted).
    """

    config_class = TEPTTNPConfig
    name = "te-pt-tnp"

    def __init__(self, x_dim: int, y_dim: int, config: TEPTTNPConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.embed = mlp(y_dim + 1, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.pseudo_tokens = nn.Parameter(0.02 * torch.randn(c.n_pseudo, c.d_model))
        self.pseudo_offsets = nn.Parameter(self._initial_offsets(c, x_dim))
        self.place_query = nn.Linear(c.d_model, c.d_model, bias=False)
        self.place_key = nn.Linear(c.d_model, c.d_model, bias=False)

        def block() -> AttentionBlock:
            attention = TranslationEquivariantAttention(c.d_model, c.n_heads, x_dim,
                                                        update_locations=c.update_locations,
                                                        activation=ACTIVATIONS[c.activation])
            return AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=True, attention=attention)

        self.pseudo_from_context = nn.ModuleList(block() for _ in range(c.n_layers))
        self.context_from_pseudo = nn.ModuleList(block() for _ in range(c.n_layers))
        self.target_from_pseudo = nn.ModuleList(block() for _ in range(c.n_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = GaussianHead(c.d_model, c.d_ff, y_dim, c.min_std, c.activation)

    @staticmethod
    def _initial_offsets(c: TEPTTNPConfig, x_dim: int) -> Tensor:
        a = c.pseudo_offset_range
        if a is None:
            return 0.5 * torch.randn(c.n_pseudo, x_dim)
        if x_dim == 1:
            return torch.linspace(-a, a, c.n_pseudo).unsqueeze(-1)
        return (2 * torch.rand(c.n_pseudo, x_dim) - 1) * a

    @staticmethod
    def _run_block(block: AttentionBlock, z: Tensor, memory: Tensor, x: Tensor,
                   x_memory: Tensor) -> tuple[Tensor, Tensor]:
        out = block(z, memory, x_query=x, x_memory=x_memory)
        return out if isinstance(out, tuple) else (out, x)

    def _condition(self, xc: Tensor, yc: Tensor) -> ContextSetState:
        b = xc.shape[0]
        zc = self.embed(torch.cat([yc, yc.new_zeros(yc.shape[:-1] + (1,))], dim=-1))
        zp = self.pseudo_tokens.unsqueeze(0).expand(b, -1, -1)
        xp = self.pseudo_offsets.unsqueeze(0).expand(b, -1, -1)
        if xc.shape[1] > 0:
            # token-only weights (translation invariant) of a weighted mean of context locations
            scores = self.place_query(zp) @ self.place_key(zc).transpose(-2, -1) * zc.shape[-1] ** -0.5
            xp = xp + torch.softmax(scores, dim=-1) @ xc
        x_context = xc
        per_layer = []
        for to_pseudo, to_context, to_target in zip(self.pseudo_from_context, self.context_from_pseudo,
                                                     self.target_from_pseudo):
            zp, xp = self._run_block(to_pseudo, zp, zc, xp, x_context)
            per_layer.append((*to_target.memory_keys_values(zp), xp))  # what the targets read of the pseudo-tokens
            zc, x_context = self._run_block(to_context, zc, zp, x_context, xp)
        return ContextSetState(xc, yc, tuple(per_layer))

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        if not isinstance(state, ContextSetState):
            raise TypeError(f"state must be a ContextSetState, got {type(state).__name__}")
        flag = xt.new_zeros(xt.shape[:-1] + (self.y_dim + 1,))
        flag[..., -1] = 1
        zt = self.embed(flag)
        x_target = xt
        for block, (keys, values, xp) in zip(self.target_from_pseudo, state.encoding):
            out = block.read(zt, keys, values, x_query=x_target, x_memory=xp)
            zt, x_target = out if isinstance(out, tuple) else (out, x_target)
        return self.head(self.norm(zt))
