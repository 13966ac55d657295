"""CMANP's inference path without autograd, in fewer and larger tensor operations.

For a small CMANP (a wheel checkpoint: ``d_model`` 16, 8 latents, 4 blocks) the
arithmetic of a streaming step is a few thousand multiply-adds, and what a step costs
is the fixed overhead of each tensor operation and module call on the way, hundreds
of them through the modules. :class:`FusedCMANP` computes what the modules compute --
:meth:`CMAB.forward <npbandit.surrogates.cmanp.CMAB.forward>` over the blocks, the
decoder's :meth:`~npbandit.surrogates.layers.LatentQueryDecoder.memory` and
:meth:`~npbandit.surrogates.layers.LatentQueryDecoder.features` and the Gaussian head --
from tensors derived from the weights once:

- every LayerNorm's affine is folded into the linear map that reads it
  (``W LN(x) + b = (W diag(gamma)) std(x) + (W beta + b)``, ``std``: the LayerNorm
  without affine), as :meth:`StreamingCrossAttentionBlock.memory_projection
  <npbandit.surrogates.attention.StreamingCrossAttentionBlock.memory_projection>` does;
- a self-attention's query, key and value maps are one matrix;
- a cross-attention whose keys and values are fixed for the call (a block's latents
  reading the block's data summary; targets reading the latents) has its query map
  folded into the keys and its output map into the values, per head
  (``q k^T = std(x) (W_q k^T)``, ``softmax(.) v W_o^T = softmax(.) (v W_o^T)``), so a
  read is a product, a softmax and a product;
- the part of every block that reads only the data (its latents reading the data state,
  their self-attention and the keys and values the block's latents read) does not depend
  on the previous block, so it runs for all blocks at once (batched matrix products);
- the decoder's keys and values of every layer's latents are one batched product;
- linear maps are ``addmm`` / ``baddbmm`` on row-flattened tokens, without module calls;
- the feed-forward's GELU is computed as ``u erfc(-u / sqrt 2) = 2 GELU(u)`` (the factor 2
  taken back by the next linear map): the same function in plain elementwise kernels
  (``F.gelu`` on CPU goes through a oneDNN primitive whose fixed cost per call is many
  times that of the arithmetic on such small tensors).

The results equal the modules' up to floating-point rounding (the sums are associated
differently). No gradient flows
through the derived tensors: :class:`~npbandit.surrogates.cmanp.CMANP` uses this path
only where nothing is recorded (see :class:`~npbandit.surrogates.cmanp.CMANPState`).
The derived tensors are a copy of the weights: build a new one after the weights change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import SoftmaxState
from npbandit.surrogates.layers import DecoderMemory

if TYPE_CHECKING:  # pragma: no cover - cmanp imports this module
    from npbandit.surrogates.cmanp import CMANP

__all__ = ["FusedCMANP"]

_MINUS_SQRT_HALF = -(0.5**0.5)

#: a linear map on row tokens: ``(weight^T [d_in, d_out], bias)``, stacked over blocks
#: (``[G, d_in, d_out]``, ``[G, 1, d_out]``) for the maps run for all blocks at once
Linear = tuple[Tensor, Tensor]


def _fold(weight: Tensor, bias: Tensor | None, norm: nn.LayerNorm | None = None) -> Linear:
    """``x -> F.linear(norm(x), weight, bias)`` as a map on standardised ``x``."""
    if bias is None:
        bias = weight.new_zeros(weight.shape[0])
    if norm is not None:
        bias = bias + weight @ norm.bias
        weight = weight * norm.weight
    return weight.t().clone(memory_format=torch.contiguous_format), bias.clone()


def _query(weight: Tensor, norm: nn.LayerNorm, scale: float) -> Tensor:
    """An attention's query map on standardised tokens, scaled by ``scale``, its bias
    as the last row: ``[D + 1, H * dh]``."""
    w, b = _fold(weight, None, norm)
    return torch.cat([w, b.unsqueeze(0)]) * scale


def _linear(module: nn.Linear, norm: nn.LayerNorm | None = None) -> Linear:
    return _fold(module.weight, module.bias, norm)


def _stack(maps: list[Linear]) -> Linear:
    return torch.stack([w for w, _ in maps]), torch.stack([b for _, b in maps]).unsqueeze(1)


def _apply(x: Tensor, linear: Linear) -> Tensor:
    """``x [rows, d_in]`` or stacked ``[G, rows, d_in]`` through ``linear``."""
    weight, bias = linear
    return torch.addmm(bias, x, weight) if x.dim() == 2 else torch.baddbmm(bias, x, weight)


def _qkv(module: nn.Module) -> Linear:
    """An :class:`~npbandit.surrogates.attention.AttentionBlock`'s self-attention's
    ``[query | key | value]`` map, its LayerNorm folded in."""
    attention = module.attention
    return _fold(torch.cat([attention.to_q.weight, attention.to_kv.weight]), None, module.norm)


@dataclass(frozen=True)
class FusedCMANP:
    """Derived, detached weights of a :class:`~npbandit.surrogates.cmanp.CMANP` and the
    forward passes that read them (see the module docstring). Build with :meth:`of`.

    ``G`` is the number of blocks (= decoder layers), ``H`` the heads, ``dh`` the head width.
    """

    n_heads: int
    eps: float
    min_std: float
    # the data side of every block, stacked over blocks
    block_latents: Tensor  # [G, 1, L_B, D]
    data_out: Linear
    data_ff: tuple[Linear, Linear]
    block_qkv: Linear
    block_out: Linear
    block_ff: tuple[Linear, Linear]
    block_kv: Linear
    # the latent side, block by block
    initial_latents: Tensor  # [L_I, D]
    read_q: Tensor  # [G, D + 1, H * dh], see _query
    read_out: Linear  # stacked
    read_ff: tuple[tuple[Linear, Linear], ...]
    self_qkv: tuple[Linear, ...]
    self_out: tuple[Linear, ...]
    self_ff: tuple[tuple[Linear, Linear], ...]
    # the decoder
    memory_kv: Linear  # stacked over layers
    target_embed: tuple[Linear, ...]
    target_q: Tensor  # [G, D + 1, H * dh]
    target_out: Linear  # stacked
    target_ff: tuple[tuple[Linear, Linear], ...]
    norm: tuple[Tensor, Tensor]
    head: tuple[Linear, Linear]

    @classmethod
    def of(cls, model: CMANP) -> FusedCMANP | None:
        """The derived weights of ``model``; ``None`` where its layers do not fit this
        path (LayerNorms with different ``eps`` or without affine, a target embedding that
        is not Linear/ReLU, a GELU other than the exact one)."""
        norms = [m for m in model.modules() if isinstance(m, nn.LayerNorm)]
        if len({m.eps for m in norms}) != 1 or not all(m.elementwise_affine and m.bias is not None for m in norms):
            return None
        if not all(isinstance(m, (nn.Linear, nn.ReLU)) for m in model.decoder.embed):
            return None
        if any(m.approximate != "none" for m in model.modules() if isinstance(m, nn.GELU)):
            return None
        with torch.no_grad():
            return cls._build(model, norms[0].eps)

    @classmethod
    def _build(cls, model: CMANP, eps: float) -> FusedCMANP:
        blocks, decoder = list(model.blocks), model.decoder

        def ff(block: nn.Module) -> tuple[Linear, Linear]:
            out = block.ff[2]  # reads 2 GELU(u): see _ff
            return _linear(block.ff[0], block.ff_norm), _fold(0.5 * out.weight, out.bias)

        def stacked_ff(modules: list[nn.Module]) -> tuple[Linear, Linear]:
            pairs = [ff(m) for m in modules]
            return _stack([p[0] for p in pairs]), _stack([p[1] for p in pairs])

        data = [b.read_data for b in blocks]
        return cls(
            n_heads=blocks[0].read_data.attention.n_heads, eps=eps, min_std=decoder.head.min_std,
            block_latents=torch.stack([b.block_latents for b in blocks]).unsqueeze(1).clone(),
            data_out=_stack([_linear(d.attention.to_out) for d in data]),
            data_ff=stacked_ff(data),
            block_qkv=_stack([_qkv(b.block_self) for b in blocks]),
            block_out=_stack([_linear(b.block_self.attention.to_out) for b in blocks]),
            block_ff=stacked_ff([b.block_self for b in blocks]),
            block_kv=_stack([_fold(b.read_block.attention.to_kv.weight, None, b.read_block.memory_norm)
                             for b in blocks]),
            initial_latents=model.initial_latents.clone(),
            read_q=torch.stack([_query(b.read_block.attention.to_q.weight, b.read_block.norm,
                                       b.read_block.attention.scale) for b in blocks]),
            read_out=_stack([_linear(b.read_block.attention.to_out) for b in blocks]),
            read_ff=tuple(ff(b.read_block) for b in blocks),
            self_qkv=tuple(_qkv(b.latent_self) for b in blocks),
            self_out=tuple(_linear(b.latent_self.attention.to_out) for b in blocks),
            self_ff=tuple(ff(b.latent_self) for b in blocks),
            memory_kv=_stack([_fold(layer.attention.to_kv.weight, None, layer.memory_norm)
                              for layer in decoder.layers]),
            target_embed=tuple(_linear(m) for m in decoder.embed if isinstance(m, nn.Linear)),
            target_q=torch.stack([_query(layer.attention.to_q.weight, layer.norm, layer.attention.scale)
                                  for layer in decoder.layers]),
            target_out=_stack([_linear(layer.attention.to_out) for layer in decoder.layers]),
            target_ff=tuple(ff(layer) for layer in decoder.layers),
            norm=(decoder.norm.weight.clone(), decoder.norm.bias.clone()),
            head=(_linear(decoder.head.net[0]), _linear(decoder.head.net[2])),
        )

    # -- pieces ---------------------------------------------------------------------------

    @staticmethod
    def _mlp(x: Tensor, linears: tuple[Linear, ...]) -> Tensor:
        """``x [..., d_in]`` through linear maps with ReLU between them."""
        h = x.reshape(-1, x.shape[-1])
        for i, linear in enumerate(linears):
            h = _apply(h if i == 0 else F.relu(h), linear)
        return h.view(*x.shape[:-1], -1)

    def _std(self, x: Tensor) -> Tensor:
        return torch.layer_norm(x, x.shape[-1:], None, None, self.eps)

    def _ff(self, x: Tensor, ff: tuple[Linear, Linear]) -> Tensor:
        """``x + FF(LN(x))``; ``ff[1]`` is the output map halved, as it reads ``2 GELU(u)``."""
        u = _apply(self._std(x), ff[0])
        return x + _apply(u * torch.erfc(u * _MINUS_SQRT_HALF), ff[1])

    def _split(self, x: Tensor, batch: int, parts: int) -> tuple[Tensor, ...]:
        """``[..., B * L, parts * D]`` -> ``parts`` heads-first views ``[..., B, H, L, dh]``."""
        lead, width = x.shape[:-2], x.shape[-1] // parts
        x = x.view(*lead, batch, -1, parts, self.n_heads, width // self.n_heads)
        n = len(lead)  # [..., B, L, parts, H, dh] -> [parts, ..., B, H, L, dh]
        return x.permute(n + 2, *range(n), n, n + 3, n + 1, n + 4).unbind(0)

    @staticmethod
    def _merge(x: Tensor) -> Tensor:
        """``[..., B, H, L, dh]`` -> ``[..., B * L, H * dh]``."""
        x = x.transpose(-3, -2)
        return x.reshape(*x.shape[:-4], x.shape[-4] * x.shape[-3], -1)

    def _self_attention(self, x: Tensor, batch: int, qkv: Linear, out: Linear) -> Tensor:
        q, k, v = self._split(_apply(self._std(x), qkv), batch, 3)
        return x + _apply(self._merge(F.scaled_dot_product_attention(q, k, v)), out)

    def _fold_reads(self, query: Tensor, out: Linear, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Stacked cross-attentions (``query [G, D + 1, H * dh]`` from :func:`_query`,
        ``out`` stacked) reading ``keys``, ``values`` ``[G, B, H, L, dh]``, folded:
        the scores' map ``[G, B, D, H * L]`` and bias ``[G, B, 1, H * L]``, and the
        output-projected values ``[G, B, H * L, D]``."""
        n_groups, batch, n_heads, length, d_head = keys.shape
        q = query.view(n_groups, 1, -1, n_heads, d_head).transpose(2, 3)  # [G, 1, H, D + 1, dh]
        scores = (q @ keys.transpose(-1, -2)).permute(0, 1, 3, 2, 4).reshape(n_groups, batch, -1, n_heads * length)
        # each head's weights sum to 1: the output bias, split over the heads, rides on the values
        projected = values @ out[0].view(n_groups, 1, n_heads, d_head, -1)  # [G, B, H, L, D]
        projected = projected + (out[1] / n_heads).view(n_groups, 1, 1, 1, -1)
        return scores[:, :, :-1], scores[:, :, -1:], projected.flatten(2, 3)

    def _read(self, x: Tensor, batch: int, scores: Tensor, bias: Tensor, values: Tensor) -> Tensor:
        """``x [B * M, D]`` plus its cross-attention, folded by :meth:`_fold_reads`
        (``scores [B, D, H * L]``, ``bias [B, 1, H * L]``, ``values [B, H * L, D]``)."""
        x = x.view(batch, -1, x.shape[-1])
        weights = torch.baddbmm(bias, self._std(x), scores)  # [B, M, H * L]
        weights = weights.view(*weights.shape[:2], self.n_heads, -1).softmax(-1).flatten(2)
        return torch.baddbmm(x, weights, values).flatten(0, 1)

    # -- the passes -----------------------------------------------------------------------

    def latents(self, state: SoftmaxState) -> list[Tensor]:
        """Every block's output latents ``[B, L_I, D]`` from the stacked data state
        (``mean_value [G, B, H, L_B, dh]``), as the blocks' ``forward`` in turn."""
        mean_value = state.mean_value
        n_blocks, batch = mean_value.shape[:2]
        # the data side, all blocks at once: [G, B * L_B, D]
        x = torch.baddbmm(self.data_out[1], self._merge(mean_value), self.data_out[0])
        x = (x.view(n_blocks, batch, -1, x.shape[-1]) + self.block_latents).flatten(1, 2)
        x = self._ff(x, self.data_ff)
        x = self._ff(self._self_attention(x, batch, self.block_qkv, self.block_out), self.block_ff)
        keys, values = self._split(_apply(self._std(x), self.block_kv), batch, 2)  # [G, B, H, L_B, dh]
        scores, bias, values = self._fold_reads(self.read_q, self.read_out, keys, values)
        # the latent side, block by block: [B * L_I, D]
        z = self.initial_latents.repeat(batch, 1)
        out = []
        for g in range(n_blocks):
            z = self._read(z, batch, scores[g], bias[g], values[g])
            z = self._ff(z, self.read_ff[g])
            z = self._ff(self._self_attention(z, batch, self.self_qkv[g], self.self_out[g]), self.self_ff[g])
            out.append(z.view(batch, -1, z.shape[-1]))
        return out

    def memory(self, latents: list[Tensor] | tuple[Tensor, ...]) -> DecoderMemory:
        """The decoder's keys and values of every layer's latents (``[B, L_I, D]`` each),
        as :meth:`LatentQueryDecoder.memory` without points."""
        batch = latents[0].shape[0]
        z = torch.stack(list(latents)).flatten(1, 2)  # [G, B * L_I, D]
        keys, values = self._split(_apply(self._std(z), self.memory_kv), batch, 2)
        return DecoderMemory(tuple(zip(keys.unbind(0), values.unbind(0))))

    def features(self, xt: Tensor, memory: DecoderMemory) -> Tensor:
        """:meth:`LatentQueryDecoder.features` for ``xt [B, M, dx]`` and a memory without
        points: ``[B, M, D]``."""
        batch, n_targets = xt.shape[:2]
        h = self._mlp(xt, self.target_embed).flatten(0, 1)
        keys = torch.stack([k for k, _ in memory.latents])
        values = torch.stack([v for _, v in memory.latents])
        scores, bias, values = self._fold_reads(self.target_q, self.target_out, keys, values)
        for g in range(len(memory.latents)):
            h = self._read(h, batch, scores[g], bias[g], values[g])
            h = self._ff(h, self.target_ff[g])
        return F.layer_norm(h, h.shape[-1:], *self.norm, eps=self.eps).view(batch, n_targets, -1)

    def predict(self, xt: Tensor, memory: DecoderMemory) -> Normal:
        """The decoder's Gaussian at ``xt [B, M, dx]``: ``loc``, ``scale`` ``[B, M, dy]``."""
        h = _apply(F.relu(_apply(self.features(xt, memory).flatten(0, 1), self.head[0])), self.head[1])
        loc, raw = h.view(*xt.shape[:2], -1).chunk(2, dim=-1)
        return Normal(loc, self.min_std + F.softplus(raw), validate_args=False)
