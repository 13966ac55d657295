"""ReTreever: Tree Cross Attention with a learned retrieval policy (Feng et al., 2024).

Conditioning encodes the context tokens ``[x, y]`` (a transformer encoder; 0 layers
for none) and organises them in a balanced tree:

* **Construction.** ``k = floor(log_b(N - 1))`` levels of ``b``-way k-d splits
  (``k = 0`` for ``N <= 2``) and leaf groups of ``P = ceil(N / b^k)`` slots. Each node
  splits its points at quantiles of the coordinate with the *widest spread* among
  its points (ties broken by the lowest axis index); slots beyond ``N`` are padding,
  masked everywhere. Every context point sits in exactly one leaf slot.
* **Aggregation.** Bottom-up: a leaf group's node is a masked mean of its tokens
  after one masked self-attention block; an internal node is the same over its
  ``b`` children. A node is real when any descendant is.
* **Retrieval.** A query (its ``x`` embedded) walks from the root: at each of the ``k``
  levels it attends to the ``b`` children of its node; the head-averaged attention
  weights are the action probabilities (sampled in training, argmax otherwise). The
  siblings it leaves behind join its retrieval set, and at the bottom the ``P``
  tokens of its leaf group do: ``(b - 1) k + P`` slots, ``O(b log_b N)``.
* **Readout.** The query cross-attends to its retrieval set (padding and the
  selected nodes masked), then a Gaussian head.

Training minimises ``L_TCA + λ_RL L_RL + λ_CA L_CA`` (:meth:`training_loss`):
``L_TCA`` the negative target log-likelihood of the tree readout; ``L_RL`` REINFORCE
on the path's log-probability with reward = the target's log-likelihood (detached,
minus the batch mean as a baseline) and an entropy bonus ``α``; ``L_CA`` the same
readout over *all* encoded tokens. ``full_retrieval = True`` makes prediction read
every token (plain cross-attention) for analysis. ``update`` rebuilds the tree; the
tree lives in the returned state, never in the module.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import AttentionBlock, MultiHeadAttention
from npbandit.surrogates.base import NeuralProcess, NPConfig
from npbandit.surrogates.gaussian import target_log_prob
from npbandit.surrogates.layers import GaussianHead, mlp
from npbandit.surrogates.states import ContextSetState, NPState

__all__ = ["ReTreeverConfig", "ReTreever", "Tree", "tree_shape", "build_tree_order"]


@dataclass(frozen=True)
class ReTreeverConfig(NPConfig):
    """ReTreever hyperparameters; defaults follow the paper (binary tree, λ_RL = λ_CA = 1, α = 0.01).

    ``encoder``: ``"transformer"`` (``n_layers`` self-attention blocks over the context,
    O(N²)) or ``"none"`` (the embedded tokens go straight into the tree, O(N))."""

    branching: int = 2
    rl_weight: float = 1.0
    ca_weight: float = 1.0
    entropy_bonus: float = 0.01
    encoder: str = "transformer"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.encoder not in ("transformer", "none"):
            raise ValueError(f"encoder must be 'transformer' or 'none', got {self.encoder!r}")
        if not isinstance(self.branching, int) or self.branching < 2:
            raise ValueError(f"branching must be an int >= 2, got {self.branching!r}")
        for name in ("rl_weight", "ca_weight", "entropy_bonus"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")


def tree_shape(n: int, branching: int) -> tuple[int, int]:
    """``(depth k, leaf-group size P)`` for ``n`` points: ``k = floor(log_b(n - 1))``, ``P = ceil(n / b^k)``."""
    depth = 0
    while n > 2 and branching ** (depth + 1) <= n - 1:
        depth += 1
    return depth, -(-max(n, 1) // branching**depth)


def build_tree_order(x: Tensor, branching: int) -> tuple[Tensor, Tensor, int, int]:
    """k-d ordering of ``x [B, N, dx]`` into ``b^k`` leaf groups of ``P`` slots.

    Returns ``index [B, b^k, P]`` (the context point in each slot; padding slots point
    at 0), ``real [B, b^k, P]`` (False for padding), ``k`` and ``P``.
    """
    b_size, n, _ = x.shape
    depth, leaf = tree_shape(n, branching)
    slots = leaf * branching**depth
    index = torch.arange(slots, device=x.device).expand(b_size, slots).clone()
    real = index < n
    index = torch.where(real, index, torch.zeros_like(index)).unsqueeze(1)  # [B, groups=1, slots]
    real = real.unsqueeze(1)
    for _ in range(depth):
        groups, size = index.shape[1], index.shape[2]
        pts = torch.gather(x.unsqueeze(1).expand(-1, groups, -1, -1), 2,
                           index.unsqueeze(-1).expand(-1, -1, -1, x.shape[-1]))  # [B, G, S, dx]
        big = torch.finfo(x.dtype).max
        hi = torch.where(real.unsqueeze(-1), pts, torch.full_like(pts, -big)).amax(2)
        lo = torch.where(real.unsqueeze(-1), pts, torch.full_like(pts, big)).amin(2)
        axis = (hi - lo).argmax(-1, keepdim=True)  # widest spread; lowest axis on ties
        key = torch.gather(pts, 3, axis.unsqueeze(2).expand(-1, -1, size, 1)).squeeze(-1)
        key = torch.where(real, key, torch.full_like(key, float("inf")))  # padding sorts last
        order = torch.sort(key, dim=2, stable=True).indices
        index = torch.gather(index, 2, order).reshape(b_size, groups * branching, size // branching)
        real = torch.gather(real, 2, order).reshape(b_size, groups * branching, size // branching)
    return index, real, depth, leaf


@dataclass(frozen=True)
class Tree:
    """A conditioned tree: ``leaves [B, b^k, P, D]`` with ``leaf_mask``, and per level
    ``l = 1..k`` the node embeddings ``[B, b^l, D]`` with masks (``nodes[l - 1]``) and
    the policy's keys for them ``[B, b^l, H, d_head]`` (computed once per context, so a
    query's walk only gathers and dots); ``tokens [B, N, D]`` are the encoded context
    (for full retrieval)."""

    leaves: Tensor
    leaf_mask: Tensor
    nodes: tuple[Tensor, ...]
    node_masks: tuple[Tensor, ...]
    node_keys: tuple[Tensor, ...]
    tokens: Tensor
    depth: int
    leaf_size: int


class ReTreever(NeuralProcess):
    """Tree Cross Attention NP with a learned retrieval policy (see the module docstring);
    state = context + the conditioned :class:`Tree`.

    Args:
        x_dim, y_dim: input and output dimensions.
        config: :class:`ReTreeverConfig` (paper defaults when omitted).
    """

    config_class = ReTreeverConfig
    name = "retreever"

    def __init__(self, x_dim: int, y_dim: int, config: ReTreeverConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.embed = mlp(x_dim + y_dim, c.d_model, c.d_model, c.emb_depth, c.activation)
        n_encoder = c.n_layers if c.encoder == "transformer" else 0
        self.encoder = nn.ModuleList(AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False)
                                     for _ in range(n_encoder))
        self.aggregator = AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False)
        self.query_embed = mlp(x_dim, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.policy_norm = nn.LayerNorm(c.d_model)
        self.policy = MultiHeadAttention(c.d_model, c.n_heads)
        self.readout = AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=True)
        self.norm = nn.LayerNorm(c.d_model)
        self.head = GaussianHead(c.d_model, c.d_ff, y_dim, c.min_std, c.activation)
        self.full_retrieval = False

    # -- conditioning ----------------------------------------------------------------

    def _aggregate(self, groups: Tensor, mask: Tensor) -> Tensor:
        """Masked self-attention within each group, then the masked mean: ``[B, G, S, D] -> [B, G, D]``."""
        b, g, s, d = groups.shape
        flat, flat_mask = groups.reshape(b * g, s, d), mask.reshape(b * g, s)
        pair = flat_mask.unsqueeze(-1) & flat_mask.unsqueeze(-2)
        pair = pair | torch.eye(s, dtype=torch.bool, device=mask.device)  # all-padding rows stay finite
        mixed = self.aggregator(flat, mask=pair).reshape(b, g, s, d)
        weight = mask.unsqueeze(-1).to(mixed.dtype)
        return (mixed * weight).sum(2) / weight.sum(2).clamp_min(1.0)

    def _condition(self, xc: Tensor, yc: Tensor) -> ContextSetState:
        if xc.shape[1] == 0:
            return ContextSetState(xc, yc, None)
        tokens = self.embed(torch.cat([xc, yc], dim=-1))
        for layer in self.encoder:
            tokens = layer(tokens)
        b = self.config.branching
        index, real, depth, leaf = build_tree_order(xc, b)
        batch, groups, _ = index.shape
        leaves = torch.gather(tokens.unsqueeze(1).expand(-1, groups, -1, -1), 2,
                              index.unsqueeze(-1).expand(-1, -1, -1, tokens.shape[-1]))
        nodes, masks = [], []
        level, level_mask = self._aggregate(leaves, real), real.any(-1)  # level k
        for _ in range(depth):
            nodes.append(level)
            masks.append(level_mask)
            children = level.reshape(batch, -1, b, level.shape[-1])
            child_mask = level_mask.reshape(batch, -1, b)
            level, level_mask = self._aggregate(children, child_mask), child_mask.any(-1)
        nodes, masks = tuple(reversed(nodes)), tuple(reversed(masks))
        keys = tuple(self.policy.project_memory(self.policy_norm(v))[0].transpose(1, 2) for v in nodes)
        tree = Tree(leaves, real, nodes, masks, keys, tokens, depth, leaf)
        return ContextSetState(xc, yc, tree)

    # -- retrieval -----------------------------------------------------------------------

    def retrieve(self, tree: Tree, queries: Tensor, sample: bool,
                 path_stats: bool = True) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        """Walk the tree for ``queries [B, M, D]``.

        Returns the retrieval set ``[B, M, (b - 1) k + P, D]`` (the siblings left behind
        at each of the ``k`` levels, then the leaf group), its mask (False for padding),
        and, with ``path_stats``, the log-probability of the path ``[B, M]`` and the mean
        policy entropy ``[B, M]`` (what the REINFORCE loss needs; ``None`` otherwise)."""
        b = self.config.branching
        batch, m, d = queries.shape
        device = queries.device
        node = torch.zeros(batch, m, dtype=torch.long, device=device)
        siblings, sibling_masks = [], []
        log_prob = queries.new_zeros(batch, m) if path_stats else None
        entropy = queries.new_zeros(batch, m) if path_stats else None
        q = self.policy.project_queries(self.policy_norm(queries)).transpose(1, 2) * self.policy.scale  # [B,M,H,dh]
        n_heads, d_head = q.shape[-2:]
        child_offsets = torch.arange(b, device=device)
        other_offsets = torch.arange(1, b, device=device)
        for level in range(tree.depth):
            children = node.unsqueeze(-1) * b + child_offsets  # [B, M, b]
            flat = children.reshape(batch, m * b)
            keys = torch.gather(tree.node_keys[level], 1, flat[..., None, None].expand(-1, -1, n_heads, d_head))
            mask = torch.gather(tree.node_masks[level], 1, flat).reshape(batch, m, b)
            scores = torch.einsum("bmhd,bmchd->bmhc", q, keys.reshape(batch, m, b, n_heads, d_head))
            heads = torch.softmax(scores.masked_fill(~mask.unsqueeze(2), float("-inf")), dim=-1)  # [B, M, H, b]
            probs = heads.mean(2)
            choice = torch.multinomial(probs.reshape(-1, b), 1).reshape(batch, m) if sample else probs.argmax(-1)
            if path_stats:
                log_prob = log_prob + torch.log(torch.gather(probs, 2, choice.unsqueeze(-1)).squeeze(-1) + 1e-9)
                entropy = entropy - (heads * torch.log(heads + 1e-9)).sum(-1).mean(2)
            others = (choice.unsqueeze(-1) + other_offsets) % b  # the b - 1 children not taken
            siblings.append(children.gather(2, others))
            sibling_masks.append(mask.gather(2, others))
            node = children.gather(2, choice.unsqueeze(-1)).squeeze(-1)
        kept = [torch.gather(tree.nodes[level], 1, idx.reshape(batch, -1, 1).expand(-1, -1, d))
                .reshape(batch, m, b - 1, d) for level, idx in enumerate(siblings)]
        p = tree.leaf_size
        slots = (node.unsqueeze(-1) * p + torch.arange(p, device=device)).reshape(batch, m * p)  # [B, M * P]
        kept.append(torch.gather(tree.leaves.reshape(batch, -1, d), 1, slots.unsqueeze(-1).expand(-1, -1, d))
                    .reshape(batch, m, p, d))
        sibling_masks.append(torch.gather(tree.leaf_mask.reshape(batch, -1), 1, slots).reshape(batch, m, p))
        if path_stats and tree.depth:
            entropy = entropy / tree.depth
        return torch.cat(kept, dim=2), torch.cat(sibling_masks, dim=2), log_prob, entropy

    def _read(self, queries: Tensor, memory: Tensor, mask: Tensor | None) -> Normal:
        """Cross-attend each query ``[B, M, D]`` to its own memory ``[B, M, S, D]`` (or a shared ``[B, S, D]``)."""
        batch, m, d = queries.shape
        if memory.dim() == 3:  # shared memory: plain cross-attention
            h = self.readout(queries, memory)
        else:
            flat_mask = None if mask is None else mask.reshape(batch * m, 1, -1)
            h = self.readout(queries.reshape(batch * m, 1, d), memory.reshape(batch * m, -1, d), flat_mask)
            h = h.reshape(batch, m, d)
        return self.head(self.norm(h))

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        return self._predict_with_path(state, xt, path_stats=False)[0]

    def _predict_with_path(self, state: NPState, xt: Tensor,
                           path_stats: bool = True) -> tuple[Normal, Tensor | None, Tensor | None]:
        if not isinstance(state, ContextSetState):
            raise TypeError(f"state must be a ContextSetState, got {type(state).__name__}")
        queries = self.query_embed(xt)
        tree = state.encoding
        if tree is None:  # empty context: attention over nothing, the prior
            return self._read(queries, queries.new_zeros(queries.shape[0], 0, queries.shape[-1]), None), None, None
        if self.full_retrieval:
            return self._read(queries, tree.tokens, None), None, None
        memory, mask, log_prob, entropy = self.retrieve(tree, queries, sample=self.training, path_stats=path_stats)
        return self._read(queries, memory, mask), log_prob, entropy

    def tokens_read(self, n_context: int) -> int:
        """Slots each query reads from a tree over ``n_context`` points: ``(b - 1) k + P``."""
        depth, leaf = tree_shape(n_context, self.config.branching)
        return (self.config.branching - 1) * depth + leaf

    # -- training --------------------------------------------------------------------------

    def training_loss(self, xc: Tensor, yc: Tensor, xt: Tensor, yt: Tensor, yt_var: Tensor | None = None) -> Tensor:
        """``L_TCA + λ_RL L_RL + λ_CA L_CA`` (see the module docstring); ``yt_var`` as in
        :meth:`NeuralProcess.training_loss` (every log-likelihood term becomes its expectation)."""
        self._check_task(xc, yc, xt, yt)
        c = self.config
        state = self._condition(xc, yc)
        dist, log_prob, entropy = self._predict_with_path(state, xt)
        target_ll = target_log_prob(dist, yt, yt_var).sum(-1)  # [B, M]
        loss = -target_ll.mean()
        if log_prob is not None and state.encoding is not None and state.encoding.depth > 0:
            reward = target_ll.detach()
            advantage = reward - reward.mean()
            loss = loss + c.rl_weight * (-(log_prob * advantage).mean() - c.entropy_bonus * entropy.mean())
        if state.encoding is not None and c.ca_weight > 0:
            full = self._read(self.query_embed(xt), state.encoding.tokens, None)
            loss = loss - c.ca_weight * target_log_prob(full, yt, yt_var).sum(-1).mean()
        return loss
