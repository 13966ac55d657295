"""Issue 49's second probe of a streamed NP of any width: inducing points read through joint attention.

``da_cmanp.py``'s model summarises each input column on its own. A column's summary then knows how
the output varies along that input, averaged over the others, and a target cannot find the context
points close to it in every input at once: on the ``bo`` prior at d >= 2 it stayed at the N(0, 1)
baseline (experiments/log/results.md). A GP's kernel is a product over inputs, so the log of its
similarity is a sum over inputs. This model attends with logits summed over the inputs of two points
and keeps the values per input, and it streams the context into a fixed set of inducing points.
Registered as ``daind`` for ``dimension_agnostic.py``.

What it computes:

- cells: ``embed(x_ni, y_n, flag)`` per input ``i`` of each point, then attention across the point's
  own cells (as ``datnp``, ``da_cmanp``); inducing points get cells the same way (no output, their
  own flag);
- joint attention (:class:`JointAttention`) from points ``a`` to points ``b``: per head, the logit
  is ``sum_i q_ai . k_bi`` (scaled) plus a distance term ``-|x_a - x_b|^2 / (2 d s_h^2)`` with a
  learned length scale ``s_h`` per head (an RBF kernel's logarithm, so attention starts local
  rather than uniform), one softmax over ``b``, and cell ``(a, i)`` receives ``sum_b w_ab v_bi``
  -- each input keeps its own value;
- the inducing points: ``L`` fixed locations in ``[0, 1]^d`` (a scrambled Sobol design with a fixed
  seed per ``d``, so one network serves any ``d``); they read the context by joint attention,
  folded in through a :class:`~npbandit.surrogates.attention.SoftmaxState` (streamed: ``update``
  costs the same whatever ``N``); then ``n_layers`` of joint self-attention among them and
  attention across each one's cells;
- a target: its cells read the inducing points by joint attention, then attend across themselves,
  ``n_layers`` times; the prediction reads the mean of its cells.

No weight depends on the width. Permuting the inputs permutes the cells, but not the Sobol design the
inducing points sit on, so the model is equivariant to it only as far as the design is. The state is
the inducing points' running softmax (``L`` rows of ``d`` values per head), constant in ``N``;
``update(condition(A), B)`` equals ``condition(A ∪ B)`` up to rounding (tested in ``experiments/tests``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates import register_model
from npbandit.surrogates.attention import AttentionBlock, FeedForward, SoftmaxState, extend_softmax_state
from npbandit.surrogates.base import NeuralProcess, NPConfig, NPState
from npbandit.surrogates.layers import GaussianHead, mlp

__all__ = ["DAInducingConfig", "JointAttention", "DAInducingState", "DAInducing"]


@dataclass(frozen=True)
class DAInducingConfig(NPConfig):
    """The shared transformer fields and the number of inducing points ``L``."""

    n_inducing: int = 64

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.n_inducing, int) or isinstance(self.n_inducing, bool) or self.n_inducing < 1:
            raise ValueError(f"n_inducing must be a positive int, got {self.n_inducing!r}")


class JointAttention(nn.Module):
    """Pre-norm residual attention between points given as cells ``[B, P, d, D]``: logits summed
    over the ``d`` inputs, values kept per input, then a feed-forward layer per cell."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.norm, self.memory_norm, self.ff_norm = nn.LayerNorm(d_model), nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.to_q = nn.Linear(d_model, d_model, bias=False)
        self.to_kv = nn.Linear(d_model, 2 * d_model, bias=False)
        self.to_out = nn.Linear(d_model, d_model)
        self.ff = FeedForward(d_model, d_ff)
        # per head, the log of a length scale s_h in units of the cube's side (the logit's distance term
        # is -|x_a - x_b|^2 / (2 d s_h^2), so a length scale grows as sqrt(d), as the bo prior's do);
        # spread from 0.05 to 0.5 at the start, the prior's range
        self.log_scale = nn.Parameter(torch.linspace(math.log(0.05), math.log(0.5), n_heads))

    def distance(self, xa: Tensor, xb: Tensor) -> Tensor:
        """The logits' distance term ``[B, H, P, N]`` of locations ``xa [B or 1, P, d]`` and ``xb
        [B or 1, N, d]``: ``-|x_a - x_b|^2 / (2 d s_h^2)`` per head."""
        sq = (xa.unsqueeze(-2) - xb.unsqueeze(-3)).pow(2).sum(-1).unsqueeze(1)  # [B, 1, P, N]
        return -sq * torch.exp(-2 * self.log_scale).view(-1, 1, 1) / (2 * xa.shape[-1])

    def _heads(self, t: Tensor) -> Tensor:
        """``[B, P, d, H dh]`` -> ``[B, H, P, d, dh]``."""
        return t.unflatten(-1, (self.n_heads, self.d_head)).permute(0, 3, 1, 2, 4)

    def queries(self, x: Tensor) -> Tensor:
        """Per-head queries of cells ``x [B, P, d, D]``, scaled: ``[B, H, P, d, dh]``."""
        return self._heads(self.to_q(self.norm(x))) * (self.d_head * x.shape[2]) ** -0.5

    def keys_values(self, memory: Tensor) -> tuple[Tensor, Tensor]:
        """Per-head keys and values of cells ``memory [B, N, d, D]``: ``[B, H, N, d, dh]`` each."""
        k, v = self.to_kv(self.memory_norm(memory)).chunk(2, dim=-1)
        return self._heads(k), self._heads(v)

    @staticmethod
    def scores(q: Tensor, k: Tensor) -> Tensor:
        """Logits ``[B, H, P, N]``: ``sum_i q_pi . k_ni``."""
        return torch.einsum("bhpid,bhnid->bhpn", q, k)

    def finish(self, x: Tensor, attended: Tensor) -> Tensor:
        """``x [B, P, d, D]`` plus the attended values ``[B, H, P, d, dh]``, then the feed-forward layer."""
        x = x + self.to_out(attended.permute(0, 2, 3, 1, 4).flatten(-2))
        return x + self.ff(self.ff_norm(x))

    def forward(self, x: Tensor, memory: Tensor, xa: Tensor, xb: Tensor) -> Tensor:
        """Cells ``x [B, P, d, D]`` at locations ``xa [B or 1, P, d]`` attending to the points of
        ``memory [B, N, d, D]`` at ``xb`` (``N >= 1``)."""
        k, v = self.keys_values(memory)
        weights = torch.softmax(self.scores(self.queries(x), k) + self.distance(xa, xb).to(k), dim=-1)
        return self.finish(x, torch.einsum("bhpn,bhnid->bhpid", weights, v))


def inducing_locations(n: int, d: int) -> Tensor:
    """``n`` points of a scrambled Sobol design in ``[0, 1]^d`` with a fixed seed: ``[n, d]``."""
    return torch.quasirandom.SobolEngine(d, scramble=True, seed=0).draw(n)


@dataclass(frozen=True)
class DAInducingState(NPState):
    """The inducing points' running joint attention over the context (``None`` before any
    point; ``log_norm [B, H, L, 1]``, ``mean_value [B, H, L, d dh]``), the width ``d``, the
    points absorbed, the batch size, and the inducing cells after the latent layers
    (computed on the first prediction)."""

    data_state: SoftmaxState | None
    width: int
    n_points: int
    n_batch: int
    latent_cache: list = field(default_factory=list, compare=False, repr=False)

    @property
    def batch_size(self) -> int:
        return self.n_batch

    @property
    def num_points(self) -> int:
        return self.n_points

    def select(self, index: Tensor) -> DAInducingState:
        data = None
        if self.data_state is not None:
            data = SoftmaxState(self.data_state.log_norm.index_select(0, index),
                                self.data_state.mean_value.index_select(0, index))
        return DAInducingState(data, self.width, self.n_points, index.numel())


@register_model
class DAInducing(NeuralProcess):
    """The inducing-point NP of any width (see the module docstring)."""

    config_class = DAInducingConfig
    name = "daind"
    any_x_dim = True

    def __init__(self, x_dim: int, y_dim: int, config: DAInducingConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.embed = mlp(2 + y_dim, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.point_mix = AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False)
        self.read_data = JointAttention(c.d_model, c.n_heads, c.d_ff)
        self.latent_self = nn.ModuleList(JointAttention(c.d_model, c.n_heads, c.d_ff) for _ in range(c.n_layers))
        self.latent_mix = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers))
        self.read_latents = nn.ModuleList(JointAttention(c.d_model, c.n_heads, c.d_ff) for _ in range(c.n_layers))
        self.target_mix = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = GaussianHead(c.d_model, c.d_ff, y_dim, c.min_std, c.activation)

    def _cells(self, x: Tensor, y: Tensor | None, flag: float) -> Tensor:
        """``x [B, N, d]`` (``y [B, N, dy]``, or none: zeros) -> cells ``[B, N, d, D]``, each having
        attended to its point's others."""
        y = x.new_zeros(x.shape[:-1] + (self.y_dim,)) if y is None else y
        x = x.unsqueeze(-1)
        h = self.embed(torch.cat([x, y.unsqueeze(2).expand(*x.shape[:3], y.shape[-1]), torch.full_like(x, flag)], -1))
        b, n, d, width = h.shape
        return self.point_mix(h.reshape(b * n, d, width)).view(b, n, d, width)

    def _locations(self, d: int, like: Tensor) -> Tensor:
        """The inducing points' locations ``[1, L, d]`` in ``like``'s dtype and device."""
        return inducing_locations(self.config.n_inducing, d).to(like).unsqueeze(0)

    def _inducing_cells(self, u: Tensor, batch: int) -> Tensor:
        """The inducing points' cells at locations ``u [1, L, d]`` before reading the data:
        ``[batch, L, d, D]``."""
        return self._cells(u, None, 2.0).expand(batch, -1, -1, -1)

    def _condition(self, xc: Tensor, yc: Tensor) -> DAInducingState:
        return self._update(DAInducingState(None, xc.shape[-1], 0, xc.shape[0]), xc, yc)

    def _update(self, state: NPState, xu: Tensor, yu: Tensor) -> DAInducingState:
        if not isinstance(state, DAInducingState):
            raise TypeError(f"state must be a DAInducingState, got {type(state).__name__}")
        if xu.shape[-1] != state.width:
            raise ValueError(f"xu has {xu.shape[-1]} input column(s) but the context has {state.width}")
        if xu.shape[1] == 0:
            return state
        u = self._locations(state.width, xu)
        q = self.read_data.queries(self._inducing_cells(u, 1))  # [1, H, L, d, dh]
        k, v = self.read_data.keys_values(self._cells(xu, yu, 0.0))  # [B, H, n, d, dh]
        scores = torch.einsum("hlid,bhnid->bhln", q[0], k) + self.read_data.distance(u, xu)
        data = extend_softmax_state(state.data_state, scores, v.flatten(-2))
        return DAInducingState(data, state.width, state.n_points + xu.shape[1], state.n_batch)

    def latents(self, state: DAInducingState, like: Tensor) -> list[Tensor]:
        """The inducing cells after each latent layer, ``[B, L, d, D]`` each, once per state."""
        if not state.latent_cache:
            b, d = state.n_batch, state.width
            u = self._locations(d, like)
            z = self._inducing_cells(u, b)
            if state.data_state is not None:
                attended = state.data_state.mean_value.unflatten(-1, (d, -1))  # [B, H, L, d, dh]
                z = self.read_data.finish(z, attended)
            for joint, mix in zip(self.latent_self, self.latent_mix):
                z = joint(z, z, u, u)
                n_lat, width = z.shape[1], z.shape[-1]
                z = mix(z.reshape(b * n_lat, d, width)).view(b, n_lat, d, width)
                state.latent_cache.append(z)
        return state.latent_cache

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        if not isinstance(state, DAInducingState):
            raise TypeError(f"state must be a DAInducingState, got {type(state).__name__}")
        if xt.shape[-1] != state.width:
            raise ValueError(f"xt has {xt.shape[-1]} input column(s) but the context has {state.width}")
        h = self._cells(xt, None, 1.0)
        b, m, d, width = h.shape
        u = self._locations(d, xt)
        for layer, z in enumerate(self.latents(state, xt)):
            h = self.read_latents[layer](h, z, xt, u)
            h = self.target_mix[layer](h.reshape(b * m, d, width)).view(b, m, d, width)
        return self.head(self.norm(h.mean(2)))
