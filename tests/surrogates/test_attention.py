"""The shared attention module: streaming softmax state == attention over the union."""

import pytest
import torch

from npbandit.surrogates.attention import (
    AttentionBlock,
    MultiHeadAttention,
    StreamingCrossAttentionBlock,
    StreamingReader,
    TranslationEquivariantAttention,
    extend_softmax_state,
)


def reference_attention(q, k, v):
    scores = q @ k.transpose(-2, -1)
    return torch.softmax(scores, dim=-1) @ v


@pytest.mark.parametrize("splits", [[10], [1] * 10, [3, 7], [7, 1, 2], [4, 0, 6]])
def test_extend_softmax_state_matches_full_softmax(splits):
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, 3, 5, 4, generator=g, dtype=torch.float64) * 3
    k = torch.randn(2, 3, sum(splits), 4, generator=g, dtype=torch.float64) * 3
    v = torch.randn(2, 3, sum(splits), 6, generator=g, dtype=torch.float64)
    state, start = None, 0
    for n in splits:
        if n:
            scores = q @ k[..., start:start + n, :].transpose(-2, -1)
            state = extend_softmax_state(state, scores, v[..., start:start + n, :])
        start += n
    full = reference_attention(q, k, v)
    assert torch.allclose(state.mean_value, full, atol=1e-12)
    assert torch.allclose(state.log_norm, torch.logsumexp(q @ k.transpose(-2, -1), -1, keepdim=True), atol=1e-12)


def test_extend_softmax_state_is_stable_for_huge_logits():
    scores = torch.tensor([[[1000.0, 999.0]]], dtype=torch.float64)
    values = torch.tensor([[[1.0], [3.0]]], dtype=torch.float64)
    state = extend_softmax_state(None, scores[..., :1], values[..., :1, :])
    state = extend_softmax_state(state, scores[..., 1:], values[..., 1:, :])
    expected = torch.softmax(scores, -1) @ values
    assert torch.isfinite(state.mean_value).all()
    assert torch.allclose(state.mean_value, expected)


def test_streaming_reader_equals_block_over_whole_memory():
    torch.manual_seed(0)
    blocks = [StreamingCrossAttentionBlock(16, 4, 32).double() for _ in range(3)]
    queries = [torch.randn(5, 16, dtype=torch.float64) for _ in blocks]
    memory = torch.randn(2, 23, 16, dtype=torch.float64)
    reader = StreamingReader.from_blocks(blocks, queries)
    state = None
    for start in range(0, 23, 4):
        state = reader.absorb(state, memory[:, start:start + 4])
    for g, (block, q) in enumerate(zip(blocks, queries)):
        # the same block written as plain (non-streaming) pre-norm cross-attention
        x = q[None] + block.attention(block.norm(q[None]).expand(2, -1, -1), block.memory_norm(memory))
        expected = x + block.ff(block.ff_norm(x))
        got = block.read(StreamingReader.select(state, g), q[None])
        assert torch.allclose(got, expected, atol=1e-10)


def test_attention_over_empty_memory_is_zero_value():
    attn = MultiHeadAttention(8, 2)
    q = torch.randn(3, 4, 8)
    out = attn(q, torch.zeros(3, 0, 8))
    assert torch.allclose(out, attn.to_out.bias.expand(3, 4, 8))


def test_a_block_reading_projected_memory_equals_attending_to_it():
    torch.manual_seed(3)
    block = AttentionBlock(8, 2, 16, separate_memory_norm=True).double()
    x, memory = torch.randn(3, 5, 8, dtype=torch.float64), torch.randn(3, 7, 8, dtype=torch.float64)
    assert torch.equal(block.read(x, *block.memory_keys_values(memory)), block(x, memory))
    with pytest.raises(TypeError, match="MultiHeadAttention"):
        AttentionBlock(8, 2, 16, separate_memory_norm=True, attention=torch.nn.Identity()).memory_keys_values(memory)


@pytest.mark.parametrize("update_locations", [False, True])
def test_a_translation_equivariant_block_reads_projected_memory_too(update_locations):
    torch.manual_seed(5)
    attention = TranslationEquivariantAttention(8, 2, 1, update_locations=update_locations)
    block = AttentionBlock(8, 2, 16, separate_memory_norm=True, attention=attention).double()
    g = torch.Generator().manual_seed(0)
    x, memory = (torch.randn(3, n, 8, generator=g, dtype=torch.float64) for n in (5, 7))
    xq, xm = (torch.randn(3, n, 1, generator=g, dtype=torch.float64) for n in (5, 7))
    for n in (7, 0):  # an empty memory too
        read = block.read(x, *block.memory_keys_values(memory[:, :n]), x_query=xq, x_memory=xm[:, :n])
        full = block(x, memory[:, :n], x_query=xq, x_memory=xm[:, :n])
        read, full = ((r if isinstance(r, tuple) else (r,)) for r in (read, full))
        assert len(read) == len(full) == (2 if update_locations else 1)
        assert all(torch.equal(a, b) for a, b in zip(read, full))


def test_self_attention_hands_back_the_keys_and_values_a_target_reads():
    torch.manual_seed(4)
    block = AttentionBlock(8, 2, 16, separate_memory_norm=False).double()
    x, targets = torch.randn(3, 7, 8, dtype=torch.float64), torch.randn(3, 4, 8, dtype=torch.float64)
    out, keys, values = block.attend_self(x)
    assert torch.equal(out, block(x))
    assert all(torch.equal(a, b) for a, b in zip((keys, values), block.memory_keys_values(x)))
    assert torch.equal(block.read(targets, keys, values), block(targets, x))
    with pytest.raises(TypeError, match="MultiHeadAttention"):
        AttentionBlock(8, 2, 16, separate_memory_norm=False,
                       attention=TranslationEquivariantAttention(8, 2, 1)).attend_self(x)


def test_attention_rejects_heads_not_dividing_width():
    with pytest.raises(ValueError, match="n_heads"):
        MultiHeadAttention(10, 3)


def test_attention_block_mask_blocks_keys():
    torch.manual_seed(0)
    block = AttentionBlock(8, 2, 16, separate_memory_norm=True)
    x, m = torch.randn(1, 2, 8), torch.randn(1, 5, 8)
    mask = torch.tensor([[[True, True, False, False, False]] * 2])
    masked = block(x, m, mask)
    changed = m.clone()
    changed[:, 2:] = torch.randn(1, 3, 8)
    assert torch.allclose(block(x, changed, mask), masked, atol=1e-6)
    assert torch.allclose(block(x, m[:, :2]), masked, atol=1e-6)
