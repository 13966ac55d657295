"""Attention shared by every surrogate in npbandit.

The pieces, composed by the models (attention -> block -> encoder -> model):

- :class:`MultiHeadAttention` -- scaled dot-product attention with learned
  projections.
- :class:`AttentionBlock` -- a pre-norm residual block: attention, then a
  feed-forward layer, each added to the residual stream.
- :class:`TranslationEquivariantAttention` -- attention whose logits see inputs
  only through differences ``x_q - x_k`` (TE-PT-TNP).
- :class:`SoftmaxState` and :func:`extend_softmax_state` -- the streaming form of
  softmax attention: per head and query it keeps ``log C = log sum_i exp(s_i)`` and
  the softmax-weighted mean of the values; new keys are folded in by the exact
  rolling log-sum-exp update, so the result equals attention over the union of all
  keys, at a cost independent of how many came before.
- :class:`StreamingCrossAttentionBlock` -- an :class:`AttentionBlock` whose fixed
  queries (learned latents) read a memory that only grows, and
  :class:`StreamingReader`, which folds one memory into several such blocks with a
  single projection.

An attention over an empty memory returns a zero value vector (before the output
projection); this is also what an empty streaming state reads as, so a model
conditioned on no data gives its prior predictive.

We use standard pre-LayerNorm residuals ``x + f(LN(x))``. The BorealisAI reference
code adds the residual to the *normalised* input instead (``LN(x) + f(LN(x))``);
we do not reproduce that quirk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "SoftmaxState",
    "extend_softmax_state",
    "StreamingReader",
    "MultiHeadAttention",
    "FeedForward",
    "AttentionBlock",
    "TranslationEquivariantAttention",
    "StreamingCrossAttentionBlock",
]


@dataclass(frozen=True)
class SoftmaxState:
    """Running summary of a softmax attention over every key seen so far.

    Attributes:
        log_norm: ``[B, H, L, 1]`` -- ``log sum_i exp(s_i)`` over all keys ``i``.
        mean_value: ``[B, H, L, d_head]`` -- ``sum_i softmax(s)_i v_i``.

    ``B`` is the batch, ``H`` the heads, ``L`` the queries. Neither tensor grows
    with the number of keys.
    """

    log_norm: Tensor
    mean_value: Tensor


def extend_softmax_state(state: SoftmaxState | None, scores: Tensor, values: Tensor) -> SoftmaxState:
    """Fold new keys into a running softmax attention, exactly.

    Args:
        state: summary of the keys seen so far (``None``: none yet).
        scores: ``[..., L, n]`` scaled logits of the ``L`` queries against the
            ``n >= 1`` new keys.
        values: ``[..., n, d]`` the new values.

    Returns:
        The summary of old and new keys together: ``log C' = logaddexp(log C,
        lse(s))`` and ``E' = exp(log C - log C') E + sum_i exp(s_i - log C') v_i``,
        written with one shared shift so that every exponent is ``<= 0``.
    """
    shift = scores.amax(dim=-1, keepdim=True)
    if state is not None:
        shift = torch.maximum(shift, state.log_norm)
    weights = torch.exp(scores - shift)
    total = weights.sum(dim=-1, keepdim=True)
    weighted = weights @ values
    if state is not None:
        old = torch.exp(state.log_norm - shift)
        total = total + old
        weighted = weighted + old * state.mean_value
    return SoftmaxState(shift + torch.log(total), weighted / total)


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention.

    Args:
        d_model: width of queries and of the output.
        n_heads: number of heads; must divide ``d_model``.
        d_memory: width of keys/values (defaults to ``d_model``).
    """

    def __init__(self, d_model: int, n_heads: int, d_memory: int | None = None) -> None:
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
        d_memory = d_model if d_memory is None else d_memory
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.scale = self.d_head**-0.5
        self.to_q = nn.Linear(d_model, d_model, bias=False)
        self.to_kv = nn.Linear(d_memory, 2 * d_model, bias=False)
        self.to_out = nn.Linear(d_model, d_model)

    def _split_heads(self, t: Tensor) -> Tensor:
        # [..., N, H * dh] -> [..., H, N, dh]
        return t.unflatten(-1, (self.n_heads, self.d_head)).transpose(-3, -2)

    def _merge_heads(self, t: Tensor) -> Tensor:
        # [..., H, N, dh] -> [..., N, H * dh]
        return t.transpose(-3, -2).flatten(-2)

    def forward(self, query: Tensor, memory: Tensor, mask: Tensor | None = None) -> Tensor:
        """Attend from ``query`` ``[B, M, D]`` to ``memory`` ``[B, N, D_mem]``.

        Args:
            mask: optional boolean ``[B, M, N]``; ``True`` marks a key a query may
                attend to. Every query must keep at least one key.

        Returns:
            ``[B, M, D]``.
        """
        return self.attend(query, *self.project_memory(memory), mask)

    def attend(self, query: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None) -> Tensor:
        """:meth:`forward` with the memory already projected by :meth:`project_memory`
        (``keys``, ``values`` ``[B, H, N, d_head]``): a memory that many queries read
        in turn is projected once."""
        if keys.shape[-2] == 0:
            zeros = query.new_zeros(query.shape[:-1] + (self.n_heads * self.d_head,))
            return self.to_out(zeros)
        q = self.project_queries(query)
        attn_mask = None if mask is None else mask.unsqueeze(-3)
        out = F.scaled_dot_product_attention(q, keys, values, attn_mask=attn_mask)
        return self.to_out(self._merge_heads(out))

    def project_queries(self, query: Tensor) -> Tensor:
        """Per-head queries ``[..., H, M, d_head]`` from ``query`` ``[..., M, D]``."""
        return self._split_heads(self.to_q(query))

    def project_memory(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Per-head keys and values ``[..., H, N, d_head]`` from ``memory`` ``[..., N, D_mem]``."""
        k, v = self.to_kv(memory).chunk(2, dim=-1)
        return self._split_heads(k), self._split_heads(v)

    def read_state(self, state: SoftmaxState | None, query: Tensor) -> Tensor:
        """Output of the attention summarised by ``state``: ``[B or 1, L, D]``.

        ``query`` is only used for the shape when ``state`` is ``None`` (no keys).
        """
        if state is None:
            zeros = query.new_zeros(query.shape[:-1] + (self.n_heads * self.d_head,))
            return self.to_out(zeros)
        return self.to_out(self._merge_heads(state.mean_value))


class FeedForward(nn.Sequential):
    """Position-wise ``Linear -> GELU -> Linear``: ``[..., d_model] -> [..., d_model]``
    through a hidden width ``d_ff``."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))


class AttentionBlock(nn.Module):
    """Pre-norm residual block: ``x += Attn(LN(x), LN'(m)); x += FF(LN(x))``.

    Args:
        d_model: the width ``D`` of the tokens.
        n_heads: attention heads (must divide ``d_model``).
        d_ff: the feed-forward layer's hidden width.
        separate_memory_norm: ``True`` for cross-attention between different
            kinds of tokens (latents reading data), which normalises the memory with
            its own LayerNorm. ``False`` normalises the memory with the queries'
            LayerNorm: plain self-attention, or the target path of a masked
            transformer, where targets and context share the layer's norm.
        attention: the attention module (default :class:`MultiHeadAttention`); any
            module called as ``attention(query, memory, mask, **kwargs)`` works, e.g.
            :class:`TranslationEquivariantAttention`. If it returns a tuple
            ``(out, extra)``, the block returns ``(x, extra)``.

    ``forward(x, memory=None)`` is self-attention; with ``memory`` it is
    cross-attention. Shapes: ``x`` ``[B, M, D]``, ``memory`` ``[B, N, D]``; extra
    keyword arguments go to the attention.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, *, separate_memory_norm: bool,
                 attention: nn.Module | None = None) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.memory_norm = nn.LayerNorm(d_model) if separate_memory_norm else None
        self.attention = MultiHeadAttention(d_model, n_heads) if attention is None else attention
        self.ff_norm = nn.LayerNorm(d_model)
        self.ff = FeedForward(d_model, d_ff)

    def forward(self, x: Tensor, memory: Tensor | None = None, mask: Tensor | None = None, **kwargs: Any):
        """``x [B, M, D]`` attending to itself, or to ``memory [B, N, D]`` (``mask [B, M, N]``
        as for :class:`MultiHeadAttention`) -> ``[B, M, D]`` (and the attention's extra
        output, if it returns one)."""
        h = self.norm(x)
        out = self.attention(h, h if memory is None else self._normed_memory(memory), mask, **kwargs)
        extra = None
        if isinstance(out, tuple):
            out, extra = out
        x = self._feed_forward(x + out)
        return x if extra is None else (x, extra)

    def _normed_memory(self, memory: Tensor) -> Tensor:
        return self.norm(memory) if self.memory_norm is None else self.memory_norm(memory)

    def _feed_forward(self, x: Tensor) -> Tensor:
        return x + self.ff(self.ff_norm(x))

    def memory_keys_values(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """The cross-attention's keys and values ``[B, H, N, d_head]`` for ``memory``
        ``[B, N, D]`` (normalised and projected), for :meth:`read`. Needs a
        :class:`MultiHeadAttention` (or a subclass, such as
        :class:`TranslationEquivariantAttention`)."""
        if not isinstance(self.attention, MultiHeadAttention):
            raise TypeError(f"memory_keys_values needs a MultiHeadAttention, not {type(self.attention).__name__}")
        return self.attention.project_memory(self._normed_memory(memory))

    def read(self, x: Tensor, keys: Tensor, values: Tensor, **kwargs: Any):
        """``forward(x, memory, **kwargs)`` given ``memory_keys_values(memory)``: the same
        result, without projecting a memory that several calls read again (keyword
        arguments go to the attention's ``attend``)."""
        out = self.attention.attend(self.norm(x), keys, values, **kwargs)
        extra = None
        if isinstance(out, tuple):
            out, extra = out
        x = self._feed_forward(x + out)
        return x if extra is None else (x, extra)

    def attend_self(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``forward(x)`` (self-attention, no mask) and the keys and values
        ``[B, H, N, d_head]`` it attended to: ``(forward(x), *memory_keys_values(x))`` for a
        block without a separate memory norm, the projection computed once. Needs the
        default :class:`MultiHeadAttention`."""
        if type(self.attention) is not MultiHeadAttention:
            raise TypeError(f"attend_self needs a MultiHeadAttention, not {type(self.attention).__name__}")
        h = self.norm(x)
        keys, values = self.attention.project_memory(h)
        return self._feed_forward(x + self.attention.attend(h, keys, values)), keys, values


class TranslationEquivariantAttention(MultiHeadAttention):
    """Attention in which inputs ``x`` enter only through differences (TE-TNP).

    Per head, the logit of query ``i`` for key ``j`` is an MLP of
    ``[x_i - x_j, q_i·k_j / sqrt(d_head)]`` (all heads' dot products in, one logit
    per head out), so shifting every location by the same vector changes nothing.
    Cost and memory ``O(M N)`` for ``M`` queries and ``N`` keys.

    Args:
        d_model, n_heads: as for :class:`MultiHeadAttention`.
        x_dim: dimension of the locations.
        d_hidden: hidden width of the logit MLP (default ``d_model``).
        update_locations: also return updated query locations
            ``x_i + mean_j (x_i - x_j) * phi(a_ij)`` (``phi``: linear map of the
            per-head attention weights), which stay equivariant.
        activation: the logit MLP's nonlinearity, a module class (one of
            :data:`npbandit.surrogates.layers.ACTIVATIONS`' values).
    """

    def __init__(self, d_model: int, n_heads: int, x_dim: int, d_hidden: int | None = None,
                 update_locations: bool = False, activation: type[nn.Module] = nn.ReLU) -> None:
        super().__init__(d_model, n_heads)
        d_hidden = d_model if d_hidden is None else d_hidden
        self.kernel = nn.Sequential(nn.Linear(x_dim + n_heads, d_hidden), activation(),
                                    nn.Linear(d_hidden, d_hidden), activation(), nn.Linear(d_hidden, n_heads))
        self.phi = nn.Linear(n_heads, 1) if update_locations else None

    def forward(self, query: Tensor, memory: Tensor, mask: Tensor | None = None, *, x_query: Tensor,
                x_memory: Tensor):
        """``query [B, M, D]``, ``memory [B, N, D]``, ``x_query [B, M, dx]``, ``x_memory [B, N, dx]``
        -> ``[B, M, D]`` (and ``[B, M, dx]`` updated locations if ``update_locations``)."""
        return self.attend(query, *self.project_memory(memory), mask, x_query=x_query, x_memory=x_memory)

    def attend(self, query: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None, *,
               x_query: Tensor, x_memory: Tensor):
        """:meth:`forward` with the memory already projected by :meth:`project_memory`
        (``keys``, ``values`` ``[B, H, N, d_head]``)."""
        if keys.shape[-2] == 0:
            out = self.to_out(query.new_zeros(query.shape[:-1] + (self.n_heads * self.d_head,)))
            return out if self.phi is None else (out, x_query)
        q = self.project_queries(query)
        k, v = keys, values
        dots = ((q @ k.transpose(-2, -1)) * self.scale).permute(0, 2, 3, 1)  # [B, M, N, H]
        diff = x_query.unsqueeze(-2) - x_memory.unsqueeze(-3)  # [B, M, N, dx]
        logits = self.kernel(torch.cat([diff, dots], dim=-1)).permute(0, 3, 1, 2)  # [B, H, M, N]
        if mask is not None:
            logits = logits.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(logits, dim=-1)
        out = self.to_out(self._merge_heads(weights @ v))
        if self.phi is None:
            return out
        step = (diff * self.phi(weights.permute(0, 2, 3, 1))).mean(dim=-2)
        return out, x_query + step


class StreamingCrossAttentionBlock(nn.Module):
    """:class:`AttentionBlock` for fixed queries reading a memory that only grows.

    The memory is folded into a :class:`SoftmaxState` by a :class:`StreamingReader`
    (cost proportional to the new tokens only); :meth:`read` turns the state into
    the block's output. Reading the state after absorbing ``A`` then ``B`` equals
    the block applied to ``A ∪ B`` at once, up to rounding.

    Args:
        d_model, n_heads, d_ff: as for :class:`AttentionBlock`.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.memory_norm = nn.LayerNorm(d_model)
        self.attention = MultiHeadAttention(d_model, n_heads)
        self.ff_norm = nn.LayerNorm(d_model)
        self.ff = FeedForward(d_model, d_ff)

    def scaled_queries(self, queries: Tensor) -> Tensor:
        """Per-head queries ``[..., H, L, d_head]``, pre-multiplied by ``d_head^-1/2``."""
        return self.attention.project_queries(self.norm(queries)) * self.attention.scale

    def memory_projection(self) -> tuple[Tensor, Tensor]:
        """``(weight [2D, D], bias [2D])`` mapping a *standardised* memory token
        (LayerNorm without affine) to its ``[key | value]``: the memory norm's
        affine folded into ``to_kv``, so blocks reading one memory share a matmul."""
        w = self.attention.to_kv.weight
        return w * self.memory_norm.weight, w @ self.memory_norm.bias

    def read(self, state: SoftmaxState | None, queries: Tensor) -> Tensor:
        """Block output for ``queries`` ``[1 or B, L, D]`` given everything absorbed:
        ``[B, L, D]`` (``[1, L, D]`` while ``state`` is ``None``)."""
        x = queries + self.attention.read_state(state, queries)
        return x + self.ff(self.ff_norm(x))


@dataclass(frozen=True)
class StreamingReader:
    """``G`` :class:`StreamingCrossAttentionBlock` s with fixed queries reading *one*
    growing memory, folded in with a single projection for all of them.

    Holds tensors derived from the blocks' weights (gradients flow through them);
    build it with :meth:`from_blocks` and rebuild after the weights change. The
    state it produces is stacked over blocks: ``log_norm [G, B, H, L, 1]``,
    ``mean_value [G, B, H, L, d_head]``; :meth:`select` takes block ``g``'s part.

    Attributes:
        queries: ``[G, 1, H, L, d_head]`` scaled per-head queries.
        weight: ``[G * 2 * D, D]``; bias: ``[G * 2 * D]`` (see
            :meth:`StreamingCrossAttentionBlock.memory_projection`).
    """

    queries: Tensor
    weight: Tensor
    bias: Tensor
    eps: float

    @classmethod
    def from_blocks(cls, blocks: list[StreamingCrossAttentionBlock], queries: list[Tensor]) -> StreamingReader:
        """``queries[g]``: block ``g``'s fixed query tokens ``[L, D]`` (same ``L`` for all)."""
        eps = {b.memory_norm.eps for b in blocks}
        if len(eps) != 1:
            raise ValueError("blocks reading one memory must share the LayerNorm eps")
        projections = [b.memory_projection() for b in blocks]
        return cls(
            queries=torch.stack([b.scaled_queries(q.unsqueeze(0)) for b, q in zip(blocks, queries)]),
            weight=torch.cat([w for w, _ in projections]),
            bias=torch.cat([b for _, b in projections]),
            eps=eps.pop(),
        )

    def absorb(self, state: SoftmaxState | None, memory: Tensor) -> SoftmaxState | None:
        """Fold ``memory [B, n, D]`` (``n`` may be 0) into the stacked state."""
        if memory.shape[-2] == 0:
            return state
        n_groups, _, n_heads, _, d_head = self.queries.shape
        standard = F.layer_norm(memory, memory.shape[-1:], eps=self.eps)
        kv = F.linear(standard, self.weight, self.bias)  # [B, n, G * 2 * D]
        kv = kv.unflatten(-1, (n_groups, 2, n_heads, d_head)).permute(3, 2, 0, 4, 1, 5)
        keys, values = kv[0], kv[1]  # [G, B, H, n, d_head]
        return extend_softmax_state(state, self.queries @ keys.transpose(-2, -1), values)

    @staticmethod
    def select(state: SoftmaxState | None, group: int) -> SoftmaxState | None:
        """Block ``group``'s part of a stacked state."""
        if state is None:
            return None
        return SoftmaxState(state.log_norm[group], state.mean_value[group])
