"""DATNP: a dimension-agnostic transformer NP, one token per input dimension of each point.

A padded network (TNP-D, CMANP, ...) reads a point as one token of a fixed width ``x_dim``, so
it serves no problem wider than it was built for, and the weights reading the columns beyond
its training dimensions never learn anything. DATNP reads one token per *cell* (point ``n``,
input dimension ``i``), an MLP of ``(x_ni, y_n, target flag)`` (``y_n`` all of the point's
outputs), and each layer alternates two
attentions over the grid of cells:

- across points within one input dimension, with TNP-D's masking (context cells attend to the
  context cells of their column; target cells read them), so each column learns how distance
  along its coordinate matters;
- across input dimensions within one point (every cell of the point attends to its others),
  which lets the next layer's attention along a column weigh the distance along the others.

No weight depends on how many inputs there are (``any_x_dim``): one network reads a context of
any width, and its targets of the same width. Both attentions are equivariant to permuting the
input dimensions, which is the ``bo`` prior's symmetry. A target's prediction reads the mean
of its cells after the last layer. Cost: ``d`` times a TNP-D's tokens; per layer ``d N^2``
scores across points and ``N d^2`` across dimensions, ``O(d N^2)`` to condition and
``O(d N M)`` to predict; ``update`` re-conditions.

Trained on the ``bo`` prior with ``padding="none"`` (each batch at its own width); see
``experiments/probes/dimension_agnostic.py`` for the study that led here.
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

__all__ = ["DATNPConfig", "DATNP"]


@dataclass(frozen=True)
class DATNPConfig(NPConfig):
    """DATNP hyperparameters (the shared transformer fields; ``n_layers`` counts pairs of
    attentions, one across points and one across dimensions)."""


@dataclass(frozen=True)
class _Encoding:
    """Per layer, the context cells' keys and values ``[B, d, H, N, d_head]`` of the
    attention across points: what targets read."""

    per_layer: tuple


class DATNP(NeuralProcess):
    """DATNP (see the module docstring).

    State: the context and, per layer, the keys and values its cells offer the targets'
    cells in the attention across points.

    Args:
        x_dim: the width it is built for (recorded on its card; it reads any width).
        y_dim: output dimension (each cell reads all of its point's outputs).
        config: :class:`DATNPConfig` (the shared defaults when omitted).
    """

    config_class = DATNPConfig
    name = "datnp"
    any_x_dim = True

    def __init__(self, x_dim: int, y_dim: int, config: DATNPConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.embed = mlp(2 + y_dim, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.across_points = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers))
        self.across_dims = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = GaussianHead(c.d_model, c.d_ff, y_dim, c.min_std, c.activation)

    def _cells(self, x: Tensor, y: Tensor, flag: float) -> Tensor:
        """``x [B, N, d]``, ``y [B, N, dy]`` -> cell tokens ``[B, N, d, D]``."""
        x = x.unsqueeze(-1)
        y = y.unsqueeze(2).expand(*x.shape[:3], y.shape[-1])
        return self.embed(torch.cat([x, y, torch.full_like(x, flag)], dim=-1))

    def _mix_dims(self, layer: int, h: Tensor) -> Tensor:
        """Layer ``layer``'s attention across the dimensions of each point: ``[B, N, d, D]``."""
        b, n, d, width = h.shape
        return self.across_dims[layer](h.reshape(b * n, d, width)).view(b, n, d, width)

    def _condition(self, xc: Tensor, yc: Tensor) -> ContextSetState:
        h = self._cells(xc, yc, 0.0)  # [B, N, d, D]
        b, n, d, width = h.shape
        per_layer = []
        for layer in range(self.config.n_layers):
            by_column = h.transpose(1, 2).reshape(b * d, n, width)
            by_column, keys, values = self.across_points[layer].attend_self(by_column)
            per_layer.append((keys.unflatten(0, (b, d)), values.unflatten(0, (b, d))))
            h = self._mix_dims(layer, by_column.view(b, d, n, width).transpose(1, 2))
        return ContextSetState(xc, yc, _Encoding(tuple(per_layer)))

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        if not isinstance(state, ContextSetState):
            raise TypeError(f"state must be a ContextSetState, got {type(state).__name__}")
        h = self._cells(xt, xt.new_zeros(xt.shape[:-1] + (self.y_dim,)), 1.0)
        b, m, d, width = h.shape
        for layer, (keys, values) in enumerate(state.encoding.per_layer):
            by_column = h.transpose(1, 2).reshape(b * d, m, width)
            if keys.shape[3]:  # an empty context: nothing to read
                by_column = self.across_points[layer].read(by_column, keys.flatten(0, 1), values.flatten(0, 1))
            h = self._mix_dims(layer, by_column.view(b, d, m, width).transpose(1, 2))
        return self.head(self.norm(h.mean(2)))
