"""Small building blocks shared by the surrogates: MLPs, the Gaussian head and the
latent query decoder of the latent-bottleneck models (LBANP, CMANP)."""

from __future__ import annotations

from collections.abc import Sequence

import torch.nn.functional as F
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import AttentionBlock

__all__ = ["mlp", "GaussianHead", "LatentQueryDecoder"]


def mlp(d_in: int, d_hidden: int, d_out: int, depth: int) -> nn.Sequential:
    """``depth`` linear layers with ReLU between them: ``d_in -> d_hidden ... -> d_out``."""
    if depth < 2:
        raise ValueError(f"depth must be at least 2, got {depth}")
    layers: list[nn.Module] = [nn.Linear(d_in, d_hidden), nn.ReLU()]
    for _ in range(depth - 2):
        layers += [nn.Linear(d_hidden, d_hidden), nn.ReLU()]
    layers.append(nn.Linear(d_hidden, d_out))
    return nn.Sequential(*layers)


class GaussianHead(nn.Module):
    """Maps token encodings ``[B, M, D]`` to a factorised ``Normal`` over ``[B, M, dy]``.

    ``scale = min_std + softplus(raw)``: strictly positive and without the
    overflow risk of the papers' unbounded ``exp(raw)``.
    """

    def __init__(self, d_model: int, d_hidden: int, y_dim: int, min_std: float) -> None:
        super().__init__()
        self.net = mlp(d_model, d_hidden, 2 * y_dim, depth=2)
        self.min_std = min_std

    def forward(self, h: Tensor) -> Normal:
        loc, raw = self.net(h).chunk(2, dim=-1)
        return Normal(loc, self.min_std + F.softplus(raw))


class LatentQueryDecoder(nn.Module):
    """Target path of LBANP/CMANP: each target embeds its ``x`` only, then, layer
    by layer, cross-attends to that layer's latents. Targets never attend to each
    other, so they are conditionally independent given the latents."""

    def __init__(self, x_dim: int, y_dim: int, d_model: int, n_heads: int, d_ff: int, n_layers: int,
                 emb_depth: int, min_std: float) -> None:
        super().__init__()
        self.embed = mlp(x_dim, d_model, d_model, emb_depth)
        self.layers = nn.ModuleList(
            AttentionBlock(d_model, n_heads, d_ff, separate_memory_norm=True) for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.head = GaussianHead(d_model, d_ff, y_dim, min_std)

    def forward(self, xt: Tensor, latents: Sequence[Tensor]) -> Normal:
        """``xt [B, M, dx]``, one ``[B, L, D]`` latent tensor per layer -> ``Normal [B, M, dy]``."""
        return self.head(self.features(xt, latents))

    def features(self, xt: Tensor, latents: Sequence[Tensor]) -> Tensor:
        """The normalised target representations ``[B, M, D]`` the head reads; other
        heads (CMANP-AND's covariance factors) read them too."""
        if len(latents) != len(self.layers):
            raise ValueError(f"expected {len(self.layers)} latent tensors, got {len(latents)}")
        h = self.embed(xt)
        for layer, z in zip(self.layers, latents):
            h = layer(h, z)
        return self.norm(h)
