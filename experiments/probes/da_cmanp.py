"""Issue 49's probe of a dimension-agnostic CMANP: constant memory in the number of points, any width.

``datnp`` (:mod:`npbandit.surrogates.datnp`) reads any number of inputs by giving each cell (point
``n``, input dimension ``i``) a token, but its attention across the points of a column is a
transformer's: its state grows with ``N`` and ``update`` re-conditions. CMANP streams: fixed
latent queries read the embedded data through a running softmax, so ``update`` folds new points in
at a cost independent of ``N``. This module joins the two, as issue 49 asks ("CMANP on top, to 16+
dimensions"), and registers it as ``dacmanp`` for the probe's trainer
(``experiments/probes/dimension_agnostic.py train --model dacmanp``).

What it computes:

- a point's cells: ``embed(x_ni, y_n, flag)`` for every input ``i``, then attention across the
  point's own cells (each cell learns where the point lies along the other inputs). Nothing here
  depends on the other points, so a point's cells are final when it arrives;
- per column ``i``, the CMABs of :mod:`npbandit.surrogates.cmanp` with the columns as the batch:
  each block's learned queries read column ``i``'s cells through a
  :class:`~npbandit.surrogates.attention.SoftmaxState` (streamed), and after each block the
  columns' latents attend across the columns (latent ``k`` of every column together), so a
  column's summary hears what the others say;
- a target's cells (the same embedding with no output and the target flag, and the same
  attention across its own cells), then per layer: each cell reads its column's latents of that
  layer, and attends across the target's cells; the prediction reads the mean of its cells.

No weight depends on the width. The state holds, per column, the blocks' running softmax (``B d``
rows of ``L_B`` queries), so it is constant in ``N`` and linear in ``d``; ``update(condition(A), B)``
equals ``condition(A ∪ B)`` up to rounding (tested in ``experiments/tests``).

Train and score it with ``dimension_agnostic.py`` (``train --model dacmanp``, ``evaluate``); the cost of
one update and one prediction against ``N``, beside ``daind``'s and ``datnp``'s:
``OMP_NUM_THREADS=1 python experiments/probes/da_cmanp.py --d 8 --sizes 10 100 1000 10000`` (``datnp``
conditions with attention over all ``N d`` cells of a column pair: give it ``--sizes`` up to ``1000``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates import register_model
from npbandit.surrogates.attention import AttentionBlock, SoftmaxState, StreamingReader
from npbandit.surrogates.base import NeuralProcess, NPConfig, NPState
from npbandit.surrogates.cmanp import CMAB
from npbandit.surrogates.layers import GaussianHead, mlp

__all__ = ["DACMANPConfig", "DACMANPState", "DACMANP"]


@dataclass(frozen=True)
class DACMANPConfig(NPConfig):
    """The shared transformer fields, and CMANP's latent counts per column (``n_layers``
    CMABs, each followed by an attention across the columns' latents)."""

    n_latents: int = 16
    n_block_latents: int = 16

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("n_latents", "n_block_latents"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")


def _rows(t: Tensor | None, index: Tensor, width: int, dim: int) -> Tensor | None:
    """Rows ``b * width + i`` of ``t`` along ``dim`` for every ``b`` in ``index`` and column ``i``."""
    if t is None:
        return None
    rows = (index.unsqueeze(-1) * width + torch.arange(width, device=index.device)).flatten()
    return t.index_select(dim, rows.to(t.device))


@dataclass(frozen=True)
class DACMANPState(NPState):
    """What the model keeps of a context: no tensor grows with ``N``.

    Attributes:
        data_state: every block's running softmax over its column's cells, stacked over blocks,
            the batch and columns flattened (row ``b * width + i``); ``None`` before any point.
        reader: folds new cells into ``data_state`` (a function of the weights).
        width: the context's number of inputs ``d``.
        n_points, n_batch: points absorbed, batch size ``B``.
        latent_cache: the blocks' output latents ``[B d, L_I, D]``, computed on the first
            prediction (a function of ``data_state`` alone).
    """

    data_state: SoftmaxState | None
    reader: StreamingReader
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

    def select(self, index: Tensor) -> DACMANPState:
        data = None
        if self.data_state is not None:
            data = SoftmaxState(_rows(self.data_state.log_norm, index, self.width, 1),
                                _rows(self.data_state.mean_value, index, self.width, 1))
        return DACMANPState(data, self.reader, self.width, self.n_points, index.numel())


@register_model
class DACMANP(NeuralProcess):
    """The dimension-agnostic CMANP (see the module docstring)."""

    config_class = DACMANPConfig
    name = "dacmanp"
    any_x_dim = True

    def __init__(self, x_dim: int, y_dim: int, config: DACMANPConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.embed = mlp(2 + y_dim, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.point_mix = AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False)
        self.initial_latents = nn.Parameter(0.02 * torch.randn(c.n_latents, c.d_model))
        self.blocks = nn.ModuleList(CMAB(c.d_model, c.n_heads, c.d_ff, c.n_block_latents) for _ in range(c.n_layers))
        self.latent_mix = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers))
        self.read_latents = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=True) for _ in range(c.n_layers))
        self.target_mix = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = GaussianHead(c.d_model, c.d_ff, y_dim, c.min_std, c.activation)

    def _cells(self, x: Tensor, y: Tensor, flag: float) -> Tensor:
        """``x [B, N, d]``, ``y [B, N, dy]`` -> cells ``[B, N, d, D]``, each having attended to
        its point's others."""
        x = x.unsqueeze(-1)
        y = y.unsqueeze(2).expand(*x.shape[:3], y.shape[-1])
        h = self.embed(torch.cat([x, y, torch.full_like(x, flag)], dim=-1))
        b, n, d, width = h.shape
        return self.point_mix(h.reshape(b * n, d, width)).view(b, n, d, width)

    @staticmethod
    def _by_column(h: Tensor) -> Tensor:
        """``[B, N, d, D]`` -> ``[B d, N, D]`` (row ``b * d + i``: column ``i`` of element ``b``)."""
        b, n, d, width = h.shape
        return h.transpose(1, 2).reshape(b * d, n, width)

    def _condition(self, xc: Tensor, yc: Tensor) -> DACMANPState:
        reader = StreamingReader.from_blocks([b.read_data for b in self.blocks], [b.block_latents for b in self.blocks])
        empty = DACMANPState(None, reader, xc.shape[-1], 0, xc.shape[0])
        return self._update(empty, xc, yc)

    def _update(self, state: NPState, xu: Tensor, yu: Tensor) -> DACMANPState:
        if not isinstance(state, DACMANPState):
            raise TypeError(f"state must be a DACMANPState, got {type(state).__name__}")
        if xu.shape[-1] != state.width:
            raise ValueError(f"xu has {xu.shape[-1]} input column(s) but the context has {state.width}")
        if xu.shape[1] == 0:
            return state
        data = state.reader.absorb(state.data_state, self._by_column(self._cells(xu, yu, 0.0)))
        return DACMANPState(data, state.reader, state.width, state.n_points + xu.shape[1], state.n_batch)

    def latents(self, state: DACMANPState) -> list[Tensor]:
        """Every block's output latents ``[B d, L_I, D]``, once per state."""
        if not state.latent_cache:
            b, d = state.n_batch, state.width
            z = self.initial_latents.unsqueeze(0).expand(b * d, -1, -1)
            for g, (block, mix) in enumerate(zip(self.blocks, self.latent_mix)):
                z = block(StreamingReader.select(state.data_state, g), z)  # [B d, L_I, D]
                n_lat, width = z.shape[-2:]
                across = z.view(b, d, n_lat, width).transpose(1, 2).reshape(b * n_lat, d, width)
                z = mix(across).view(b, n_lat, d, width).transpose(1, 2).reshape(b * d, n_lat, width)
                state.latent_cache.append(z)
        return state.latent_cache

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        if not isinstance(state, DACMANPState):
            raise TypeError(f"state must be a DACMANPState, got {type(state).__name__}")
        if xt.shape[-1] != state.width:
            raise ValueError(f"xt has {xt.shape[-1]} input column(s) but the context has {state.width}")
        h = self._cells(xt, xt.new_zeros(xt.shape[:-1] + (self.y_dim,)), 1.0)
        b, m, d, width = h.shape
        for layer, z in enumerate(self.latents(state)):
            by_column = self.read_latents[layer](self._by_column(h), z.to(h))
            h = by_column.view(b, d, m, width).transpose(1, 2)
            h = self.target_mix[layer](h.reshape(b * m, d, width)).view(b, m, d, width)
        return self.head(self.norm(h.mean(2)))


def update_cost(model: str, d: int, sizes: list[int], repeats: int = 5) -> dict[int, dict[str, float]]:
    """Milliseconds to fold one point into a state holding ``N`` points and to predict 256 targets
    from it (median of ``repeats``), at width ``d``, for each ``N`` in ``sizes``: ``model`` at the
    small size with random weights (the cost does not depend on the weights), one thread, no
    gradients. A streamed model's update does not grow with ``N``; a re-conditioning one's does."""
    import statistics
    import time

    from npbandit.surrogates import build

    torch.manual_seed(0)
    net = build(model, d, 1, size="small").eval()
    out = {}
    with torch.inference_mode():
        for n in sizes:
            g = torch.Generator().manual_seed(n)
            x, y = torch.rand(1, n, d, generator=g), torch.randn(1, n, 1, generator=g)
            xu, yu, xt = torch.rand(1, 1, d, generator=g), torch.randn(1, 1, 1, generator=g), torch.rand(1, 256, d)
            state = net.condition(x, y)
            times: dict[str, list[float]] = {"update": [], "predict": []}
            for _ in range(repeats):
                start = time.perf_counter()
                new = net.update(state, xu, yu)
                mid = time.perf_counter()
                net.predict(new, xt)
                times["update"].append(1e3 * (mid - start))
                times["predict"].append(1e3 * (time.perf_counter() - mid))
            out[n] = {k: statistics.median(v) for k, v in times.items()}
    return out


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="the cost of one update and one prediction against N")
    parser.add_argument("--models", nargs="+", default=["dacmanp", "daind", "datnp"])
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    import da_inducing  # noqa: F401 - registers "daind" (this file's directory is on the path when run)

    print(f"| model | N | update (ms) | predict 256 (ms) |  (d = {args.d}, small size, one thread)")
    print("|---|---:|---:|---:|")
    for name in args.models:
        for n, row in update_cost(name, args.d, args.sizes).items():
            print(f"| {name} | {n:,} | {row['update']:.2f} | {row['predict']:.2f} |")


if __name__ == "__main__":
    main()
