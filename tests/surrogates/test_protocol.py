"""The NP protocol, the same for every model: shapes, invariances, validation."""

import pytest
import torch
from conftest import random_set, tiny_model
from torch.distributions import Normal

from npbandit.surrogates import CMANP, LBANP, TNPD, NeuralProcess, available_models, build


def test_registry_lists_the_models():
    assert available_models() == ["cmanp", "cmanp-and", "datnp", "lbanp", "retreever", "te-pt-tnp", "tnpd"]
    assert isinstance(build("cmanp", 1, 1, size="tiny"), CMANP)
    assert isinstance(build("LBANP", 1, 1, size="tiny"), LBANP)
    assert isinstance(build("tnpd", 1, 1, size="tiny"), TNPD)


def test_paper_defaults():
    model = build("cmanp", 1, 1)
    c = model.config
    assert (c.d_model, c.n_heads, c.d_ff, c.n_layers, c.n_latents, c.n_block_latents) == (64, 4, 128, 6, 128, 128)
    assert build("lbanp", 1, 1).config.n_latents == 128
    # paper-size CMANP fits the 5 MB checkpoint budget in float32
    assert sum(p.numel() for p in model.parameters()) * 4 < 5e6


def test_build_rejects_bad_arguments():
    with pytest.raises(ValueError, match="name"):
        build("gp", 1, 1)
    with pytest.raises(ValueError, match="size"):
        build("cmanp", 1, 1, size="huge")
    with pytest.raises(TypeError, match="n_latent"):
        build("tnpd", 1, 1, n_latents=3)
    with pytest.raises(ValueError, match="x_dim"):
        build("cmanp", 0, 1)
    with pytest.raises(ValueError, match="n_heads"):
        build("lbanp", 1, 1, d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="n_latents"):
        build("cmanp", 1, 1, n_latents=0)


def test_overrides_apply_on_top_of_size():
    model = build("lbanp", 2, 3, size="small", n_latents=5)
    assert model.config.n_latents == 5 and model.config.d_model == 32
    assert model.x_dim == 2 and model.y_dim == 3


def test_predict_shapes_and_positive_scale(model_name):
    model = tiny_model(model_name, x_dim=3, y_dim=2)
    x, y = random_set(4, 11, 3, 2)
    xt, _ = random_set(4, 6, 3, 2, seed=1)
    dist = model.predict(model.condition(x, y), xt)
    assert isinstance(dist, Normal)
    assert dist.loc.shape == dist.scale.shape == (4, 6, 2)
    assert (dist.scale >= model.config.min_std).all()


def test_empty_context_gives_prior(model_name):
    model = tiny_model(model_name)
    x, y = random_set(2, 0)
    xt, _ = random_set(2, 5, seed=1)
    dist = model.predict(model.condition(x, y), xt)
    assert dist.loc.shape == (2, 5, 1) and torch.isfinite(dist.loc).all() and torch.isfinite(dist.scale).all()
    # conditioning on data changes the prediction
    xc, yc = random_set(2, 10, seed=2)
    assert not torch.allclose(model.predict(model.condition(xc, yc), xt).loc, dist.loc)


def test_permutation_invariance_in_context(model_name):
    model = tiny_model(model_name)
    x, y = random_set(2, 25, seed=3)
    xt, _ = random_set(2, 8, seed=4)
    perm = torch.randperm(25, generator=torch.Generator().manual_seed(0))
    a = model.predict(model.condition(x, y), xt)
    b = model.predict(model.condition(x[:, perm], y[:, perm]), xt)
    assert torch.allclose(a.loc, b.loc, atol=1e-10) and torch.allclose(a.scale, b.scale, atol=1e-10)


def test_targets_are_independent(model_name):
    model = tiny_model(model_name)
    x, y = random_set(2, 15, seed=5)
    xt, _ = random_set(2, 6, seed=6)
    state = model.condition(x, y)
    together = model.predict(state, xt)
    for j in range(6):
        alone = model.predict(state, xt[:, j:j + 1])
        assert torch.allclose(alone.loc, together.loc[:, j:j + 1], atol=1e-10)
        assert torch.allclose(alone.scale, together.scale[:, j:j + 1], atol=1e-10)


def test_batch_elements_do_not_interact(model_name):
    model = tiny_model(model_name)
    x, y = random_set(3, 12, seed=7)
    xt, _ = random_set(3, 4, seed=8)
    batched = model.predict(model.condition(x, y), xt)
    single = model.predict(model.condition(x[1:2], y[1:2]), xt[1:2])
    assert torch.allclose(batched.loc[1:2], single.loc, atol=1e-10)


def test_select_takes_batch_elements_of_a_state(model_name):
    # NPModel's fantasies start each new batch element from the state of the element it broadcasts
    model = tiny_model(model_name)
    x, y = random_set(3, 12, seed=11)
    xt, _ = random_set(1, 4, seed=12)
    state = model.condition(x, y)
    model.predict(state, xt.expand(3, -1, -1))  # fills whatever the state caches for predictions
    index = torch.tensor([2, 0, 2, 1])
    picked = model.predict(state.select(index), xt.expand(4, -1, -1))
    direct = model.predict(model.condition(x[index], y[index]), xt.expand(4, -1, -1))
    assert state.select(index).batch_size == 4
    assert torch.allclose(picked.loc, direct.loc, atol=1e-6) and torch.allclose(picked.scale, direct.scale, atol=1e-6)
    tiled = model.predict(state.repeat(2), xt.expand(6, -1, -1))
    assert torch.equal(tiled.loc, torch.cat([tiled.loc[:3], tiled.loc[:3]]))
    assert torch.allclose(tiled.loc[:3], model.predict(state, xt.expand(3, -1, -1)).loc, atol=1e-6)


def test_default_update_reconditions(model_name):
    model = tiny_model(model_name)
    x, y = random_set(2, 20, seed=9)
    xt, _ = random_set(2, 5, seed=10)
    streamed = model.update(model.condition(x[:, :12], y[:, :12]), x[:, 12:], y[:, 12:])
    assert streamed.num_points == 20
    a, b = model.predict(streamed, xt), model.predict(model.condition(x, y), xt)
    assert torch.allclose(a.loc, b.loc, atol=1e-8) and torch.allclose(a.scale, b.scale, atol=1e-8)


def test_predict_is_differentiable_in_xt(model_name):
    model = tiny_model(model_name)
    x, y = random_set(1, 10, seed=11)
    xt = torch.zeros(1, 3, 2, dtype=torch.float64, requires_grad=True)
    dist = model.predict(model.condition(x, y), xt)
    (dist.loc.sum() + dist.scale.sum()).backward()
    assert xt.grad is not None and torch.isfinite(xt.grad).all() and xt.grad.abs().sum() > 0


def test_log_likelihood_is_a_trainable_scalar(model_name):
    model = tiny_model(model_name)
    x, y = random_set(4, 20, seed=12)
    ll = model.log_likelihood(x[:, :12], y[:, :12], x[:, 12:], y[:, 12:])
    assert ll.dim() == 0 and torch.isfinite(ll)
    dist = model.predict(model.condition(x[:, :12], y[:, :12]), x[:, 12:])
    assert torch.allclose(ll, dist.log_prob(y[:, 12:]).sum(-1).mean())
    (-ll).backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


@pytest.mark.slow
def test_a_few_adam_steps_raise_the_likelihood(model_name):
    # not training to convergence: only that the objective and its gradients are wired up
    torch.manual_seed(0)
    model = build(model_name, 1, 1, size="tiny")
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    x = torch.rand(8, 30, 1) * 4 - 2
    y = torch.sin(2 * x) + 0.05 * torch.randn(8, 30, 1)
    first = model.log_likelihood(x[:, :20], y[:, :20], x[:, 20:], y[:, 20:]).item()
    for _ in range(60):
        opt.zero_grad()
        (-model.log_likelihood(x[:, :20], y[:, :20], x[:, 20:], y[:, 20:])).backward()
        opt.step()
    assert model.log_likelihood(x[:, :20], y[:, :20], x[:, 20:], y[:, 20:]).item() > first + 0.3


# -- validation ----------------------------------------------------------------------

def test_rejects_wrong_rank(model_name):
    model = tiny_model(model_name)
    x, y = random_set(1, 5)
    width = "width" if model.any_x_dim else "2"
    with pytest.raises(ValueError, match=rf"xc must have shape \[batch, points, {width}\]"):
        model.condition(x[0], y)


def test_rejects_wrong_feature_dims(model_name):
    model = tiny_model(model_name)
    x, y = random_set(1, 5, x_dim=3)
    if model.any_x_dim:  # any width, but targets and updates as wide as the context
        state = model.condition(x, y)
        with pytest.raises(ValueError, match="xt has 2 input column"):
            model.predict(state, random_set(1, 4)[0])
        with pytest.raises(ValueError, match="xu has 2 input column"):
            model.update(state, *random_set(1, 1))
    else:
        with pytest.raises(ValueError, match="xc must have last dimension 2"):
            model.condition(x, y)
    x, y = random_set(1, 5, y_dim=2)
    with pytest.raises(ValueError, match="yc must have last dimension 1"):
        model.condition(x, y)


def test_rejects_mismatched_points(model_name):
    model = tiny_model(model_name)
    x, y = random_set(1, 5)
    with pytest.raises(ValueError, match="xc and yc must agree"):
        model.condition(x, y[:, :4])


def test_rejects_nan_and_inf(model_name):
    model = tiny_model(model_name)
    x, y = random_set(1, 5)
    y[0, 2, 0] = float("nan")
    with pytest.raises(ValueError, match="yc contains NaN"):
        model.condition(x, y)
    state = model.condition(*random_set(1, 5))
    xt = torch.full((1, 2, 2), float("inf"), dtype=torch.float64)
    with pytest.raises(ValueError, match="xt contains NaN"):
        model.predict(state, xt)


def test_rejects_non_tensors_and_wrong_dtype(model_name):
    model = tiny_model(model_name)
    x, y = random_set(1, 5)
    with pytest.raises(TypeError, match="xc must be a torch.Tensor"):
        model.condition(x.numpy(), y)
    with pytest.raises(TypeError, match="dtype"):
        model.condition(x.float(), y.float())
    with pytest.raises(TypeError, match="floating-point"):
        model.condition(x.long(), y)


def test_rejects_batch_mismatch_and_bad_state(model_name):
    model = tiny_model(model_name)
    x, y = random_set(2, 5)
    state = model.condition(x, y)
    with pytest.raises(ValueError, match="batch size"):
        model.update(state, x[:1], y[:1])
    with pytest.raises(ValueError, match="batch size"):
        model.predict(state, x[:1])
    # the sampled and the expected training loss (a joint model's expected loss needs a covariance factor)
    for yt_var in (None,) if model.joint_predictive else (None, torch.ones_like(y[:1])):
        with pytest.raises(ValueError, match="batch size"):
            model.training_loss(x, y, x[:1], y[:1], yt_var)
    with pytest.raises(TypeError, match="state"):
        model.predict({"xc": x}, x)
    with pytest.raises(ValueError, match="at least one target"):
        model.log_likelihood(x, y, x[:, :0], y[:, :0])


def test_models_share_one_protocol():
    for name in available_models():
        assert issubclass(type(build(name, 1, 1, size="tiny")), NeuralProcess)


def test_a_state_predicts_any_number_of_backward_passes(model_name):
    # a state conditioned without gradients (as NPModel and the policies build it) is a
    # constant: predictions from it may be differentiated in X again and again, even
    # when the first prediction ran with gradients on while the weights require grad
    model = tiny_model(model_name)
    x, y = random_set(1, 10, seed=13)
    with torch.no_grad():
        state = model.condition(x, y)
    for _ in range(2):
        xt = torch.zeros(1, 3, 2, dtype=torch.float64, requires_grad=True)
        model.predict(state, xt).loc.sum().backward()
        assert xt.grad is not None and torch.isfinite(xt.grad).all()


def test_predicting_first_without_gradients_keeps_the_weights_gradients(model_name):
    # a state conditioned with gradients keeps its graph to the weights whatever mode
    # the first prediction ran in (a cache filled under no_grad must not cut it)
    model = tiny_model(model_name)
    x, y = random_set(1, 10, seed=14)
    xt, _ = random_set(1, 3, seed=15)

    def weight_grads(state):
        model.zero_grad(set_to_none=True)
        model.predict(state, xt).loc.sum().backward()
        return {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}

    expected = weight_grads(model.condition(x, y))
    state = model.condition(x, y)
    with torch.no_grad():
        model.predict(state, xt)
    got = weight_grads(state)
    assert got.keys() == expected.keys()
    assert all(torch.allclose(got[k], expected[k]) for k in expected)


def test_a_smooth_activation_reaches_every_mlp_and_survives_a_checkpoint(model_name, tmp_path):
    """``activation`` replaces every ReLU of the embedders, heads and logit MLPs, and a
    saved checkpoint rebuilds the same network; a model built without it is the ReLU one."""
    from npbandit.surrogates.pretrained import load_surrogate, save_pretrained

    assert any(isinstance(m, torch.nn.ReLU) for m in build(model_name, 2, 1, size="tiny").modules())
    torch.manual_seed(0)
    model = build(model_name, 2, 1, size="tiny", activation="silu")
    assert not any(isinstance(m, torch.nn.ReLU) for m in model.modules())
    assert any(isinstance(m, torch.nn.SiLU) for m in model.modules())
    save_pretrained(model, tmp_path, "smooth", prior={"name": "bo"}, training={"steps": 1},
                    evaluation={"log_likelihood": {"test": 0.0}})
    loaded = load_surrogate(tmp_path / "smooth.json")
    assert loaded.config.activation == "silu"
    x, y = (t.float() for t in random_set(2, 7, 2, 1))
    xt = random_set(2, 5, 2, 1, seed=1)[0].float()
    # frozen, as load_surrogate leaves a network: weights that track gradients (even under
    # no_grad) send te-pt-tnp's float32 forward pass down other kernels, whose results equal
    # the frozen ones only by luck of the BLAS build (not in MKL's generic branch,
    # MKL_CBWR=COMPATIBLE); two equal networks on one path give equal bits on any machine
    model.eval().requires_grad_(False)
    with torch.no_grad():
        a, b = model.predict(model.condition(x, y), xt), loaded.predict(loaded.condition(x, y), xt)
    assert torch.equal(a.loc, b.loc) and torch.equal(a.scale, b.scale)
    if model_name == "cmanp":  # the fused inference path is written for ReLU MLPs: it stands aside
        from npbandit.surrogates.fused import FusedCMANP

        assert FusedCMANP.of(model) is None and FusedCMANP.of(build("cmanp", 2, 1, size="tiny")) is not None
    with pytest.raises(ValueError, match="activation"):
        build(model_name, 2, 1, size="tiny", activation="tanh")
