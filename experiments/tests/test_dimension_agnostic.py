"""The dimension-agnostic probe family (experiments/probes/dimension_agnostic.py): what its design
promises, on a tiny untrained model in float64."""

import pytest
import torch

from .helpers import load_script

pytestmark = pytest.mark.lab


def _build(x_dim):
    probe = load_script("probes", "dimension_agnostic")
    torch.manual_seed(0)
    config = probe.DATNPConfig(d_model=16, n_heads=2, d_ff=16, n_layers=2, emb_depth=2)
    return probe.DATNP(x_dim, 1, config).double().eval()


@pytest.fixture
def model(keep_registries):
    return _build(16)


def _pad(x, width=16):
    return torch.cat([x, x.new_zeros(*x.shape[:-1], width - x.shape[-1])], dim=-1)


def test_predictions_are_equivariant_to_the_input_order_and_blind_to_padding(model):
    g = torch.Generator().manual_seed(1)
    xc = torch.rand(2, 9, 5, generator=g, dtype=torch.float64)
    yc = torch.randn(2, 9, 1, generator=g, dtype=torch.float64)
    xt = torch.rand(2, 4, 5, generator=g, dtype=torch.float64)
    base = model.predict(model.condition(_pad(xc), yc), _pad(xt))
    perm = torch.tensor([3, 0, 4, 1, 2])
    permuted = model.predict(model.condition(_pad(xc[..., perm]), yc), _pad(xt[..., perm]))
    torch.testing.assert_close(permuted.mean, base.mean, rtol=0, atol=1e-12)
    torch.testing.assert_close(permuted.stddev, base.stddev, rtol=0, atol=1e-12)
    # the padding columns are dropped: the same weights built 5 inputs wide answer alike
    five = _build(5)
    five.load_state_dict(model.state_dict())
    narrow = five.predict(five.condition(xc, yc), xt)
    torch.testing.assert_close(narrow.mean, base.mean, rtol=0, atol=1e-12)
    # context order and the other targets do not matter
    order = torch.randperm(9, generator=g)
    torch.testing.assert_close(model.predict(model.condition(_pad(xc[:, order]), yc[:, order]), _pad(xt)).mean,
                               base.mean, rtol=0, atol=1e-12)
    torch.testing.assert_close(model.predict(model.condition(_pad(xc), yc), _pad(xt[:, :1])).mean, base.mean[:, :1],
                               rtol=0, atol=1e-12)


def test_the_same_weights_read_any_number_of_inputs_and_an_empty_context(model):
    g = torch.Generator().manual_seed(2)
    for d in (1, 7, 16):
        xc = torch.rand(1, 6, d, generator=g, dtype=torch.float64)
        state = model.condition(_pad(xc), torch.randn(1, 6, 1, generator=g, dtype=torch.float64))
        assert state.encoding.columns.tolist() == list(range(d))
        out = model.predict(state, _pad(torch.rand(1, 3, d, generator=g, dtype=torch.float64)))
        assert out.mean.shape == (1, 3, 1) and bool(torch.isfinite(out.stddev).all())
    empty = model.predict(model.condition(torch.zeros(1, 0, 16, dtype=torch.float64), torch.zeros(1, 0, 1,
                                                                                                   dtype=torch.float64)),
                          torch.rand(1, 2, 16, generator=g, dtype=torch.float64))
    assert empty.mean.shape == (1, 2, 1)
    # an empty context reads the targets' own columns: padding is dropped there too
    xt = torch.rand(1, 2, 5, generator=g, dtype=torch.float64)
    five = _build(5)
    five.load_state_dict(model.state_dict())
    none16 = model.predict(model.condition(torch.zeros(1, 0, 16, dtype=torch.float64),
                                           torch.zeros(1, 0, 1, dtype=torch.float64)), _pad(xt))
    none5 = five.predict(five.condition(torch.zeros(1, 0, 5, dtype=torch.float64),
                                        torch.zeros(1, 0, 1, dtype=torch.float64)), xt)
    torch.testing.assert_close(none16.mean, none5.mean, rtol=0, atol=1e-12)
