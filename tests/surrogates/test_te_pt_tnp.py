"""TE-PT-TNP: translation equivariance, and no N_c x N_c intermediate."""

import pytest
import torch
from conftest import random_set, tiny_model

from npbandit.surrogates import TEPTTNP, build
from npbandit.surrogates.attention import TranslationEquivariantAttention


@pytest.mark.parametrize("x_dim", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("update_locations,offset_range", [(False, None), (True, None), (False, 2.0)])
def test_shifting_every_input_leaves_predictions_unchanged(x_dim, update_locations, offset_range):
    model = tiny_model("te-pt-tnp", x_dim=x_dim, update_locations=update_locations, pseudo_offset_range=offset_range)
    x, y = random_set(2, 17, x_dim, seed=x_dim)
    xt, _ = random_set(2, 9, x_dim, seed=10 + x_dim)
    shift = torch.randn(1, 1, x_dim, dtype=torch.float64, generator=torch.Generator().manual_seed(x_dim)) * 5
    a = model.predict(model.condition(x, y), xt)
    b = model.predict(model.condition(x + shift, y), xt + shift)
    assert (a.loc - b.loc).abs().max() < 1e-6 and (a.scale - b.scale).abs().max() < 1e-6


def test_other_models_are_not_translation_equivariant():
    model = tiny_model("tnpd", x_dim=1)
    x, y = random_set(2, 17, 1)
    xt, _ = random_set(2, 9, 1, seed=1)
    a = model.predict(model.condition(x, y), xt)
    b = model.predict(model.condition(x + 3, y), xt + 3)
    assert (a.loc - b.loc).abs().max() > 1e-3  # the test above would notice a broken TE model


def test_te_attention_is_equivariant_on_its_own():
    torch.manual_seed(0)
    attn = TranslationEquivariantAttention(16, 4, 2, update_locations=True).double()
    q, k = torch.randn(3, 5, 16, dtype=torch.float64), torch.randn(3, 7, 16, dtype=torch.float64)
    xq, xk = torch.randn(3, 5, 2, dtype=torch.float64), torch.randn(3, 7, 2, dtype=torch.float64)
    out, new_x = attn(q, k, x_query=xq, x_memory=xk)
    out2, new_x2 = attn(q, k, x_query=xq + 2.5, x_memory=xk + 2.5)
    assert torch.allclose(out, out2, atol=1e-10) and torch.allclose(new_x + 2.5, new_x2, atol=1e-10)


class _LargestPairTensor(torch.utils._python_dispatch.TorchDispatchMode):
    """Records every shape any op produces."""

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self.shapes.append(tuple(t.shape))
        return out


def test_no_context_by_context_or_target_by_context_intermediate():
    model = tiny_model("te-pt-tnp", x_dim=1)  # M = 4 pseudo-tokens
    nc, nt = 501, 307
    x, y = random_set(1, nc, 1)
    xt, _ = random_set(1, nt, 1, seed=1)
    with torch.no_grad(), _LargestPairTensor() as probe:
        model.predict(model.condition(x, y), xt)
    pairs = [s for s in probe.shapes if sum(d in (nc, nt) for d in s) >= 2]
    assert not pairs, pairs[:5]
    assert max(torch.Size(s).numel() for s in probe.shapes) < 40 * (nc + nt) * model.config.d_model


def test_config_validation():
    with pytest.raises(ValueError, match="n_pseudo"):
        build("te-pt-tnp", 1, 1, n_pseudo=0)
    for bad in (0, -1.0, True, "2"):
        with pytest.raises(ValueError, match="pseudo_offset_range"):
            build("te-pt-tnp", 1, 1, pseudo_offset_range=bad)
    assert isinstance(build("te-pt-tnp", 2, 1, size="tiny"), TEPTTNP)


def test_pseudo_offsets_start_spread_over_the_range():
    """pseudo_offset_range=a: the offsets start evenly spaced on [-a, a] in 1-D, uniform on
    [-a, a]^d otherwise; by default 0.5 N(0, 1) (what the shipped checkpoints started from)."""
    torch.manual_seed(0)
    one = build("te-pt-tnp", 1, 1, size="tiny", n_pseudo=5, pseudo_offset_range=2.0).pseudo_offsets.detach()
    assert torch.allclose(one[:, 0], torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0]))
    many = build("te-pt-tnp", 3, 1, size="tiny", n_pseudo=400, pseudo_offset_range=1.5).pseudo_offsets.detach()
    assert many.abs().max() <= 1.5 and many.min() < -1.3 and many.max() > 1.3
    default = build("te-pt-tnp", 3, 1, size="tiny", n_pseudo=400).pseudo_offsets.detach()
    assert abs(float(default.std()) - 0.5) < 0.05
