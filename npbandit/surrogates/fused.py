"""CMANP's inference path without autograd, in fewer and larger tensor operations.

For a small CMANP (a wheel checkpoint: ``d_model`` 16, 8 latents, 4 blocks) the
arithmetic of a streaming step is a few thousand multiply-adds, and what a step costs
is the fixed overhead of each tensor operation and module call on the way, hundreds
of them through the modules. :class:`FusedCMANP` computes what the modules compute --
the embedding of new points and their fold into the blocks' data state
(:meth:`StreamingReader.absorb <npbandit.surrogates.attention.StreamingReader.absorb>`),
:meth:`CMAB.forward <npbandit.surrogates.cmanp.CMAB.forward>` over the blocks, the
decoder's :meth:`~npbandit.surrogates.layers.LatentQueryDecoder.memory` and
:meth:`~npbandit.surrogates.layers.LatentQueryDecoder.features` and the Gaussian head --
from tensors derived from the weights once:

- every LayerNorm's affine is folded into the linear map that reads it
  (``W LN(x) + b = (W diag(gamma)) std(x) + (W beta + b)``, ``std``: the LayerNorm
  without affine);
- an attention is written on the standardised tokens: per head, the query and key maps
  are one ``[D, D]`` matrix (``q_i k_j = std(x_i) (A C^T) std(m_j) + (a C^T) std(m_j)`` plus
  terms that do not depend on the key ``j``, which the softmax over keys cancels), and the
  value and output maps are one ``[D, D]`` matrix whose bias rides on the values (each
  head's weights sum to 1). A self-attention is then one projection ``[scores' map |
  values]``, a product, a softmax and a product; a cross-attention whose memory is fixed for
  the call (a block's latents reading the block's tokens, targets reading the latents)
  projects the memory once into the scores' map and bias ``[D + 1, H * L]`` and the values
  ``[H * L, D]``, so a read is a product, a softmax and a product;
- a new point folds into the blocks' data state through one projection of its
  standardised embedding onto every block's scaled queries (``q k_j = std(m_j) (C^T q) +
  c q``) and values, and, one point at a time, ``log C' = logaddexp(log C, s)``,
  ``E' = lerp(E, v, exp(s - log C'))``;
- the part of every block that reads only the data (its latents reading the data state,
  their self-attention and the keys and values the block's latents read) does not depend
  on the previous block, so it runs for all blocks at once (batched matrix products), as
  does the projection of every decoder layer's latents;
- linear maps are ``addmm`` / ``baddbmm`` on row-flattened tokens, without module calls;
- the feed-forward's GELU is computed as ``u erfc(u) = -GELU(p) sqrt 2`` at
  ``u = -p / sqrt 2`` (``F.gelu`` on CPU goes through a oneDNN primitive whose fixed cost
  per call is many times that of the arithmetic on such small tensors), both factors folded
  into the linear maps, and the output bias is carried by one more hidden unit held at
  ``u = -8``, where ``u erfc(u) = -16`` exactly in every floating-point format, so the
  residual sum is one ``addmm``.

The results equal the modules' up to floating-point rounding (the sums are associated
differently). No gradient flows
through the derived tensors: :class:`~npbandit.surrogates.cmanp.CMANP` uses this path
only where nothing is recorded (see :class:`~npbandit.surrogates.cmanp.CMANPState`).
The derived tensors are a copy of the weights: build a new one after the weights change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import SoftmaxState, extend_softmax_state

if TYPE_CHECKING:  # pragma: no cover - cmanp imports this module
    from npbandit.surrogates.cmanp import CMANP

__all__ = ["FusedCMANP", "FusedMemory"]

_SQRT_HALF = 0.5**0.5
#: the constant hidden unit of a folded feed-forward: ``u = -8``, ``u erfc(u) = -16``
_BIAS_UNIT, _BIAS_VALUE = -8.0, -16.0

#: a linear map on row tokens: ``(weight^T [d_in, d_out], bias [d_out])``, or stacked over
#: blocks (``[G, d_in, d_out]``, ``[G, 1, d_out]``) for the maps run for all blocks at once
Linear = tuple[Tensor, Tensor]
#: what one cross-attention reads of a fixed memory of ``L`` tokens: the scores' map
#: ``[B, D, H * L]`` and bias ``[B, 1, H * L]`` (on the standardised query), and the
#: output-projected values ``[B, H * L, D]``; without the batch dimension for ``B = 1``
Read = tuple[Tensor, Tensor, Tensor]
#: the decoder's memory on the fused path: one :data:`Read` per layer
FusedMemory = tuple[Read, ...]


def _affine(norm: nn.LayerNorm | None, weight: Tensor) -> tuple[Tensor, Tensor]:
    """``x -> weight norm(x)`` as ``(weight', bias')`` on standardised ``x`` (``weight [out, D]``)."""
    if norm is None:
        return weight, weight.new_zeros(weight.shape[0])
    return weight * norm.weight, weight @ norm.bias


def _linear(module: nn.Linear, norm: nn.LayerNorm | None = None) -> Linear:
    """``module(norm(x))`` as a map on standardised ``x`` (on ``x`` itself without ``norm``)."""
    weight, bias = _affine(norm, module.weight)
    if module.bias is not None:
        bias = bias + module.bias
    return weight.t().contiguous(), bias.clone()


def _heads(weight: Tensor, bias: Tensor, n_heads: int) -> tuple[Tensor, Tensor]:
    """A map ``[H * dh, D]`` (``bias [H * dh]``) as per-head ``[H, D, dh]`` and ``[H, 1, dh]``."""
    d_head = weight.shape[0] // n_heads
    return weight.view(n_heads, d_head, -1).transpose(1, 2), bias.view(n_heads, 1, d_head)


def _head_maps(attention: nn.Module, query_norm: nn.LayerNorm,
               memory_norm: nn.LayerNorm) -> tuple[Tensor, Tensor, Tensor]:
    """One attention's maps per head on standardised tokens: the scores' map ``[H, D + 1, D]``
    (``[R_h; r_h]``: a standardised query ``s`` scores a standardised memory token ``t`` as
    ``s . R_h t + r_h . t`` up to a constant per query), the output-projected values
    ``[H, D, D]`` and their bias ``[H, D]`` (the output bias shared over the heads)."""
    n_heads, d_model = attention.n_heads, attention.to_q.weight.shape[1]
    query, query_bias = _heads(*_affine(query_norm, attention.to_q.weight), n_heads)  # [H, D, dh], [H, 1, dh]
    # the keys' bias c: q . c is the same for every key, so the softmax cancels it
    keys, _ = _heads(*_affine(memory_norm, attention.to_kv.weight[:d_model]), n_heads)
    values, value_bias = _heads(*_affine(memory_norm, attention.to_kv.weight[d_model:]), n_heads)
    out = attention.to_out.weight.t().reshape(n_heads, -1, d_model)  # [H, dh, D]
    scores = torch.cat([query, query_bias], dim=1) @ keys.transpose(1, 2) * attention.scale  # [H, D + 1, D]
    bias = (value_bias @ out).squeeze(1) + attention.to_out.bias / n_heads  # [H, D]
    return scores, values @ out, bias


def _folded_attention(attention: nn.Module, query_norm: nn.LayerNorm, memory_norm: nn.LayerNorm) -> Linear:
    """One attention, as a map of a standardised memory token ``std(m_j)`` to its per-head
    scores' map and bias (``[R_h; r_h] std(m_j)``, ``D + 1`` entries per head, see
    :func:`_head_maps`) followed by its output-projected values (``D`` per head, the output
    bias shared over the heads): ``[D, H * (D + 1) + H * D]``."""
    n_heads, d_model = attention.n_heads, attention.to_q.weight.shape[1]
    scores, projected, bias = _head_maps(attention, query_norm, memory_norm)
    weight = torch.cat([scores.transpose(1, 2).permute(1, 0, 2).reshape(d_model, -1),
                        projected.permute(1, 0, 2).reshape(d_model, -1)], dim=1)
    return weight.contiguous(), torch.cat([bias.new_zeros(n_heads * (d_model + 1)), bias.flatten()])


def _self_attention_map(block: nn.Module) -> Linear:
    """An :class:`~npbandit.surrogates.attention.AttentionBlock`'s self-attention as one map
    of a standardised token to its scores' map (``P_h s_i + e_h``, ``D`` per head; ``s_i`` is
    the query) and its output-projected values (``D`` per head): ``[D, 2 * H * D]``."""
    d_model = block.norm.weight.shape[0]
    scores, projected, bias = _head_maps(block.attention, block.norm, block.norm)
    bias = torch.cat([scores[:, -1], bias])
    weight = torch.cat([scores[:, :-1], projected]).permute(1, 0, 2).reshape(d_model, -1)
    return weight.contiguous(), bias.flatten()


def _feed_forward(block: nn.Module) -> tuple[Tensor, Tensor, Tensor]:
    """``x + FF(LN(x))`` as ``(w1 [D, F + 1], b1 [F + 1], w2 [F + 1, D])`` (see the module
    docstring): ``u = std(x) w1 + b1``, ``x + (u erfc(u)) w2``."""
    first, last = block.ff[0], block.ff[2]
    w1, b1 = _linear(first, block.ff_norm)
    w1 = torch.cat([w1 * -_SQRT_HALF, w1.new_zeros(w1.shape[0], 1)], dim=1)
    b1 = torch.cat([b1 * -_SQRT_HALF, b1.new_full((1,), _BIAS_UNIT)])
    w2 = torch.cat([last.weight.t() * -_SQRT_HALF, (last.bias / _BIAS_VALUE).unsqueeze(0)])
    return w1.contiguous(), b1, w2.contiguous()


def _stack(parts: list[tuple[Tensor, ...]]) -> tuple[Tensor, ...]:
    """Per-block maps stacked for ``baddbmm``: weights ``[G, ...]``, biases ``[G, 1, d]``."""
    return tuple(torch.stack(p) if p[0].dim() == 2 else torch.stack(p).unsqueeze(1) for p in zip(*parts))


def _apply(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """``x [rows, d_in]`` or stacked ``[G, rows, d_in]`` through a linear map."""
    return torch.addmm(bias, x, weight) if x.dim() == 2 else torch.baddbmm(bias, x, weight)


@dataclass(frozen=True)
class FusedCMANP:
    """Derived, detached weights of a :class:`~npbandit.surrogates.cmanp.CMANP` and the
    forward passes that read them (see the module docstring). Build with :meth:`of`.

    ``G`` is the number of blocks (= decoder layers), ``H`` the heads, ``dh`` the head width,
    ``L_B`` and ``L_I`` the block and input latents.
    """

    n_heads: int
    eps: float
    width: tuple[int]  # (D,): what the LayerNorms normalise over
    min_std: float
    # new points: their embedding, and every block's scores and values of them
    embed: tuple[Linear, ...]
    absorb_map: Linear  # [D, G * H * L_B + G * D]
    # the data side of every block, stacked over blocks
    block_latents: Tensor  # [G, L_B, D], the data read's output bias included
    data_out: Tensor  # [G, D, D]
    data_ff: tuple[Tensor, ...]
    block_self: Linear
    block_ff: tuple[Tensor, ...]
    block_read: Linear  # what the latents read of the block's tokens, see _folded_attention
    # the latent side, block by block
    initial_latents: Tensor  # [L_I, D]
    read_ff: tuple[tuple[Tensor, ...], ...]
    latent_self: tuple[Linear, ...]
    latent_ff: tuple[tuple[Tensor, ...], ...]
    # the decoder
    memory_read: Linear  # stacked over layers
    target_embed: tuple[Linear, ...]
    target_ff: tuple[tuple[Tensor, ...], ...]
    norm: tuple[Tensor, Tensor]
    head: tuple[Linear, Linear]  # the first map reads the standardised features
    _per_batch: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, model: CMANP) -> FusedCMANP | None:
        """The derived weights of ``model``; ``None`` where its layers do not fit this
        path (LayerNorms with different ``eps`` or without affine, an embedding or head that
        is not Linear/ReLU, a GELU other than the exact one, attention other than the default)."""
        from npbandit.surrogates.attention import MultiHeadAttention

        norms = [m for m in model.modules() if isinstance(m, nn.LayerNorm)]
        if len({m.eps for m in norms}) != 1 or not all(m.elementwise_affine and m.bias is not None for m in norms):
            return None
        mlps = (*model.decoder.embed, *model.embed, *model.decoder.head.net)
        if not all(isinstance(m, (nn.Linear, nn.ReLU)) for m in mlps):
            return None
        if any(m.approximate != "none" for m in model.modules() if isinstance(m, nn.GELU)):
            return None
        if any(type(m.attention) is not MultiHeadAttention for m in model.modules() if hasattr(m, "attention")):
            return None
        with torch.no_grad():
            return cls._build(model, norms[0].eps)

    @classmethod
    def _build(cls, model: CMANP, eps: float) -> FusedCMANP:
        blocks, decoder = list(model.blocks), model.decoder
        n_heads = blocks[0].read_data.attention.n_heads
        data = [b.read_data for b in blocks]
        # the data read: each block's scaled queries, projected through its keys' map
        queries = torch.stack([d.scaled_queries(b.block_latents.unsqueeze(0))[0] for d, b in zip(data, blocks)])
        keys, key_bias, values, value_bias = [], [], [], []
        for d in data:
            w, b = d.memory_projection()  # on standardised tokens: [2D, D], [2D]
            d_model = w.shape[1]
            keys.append(w[:d_model].view(n_heads, -1, d_model))  # [H, dh, D]
            key_bias.append(b[:d_model].view(n_heads, -1))
            values.append(w[d_model:].t())
            value_bias.append(b[d_model:])
        scores = torch.einsum("ghld,ghde->eghl", queries, torch.stack(keys)).flatten(1)  # [D, G * H * L_B]
        score_bias = torch.einsum("ghld,ghd->ghl", queries, torch.stack(key_bias)).flatten()
        absorb = (torch.cat([scores, *values], dim=1).contiguous(), torch.cat([score_bias, *value_bias]))
        data_out = [_linear(d.attention.to_out) for d in data]
        head = _linear(decoder.head.net[0], decoder.norm)
        return cls(
            n_heads=n_heads, eps=eps, width=(model.config.d_model,), min_std=decoder.head.min_std,
            embed=tuple(_linear(m) for m in model.embed if isinstance(m, nn.Linear)),
            absorb_map=absorb,
            block_latents=torch.stack([b.block_latents + o[1] for b, o in zip(blocks, data_out)]),
            data_out=torch.stack([o[0] for o in data_out]),
            data_ff=_stack([_feed_forward(d) for d in data]),
            block_self=_stack([_self_attention_map(b.block_self) for b in blocks]),
            block_ff=_stack([_feed_forward(b.block_self) for b in blocks]),
            block_read=_stack([_folded_attention(b.read_block.attention, b.read_block.norm, b.read_block.memory_norm)
                               for b in blocks]),
            initial_latents=model.initial_latents.clone(),
            read_ff=tuple(_feed_forward(b.read_block) for b in blocks),
            latent_self=tuple(_self_attention_map(b.latent_self) for b in blocks),
            latent_ff=tuple(_feed_forward(b.latent_self) for b in blocks),
            memory_read=_stack([_folded_attention(layer.attention, layer.norm, layer.memory_norm)
                                for layer in decoder.layers]),
            target_embed=tuple(_linear(m) for m in decoder.embed if isinstance(m, nn.Linear)),
            target_ff=tuple(_feed_forward(layer) for layer in decoder.layers),
            norm=(decoder.norm.weight.clone(), decoder.norm.bias.clone()),
            head=(head, _linear(decoder.head.net[2])),
        )

    # -- pieces ---------------------------------------------------------------------------

    @staticmethod
    def _mlp(x: Tensor, linears: tuple[Linear, ...]) -> Tensor:
        """``x [rows, d_in]`` through linear maps with ReLU between them."""
        for i, (weight, bias) in enumerate(linears):
            x = torch.addmm(bias, x if i == 0 else torch.relu(x), weight)
        return x

    def _std(self, x: Tensor) -> Tensor:
        """LayerNorm without affine over the last dimension, ``D``."""
        return torch.layer_norm(x, self.width, None, None, self.eps)

    def _ff(self, x: Tensor, ff: tuple[Tensor, ...]) -> Tensor:
        """``x + FF(LN(x))`` for ``x [rows, D]`` or stacked ``[G, rows, D]`` (see :func:`_feed_forward`)."""
        w1, b1, w2 = ff
        s = torch.layer_norm(x, self.width, None, None, self.eps)
        if x.dim() == 2:
            u = torch.addmm(b1, s, w1)
            return torch.addmm(x, u * torch.erfc(u), w2)
        u = torch.baddbmm(b1, s, w1)
        return torch.baddbmm(x, u * torch.erfc(u), w2)

    def _self_attention(self, x: Tensor, groups: int, projection: Linear) -> Tensor:
        """``x`` plus its self-attention (see :func:`_self_attention_map`) within each of
        ``groups`` sets of ``L`` tokens: ``x [groups * L, D]``, or stacked ``[G, B * L, D]``
        with ``groups = G * B``. One set is 2-D products throughout."""
        s = self._std(x)
        d_model, n_heads = x.shape[-1], self.n_heads
        split = n_heads * d_model
        proj = _apply(s, *projection)
        if groups == 1 and x.dim() == 2:
            maps, values = proj[:, :split], proj[:, split:]  # [L, H * D] each
            if n_heads == 1:
                return torch.addmm(x, torch.mm(maps, s.t()).softmax(-1), values)
            length = x.shape[0]
            weights = torch.mm(maps.reshape(length * n_heads, d_model), s.t()).softmax(-1).view(length, -1)
            values = values.reshape(length, n_heads, d_model).transpose(0, 1).reshape(-1, d_model)
            return torch.addmm(x, weights, values)
        proj = proj.view(groups, -1, 2 * split)
        maps, values = proj[..., :split], proj[..., split:]  # [N, L, H * D] each
        s = s.view(groups, -1, d_model)
        length = s.shape[1]
        if n_heads > 1:
            maps = maps.reshape(groups, length * n_heads, d_model)
            values = values.reshape(groups, length, n_heads, d_model).transpose(1, 2).reshape(groups, -1, d_model)
        weights = torch.bmm(maps, s.mT).softmax(-1).view(groups, length, -1)  # [N, L, H * L]
        return torch.baddbmm(x.view(groups, length, d_model), weights, values).view(x.shape)

    def _memory(self, tokens: Tensor, batch: int, projection: Linear) -> tuple[Read, ...]:
        """What one cross-attention per block reads of each block's tokens ``[G, B * L, D]``
        (see :func:`_folded_attention`): one :data:`Read` per block, 2-D for one batch
        element (``[D, H * L]``, ``[1, H * L]``, ``[H * L, D]``)."""
        n_blocks, _, d_model = tokens.shape
        n_heads = self.n_heads
        proj = torch.baddbmm(projection[1], self._std(tokens), projection[0])
        proj = proj.view(n_blocks * batch, -1, proj.shape[-1])  # [N, L, H * (D + 1) + H * D]
        length, split = proj.shape[1], n_heads * (d_model + 1)
        scores, values = proj[..., :split], proj[..., split:]
        if n_heads == 1:
            scores = scores.mT  # [N, D + 1, L]
        else:
            scores = scores.reshape(-1, length, n_heads, d_model + 1).permute(0, 3, 2, 1).reshape(
                -1, d_model + 1, n_heads * length)
            values = values.reshape(-1, length, n_heads, d_model).transpose(1, 2).reshape(-1, n_heads * length,
                                                                                           d_model)
        if batch > 1:
            scores, values = scores.unflatten(0, (n_blocks, batch)), values.unflatten(0, (n_blocks, batch))
        return tuple(zip(scores[..., :d_model, :].unbind(0), scores[..., d_model:, :].unbind(0), values.unbind(0),
                         strict=True))

    def _read(self, x: Tensor, read: Read) -> Tensor:
        """``x [M, D]`` (a 2-D :data:`Read`) or ``[B, M, D]`` plus its cross-attention to a memory."""
        scores, bias, values = read
        two_d = values.dim() == 2
        weights = (torch.addmm if two_d else torch.baddbmm)(bias, self._std(x), scores)  # [..., M, H * L]
        if self.n_heads == 1:
            weights = weights.softmax(-1)
        else:
            weights = weights.view(*weights.shape[:-1], self.n_heads, -1).softmax(-1).flatten(-2)
        return (torch.addmm if two_d else torch.baddbmm)(x, weights, values)

    def _rows(self, x: Tensor, batch: int, read: Read) -> Tensor:
        """:meth:`_read` for row tokens ``x [B * M, D]``."""
        if batch == 1:
            return self._read(x, read)
        return self._read(x.view(batch, -1, x.shape[-1]), read).flatten(0, 1)

    def _batched(self, batch: int) -> tuple[Tensor, Tensor]:
        """The block latents ``[G, B * L_B, D]`` and input latents ``[B * L_I, D]`` for ``batch``."""
        tensors = self._per_batch.get(batch)
        if tensors is None:
            tensors = (self.block_latents.repeat(1, batch, 1), self.initial_latents.repeat(batch, 1))
            self._per_batch[batch] = tensors
        return tensors

    # -- the passes -----------------------------------------------------------------------

    def absorb(self, state: SoftmaxState | None, x: Tensor, y: Tensor) -> SoftmaxState:
        """Embed points ``x [B, n, dx]``, ``y [B, n, dy]`` (model units, ``n >= 1``) and fold
        them into the stacked data state (``log_norm [G, B, H, L_B, 1]``, ``mean_value
        [G, B, H, L_B, dh]``), as the model's ``embed`` and
        :meth:`~npbandit.surrogates.attention.StreamingReader.absorb` do."""
        batch, n = x.shape[:2]
        tokens = self._mlp(torch.cat([x, y], dim=-1).view(batch * n, -1), self.embed)
        proj = torch.addmm(self.absorb_map[1], self._std(tokens), self.absorb_map[0])
        n_blocks, length = self.block_latents.shape[:2]
        split = n_blocks * self.n_heads * length
        if batch * n == 1:  # one point: [G, 1, H, L_B, 1] and [G, 1, H, 1, dh] are views of the row
            scores = proj[:, :split].view(n_blocks, 1, self.n_heads, -1, 1)
            values = proj[:, split:].view(n_blocks, 1, self.n_heads, 1, -1)
        else:
            scores = proj[:, :split].view(batch, n, n_blocks, self.n_heads, -1).permute(2, 0, 3, 4, 1)
            values = proj[:, split:].view(batch, n, n_blocks, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        if state is None or n > 1:
            return extend_softmax_state(state, scores, values)
        log_norm = torch.logaddexp(state.log_norm, scores)
        return SoftmaxState(log_norm, torch.lerp(state.mean_value, values, torch.exp(scores - log_norm)))

    def latents(self, state: SoftmaxState) -> list[Tensor]:
        """Every block's output latents ``[B, L_I, D]`` from the stacked data state
        (``mean_value [G, B, H, L_B, dh]``), as the blocks' ``forward`` in turn."""
        mean_value = state.mean_value
        n_blocks, batch = mean_value.shape[:2]
        block_latents, z = self._batched(batch)
        # the data side, all blocks at once: [G, B * L_B, D]
        merged = mean_value if self.n_heads == 1 else mean_value.transpose(-3, -2)
        x = torch.baddbmm(block_latents, merged.reshape(n_blocks, -1, block_latents.shape[-1]), self.data_out)
        x = self._ff(x, self.data_ff)
        x = self._ff(self._self_attention(x, n_blocks * batch, self.block_self), self.block_ff)
        reads = self._memory(x, batch, self.block_read)
        # the latent side, block by block: [B * L_I, D]
        out = []
        for g in range(n_blocks):
            z = self._ff(self._read(z, reads[g]) if batch == 1 else self._rows(z, batch, reads[g]), self.read_ff[g])
            z = self._ff(self._self_attention(z, batch, self.latent_self[g]), self.latent_ff[g])
            out.append(z.view(batch, -1, z.shape[-1]))
        return out

    def memory(self, latents: list[Tensor] | tuple[Tensor, ...]) -> FusedMemory:
        """What the decoder's layers read of their latents (``[B, L_I, D]`` each), as
        :meth:`LatentQueryDecoder.memory` without points, folded (one :data:`Read` per layer)."""
        return self._memory(torch.stack(list(latents)).flatten(1, 2), latents[0].shape[0], self.memory_read)

    def _features(self, xt: Tensor, memory: FusedMemory) -> Tensor:
        """The decoder's target representations before its final LayerNorm: ``[B * M, D]``."""
        batch, n_targets = xt.shape[:2]
        h = self._mlp(xt.reshape(batch * n_targets, -1), self.target_embed)
        for read, ff in zip(memory, self.target_ff, strict=True):
            h = self._ff(self._read(h, read) if batch == 1 else self._rows(h, batch, read), ff)
        return h

    def features(self, xt: Tensor, memory: FusedMemory) -> Tensor:
        """:meth:`LatentQueryDecoder.features` for ``xt [B, M, dx]`` and a memory without
        points: ``[B, M, D]``."""
        h = self._features(xt, memory)
        return F.layer_norm(h, h.shape[-1:], *self.norm, eps=self.eps).view(*xt.shape[:2], -1)

    def predict(self, xt: Tensor, memory: FusedMemory) -> Normal:
        """The decoder's Gaussian at ``xt [B, M, dx]``: ``loc``, ``scale`` ``[B, M, dy]``."""
        h = self._mlp(self._std(self._features(xt, memory)), self.head)
        loc, raw = h.view(*xt.shape[:2], -1).chunk(2, dim=-1)
        return Normal(loc, self.min_std + F.softplus(raw), validate_args=False)
