"""CMANP's fused inference path (npbandit/surrogates/fused.py) computes what the modules compute."""

import pytest
import torch
from conftest import random_set, tiny_model

from npbandit.surrogates import build
from npbandit.surrogates.fused import FusedCMANP

TOL = 1e-10  # float64: the fused sums are associated differently, nothing else


def trained_looking(name="cmanp", y_dim=1, **config):
    """A tiny float64 model whose LayerNorm affines are not the identity (as after training),
    so folding them into the linear maps is exercised."""
    model = tiny_model(name, y_dim=y_dim, **config)
    g = torch.Generator().manual_seed(1)
    with torch.inference_mode():
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.copy_(1 + 0.3 * torch.randn(module.weight.shape, generator=g, dtype=torch.float64))
                module.bias.copy_(0.3 * torch.randn(module.bias.shape, generator=g, dtype=torch.float64))
    return model


def close(a, b, tol=TOL) -> None:
    assert (a - b).abs().max().item() < tol


@pytest.mark.parametrize("batch,n_targets,n_heads", [(1, 1, 1), (1, 1, 2), (3, 7, 1), (3, 7, 2)])
def test_fused_predictions_equal_the_modules(batch, n_targets, n_heads):
    model = trained_looking(y_dim=3, n_heads=n_heads)
    x, y = random_set(batch, 25, y_dim=3, seed=2)
    xt, _ = random_set(batch, n_targets, seed=3)
    reference = model.condition(x, y)  # autograd on: the modules
    with torch.inference_mode():
        state = model.condition(x, y)
        assert reference.fused is None and isinstance(state.fused, FusedCMANP)
        for a, b in zip(model.latents(state), model.latents(reference), strict=True):
            close(a, b)
        fused, modules = model.predict(state, xt), model.predict(reference, xt)
        close(fused.loc, modules.loc)
        close(fused.scale, modules.scale)
        close(model.features(state, xt), model.features(reference, xt))


@pytest.mark.parametrize("batch", [1, 2])
def test_the_fused_state_streams_and_selects(batch):
    # update and select hand the derived weights on; the streamed state predicts as the
    # modules do on the whole context
    model = trained_looking()
    x, y = random_set(batch, 12, seed=4)
    xt, _ = random_set(batch, 5, seed=5)
    with torch.inference_mode():
        state = model.condition(x[:, :0], y[:, :0])
        for i in range(12):
            state = model.update(state, x[:, i:i + 1], y[:, i:i + 1])
        assert state.fused is not None
        streamed = model.predict(state, xt).loc
        one = state.select(torch.tensor([batch - 1]))
        assert one.fused is state.fused
        close(model.predict(one, xt[batch - 1:]).loc, streamed[batch - 1:])
    close(streamed, model.predict(model.condition(x, y), xt).loc)
    # the fused fold of one point at a time (logaddexp, lerp) keeps the reader's data state
    modules = model.condition(x, y).data_state  # autograd on: the modules fold all 12 at once
    close(state.data_state.log_norm, modules.log_norm)
    close(state.data_state.mean_value, modules.mean_value)


def test_outside_inference_mode_the_modules_run():
    # an acquisition's gradient (a state built without autograd, as BoTorch conditions a model,
    # predictions with it on) and a prediction without autograd: the modules' arithmetic, bit for bit
    model = trained_looking()
    x, y = random_set(1, 10, seed=6)
    with torch.no_grad():
        state = model.condition(x, y)
    assert state.fused is None
    xt = torch.rand(1, 4, 2, dtype=torch.float64, requires_grad=True)
    model.predict(state, xt).loc.sum().backward()
    assert xt.grad is not None and xt.grad.abs().sum() > 0
    reference = model.condition(x, y)
    with torch.no_grad():
        assert torch.equal(model.predict(state, xt).loc, model.predict(reference, xt).loc)
    with torch.inference_mode():
        built = model.condition(x, y)
    fused = built.fused
    assert not any(t.requires_grad for t in (fused.initial_latents, fused.block_read[0], fused.absorb_map[0]))


def test_an_elite_memory_reads_its_points_through_the_modules():
    model = trained_looking(n_elite=3, elite_context=True)
    for block in (*model.decoder.point_layers, *model.decoder.point_context_layers):  # as if trained
        torch.nn.init.normal_(block.attention.to_out.weight, std=0.2)
    x, y = random_set(2, 15, seed=7)
    xt, _ = random_set(2, 4, seed=8)
    reference = model.condition(x, y)
    with torch.inference_mode():
        state = model.condition(x, y)
        fused, modules = model.predict(state, xt), model.predict(reference, xt)
    close(fused.loc, modules.loc)
    close(fused.scale, modules.scale)


def test_cmanp_and_features_equal_the_modules():
    model = tiny_model("cmanp-and", y_dim=2)
    x, y = random_set(2, 9, y_dim=2, seed=9)
    xt, _ = random_set(2, 3, seed=10)
    reference = model.condition(x, y)
    with torch.inference_mode():
        state = model.condition(x, y)
        close(model.joint(state, xt).loc, model.joint(reference, xt).loc)
        close(model.joint(state, xt).cov_factor, model.joint(reference, xt).cov_factor)


def test_float32_predictions_equal_the_modules_to_float32_rounding():
    torch.manual_seed(0)
    model = build("cmanp", 2, 5, size="tiny").eval()
    x = torch.rand(1, 40, 2) * 2 - 1
    y = torch.randn(1, 40, 5)
    xt = torch.rand(1, 1, 2)
    reference = model.predict(model.condition(x, y), xt)
    with torch.inference_mode():
        fused = model.predict(model.condition(x, y), xt)
    close(fused.loc, reference.loc, 1e-5)
    close(fused.scale, reference.scale, 1e-5)


def test_the_derived_weights_are_reused_until_a_weight_changes():
    model = trained_looking()
    x, y = random_set(1, 6, seed=11)
    xt, _ = random_set(1, 3, seed=12)
    with torch.inference_mode():
        first = model.condition(x, y)
        assert model.condition(x, y).fused is first.fused  # built once for many conditionings
        model.decoder.head.net[2].bias.add_(1.0)  # in place, as an optimiser step or load_state_dict
        changed = model.condition(x, y)
        assert changed.fused is not first.fused
        fused = model.predict(changed, xt).loc
    close(fused, model.predict(model.condition(x, y), xt).loc)
    model.float()  # replaced, as .to does
    with torch.inference_mode():
        assert model.condition(x.float(), y.float()).fused.initial_latents.dtype == torch.float32


def test_a_forward_hook_sees_the_calls_it_always_saw():
    model = trained_looking()
    x, y = random_set(1, 8, seed=13)
    xt, _ = random_set(1, 3, seed=14)
    seen = []
    model.decoder.register_forward_hook(lambda module, inputs, output: seen.append(inputs[0].shape[1]))
    model.blocks[0].register_forward_hook(lambda module, inputs, output: seen.append("block"))
    with torch.inference_mode():
        model.predict(model.condition(x, y), xt)
    assert seen == ["block", 3]
