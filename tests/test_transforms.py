"""Outcome transforms: the encoding belongs to the model. A loaded wheel checkpoint takes
raw rewards plus the mask of observed entries and answers in reward units; the network
reads exactly what the prior (and the pre-refactor policy) fed it."""

import copy
import json
import math

import pytest
import torch
from torch.distributions import Normal

from npbandit import load_surrogate
from npbandit.priors import WheelPrior
from npbandit.surrogates.pretrained import (CheckpointError, available_checkpoints, checkpoint_transforms,
                                            read_card)
from npbandit.transforms import (OutcomePredictive, RewardEncoding, symexp_moments, transform_from_spec,
                                 transform_spec)

from conftest import tiny_model
from helpers import tiny_checkpoint

WHEEL = [n for n in available_checkpoints() if n.endswith("-wheel")]
ENCODINGS = [RewardEncoding(1.0, "symlog", "zeros"), RewardEncoding(50.0, "identity", "noise"),
             RewardEncoding(2.0, "symlog", "noise")]


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
    """The pre-refactor policy's encoding, written out: fill, then encode."""
    filled = encoding.unobserved(tuple(y.shape), generator, y.dtype)
    return encoding.encode(torch.where(observed, y, filled))


def bare_copy(model):
    bare = copy.deepcopy(model)
    bare.outcome_transform = None
    return bare


# -- the transform --------------------------------------------------------------------------------------------

def test_encode_decode_round_trip_and_fill():
    y = torch.tensor([[-60.0, -1.0, 0.0, 0.3, 50.0]], dtype=torch.float64)
    for encoding in ENCODINGS:
        assert torch.allclose(encoding.decode(encoding.encode(y)), y, rtol=1e-12, atol=1e-12)
    observed = torch.tensor([[True, False, True, False, True]])
    zeros = RewardEncoding(1.0, "symlog", "zeros").encode_observed(y, observed)
    assert zeros[0, 1] == 0 and zeros[0, 3] == 0 and torch.isclose(zeros[0, 4], torch.tensor(math.log(51.0),
                                                                                            dtype=torch.float64))
    noise = RewardEncoding(50.0, "identity", "noise")
    filled = noise.encode_observed(y.float(), observed, torch.Generator().manual_seed(4))
    draws = torch.randn(1, 5, generator=torch.Generator().manual_seed(4))  # one draw per entry, in order
    assert torch.equal(filled[~observed], draws[~observed] / 50)
    assert torch.equal(filled[observed], y.float()[observed] / 50)
    with pytest.raises(TypeError, match="observed must be a bool tensor"):
        noise.encode_observed(y, observed.double())
    with pytest.raises(ValueError, match="observed must have the shape"):
        noise.encode_observed(y, observed[:, :3])


def test_the_prior_fills_and_encodes_through_the_same_object():
    """A wheel batch is what RewardEncoding.encode_observed makes of the raw rewards."""
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
        assert torch.equal(batch.yc, prior.encoding.encode_observed(y[:, :20], ~dropped, g))
        assert torch.equal(batch.yt, prior.encoding.encode(y[:, 20:]))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_predictive_in_data_units_is_the_pushed_forward_gaussian(encoding):
    loc = torch.tensor([[-1.5, 0.0, 0.09, 3.9, 1.0]], dtype=torch.float64)
    scale = torch.tensor([[0.3, 0.5, 0.02, 0.01, 0.8]], dtype=torch.float64)
    encoded = Normal(loc, scale)
    dist = encoding.predictive(encoded)
    assert isinstance(dist, OutcomePredictive) and dist.encoded is encoded
    for q in (0.1, 0.5, 0.8413):  # quantiles: exactly the decoded Gaussian quantiles (monotone map)
        p = torch.full_like(loc, q)
        assert torch.allclose(dist.icdf(p), encoding.decode(encoded.icdf(p)), rtol=1e-12)
        assert torch.allclose(dist.cdf(dist.icdf(p)), p, rtol=1e-9)
    assert torch.allclose(dist.median, encoding.decode(loc), rtol=1e-12)
    y = encoding.decode(loc + 0.7 * scale)
    assert torch.allclose(dist.log_prob(y), encoded.log_prob(encoding.encode(y)) + encoding.log_abs_det_jacobian(y))
    # the change of variables integrates to one: a density in data units
    grid = encoding.decode(torch.linspace(-12, 12, 400001, dtype=torch.float64))[:, None, None]
    mass = torch.trapezoid(dist.log_prob(grid.expand(-1, 1, 5)).exp(), grid.expand(-1, 1, 5), dim=0)
    assert torch.allclose(mass, torch.ones_like(mass), atol=1e-4)
    draws = encoding.decode(loc + scale * torch.randn(400000, 1, 5, generator=torch.Generator().manual_seed(0),
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
    huge = symexp_moments(torch.tensor([400.0, 800.0], dtype=torch.float64), torch.tensor([0.1, 0.1], dtype=torch.float64))
    assert torch.isfinite(huge[0][0]) and (huge[1] == math.inf).all() and huge[0][1] == math.inf  # inf, never NaN


def test_card_spec_round_trip_and_refusals():
    for encoding in ENCODINGS:
        assert transform_from_spec(json.loads(json.dumps(transform_spec(encoding)))) == encoding
    assert transform_spec(None) is None and transform_from_spec(None) is None
    with pytest.raises(ValueError, match="outcome transform must be null"):
        transform_from_spec({"type": "log"})
    with pytest.raises(ValueError, match="exactly the fields"):
        transform_from_spec({"type": "reward", "reward_scale": 1.0})
    with pytest.raises(TypeError, match="RewardEncoding"):
        transform_spec("symlog")


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
    units (the same weights without a transform), condition then stream updates."""
    model = load_surrogate(name)
    bare = bare_copy(model)
    encoding = model.outcome_transform
    x, y, observed = wheel_history(40, seed=1)
    xt = torch.rand(2, 7, 2, generator=torch.Generator().manual_seed(2)) * 2 - 1
    g_new, g_old = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    with torch.no_grad():
        state = model.condition(x[:, :30], y[:, :30], observed=observed[:, :30], generator=g_new)
        ref = bare.condition(x[:, :30], by_hand(encoding, y[:, :30], observed[:, :30], g_old))
        for i in range(30, 40):
            state = model.update(state, x[:, i:i + 1], y[:, i:i + 1], observed=observed[:, i:i + 1], generator=g_new)
            ref = bare.update(ref, x[:, i:i + 1], by_hand(encoding, y[:, i:i + 1], observed[:, i:i + 1], g_old))
        dist, expected = model.predict(state, xt), bare.predict(ref, xt)
        draws = model.sample(state, xt, 3, torch.Generator().manual_seed(9))
        ref_draws = bare.sample(ref, xt, 3, torch.Generator().manual_seed(9))
    assert isinstance(dist, OutcomePredictive)
    assert torch.equal(dist.encoded.loc, expected.loc) and torch.equal(dist.encoded.scale, expected.scale)
    assert torch.equal(dist.median, encoding.decode(expected.loc))  # reward units
    assert torch.equal(draws, encoding.decode(ref_draws))
    # the large arms come back as rewards near 50, not as their symlog (3.9) or y / 50 (1.0)
    assert dist.median.max() > 20


def test_a_wheel_model_refuses_raw_rewards_without_a_mask():
    model = load_surrogate("cmanp-wheel")
    x, y, observed = wheel_history(5)
    with pytest.raises(ValueError, match=r"observed is required: checkpoint 'cmanp-wheel'.*symlog\(y / 1\), zeros fill"):
        model.condition(x, y)
    state = model.condition(x[:, :0], y[:, :0])  # an empty context needs no mask
    with pytest.raises(ValueError, match="observed is required"):
        model.update(state, x, y)
    with pytest.raises(TypeError, match="observed must be a bool tensor"):
        model.condition(x, y, observed=observed.float())
    with pytest.raises(ValueError, match="observed must have the shape of yc"):
        model.condition(x, y, observed=observed[:, :, :4])
    with pytest.raises(TypeError, match="generator"):
        model.condition(x, y, observed=observed, generator=0)
    # unobserved entries may hold anything, NaN included; observed ones must be finite
    nan_filled = torch.where(observed, y, torch.full_like(y, float("nan")))
    a = model.predict(model.condition(x, nan_filled, observed=observed), x).encoded.loc
    assert torch.equal(a, model.predict(model.condition(x, y, observed=observed), x).encoded.loc)
    with pytest.raises(ValueError, match="NaN or infinite values at observed entries"):
        model.condition(x, torch.where(observed, torch.full_like(y, float("inf")), y), observed=observed)
    # a model without a transform takes a mask only when everything was observed
    gp = load_surrogate("tnpd-gp1d")
    xs, ys = torch.rand(1, 4, 1), torch.rand(1, 4, 1)
    gp.condition(xs, ys, observed=torch.ones(1, 4, 1, dtype=torch.bool))
    with pytest.raises(ValueError, match="no outcome_transform to fill them"):
        gp.condition(xs, ys, observed=torch.zeros(1, 4, 1, dtype=torch.bool))


def test_every_model_applies_its_transform_the_same_way(model_name):
    """Any surrogate with a transform: data units in and out, the network reads model units;
    the training objective still scores a prior's batch (model units)."""
    model = tiny_model(model_name, x_dim=2, y_dim=5)
    bare = bare_copy(model)
    model.outcome_transform = encoding = RewardEncoding(2.0, "symlog", "noise")
    x, y, observed = wheel_history(12, dtype=torch.float64)
    xt, yt, _ = wheel_history(4, seed=7, dtype=torch.float64)
    state = model.condition(x, y, observed=observed, generator=torch.Generator().manual_seed(0))
    encoded = by_hand(encoding, y, observed, torch.Generator().manual_seed(0))
    ref = bare.condition(x, encoded)
    dist, expected = model.predict(state, xt), bare.predict(ref, xt)
    assert torch.allclose(dist.encoded.loc, expected.loc) and torch.allclose(dist.encoded.scale, expected.scale)
    # joint density in data units: the model-unit density plus the log-Jacobian of the encoding
    zt = encoding.encode(yt)
    assert torch.allclose(model.joint_log_prob(state, xt, yt),
                          bare.joint_log_prob(ref, xt, zt) + encoding.log_abs_det_jacobian(yt).sum((-2, -1)))
    if not model.joint_predictive:  # a diagonal model's joint is the sum of its marginals, in any units
        assert torch.allclose(model.joint_log_prob(state, xt, yt), dist.log_prob(yt).sum((-2, -1)))
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.allclose(model.sample(state, xt, 2, g1), encoding.decode(bare.sample(ref, xt, 2, g2)))
    # scoring a prior's batch: model units, as the trainer and the card's evaluation see it
    assert torch.equal(model.log_likelihood(x, encoded, xt, zt), bare.log_likelihood(x, encoded, xt, zt))
    assert torch.equal(model.joint_log_likelihood(x, encoded, xt, zt), bare.joint_log_likelihood(x, encoded, xt, zt))
    assert "outcome_transform=symlog(y / 2), noise fill" in repr(model)
