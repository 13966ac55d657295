"""The target paths that read a context cached in the state (TNP-D's and TE-PT-TNP's per-layer keys and
values, LBANP's decoder memory) equal the same layers applied to the context's tokens."""

import pytest
import torch

from npbandit.surrogates import build
from npbandit.transforms import Bilog


def _task(model, n=9, m=5, batch=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    xc = torch.rand(batch, n, model.x_dim, generator=g, dtype=torch.float64)
    yc = torch.randn(batch, n, model.y_dim, generator=g, dtype=torch.float64)
    xt = torch.rand(batch, m, model.x_dim, generator=g, dtype=torch.float64)
    return xc, yc, xt


def _tnpd_reference(model, xc, yc, xt):
    """TNP-D as the masked transformer it stands for: the context tokens through every layer,
    each target cross-attending to the tokens entering that layer (nothing cached)."""
    h = model.embed(torch.cat([xc, yc, xc.new_zeros(xc.shape[:-1] + (1,))], dim=-1))
    t = model.embed(torch.cat([xt, xt.new_zeros(xt.shape[:-1] + (model.y_dim,)),
                               xt.new_ones(xt.shape[:-1] + (1,))], dim=-1))
    for layer in model.layers:
        t = layer(t, h)
        h = layer(h)
    return model.head(model.norm(t))


def test_tnpd_prediction_and_input_gradient_equal_the_uncached_path():
    torch.manual_seed(0)
    model = build("tnpd", 2, 1, size="tiny").double()
    xc, yc, xt = _task(model)
    state = model.condition(xc, yc)
    x_new, x_ref = xt.clone().requires_grad_(True), xt.clone().requires_grad_(True)
    new, ref = model.predict(state, x_new), _tnpd_reference(model, xc, yc, x_ref)
    assert torch.allclose(new.loc, ref.loc, rtol=0, atol=1e-12)
    assert torch.allclose(new.scale, ref.scale, rtol=0, atol=1e-12)
    g_new, = torch.autograd.grad(new.loc.sum() + new.scale.sum(), x_new)
    g_ref, = torch.autograd.grad(ref.loc.sum() + ref.scale.sum(), x_ref)
    assert torch.allclose(g_new, g_ref, rtol=0, atol=1e-12)
    # the cache follows select (repeats, reordering) and update (re-conditioning)
    index = torch.tensor([1, 0, 1])
    picked = model.predict(state.select(index), xt[index])
    assert torch.allclose(picked.loc, ref.loc[index], rtol=0, atol=1e-12)
    updated = model.predict(model.update(state, xt[:, :2], yc[:, :2]), xt)
    reference = _tnpd_reference(model, torch.cat([xc, xt[:, :2]], 1), torch.cat([yc, yc[:, :2]], 1), xt)
    assert torch.allclose(updated.loc, reference.loc, rtol=0, atol=1e-12)


def test_lbanp_prediction_equals_reading_freshly_projected_latents():
    torch.manual_seed(1)
    model = build("lbanp", 2, 1, size="tiny").double()
    xc, yc, xt = _task(model)
    context = model.embed(torch.cat([xc, yc], dim=-1))
    z = model.initial_latents.unsqueeze(0).expand(xc.shape[0], -1, -1)
    latents = []
    for read, mix in zip(model.read_context, model.latent_self):
        z = mix(read(z, context))
        latents.append(z)
    h = model.decoder.embed(xt)
    for layer, zl in zip(model.decoder.layers, latents):
        h = layer(h, zl)
    ref = model.decoder.head(model.decoder.norm(h))
    state = model.condition(xc, yc)
    new = model.predict(state, xt)
    assert torch.allclose(new.loc, ref.loc, rtol=0, atol=1e-12)
    assert torch.allclose(new.scale, ref.scale, rtol=0, atol=1e-12)
    picked = model.predict(state.select(torch.tensor([1, 1])), xt[[1, 1]])
    assert torch.allclose(picked.loc, ref.loc[[1, 1]], rtol=0, atol=1e-12)


def test_predict_without_checks_gives_the_checked_prediction():
    torch.manual_seed(2)
    model = build("tnpd", 2, 1, size="tiny")
    xc, yc, xt = (t.float() for t in _task(model))
    state = model.condition(xc, yc)
    checked, unchecked = model.predict(state, xt), model.predict(state, xt, check=False)
    assert torch.equal(checked.loc, unchecked.loc) and torch.equal(checked.scale, unchecked.scale)
    with pytest.raises(ValueError, match="NaN"):
        model.predict(state, torch.full_like(xt, float("nan")))


@pytest.mark.parametrize("name", ["tnpd", "cmanp"])
def test_update_without_checks_gives_the_checked_state(name):
    torch.manual_seed(3)
    model = build(name, 2, 1, size="tiny")
    model.outcome_transform = Bilog()  # update(check=False) still encodes the outputs
    xc, yc, xt = (t.float() for t in _task(model))
    state = model.condition(xc[:, :5], yc[:, :5])
    checked = model.update(state, xc[:, 5:], yc[:, 5:])
    unchecked = model.update(state, xc[:, 5:], yc[:, 5:], check=False)
    assert torch.equal(model.predict(checked, xt).mean, model.predict(unchecked, xt).mean)
    with pytest.raises(ValueError, match="NaN"):
        model.update(state, xc[:, 5:], torch.full_like(yc[:, 5:], float("nan")))


@pytest.mark.parametrize("update_locations", [False, True])
def test_te_pt_tnp_prediction_equals_the_targets_attending_to_the_pseudo_tokens(update_locations):
    torch.manual_seed(3)
    model = build("te-pt-tnp", 2, 1, size="tiny", update_locations=update_locations).double()
    xc, yc, xt = _task(model)
    # the pseudo-tokens and locations of every layer, as _condition computes them
    zc = model.embed(torch.cat([yc, yc.new_zeros(yc.shape[:-1] + (1,))], dim=-1))
    zp = model.pseudo_tokens.unsqueeze(0).expand(xc.shape[0], -1, -1)
    scores = model.place_query(zp) @ model.place_key(zc).transpose(-2, -1) * zc.shape[-1] ** -0.5
    xp = model.pseudo_offsets.unsqueeze(0).expand(xc.shape[0], -1, -1) + torch.softmax(scores, dim=-1) @ xc
    x_context, zt = xc, model.embed(torch.cat([xt.new_zeros(xt.shape[:-1] + (1,)),
                                               xt.new_ones(xt.shape[:-1] + (1,))], dim=-1))
    x_target = xt
    for to_pseudo, to_context, to_target in zip(model.pseudo_from_context, model.context_from_pseudo,
                                                model.target_from_pseudo):
        zp, xp = model._run_block(to_pseudo, zp, zc, xp, x_context)
        zt, x_target = model._run_block(to_target, zt, zp, x_target, xp)
        zc, x_context = model._run_block(to_context, zc, zp, x_context, xp)
    ref = model.head(model.norm(zt))
    new = model.predict(model.condition(xc, yc), xt)
    assert torch.allclose(new.loc, ref.loc, rtol=0, atol=1e-12)
    assert torch.allclose(new.scale, ref.scale, rtol=0, atol=1e-12)
