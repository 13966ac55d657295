"""ReTreever: tree construction, retrieval size, masking, full retrieval, the RL loss."""

import pytest
import torch
from conftest import random_set, tiny_model

from npbandit.surrogates import ReTreever, build
from npbandit.surrogates.retreever import build_tree_order, tree_shape


@pytest.mark.parametrize("x_dim", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("n,b", [(1, 2), (2, 2), (3, 2), (7, 2), (37, 2), (64, 2), (50, 3), (100, 4)])
def test_tree_keeps_every_point_exactly_once(x_dim, n, b):
    x, _ = random_set(3, n, x_dim, seed=n)
    index, real, depth, leaf = build_tree_order(x, b)
    assert index.shape == (3, b**depth, leaf) and (depth, leaf) == tree_shape(n, b)
    for i in range(3):
        assert sorted(index[i][real[i]].tolist()) == list(range(n))


def test_first_split_is_along_the_widest_axis():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 40, 2, generator=g, dtype=torch.float64) * torch.tensor([1.0, 10.0], dtype=torch.float64)
    index, real, depth, leaf = build_tree_order(x, 2)
    half = index.shape[1] // 2
    left = x[0, index[0, :half][real[0, :half]], 1]
    right = x[0, index[0, half:][real[0, half:]], 1]
    assert left.max() <= right.min()  # axis 1 has ten times the spread


@pytest.mark.parametrize("n,b", [(8, 2), (27, 3), (16, 4), (37, 2), (50, 3)])
def test_tokens_read_per_query(n, b):
    model = tiny_model("retreever", branching=b)
    x, y = random_set(2, n, seed=n)
    xt, _ = random_set(2, 5, seed=1)
    tree = model.condition(x, y).encoding
    memory, mask, _, _ = model.retrieve(tree, model.query_embed(xt), sample=False)
    depth, leaf = tree_shape(n, b)
    assert memory.shape[2] == (b - 1) * depth + leaf  # the siblings left behind plus the leaf group
    assert model.tokens_read(n) == (b - 1) * depth + leaf
    read = mask.sum(-1)
    if leaf * b**depth == n:  # no padding anywhere: exactly (b - 1) k + P real tokens read
        assert (read == (b - 1) * depth + leaf).all()
    else:
        assert (read <= (b - 1) * depth + leaf).all() and (read >= 1).all()


def test_padding_never_receives_attention_weight():
    model = tiny_model("retreever")
    x, y = random_set(2, 37, seed=3)  # 37 points: P = 2, 32 groups, 27 padding slots
    xt, _ = random_set(2, 6, seed=4)
    state = model.condition(x, y)
    tree = state.encoding
    assert (~tree.leaf_mask).sum() > 0
    before = model.predict(state, xt)
    noisy_leaves = torch.where(tree.leaf_mask.unsqueeze(-1), tree.leaves, torch.randn_like(tree.leaves) * 100)
    noisy_nodes = tuple(torch.where(m.unsqueeze(-1), v, torch.randn_like(v) * 100)
                        for v, m in zip(tree.nodes, tree.node_masks))
    from dataclasses import replace

    poisoned = replace(state, encoding=replace(tree, leaves=noisy_leaves, nodes=noisy_nodes))
    after = model.predict(poisoned, xt)
    assert torch.allclose(before.loc, after.loc, atol=1e-10) and torch.allclose(before.scale, after.scale, atol=1e-10)


def test_full_retrieval_is_plain_cross_attention():
    model = tiny_model("retreever")
    x, y = random_set(2, 30, seed=5)
    xt, _ = random_set(2, 7, seed=6)
    state = model.condition(x, y)
    model.full_retrieval = True
    full = model.predict(state, xt)
    tokens = model.embed(torch.cat([x, y], -1))
    for layer in model.encoder:
        tokens = layer(tokens)
    q = model.query_embed(xt)
    block = model.readout
    h = q + block.attention(block.norm(q), block.memory_norm(tokens))
    h = h + block.ff(block.ff_norm(h))
    expected = model.head(model.norm(h))
    assert torch.allclose(full.loc, expected.loc, atol=1e-10) and torch.allclose(full.scale, expected.scale, atol=1e-10)
    model.full_retrieval = False
    assert not torch.allclose(model.predict(state, xt).loc, full.loc)  # the tree reads fewer tokens


def test_training_loss_trains_the_policy():
    torch.manual_seed(0)
    model = build("retreever", 1, 1, size="tiny").train()
    x, y = random_set(4, 40, 1, seed=7)
    x, y = x.float(), y.float()
    loss = model.training_loss(x[:, :30], y[:, :30], x[:, 30:], y[:, 30:])
    assert loss.dim() == 0 and torch.isfinite(loss)
    loss.backward()
    assert model.policy.to_q.weight.grad is not None and model.policy.to_q.weight.grad.abs().sum() > 0
    model.eval()
    ll = model.log_likelihood(x[:, :30], y[:, :30], x[:, 30:], y[:, 30:])
    assert torch.isfinite(ll)


def test_config_validation():
    with pytest.raises(ValueError, match="branching"):
        build("retreever", 1, 1, branching=1)
    with pytest.raises(ValueError, match="encoder"):
        build("retreever", 1, 1, encoder="lstm")
    assert len(build("retreever", 1, 1, size="tiny", encoder="none").encoder) == 0
    assert isinstance(build("retreever", 2, 1, size="tiny"), ReTreever)
