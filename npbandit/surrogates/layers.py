"""Small building blocks shared by the surrogates: MLPs, the Gaussian head and the
latent query decoder of the latent-bottleneck models (LBANP, CMANP)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import AttentionBlock

__all__ = ["ACTIVATIONS", "mlp", "GaussianHead", "DecoderMemory", "LatentQueryDecoder"]

# The nonlinearity between an MLP's linear layers. ReLU is the papers' (and every shipped
# checkpoint's). A smooth one makes the network's mean and std smooth in its inputs: with
# ReLU they have kinks wherever a unit switches, and a gradient-based acquisition optimiser
# (L-BFGS-B in BoTorch's optimize_acqf) spends many more evaluations on a kinked surface.
ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "silu": nn.SiLU}


def mlp(d_in: int, d_hidden: int, d_out: int, depth: int, activation: str = "relu") -> nn.Sequential:
    """``depth`` linear layers with ``activation`` (a key of :data:`ACTIVATIONS`) between
    them: ``d_in -> d_hidden ... -> d_out``, acting on the last dimension
    (``[..., d_in] -> [..., d_out]``).

    Raises:
        ValueError: ``depth < 2`` or an unknown ``activation``.
    """
    if depth < 2:
        raise ValueError(f"depth must be at least 2, got {depth}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    act = ACTIVATIONS[activation]
    layers: list[nn.Module] = [nn.Linear(d_in, d_hidden), act()]
    for _ in range(depth - 2):
        layers += [nn.Linear(d_hidden, d_hidden), act()]
    layers.append(nn.Linear(d_hidden, d_out))
    return nn.Sequential(*layers)


class GaussianHead(nn.Module):
    """Maps token encodings ``[B, M, D]`` to a factorised ``Normal`` over ``[B, M, dy]``.

    ``scale = min_std + softplus(raw)``: strictly positive and without the
    overflow risk of the papers' unbounded ``exp(raw)``. The ``Normal`` is built without
    ``torch.distributions``' argument validation: its scale is positive by construction,
    and re-checking both tensors at every call was a sizeable share of an acquisition
    evaluation.

    Args:
        d_model: the width ``D`` of the encodings.
        d_hidden: the hidden width of its two-layer MLP.
        y_dim: ``dy``, outputs per token.
        min_std: the floor of the predicted std.
        activation: its MLP's nonlinearity (:func:`mlp`).
    """

    def __init__(self, d_model: int, d_hidden: int, y_dim: int, min_std: float, activation: str = "relu") -> None:
        super().__init__()
        self.net = mlp(d_model, d_hidden, 2 * y_dim, depth=2, activation=activation)
        self.min_std = min_std

    def forward(self, h: Tensor) -> Normal:
        """``h [B, M, D]`` -> ``Normal`` with ``loc``, ``scale`` ``[B, M, dy]``."""
        loc, raw = self.net(h).chunk(2, dim=-1)
        return Normal(loc, self.min_std + F.softplus(raw), validate_args=False)


@dataclass(frozen=True)
class DecoderMemory:
    """What the targets of a :class:`LatentQueryDecoder` read, projected once per context
    (:meth:`LatentQueryDecoder.memory`): per layer, the keys and values
    ``[B, H, L, d_head]`` of that layer's latents and, with a point reader, of the
    (embedded, possibly contextualised) points. None of it depends on the targets, so a
    model that predicts at many target sets from one context (an acquisition optimiser)
    projects it once instead of at every call."""

    latents: tuple[tuple[Tensor, Tensor], ...]
    points: tuple[tuple[Tensor, Tensor], ...] | None = None


class LatentQueryDecoder(nn.Module):
    """Target path of LBANP/CMANP: each target embeds its ``x`` only, then, layer
    by layer, cross-attends to that layer's latents. Targets never attend to each
    other, so they are conditionally independent given the latents.

    ``point_reader=True`` adds, after each latent read, a cross-attention to a small
    set of embedded data points (CMANP's elite memory, ``CMANPConfig.n_elite``). Its
    output layers start at zero, so a decoder with the reader computes what it did
    without one until training moves them (a trained CMANP starts a run with elites
    unchanged: :meth:`CMANP.initialise_from`).

    ``contextual_points=True`` (with the reader) also lets the points read each layer's
    latents before the targets read them, so a point's representation carries what
    the rest of the data say around it, as a TNP's context tokens do through its
    layers (the embedded points alone are only ``(x, y)``). Its output layers start at
    zero too: a decoder with them starts as the one without.

    Args:
        x_dim, y_dim: input and output dimensions.
        d_model, n_heads, d_ff: the attention blocks' width, heads and feed-forward width.
        n_layers: latent layers read, one block each (the encoder's layer count).
        emb_depth: depth of the target embedding MLP.
        min_std: the Gaussian head's std floor.
        point_reader, contextual_points: as above.
        activation: the nonlinearity of the target embedding and the head (:func:`mlp`).

    Raises:
        ValueError: ``contextual_points`` without ``point_reader``.
    """

    def __init__(self, x_dim: int, y_dim: int, d_model: int, n_heads: int, d_ff: int, n_layers: int,
                 emb_depth: int, min_std: float, *, point_reader: bool = False,
                 contextual_points: bool = False, activation: str = "relu") -> None:
        super().__init__()
        self.embed = mlp(x_dim, d_model, d_model, emb_depth, activation)
        self.layers = nn.ModuleList(
            AttentionBlock(d_model, n_heads, d_ff, separate_memory_norm=True) for _ in range(n_layers)
        )
        if contextual_points and not point_reader:
            raise ValueError("contextual_points needs point_reader=True")
        self.point_layers = self.point_context_layers = None
        if point_reader:
            self.point_layers = _zero_output_blocks(d_model, n_heads, d_ff, n_layers)
        if contextual_points:
            self.point_context_layers = _zero_output_blocks(d_model, n_heads, d_ff, n_layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = GaussianHead(d_model, d_ff, y_dim, min_std, activation)

    def forward(self, xt: Tensor, memory: DecoderMemory) -> Normal:
        """``xt [B, M, dx]`` and the context's :meth:`memory` -> ``Normal [B, M, dy]``."""
        return self.head(self.features(xt, memory))

    def memory(self, latents: Sequence[Tensor], points: Tensor | None = None) -> DecoderMemory:
        """The :class:`DecoderMemory` of one ``[B, L, D]`` latent tensor per layer and,
        with a point reader, embedded points ``[B, K, D]`` (``K >= 1``; ``None`` skips the
        reader: no data yet)."""
        if len(latents) != len(self.layers):
            raise ValueError(f"expected {len(self.layers)} latent tensors, got {len(latents)}")
        if points is not None and self.point_layers is None:
            raise ValueError("this decoder has no point reader (point_reader=False)")
        latent_kv = tuple(layer.memory_keys_values(z) for layer, z in zip(self.layers, latents))
        if points is None:
            return DecoderMemory(latent_kv)
        point_kv = []
        for g, z in enumerate(latents):
            if self.point_context_layers is not None:
                points = self.point_context_layers[g](points, z)
            point_kv.append(self.point_layers[g].memory_keys_values(points))
        return DecoderMemory(latent_kv, tuple(point_kv))

    def features(self, xt: Tensor, memory: DecoderMemory) -> Tensor:
        """The normalised target representations ``[B, M, D]`` the head reads; other
        heads (CMANP-AND's covariance factors) read them too."""
        if len(memory.latents) != len(self.layers):
            raise ValueError(f"expected memory for {len(self.layers)} layers, got {len(memory.latents)}")
        h = self.embed(xt)
        for g, (layer, latent_kv) in enumerate(zip(self.layers, memory.latents)):
            h = layer.read(h, *latent_kv)
            if memory.points is not None:
                h = self.point_layers[g].read(h, *memory.points[g])
        return self.norm(h)


def _zero_output_blocks(d_model: int, n_heads: int, d_ff: int, n_layers: int) -> nn.ModuleList:
    """Cross-attention blocks whose attention and feed-forward outputs start at zero, so
    each starts as the identity (a residual block adding nothing)."""
    blocks = nn.ModuleList(AttentionBlock(d_model, n_heads, d_ff, separate_memory_norm=True) for _ in range(n_layers))
    with torch.no_grad():
        for block in blocks:
            for last in (block.attention.to_out, block.ff[-1]):
                last.weight.zero_()
                last.bias.zero_()
    return blocks
