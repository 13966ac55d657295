"""Outcome transforms (npbandit.transforms): one interface, Standardize / Bilog / Scale /
YeoJohnson / Chain, the same numbers as the functions they replace; the wheel encoding
belongs to the model, and a loaded wheel checkpoint answers in reward units while its
network reads exactly what the prior (and the pre-refactor policy) fed it."""

import copy
import importlib
import json
import math
import sys

import numpy as np
import pytest
import torch
from conftest import tiny_model
from helpers import tiny_checkpoint
from torch.distributions import Normal

from npbandit import load_surrogate
from npbandit.priors import WheelPrior
from npbandit.priors.wheel import RewardFill
from npbandit.surrogates.pretrained import CheckpointError, available_checkpoints, checkpoint_transforms, read_card
from npbandit.transforms import (
    MIN_STD,
    Bilog,
    Chain,
    OutcomePredictive,
    OutcomeTransform,
    RewardEncoding,
    Scale,
    Standardize,
    YeoJohnson,
    standardization,
    symexp_moments,
    transform_from_spec,
    transform_spec,
)

WHEEL = [n for n in available_checkpoints() if n.endswith("-wheel")]
ENCODINGS = [RewardEncoding(1.0, "symlog", "zeros"), RewardEncoding(50.0, "identity", "noise"),
             RewardEncoding(2.0, "symlog", "noise")]


# -- the pre-refactor arithmetic, written out: the references the transforms must match bit for bit ------------

def old_encode(y, scale, transform):
    y = y / scale
    return torch.sign(y) * torch.log1p(y.abs()) if transform == "symlog" else y


def old_decode(z, scale, transform):
    y = torch.sign(z) * torch.expm1(z.abs()) if transform == "symlog" else z
    return y * scale


def old_moments(loc, scale, c, transform):
    if transform == "identity":
        return c * loc, (c * scale).pow(2)
    mean, variance = symexp_moments(loc, scale)
    return c * mean, c * c * variance


def old_log_det(y, c, transform):  # log |d encode / dy|, as RewardEncoding.log_abs_det_jacobian computed it
    z = old_encode(y, c, transform)
    return -(z.abs() + math.log(c) if transform == "symlog" else torch.full_like(z, math.log(c)))


def old_standardization(y):
    mean = y.mean(dim=-2, keepdim=True)
    if y.shape[-2] == 1:
        return mean, torch.ones_like(mean)
    std = y.std(dim=-2, keepdim=True)
    return mean, torch.where(std >= 1e-8, std, torch.ones_like(std))


def wheel_history(n, seed=0, dtype=torch.float32, arms=5):
    """Raw rewards of ``n`` rounds, one played arm each (the others hold garbage)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(2, n, 2, generator=g, dtype=dtype) * 2 - 1
    played = torch.randint(0, arms, (2, n, 1), generator=g)
    observed = torch.zeros(2, n, arms, dtype=torch.bool).scatter_(-1, played, True)
    y = torch.where(torch.rand(2, n, arms, generator=g) < 0.3, 50.0, 1.0).to(dtype)
    y = y + 0.05 * torch.randn(2, n, arms, generator=g, dtype=dtype)
    return x, torch.where(observed, y, torch.full_like(y, -123.0)), observed


def by_hand(encoding, y, observed, generator):
    """The pre-refactor encoding, written out: fill, then encode."""
    if encoding.fill == "zeros":
        filled = torch.zeros(y.shape, dtype=y.dtype)
    else:
        filled = torch.randn(y.shape, generator=generator, dtype=y.dtype)
    return old_encode(torch.where(observed, y, filled), encoding.scale, encoding.transform)


def bare_copy(model):
    bare = copy.deepcopy(model)
    bare.outcome_transform = None
    return bare


def random_gaussian(seed, dtype, shape=(3, 7, 5)):
    g = torch.Generator().manual_seed(seed)
    loc = (torch.randn(shape, generator=g, dtype=torch.float64) * 3).to(dtype)
    scale = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 + 1e-3).to(dtype)
    return loc, scale


# -- each transform: round trip, the old numbers ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("scale, kind", [(1.0, "symlog"), (2.0, "symlog"), (50.0, "identity"), (1.0, "identity")])
def test_bilog_and_scale_are_the_old_reward_encoding_bit_for_bit(scale, kind, dtype):
    transform = Bilog(scale) if kind == "symlog" else Scale(scale)
    record = RewardEncoding(scale, kind, "zeros")
    y = torch.randn(4, 9, 5, generator=torch.Generator().manual_seed(0), dtype=dtype) * 30
    for t in (transform, record):
        z = t.forward(y)
        assert z.dtype == dtype and torch.equal(z, old_encode(y, scale, kind)) and torch.equal(t(y), z)
        assert torch.equal(t.untransform(z), old_decode(z, scale, kind))
        assert torch.allclose(t.untransform(z), y, rtol=1e-5 if dtype == torch.float32 else 1e-12, atol=1e-4)
        assert torch.equal(t.log_abs_det_jacobian(y), old_log_det(y, scale, kind))
        loc, sd = random_gaussian(1, dtype)
        mean, var = t.untransform_moments(loc, sd)
        ref_mean, ref_var = old_moments(loc, sd, scale, kind)
        assert mean.dtype == dtype and torch.equal(mean, ref_mean) and torch.equal(var, ref_var)
        dist = t.untransform_predictive(Normal(loc, sd))
        assert isinstance(dist, OutcomePredictive) and torch.equal(dist.mean, ref_mean)
        assert torch.equal(dist.variance, ref_var) and torch.equal(dist.median, old_decode(loc, scale, kind))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_standardize_uses_exactly_the_old_statistics(dtype):
    g = torch.Generator().manual_seed(3)
    for shape in ((2, 11, 3), (1, 5, 1)):
        y = (torch.randn(shape, generator=g, dtype=torch.float64) * 7 + 2).to(dtype)
        y[..., 0, -1] = 4.0
        mean, std = standardization(y)
        ref_mean, ref_std = old_standardization(y)
        assert torch.equal(mean, ref_mean) and torch.equal(std, ref_std)
        t = Standardize.fit(y)
        assert torch.equal(t.forward(y), (y - ref_mean) / ref_std)
        assert torch.allclose(t.untransform(t.forward(y)), y, rtol=1e-5, atol=1e-5)
        loc, sd = random_gaussian(4, dtype, shape)
        mean_d, var_d = t.untransform_moments(loc, sd)
        assert torch.allclose(mean_d, loc * ref_std + ref_mean) and torch.allclose(var_d, (sd * ref_std) ** 2)
        assert torch.allclose(t.log_abs_det_jacobian(y), -ref_std.log().expand_as(y))
    single, constant = torch.tensor([[[3.0]]]), torch.full((1, 4, 1), 2.5)
    assert Standardize.fit(single).std.item() == 1 and Standardize.fit(constant).std.item() == 1  # MIN_STD
    assert MIN_STD == 1e-8
    # the threshold is relative to the level: a constant's rounding is no spread, a small scale's spread is one
    level = torch.tensor([[[1.0], [1.0 + 1e-12], [1.0 - 1e-12]]], dtype=torch.float64)
    assert Standardize.fit(level).std.item() == 1
    tiny = torch.tensor([[[1e-9], [3e-9], [2e-9]]], dtype=torch.float64)
    assert torch.allclose(Standardize.fit(tiny).std, torch.tensor(1e-9, dtype=torch.float64))
    assert Standardize.fit(torch.zeros(1, 3, 1)).std.item() == 1
    with pytest.raises(ValueError, match="at least one point"):
        Standardize.fit(torch.zeros(1, 0, 1))
    with pytest.raises(ValueError, match="std positive"):
        Standardize(torch.zeros(1), torch.zeros(1))


def test_yeo_johnson_round_trips_and_has_the_density_of_its_map():
    rng = np.random.default_rng(2)
    Y = torch.tensor(np.stack([-np.exp(rng.normal(size=30) * 2), rng.normal(size=30), np.full(30, 4.0)], -1))
    t = YeoJohnson.fit(Y)
    Z = t.forward(Y)
    assert Z.shape == Y.shape and torch.equal(Z[:, 2], torch.zeros(30))  # a constant column maps to zeros
    assert torch.allclose(t.untransform(Z)[:, :2], Y[:, :2], rtol=1e-10, atol=1e-10)
    assert torch.equal(t.untransform(Z)[:, 2], Y[:, 2])
    for lam in (0.0, 2.0, 0.5, 3.0):  # scipy's special branches at lambda = 0 and 2, and the general ones
        one = YeoJohnson([0.0], [1.0], [lam])
        y = torch.linspace(-3, 3, 13, dtype=torch.float64)[:, None]
        assert torch.allclose(one.untransform(one.forward(y)), y, atol=1e-12)
        grad = torch.func.vmap(torch.func.grad(lambda v, one=one: one.untransform(v.reshape(1, 1)).sum()))(
            one.forward(y)[:, 0])
        assert torch.allclose(one.untransform_log_abs_det_jacobian(one.forward(y))[:, 0], grad.log(), atol=1e-10)
    with pytest.raises(NotImplementedError, match="no exact predictive moments"):
        t.untransform_moments(Z, torch.ones_like(Z))
    dist = t.untransform_predictive(Normal(torch.zeros(1, 3, dtype=torch.float64),
                                           torch.ones(1, 3, dtype=torch.float64)))
    assert torch.allclose(dist.icdf(torch.full((1, 3), 0.7, dtype=torch.float64))[:, :2],
                          t.untransform(torch.full((1, 3), 0.5244005127080407, dtype=torch.float64))[:, :2])
    with pytest.raises(ValueError, match="only finite"):
        YeoJohnson.fit(torch.tensor([[0.0], [float("nan")]]))
    with pytest.raises(ValueError, match="output columns"):
        t.forward(Y[:, :2])


def test_chain_composes_its_members_in_order():
    y = torch.randn(2, 8, 3, generator=torch.Generator().manual_seed(5), dtype=torch.float64) * 40
    first, second = Standardize.fit(y), Bilog(2.0)
    chain = Chain(first, second)
    assert torch.equal(chain.forward(y), second.forward(first.forward(y)))
    z = chain.forward(y)
    assert torch.equal(chain.untransform(z), first.untransform(second.untransform(z)))
    assert torch.allclose(chain.untransform(z), y, rtol=1e-12, atol=1e-10)
    assert torch.allclose(chain.log_abs_det_jacobian(y), first.log_abs_det_jacobian(y) + second.log_abs_det_jacobian(
        first.forward(y)))
    loc, sd = random_gaussian(6, torch.float64, (2, 8, 3))
    mean, var = second.untransform_moments(loc, sd)  # affine members carry the last one's moments on exactly
    assert torch.equal(chain.untransform_moments(loc, sd)[0], mean * first.std + first.mean)
    assert torch.equal(chain.untransform_moments(loc, sd)[1], var * first.std.pow(2))
    loc, sd = loc / 3, sd / 4  # light tails: a Monte Carlo mean that settles
    draws = chain.untransform(loc + sd * torch.randn(200000, 2, 8, 3, generator=torch.Generator().manual_seed(1),
                                                     dtype=torch.float64))
    assert torch.allclose(chain.untransform_predictive(Normal(loc, sd)).mean, draws.mean(0), rtol=0.01,
                          atol=0.01 * float(first.std.max()))
    with pytest.raises(NotImplementedError, match="not affine"):
        Chain(Bilog(), Scale(3.0)).untransform_moments(loc, sd)  # Bilog after the Gaussian's map: no closed form
    assert Chain(Scale(2.0), Bilog()).describe() == "y / 2 then symlog(y / 1)"
    with pytest.raises(TypeError, match="transforms\\[1\\]"):
        Chain(Bilog(), "symlog")
    with pytest.raises(ValueError, match="at least one"):
        Chain()


def test_the_old_names_still_import_and_warn_where_superseded():
    import npbandit.transforms as transforms
    from npbandit.transforms import decode_rewards, encode_rewards

    y = torch.tensor([-60.0, -1.0, 0.0, 0.3, 50.0])
    with pytest.warns(DeprecationWarning, match="encode_rewards"):
        assert torch.equal(encode_rewards(y, 1.0, "symlog"), Bilog().forward(y))
    with pytest.warns(DeprecationWarning, match="decode_rewards"):
        assert torch.equal(decode_rewards(y, 50.0, "identity"), Scale(50.0).untransform(y))
    with pytest.warns(DeprecationWarning, match="RewardEncoding.encode"):
        assert torch.equal(ENCODINGS[0].encode(y), Bilog().forward(y))
    with pytest.warns(DeprecationWarning, match="RewardEncoding.decode"):
        ENCODINGS[0].decode(y)
    with pytest.warns(DeprecationWarning, match="RewardEncoding.predictive"):
        ENCODINGS[0].predictive(Normal(y, torch.ones_like(y)))
    assert {"RewardEncoding", "OutcomePredictive", "symexp_moments", "transform_spec", "transform_from_spec",
            "REWARD_TRANSFORMS", "REWARD_FILLS"} <= set(transforms.__all__)
    sys.modules.pop("npbandit.scaling", None)
    with pytest.warns(DeprecationWarning, match="npbandit.scaling is deprecated"):
        scaling = importlib.import_module("npbandit.scaling")
    assert scaling.standardization is standardization and scaling.MIN_STD == MIN_STD


def test_every_transform_is_an_outcome_transform_and_a_model_takes_only_those():
    for t in (Bilog(), Scale(2.0), Standardize.fit(torch.ones(3, 1)), YeoJohnson([0.0], [1.0], [1.0]),
              Chain(Scale(2.0), Bilog()), ENCODINGS[0]):
        assert isinstance(t, OutcomeTransform) and isinstance(t.describe(), str)
    with pytest.raises(ValueError, match="scale must be a positive finite number"):
        Bilog(0.0)
    with pytest.raises(ValueError, match="scale must be a positive finite number"):
        Scale(float("inf"))
    model = tiny_model("tnpd", x_dim=2, y_dim=5)
    with pytest.raises(TypeError, match="OutcomeTransform"):
        model.outcome_transform = {"reward_scale": 1.0}


# -- the wheel encoding: Bilog + the fill the bandit side applies --------------------------------------------

def test_the_prior_fills_then_encodes():
    """A wheel batch is the transform of the raw rewards with the dropped entries filled."""
    from npbandit.priors.base import step_generator
    from npbandit.priors.wheel import LARGE_REWARD_STD, sample_unit_disc, wheel_mean_rewards

    for spec in (dict(), dict(reward_scale=50.0, reward_transform="identity", reward_fill="noise")):
        prior = WheelPrior(n_context=20, n_target=3, **spec)
        batch = prior.batch(2, seed=5, index=1)
        g = step_generator(5, 1)  # replay the prior's draws
        delta = torch.rand(2, 1, generator=g)
        x = sample_unit_disc(g, 2, 23)
        means, large = wheel_mean_rewards(x, delta)
        y = means + torch.where(large, LARGE_REWARD_STD, prior.small_reward_std) * torch.randn(means.shape, generator=g)
        dropped = torch.rand(2, 20, 5, generator=g) < prior.drop_prob
        assert torch.equal(batch.yc, by_hand(prior.encoding, y[:, :20], ~dropped, g))
        assert torch.equal(batch.yt, old_encode(y[:, 20:], prior.encoding.scale, prior.encoding.transform))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_predictive_in_data_units_is_the_pushed_forward_gaussian(encoding):
    loc = torch.tensor([[-1.5, 0.0, 0.09, 3.9, 1.0]], dtype=torch.float64)
    scale = torch.tensor([[0.3, 0.5, 0.02, 0.01, 0.8]], dtype=torch.float64)
    encoded = Normal(loc, scale)
    dist = encoding.untransform_predictive(encoded)
    assert isinstance(dist, OutcomePredictive) and dist.encoded is encoded
    for q in (0.1, 0.5, 0.8413):  # quantiles: exactly the decoded Gaussian quantiles (monotone map)
        p = torch.full_like(loc, q)
        assert torch.allclose(dist.icdf(p), encoding.untransform(encoded.icdf(p)), rtol=1e-12)
        assert torch.allclose(dist.cdf(dist.icdf(p)), p, rtol=1e-9)
    assert torch.allclose(dist.median, encoding.untransform(loc), rtol=1e-12)
    y = encoding.untransform(loc + 0.7 * scale)
    assert torch.allclose(dist.log_prob(y), encoded.log_prob(encoding.forward(y)) + encoding.log_abs_det_jacobian(y))
    # the change of variables integrates to one: a density in data units
    grid = encoding.untransform(torch.linspace(-12, 12, 400001, dtype=torch.float64))[:, None, None]
    mass = torch.trapezoid(dist.log_prob(grid.expand(-1, 1, 5)).exp(), grid.expand(-1, 1, 5), dim=0)
    assert torch.allclose(mass, torch.ones_like(mass), atol=1e-4)
    draws = encoding.untransform(loc + scale * torch.randn(400000, 1, 5, generator=torch.Generator().manual_seed(0),
                                                      dtype=torch.float64))
    assert torch.allclose(dist.mean, draws.mean(0), rtol=2e-3, atol=2e-3 * encoding.scale)
    assert torch.allclose(dist.stddev, draws.std(0), rtol=5e-3)
    if encoding.transform == "identity":
        assert torch.allclose(dist.mean, encoding.scale * loc) and torch.allclose(dist.stddev, encoding.scale * scale)
    wide = dist.expand(torch.Size([3, 1, 5]))
    assert isinstance(wide, OutcomePredictive) and wide.mean.shape == (3, 1, 5)
    assert torch.equal(wide.mean[2], dist.mean)


def test_symexp_moments_are_exact_where_they_are_known():
    loc = torch.tensor([0.0, 2.0, -3.0, 3.9], dtype=torch.float64)
    small = torch.full_like(loc, 1e-4)
    mean, var = symexp_moments(loc, small)  # tiny s: the delta method, symexp'(m) = e^|m|
    assert torch.allclose(mean, torch.sign(loc) * torch.expm1(loc.abs()), rtol=1e-6, atol=1e-8)
    assert torch.allclose(var.sqrt(), loc.abs().exp() * small, rtol=1e-3)
    mean, _ = symexp_moments(loc, torch.full_like(loc, 0.7))
    assert mean[0] == 0 and torch.allclose(symexp_moments(-loc, torch.full_like(loc, 0.7))[0], -mean)
    # far from 0, symexp(z) = e^z - 1: the log-normal mean e^{m + s²/2} - 1
    far = symexp_moments(torch.tensor(8.0, dtype=torch.float64), torch.tensor(0.5, dtype=torch.float64))[0]
    assert torch.isclose(far, torch.tensor(math.exp(8.125) - 1, dtype=torch.float64), rtol=1e-9)
    huge = symexp_moments(torch.tensor([400.0, 800.0], dtype=torch.float64),
                          torch.tensor([0.1, 0.1], dtype=torch.float64))
    assert torch.isfinite(huge[0][0]) and (huge[1] == math.inf).all() and huge[0][1] == math.inf  # inf, never NaN


def test_card_spec_round_trip_and_refusals():
    for transform in (*ENCODINGS, Bilog(2.0), Scale(50.0), Chain(Scale(2.0), Bilog())):
        assert transform_from_spec(json.loads(json.dumps(transform_spec(transform)))) == transform
    assert transform_spec(ENCODINGS[0]) == {"type": "reward", "reward_scale": 1.0, "reward_transform": "symlog",
                                            "reward_fill": "zeros"}  # what the shipped cards hold
    assert transform_spec(None) is None and transform_from_spec(None) is None
    with pytest.raises(ValueError, match="outcome transform must be null"):
        transform_from_spec({"type": "log"})
    with pytest.raises(ValueError, match="exactly the fields"):
        transform_from_spec({"type": "reward", "reward_scale": 1.0})
    with pytest.raises(ValueError, match="reward_fill"):
        transform_from_spec({"type": "reward", "reward_scale": 1.0, "reward_transform": "symlog", "reward_fill": "x"})
    with pytest.raises(ValueError, match="one or more transforms"):
        transform_from_spec({"type": "chain", "transforms": []})
    with pytest.raises(TypeError, match="RewardEncoding, Bilog, Scale"):
        transform_spec("symlog")
    with pytest.raises(TypeError, match="RewardEncoding, Bilog, Scale"):
        transform_spec(Standardize.fit(torch.ones(3, 1)))  # fitted to data: no card form


# -- the card declares it, load_surrogate attaches it ----------------------------------------------------------

def test_every_shipped_card_declares_its_transforms_and_the_model_carries_them():
    for name in available_checkpoints():
        card = read_card(name)
        declared = checkpoint_transforms(card)
        derived = checkpoint_transforms({k: v for k, v in card.items() if k != "transforms"})
        assert declared == derived  # the card's field says what its prior spec implies
        model = load_surrogate(name)
        if name.endswith("-wheel"):
            assert "transforms" in card and declared["outcome"]["type"] == "reward"
            assert model.outcome_transform == RewardEncoding.from_prior_spec(card["prior"])
        else:
            assert declared == {"input": None, "outcome": None} and model.outcome_transform is None
    assert load_surrogate("cmanp-wheel").outcome_transform == RewardEncoding(1.0, "symlog", "zeros")
    # every shipped wheel checkpoint uses the default encoding since lbanp-wheel v2 (decision-time histories)
    assert load_surrogate("lbanp-wheel").outcome_transform == RewardEncoding(1.0, "symlog", "zeros")


def test_new_cards_write_the_field_and_old_cards_load_with_their_priors_old_defaults(tmp_path):
    path = tiny_checkpoint(tmp_path, "cmanp", "wheel")
    card = json.loads(path.read_text())
    assert card["transforms"] == {"input": None, "outcome": {"type": "reward", "reward_scale": 1.0,
                                                             "reward_transform": "symlog", "reward_fill": "zeros"}}
    assert json.loads(tiny_checkpoint(tmp_path, "cmanp", "bo").read_text())["transforms"] == {"input": None,
                                                                                             "outcome": None}
    # a card from before the field, and before the prior's reward fields: raw rewards, N(0, 1) fill
    old = dict(card, prior={k: v for k, v in card["prior"].items() if not k.startswith("reward_")})
    del old["transforms"]
    path.write_text(json.dumps(old))
    assert load_surrogate(path).outcome_transform == RewardEncoding(1.0, "identity", "noise")
    for transforms, match in (({"input": {"type": "affine"}, "outcome": None}, "input transform"),
                              ({"input": None, "outcome": {"type": "log"}}, "outcome transform must be"),
                              ({"outcome": None}, "transforms must be")):
        path.write_text(json.dumps(dict(card, transforms=transforms)))
        with pytest.raises(CheckpointError, match=match):
            load_surrogate(path)
    path.write_text(json.dumps(dict(old, prior=dict(old["prior"], reward_transform="log"))))
    with pytest.raises(CheckpointError, match="no readable outcome transform"):
        load_surrogate(path)


# -- raw values through the public protocol == the old hand-encoded path ---------------------------------------

@pytest.mark.parametrize("name", WHEEL)
def test_raw_conditioning_predicts_what_the_hand_encoded_path_predicted(name):
    """Reference computed the old way: fill and encode by hand, feed the network model
    units (the same weights without a transform), condition then stream updates. New
    way: the bandit side fills (RewardFill, the card's fill), the model's transform encodes."""
    model = load_surrogate(name)
    bare = bare_copy(model)
    encoding = model.outcome_transform
    fill = RewardFill(encoding.fill)
    x, y, observed = wheel_history(40, seed=1)
    xt = torch.rand(2, 7, 2, generator=torch.Generator().manual_seed(2)) * 2 - 1
    g_new, g_old = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    with torch.no_grad():
        state = model.condition(x[:, :30], fill.apply(y[:, :30], observed[:, :30], g_new))
        ref = bare.condition(x[:, :30], by_hand(encoding, y[:, :30], observed[:, :30], g_old))
        for i in range(30, 40):
            state = model.update(state, x[:, i:i + 1], fill.apply(y[:, i:i + 1], observed[:, i:i + 1], g_new))
            ref = bare.update(ref, x[:, i:i + 1], by_hand(encoding, y[:, i:i + 1], observed[:, i:i + 1], g_old))
        dist, expected = model.predict(state, xt), bare.predict(ref, xt)
        draws = model.sample(state, xt, 3, torch.Generator().manual_seed(9))
        ref_draws = bare.sample(ref, xt, 3, torch.Generator().manual_seed(9))
        log_prob = model.joint_log_prob(state, xt, dist.median)
        ref_log_prob = bare.joint_log_prob(ref, xt, expected.loc)
    assert isinstance(dist, OutcomePredictive)
    assert torch.equal(dist.encoded.loc, expected.loc) and torch.equal(dist.encoded.scale, expected.scale)
    c, kind = encoding.scale, encoding.transform
    assert torch.equal(dist.median, old_decode(expected.loc, c, kind))  # reward units
    ref_mean, ref_var = old_moments(expected.loc, expected.scale, c, kind)
    assert torch.equal(dist.mean, ref_mean) and torch.equal(dist.variance, ref_var)
    assert torch.equal(draws, old_decode(ref_draws, c, kind))
    assert torch.allclose(log_prob, ref_log_prob + old_log_det(dist.median, c, kind).sum((-2, -1)))
    # the large arms come back as rewards near 50, not as their symlog (3.9) or y / 50 (1.0)
    assert dist.median.max() > 20


def test_the_protocol_takes_complete_rows_in_data_units():
    """No masks in the protocol: a row is filled before it reaches the model, and every entry
    must be finite; a transform that makes a finite entry infinite is refused too."""
    model = load_surrogate("cmanp-wheel")
    x, y, observed = wheel_history(5)
    with pytest.raises(TypeError, match="observed"):
        model.condition(x, y, observed=observed)
    with pytest.raises(ValueError, match="yc contains NaN or infinite values"):
        model.condition(x, torch.where(observed, y, torch.full_like(y, float("nan"))))
    # unplayed entries may hold anything before the fill, NaN included
    filled = RewardFill("zeros").apply(torch.where(observed, y, torch.full_like(y, float("nan"))), observed)
    a = model.predict(model.condition(x, filled), x).encoded.loc
    assert torch.equal(a, model.predict(model.condition(x, RewardFill("zeros").apply(y, observed)), x).encoded.loc)
    model.outcome_transform = Scale(1e-30)
    with pytest.raises(ValueError, match="makes NaN or infinite values"):
        model.condition(x, torch.full_like(y, 1e10))


def test_every_model_applies_its_transform_the_same_way(model_name):
    """Any surrogate with a transform: data units in and out, the network reads model units;
    the training objective still scores a prior's batch (model units)."""
    model = tiny_model(model_name, x_dim=2, y_dim=5)
    bare = bare_copy(model)
    model.outcome_transform = encoding = RewardEncoding(2.0, "symlog", "noise")
    x, y, observed = wheel_history(12, dtype=torch.float64)
    xt, yt, _ = wheel_history(4, seed=7, dtype=torch.float64)
    state = model.condition(x, RewardFill("noise").apply(y, observed, torch.Generator().manual_seed(0)))
    encoded = by_hand(encoding, y, observed, torch.Generator().manual_seed(0))
    ref = bare.condition(x, encoded)
    dist, expected = model.predict(state, xt), bare.predict(ref, xt)
    assert torch.allclose(dist.encoded.loc, expected.loc) and torch.allclose(dist.encoded.scale, expected.scale)
    # joint density in data units: the model-unit density plus the log-Jacobian of the encoding
    zt = old_encode(yt, 2.0, "symlog")
    assert torch.allclose(model.joint_log_prob(state, xt, yt),
                          bare.joint_log_prob(ref, xt, zt) + old_log_det(yt, 2.0, "symlog").sum((-2, -1)))
    if not model.joint_predictive:  # a diagonal model's joint is the sum of its marginals, in any units
        assert torch.allclose(model.joint_log_prob(state, xt, yt), dist.log_prob(yt).sum((-2, -1)))
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.allclose(model.sample(state, xt, 2, g1), old_decode(bare.sample(ref, xt, 2, g2), 2.0, "symlog"))
    # scoring a prior's batch: model units, as the trainer and the card's evaluation see it
    assert torch.equal(model.log_likelihood(x, encoded, xt, zt), bare.log_likelihood(x, encoded, xt, zt))
    assert torch.equal(model.joint_log_likelihood(x, encoded, xt, zt), bare.joint_log_likelihood(x, encoded, xt, zt))
    assert "outcome_transform=symlog(y / 2), noise fill" in repr(model)
    model.outcome_transform = chain = Chain(Scale(2.0), Bilog())  # any transform, the same way
    state = model.condition(x, y.nan_to_num())
    ref = bare.condition(x, chain.forward(y.nan_to_num()))
    assert torch.allclose(model.predict(state, xt).median, chain.untransform(bare.predict(ref, xt).loc))
