"""DATNP, the dimension-agnostic NP: what its design promises, on a tiny untrained model in float64."""

import pytest
import torch
from conftest import tiny_model

from npbandit.surrogates import DATNP


def _data(seed, n, m, d, batch=2):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(batch, n, d, generator=g, dtype=torch.float64),
            torch.randn(batch, n, 1, generator=g, dtype=torch.float64),
            torch.rand(batch, m, d, generator=g, dtype=torch.float64))


def test_predictions_are_equivariant_to_the_input_order():
    model = tiny_model("datnp", x_dim=16)
    xc, yc, xt = _data(1, 9, 4, 5)
    base = model.predict(model.condition(xc, yc), xt)
    perm = torch.tensor([3, 0, 4, 1, 2])
    permuted = model.predict(model.condition(xc[..., perm], yc), xt[..., perm])
    torch.testing.assert_close(permuted.mean, base.mean, rtol=0, atol=1e-12)
    torch.testing.assert_close(permuted.stddev, base.stddev, rtol=0, atol=1e-12)
    # the context's order and the other targets do not matter either
    order = torch.randperm(9, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(model.predict(model.condition(xc[:, order], yc[:, order]), xt).mean, base.mean,
                               rtol=0, atol=1e-12)
    torch.testing.assert_close(model.predict(model.condition(xc, yc), xt[:, :1]).mean, base.mean[:, :1],
                               rtol=0, atol=1e-12)


def test_one_set_of_weights_reads_any_width_and_an_empty_context():
    model = tiny_model("datnp", x_dim=16)
    assert isinstance(model, DATNP) and model.any_x_dim
    narrow = tiny_model("datnp", x_dim=3)  # the width it is built for changes no weight
    narrow.load_state_dict(model.state_dict())
    for d in (1, 7, 20):  # 20: wider than it was built for
        xc, yc, xt = _data(2, 6, 3, d, batch=1)
        out = model.predict(model.condition(xc, yc), xt)
        assert out.mean.shape == (1, 3, 1) and bool(torch.isfinite(out.stddev).all())
        torch.testing.assert_close(narrow.predict(narrow.condition(xc, yc), xt).mean, out.mean, rtol=0, atol=0)
    empty = model.condition(torch.zeros(1, 0, 5, dtype=torch.float64), torch.zeros(1, 0, 1, dtype=torch.float64))
    assert model.predict(empty, torch.rand(1, 2, 5, dtype=torch.float64)).mean.shape == (1, 2, 1)


def test_a_zero_column_is_read_as_an_input():
    # no column is taken for padding: a context whose points all sit at 0 in one input still
    # tells the model how far a target at 0.9 in that input is from them
    model = tiny_model("datnp", x_dim=4)
    xc, yc, xt = _data(3, 8, 2, 3)
    xc[..., 2] = 0.0
    at_data = model.predict(model.condition(xc, yc), torch.cat([xt[..., :2], xt.new_zeros(2, 2, 1)], -1)).mean
    away = model.predict(model.condition(xc, yc), torch.cat([xt[..., :2], xt.new_full((2, 2, 1), 0.9)], -1)).mean
    assert not torch.allclose(at_data, away)


def test_a_task_scored_with_targets_of_another_width_or_batch_is_refused():
    model = tiny_model("datnp", x_dim=4)
    xc, yc, _ = _data(4, 5, 3, 3)
    xt, yt = torch.rand(2, 4, 4, dtype=torch.float64), torch.randn(2, 4, 1, dtype=torch.float64)
    for score in (model.log_likelihood, model.joint_log_likelihood, model.training_loss):
        with pytest.raises(ValueError, match="xt has 4 input column"):
            score(xc, yc, xt, yt)
    # 4 tasks of 2 columns and 2 of 4 both make 8 columns of cells: refused, not mixed
    wide, narrow = _data(5, 5, 3, 2, batch=4), _data(6, 4, 3, 4)
    with pytest.raises(ValueError, match="xt has batch size 2 but xc has batch size 4"):
        model.training_loss(wide[0], wide[1], narrow[0], narrow[1][:, :4], torch.ones(2, 4, 1, dtype=torch.float64))


def test_a_network_of_any_width_starts_from_one_built_for_another_width():
    narrow, wide = tiny_model("datnp", x_dim=8), tiny_model("datnp", x_dim=16, seed=1)
    wide.initialise_from(narrow)
    for (k, p), q in zip(narrow.state_dict().items(), wide.state_dict().values()):
        assert torch.equal(p, q), k
    with pytest.raises(ValueError, match="config"):  # another config is still refused
        wide.initialise_from(tiny_model("datnp", x_dim=8, n_layers=3))


@pytest.mark.parametrize("name", ["tnpd", "datnp"])
def test_a_network_starts_from_one_with_another_activation_and_keeps_its_own(name):
    relu, gelu = tiny_model(name), tiny_model(name, seed=1, activation="gelu")
    gelu.initialise_from(relu)
    for (k, p), q in zip(relu.state_dict().items(), gelu.state_dict().values()):
        assert torch.equal(p, q), k
    assert gelu.config.activation == "gelu"
    xc, yc = torch.rand(1, 5, 2, dtype=torch.float64), torch.randn(1, 5, 1, dtype=torch.float64)
    xt = torch.rand(1, 3, 2, dtype=torch.float64)
    # the same weights under another nonlinearity predict otherwise
    assert not torch.allclose(relu.predict(relu.condition(xc, yc), xt).loc,
                              gelu.predict(gelu.condition(xc, yc), xt).loc)
    with pytest.raises(ValueError, match="config"):
        gelu.initialise_from(tiny_model(name, n_layers=3))
