"""Priors: shapes, ranges, determinism, hyperparameters within their stated ranges."""

import math

import pytest
import torch

from npbandit.priors import PRIORS, BOPrior, GP1DPrior, WheelPrior, make_prior
from npbandit.priors.base import randint, step_generator, uniform
from npbandit.priors.kernels import kernel_matrix, sample_gp, sample_gp_conditional
from npbandit.priors.wheel import RewardEncoding, RewardFill, quadrant_arm, wheel_mean_rewards
from npbandit.transforms import Bilog


@pytest.mark.parametrize("name", sorted(PRIORS))  # every registered prior
def test_batches_are_deterministic_by_seed_and_index(name):
    prior = make_prior(name)
    a, b = prior.batch(4, seed=3, index=7), prior.batch(4, seed=3, index=7)
    for t1, t2 in zip((a.xc, a.yc, a.xt, a.yt), (b.xc, b.yc, b.xt, b.yt)):
        assert torch.equal(t1, t2)
    c = prior.batch(4, seed=3, index=8)
    d = prior.batch(4, seed=4, index=7)
    assert not torch.equal(c.xt[..., :1].flatten()[:3], a.xt[..., :1].flatten()[:3]) or c.xt.shape != a.xt.shape
    assert not torch.equal(d.yt.flatten()[:3], a.yt.flatten()[:3]) or d.yt.shape != a.yt.shape


@pytest.mark.parametrize("name", sorted(PRIORS))  # every registered prior
def test_batches_have_protocol_shapes(name):
    prior = make_prior(name)
    for i in range(10):
        b = prior.batch(5, 0, i)
        assert b.xc.shape[0] == b.xt.shape[0] == 5
        assert b.xc.shape[-1] == b.xt.shape[-1] == prior.x_dim
        assert b.yc.shape[-1] == b.yt.shape[-1] == prior.y_dim
        assert b.xc.shape[:2] == b.yc.shape[:2] and b.xt.shape[:2] == b.yt.shape[:2]
        assert b.xc.dtype == torch.float32 and torch.isfinite(b.yc).all() and torch.isfinite(b.yt).all()


def test_gp1d_follows_the_papers_protocol():
    prior = GP1DPrior()
    sizes = set()
    for i in range(300):
        b = prior.batch(16, 1, i)
        nc, nt = b.xc.shape[1], b.xt.shape[1]
        sizes.add(nc)
        assert 3 <= nc < 47 and 3 <= nt < 50 - nc
        assert b.xc.min() >= -2 and b.xc.max() <= 2 and b.xt.min() >= -2 and b.xt.max() <= 2
        assert ((b.info["lengthscale"] >= 0.1) & (b.info["lengthscale"] <= 0.6)).all()
        assert ((b.info["sigma_f"] >= 0.1) & (b.info["sigma_f"] <= 1.0)).all()
    assert min(sizes) <= 5 and max(sizes) >= 42  # the whole range is used
    assert prior.spec()["lengthscale"] == ["uniform", 0.1, 0.6]


def test_gp1d_batches_carry_the_targets_exact_moments():
    """The expected loss works on gp1d: yt given the context is N(yt_mean, F F^T), in the
    data's own units, and the batch is the one a draw without moments gives."""
    b = GP1DPrior().batch(256, 0, 7)
    white = torch.linalg.solve_triangular(b.yt_cov_factor.double(), (b.yt - b.yt_mean).double(), upper=False)
    assert abs(float(white.mean())) < 0.05 and abs(float(white.std()) - 1) < 0.05
    assert torch.allclose(b.yt_cov_factor.pow(2).sum(-1, keepdim=True), b.yt_var, rtol=1e-4)
    # the context pins the function down: the targets vary far less about yt_mean than about 0
    assert float((b.yt - b.yt_mean).pow(2).mean()) < 0.5 * float(b.yt.pow(2).mean())
    # replay the prior's draws with plain sample_gp: the same batch
    prior = GP1DPrior()
    b2 = prior.sample(4, torch.Generator().manual_seed(11))
    g = torch.Generator().manual_seed(11)
    nc = randint(g, 3, prior.max_points - 3)
    nt = randint(g, 3, prior.max_points - nc)
    x = uniform(g, -2.0, 2.0, 4, nc + nt, 1)
    ls, sf = uniform(g, 0.1, 0.6, 4, 1), uniform(g, 0.1, 1.0, 4)
    y = sample_gp(["rbf"] * 4, x, ls, sf.pow(2), torch.full((4,), 0.02, dtype=torch.float64), g).float()
    assert torch.equal(torch.cat([b2.yc, b2.yt], 1), y)


def test_gp_draws_are_made_on_the_device_they_are_given():
    # the meta device does no arithmetic but says where each tensor was made: a kernel matrix,
    # factor or output created on the CPU would fail to combine with it or show up here
    g = torch.Generator().manual_seed(0)
    x = uniform(g, 0.0, 1.0, 3, 12, 2)
    out = sample_gp_conditional(["rbf", "matern52", "rbf"], x, torch.full((3, 2), 0.3, dtype=torch.float64),
                                torch.ones(3, dtype=torch.float64), torch.full((3,), 0.1, dtype=torch.float64), g, 8,
                                device=torch.device("meta"))
    assert [t.device.type for t in out] == ["meta"] * 4
    assert [tuple(t.shape) for t in out] == [(3, 12, 1), (3, 4, 1), (3, 4, 1), (3, 4, 4)]
    # without device=, where the inputs are (the normals still from the CPU generator)
    f64 = {"dtype": torch.float64}
    on_meta = [t.to("meta") for t in (x, torch.full((3, 2), 0.3, **f64), torch.ones(3, **f64),
                                      torch.full((3,), 0.1, **f64))]
    out = sample_gp_conditional(["rbf", "matern52", "rbf"], *on_meta, g, 8)
    assert [t.device.type for t in out] == ["meta"] * 4


@pytest.mark.parametrize("name", ["bo", "gp1d"])
def test_a_prior_computing_on_a_device_draws_the_same_batch(name):
    prior = make_prior(name, **({"max_context": 40} if name == "bo" else {}))
    assert prior.computes_on_device
    here = prior.sample(4, step_generator(0, 3))
    fields = ("xc", "yc", "xt", "yt", "yt_mean", "yt_var", "yt_cov_factor")
    moved = prior.sample(4, step_generator(0, 3), device=torch.device("cpu"))
    for field in fields:
        assert torch.equal(getattr(here, field), getattr(moved, field)), field
    # the meta device keeps the shapes and says where each tensor ended up (a CPU machine's check)
    meta = prior.sample(4, step_generator(0, 3), device=torch.device("meta"))
    for field in fields:
        assert getattr(meta, field).device.type == "meta" and getattr(meta, field).shape == getattr(here, field).shape
    if torch.cuda.is_available():  # the same random numbers; the GPU's float64 factors round differently
        gpu = prior.batch(4, 0, 3, device="cuda")
        for field in fields:
            assert getattr(gpu, field).device.type == "cuda", field
            torch.testing.assert_close(getattr(gpu, field).cpu(), getattr(here, field), rtol=1e-4, atol=1e-4)


def test_gp_samples_have_the_kernel_covariance():
    g = torch.Generator().manual_seed(0)
    x = torch.tensor([[[0.0], [0.3], [1.5]]], dtype=torch.float64).expand(4000, -1, -1)
    ls = torch.full((4000, 1), 0.5, dtype=torch.float64)
    y = sample_gp(["matern52"] * 4000, x, ls, torch.full((4000,), 0.7, dtype=torch.float64),
                  torch.full((4000,), 0.1, dtype=torch.float64), g)[..., 0]
    empirical = y.T @ y / 4000
    expected = kernel_matrix("matern52", x[:1], x[:1], ls[:1], torch.tensor([0.7], dtype=torch.float64))[0]
    expected = expected + 0.01 * torch.eye(3, dtype=torch.float64)
    assert torch.allclose(empirical, expected, atol=0.06)


def test_bo_prior_pads_dimensions_and_standardises_by_context():
    prior = BOPrior()
    seen = set()
    for i in range(60):
        b = prior.batch(8, 2, i)
        d = b.info["dim"]
        seen.add(d)
        assert 3 <= b.xc.shape[1] <= 100 and b.xt.shape[1] == 50
        assert b.xc.shape[-1] == 6
        assert (b.xc[..., d:] == 0).all() and (b.xt[..., d:] == 0).all()
        assert b.xc[..., :d].min() >= 0 and b.xc[..., :d].max() <= 1
        ls = b.info["lengthscale"] / math.sqrt(d)
        assert ((ls >= 0.05 - 1e-6) & (ls <= 0.5 + 1e-6)).all()
        assert ((b.info["noise_std"] >= 1e-3 - 1e-9) & (b.info["noise_std"] <= 0.3 + 1e-6)).all()
        assert set(b.info["kernel"]) <= {"rbf", "matern52", "matern32"}
        # standardised by the context alone, as the BoTorch adapter does
        assert torch.allclose(b.yc.mean(1), torch.zeros(8, 1), atol=1e-5)
        assert torch.allclose(b.yc.std(1), torch.ones(8, 1), atol=1e-4)
        assert b.yt_mean.shape == b.yt.shape == b.yt_var.shape and (b.yt_var > 0).all()
    assert seen == {1, 2, 3, 4, 5, 6}


def test_bo_prior_without_padding_draws_each_batch_at_its_own_width():
    padded = BOPrior(dims=(2, 5), x_dim=8, max_context=20)
    own = BOPrior(dims=(2, 5), x_dim=8, max_context=20, padding="none")
    assert own.spec()["padding"] == "none" and not own.fixed_width and padded.fixed_width
    for i in range(6):
        a, b = padded.batch(3, 0, i), own.batch(3, 0, i)
        d = a.info["dim"]
        assert b.xc.shape[-1] == b.xt.shape[-1] == d
        # the same draw, less the padding columns
        assert torch.equal(a.xc[..., :d], b.xc) and torch.equal(a.yt, b.yt) and not a.xc[..., d:].any()
    with pytest.raises(ValueError, match="padding must be one of"):
        BOPrior(padding="wide")


def test_bo_prior_task_standardisation_is_the_old_recipe():
    b = BOPrior(standardize="task").batch(8, 2, 0)
    y = torch.cat([b.yc, b.yt], dim=1)  # standardised per task over all its points
    assert torch.allclose(y.mean(1), torch.zeros(8, 1), atol=1e-5)
    assert torch.allclose(y.std(1), torch.ones(8, 1), atol=1e-4)
    assert b.yt_mean is None and b.yt_var is None  # depend on the targets: not given
    assert "task" in BOPrior(standardize="task").spec()["y"] and "context" in BOPrior().spec()["y"]
    with pytest.raises(ValueError, match="standardize"):
        BOPrior(standardize="targets")
    with pytest.raises(ValueError, match="min_context"):
        BOPrior(min_context=1)


def test_conditional_moments_match_the_draws():
    """yt_mean / yt_var are the moments of yt given the context: over many draws with
    the context held fixed they match the empirical mean and variance."""
    g = torch.Generator().manual_seed(0)
    x = torch.rand(1, 7, 2, generator=g, dtype=torch.float64).expand(3000, 7, 2)
    ls = torch.tensor([[0.3, 0.6]], dtype=torch.float64).expand(3000, 2)
    ones = torch.ones(3000, dtype=torch.float64)
    y, mean, var, factor = sample_gp_conditional(["matern32"] * 3000, x, ls, ones, 0.1 * ones, g, 4)
    # the moments depend on the draw's context: regress the targets on it instead.
    # Given y1, y2 - mean is independent of y1 with variance var (the same for every task)
    resid = y[:, 4:] - mean
    assert torch.allclose(resid.mean(0), torch.zeros(3, 1, dtype=torch.float64), atol=0.05)
    assert torch.allclose(resid.var(0), var[0], rtol=0.1)
    assert torch.allclose(var, var[:1].expand_as(var))
    # and jointly N(mean, factor factor^T): the residuals' covariance, off-diagonal included
    joint = factor[0] @ factor[0].T
    assert torch.allclose(torch.diagonal(joint).unsqueeze(-1), var[0])
    assert torch.allclose(resid[..., 0].T.cov(), joint, rtol=0.1, atol=0.02)
    assert joint[0, 1].abs() > 0.1  # the targets are correlated, so the test sees the off-diagonal
    cov = (resid[..., 0].T @ y[:, :4, 0]) / 3000  # uncorrelated with the context
    assert cov.abs().max() < 0.06
    # the draw is sample_gp's
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.equal(sample_gp(["rbf"] * 3000, x, ls, ones, 0.1 * ones, g1),
                       sample_gp_conditional(["rbf"] * 3000, x, ls, ones, 0.1 * ones, g2, 4)[0])


def test_bo_prior_context_moments_are_in_context_units():
    b = BOPrior(dims=(2,)).batch(64, 0, 3)
    resid = (b.yt - b.yt_mean) / b.yt_var.sqrt()
    assert abs(float(resid.mean())) < 0.1 and abs(float(resid.std()) - 1) < 0.1
    # the joint covariance's factor is in the same units: its diagonal is yt_var
    assert b.yt_cov_factor.shape == (64, b.yt.shape[1], b.yt.shape[1])
    diag = b.yt_cov_factor.pow(2).sum(-1, keepdim=True)
    assert torch.allclose(diag, b.yt_var, rtol=1e-4)
    # whitened by it, the targets' residuals are independent standard normals
    white = torch.linalg.solve_triangular(b.yt_cov_factor.double(), (b.yt - b.yt_mean).double(), upper=False)
    assert abs(float(white.mean())) < 0.05 and abs(float(white.std()) - 1) < 0.05


def test_bo_prior_lengthscale_options():
    prior = BOPrior(dims=(4,), irrelevant_prob=0.5)
    ls = torch.cat([prior.batch(64, 0, i).info["lengthscale"] for i in range(4)]) / 2.0
    flat = ls >= 0.9 - 1e-6
    assert 0.35 < float(flat.float().mean()) < 0.65
    assert ((ls <= 0.5 + 1e-6) | flat).all()
    assert prior.spec()["irrelevant"]["prob"] == 0.5
    botorch = torch.cat([BOPrior(dims=(4,), lengthscale_prior="botorch").batch(64, 0, i).info["lengthscale"]
                         for i in range(8)])
    # LogNormal(sqrt(2) + log(4) / 2, sqrt(3)): median exp(sqrt 2) * 2
    assert abs(float(botorch.log().median()) - (math.sqrt(2) + math.log(4) / 2)) < 0.25
    for bad in ({"lengthscale_prior": "gamma"}, {"irrelevant_prob": 1.5}, {"irrelevant_range": (2.0, 1.0)}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            BOPrior(**bad)


@pytest.mark.parametrize("arg", ["irrelevant_prob", "near_context_frac", "context_cluster_frac", "input_warp_prob"])
@pytest.mark.parametrize("value", ["0.5", True, float("nan"), None])
def test_bo_priors_shares_are_real_numbers_not_strings_or_flags(arg, value):
    # "0.5" raised a bare TypeError from a comparison, True was taken as 1, NaN passed the range checks
    with pytest.raises(ValueError, match=f"{arg} must be a finite real number, got {value!r}"):
        BOPrior(**{arg: value})
    with pytest.raises(ValueError, match=arg):
        BOPrior(**{arg: -0.1})


def test_bo_prior_single_dimension():
    b = BOPrior(dims=(3,)).batch(4, 0, 0)
    assert b.info["dim"] == 3
    with pytest.raises(ValueError, match="dims"):
        BOPrior(dims=(7,))


def test_wheel_rewards_follow_the_protocol():
    x = torch.tensor([[0.9, 0.1], [-0.9, 0.1], [-0.9, -0.1], [0.9, -0.1], [0.1, 0.1]])
    assert quadrant_arm(x).tolist() == [1, 2, 3, 4, 1]
    means, large = wheel_mean_rewards(x, torch.tensor(0.5))
    assert means[:4].argmax(-1).tolist() == [1, 2, 3, 4]
    assert torch.allclose(means[4], torch.tensor([1.2, 1.0, 1.0, 1.0, 1.0]))
    assert large.sum() == 4 and means.max() == 50


def test_wheel_batches_drop_context_rewards_but_not_targets():
    prior = WheelPrior(reward_scale=1.0, reward_transform="identity", reward_fill="noise")
    b = prior.batch(8, 0, 0)
    assert b.xc.shape == (8, 512, 2) and b.yt.shape == (8, 50, 5)
    assert (b.xc.norm(dim=-1) <= 1).all() and (b.xt.norm(dim=-1) <= 1).all()
    delta = b.info["delta"]
    means, _ = wheel_mean_rewards(b.xt, delta[:, None])
    assert (b.yt - means).abs().max() < 0.5  # targets: every reward observed, small noise
    means_c, _ = wheel_mean_rewards(b.xc, delta[:, None])
    kept = (b.yc - means_c).abs() < 0.3
    assert 0.4 < kept.float().mean() < 0.6  # about half the context entries replaced by N(0, 1)


def test_wheel_rewards_are_encoded_as_the_spec_says():
    raw = WheelPrior(reward_scale=1.0, reward_transform="identity").batch(4, 0, 0)
    scaled = WheelPrior(reward_scale=50.0, reward_transform="identity").batch(4, 0, 0)
    symlog = WheelPrior(reward_scale=1.0, reward_transform="symlog").batch(4, 0, 0)
    spec = WheelPrior().spec()  # the default is what cmanp-wheel and tnpd-wheel use
    assert (spec["reward_scale"], spec["reward_transform"], spec["reward_fill"]) == (1.0, "symlog", "zeros")
    assert RewardEncoding() == RewardEncoding(1.0, "symlog", "zeros")
    assert torch.allclose(scaled.yc * 50.0, raw.yc, atol=1e-5) and torch.allclose(scaled.yt * 50.0, raw.yt, atol=1e-5)
    assert torch.allclose(symlog.yc, torch.sign(raw.yc) * torch.log1p(raw.yc.abs()))
    assert torch.allclose(Bilog(1.0).forward(torch.tensor([50.0, -1.0, 0.0])),
                          torch.tensor([math.log(51.0), -math.log(2.0), 0.0]))
    # monotone: the order of the arms' rewards is kept, so argmax decisions carry over
    y = torch.randn(100) * 20
    assert torch.equal(Bilog(1.0).forward(y).argsort(), y.argsort())
    with pytest.raises(ValueError, match="reward_scale"):
        WheelPrior(reward_scale=-1.0)
    with pytest.raises(ValueError, match="reward_transform"):
        WheelPrior(reward_transform="log")
    with pytest.raises(ValueError, match="reward_fill"):
        WheelPrior(reward_fill="mean")


def test_the_reward_fill_replaces_exactly_the_unobserved_entries():
    y = torch.tensor([[-60.0, float("nan"), 0.0, -123.0, 50.0]], dtype=torch.float64)
    observed = torch.tensor([[True, False, True, False, True]])
    zeros = RewardFill("zeros").apply(y, observed)  # data units: the transform comes after
    assert torch.equal(zeros, torch.tensor([[-60.0, 0.0, 0.0, 0.0, 50.0]], dtype=torch.float64))
    filled = RewardFill("noise").apply(y.float(), observed, torch.Generator().manual_seed(4))
    draws = torch.randn(1, 5, generator=torch.Generator().manual_seed(4))  # one draw per entry, in order
    assert torch.equal(filled[~observed], draws[~observed]) and torch.equal(filled[observed], y.float()[observed])
    assert RewardFill() == RewardFill("zeros") and WheelPrior(reward_fill="noise").fill == RewardFill("noise")
    with pytest.raises(TypeError, match="observed must be a bool tensor"):
        RewardFill("noise").apply(y, observed.double())
    with pytest.raises(ValueError, match="observed must have the shape"):
        RewardFill("noise").apply(y, observed[:, :3])
    with pytest.raises(TypeError, match="generator"):
        RewardFill("noise").apply(y, observed, generator=0)
    with pytest.raises(ValueError, match="reward_fill"):
        RewardFill("mean")


def test_wheel_zeros_fill_marks_exactly_the_dropped_entries():
    raw = dict(reward_scale=1.0, reward_transform="identity")
    noise, zeros = WheelPrior(**raw, reward_fill="noise").batch(8, 0, 0), WheelPrior(**raw).batch(8, 0, 0)
    dropped = zeros.yc == 0
    assert 0.45 < dropped.float().mean() < 0.55
    means, _ = wheel_mean_rewards(zeros.xc, zeros.info["delta"][:, None])
    assert (zeros.yc - means)[~dropped].abs().max() < 0.5  # every kept entry is a real reward
    assert (zeros.yt != 0).all()  # targets are never filled
    assert (noise.yc != 0).all()


def test_wheel_played_histories_observe_one_arm_per_row_as_a_bandit_run_does():
    prior = WheelPrior(history="played", reward_transform="identity")
    b = prior.batch(64, 0, 0)
    observed = b.yc != 0  # zeros fill: exactly the unplayed entries are 0
    assert (observed.sum(-1) == 1).all()
    means, _ = wheel_mean_rewards(b.xc, b.info["delta"][:, None])
    assert (b.yc - means)[observed].abs().max() < 0.5  # what was played is a real reward
    assert (b.yt != 0).all()  # targets keep every arm
    share = observed.float().mean(1)  # [task, arm]: how often each arm was played
    assert (share.min(-1).values < 0.02).float().mean() > 0.05  # in some tasks an arm is hardly ever played
    assert (share.max(-1).values > 0.5).any() and (share.max(-1).values < 0.4).any()
    best = means.argmax(-1)
    greedy = (observed.float().argmax(-1) == best).float().mean(1)
    assert greedy.min() < 0.4 and greedy.max() > 0.9  # from nearly random to nearly optimal behaviour
    spec = prior.spec()
    assert "drop_prob" not in spec and spec["history"]["played"] == "one arm per row"
    assert "history" not in WheelPrior().spec()  # the papers' random drops, as every shipped card says
    with pytest.raises(ValueError, match="history"):
        WheelPrior(history="greedy")
    with pytest.raises(ValueError, match="drop_prob"):
        WheelPrior(history="played", drop_prob=0.3)


def test_wheel_min_context_draws_the_context_size_per_batch():
    fixed = WheelPrior()
    assert fixed.spec()["n_context"] == 512 and fixed.batch(2, 0, 0).xc.shape[1] == 512
    prior = WheelPrior(n_context=64, min_context=1)
    assert prior.spec()["n_context"] == ["randint", 1, 65]
    sizes = {prior.batch(2, 0, i).xc.shape[1] for i in range(40)}
    assert min(sizes) >= 1 and max(sizes) <= 64 and len(sizes) > 10
    b = prior.batch(2, 0, 3)
    assert b.yc.shape[:2] == b.xc.shape[:2] and b.yt.shape == (2, 50, 5)  # targets keep their size
    for bad in (0, 65, 2.5):
        with pytest.raises(ValueError, match="min_context"):
            WheelPrior(n_context=64, min_context=bad)
    mixed = WheelPrior(n_context=64, min_context=1, full_context_prob=0.5)
    sizes = [mixed.batch(2, 0, i).xc.shape[1] for i in range(60)]
    assert 15 < sizes.count(64) < 45 and len(set(sizes)) > 10
    assert mixed.spec()["n_context"] == {"full": 64, "full_prob": 0.5, "else": ["randint", 1, 65]}
    with pytest.raises(ValueError, match="full_context_prob"):
        WheelPrior(full_context_prob=0.5)  # needs min_context
    with pytest.raises(ValueError, match="full_context_prob"):
        WheelPrior(min_context=1, full_context_prob=1.5)


def test_make_prior_rejects_unknown():
    with pytest.raises(ValueError, match="prior must be one of"):
        make_prior("no-prior-is-named-this")
    with pytest.raises(TypeError, match="bad parameters"):
        make_prior("gp1d", nonsense=1)
    with pytest.raises(ValueError, match="kernel"):
        GP1DPrior("periodic-ish")


def test_bo_prior_targets_near_context():
    """near_context_frac moves that share of the targets to within a few lengthscales of
    a context point, inside the cube, with the exact moments still right for them; the
    default draws (and spec) are those of earlier versions, so resumed runs see the same data."""
    plain, near = BOPrior(dims=(5,)), BOPrior(dims=(5,), near_context_frac=0.5)
    assert "near_context" not in plain.spec() and near.spec()["near_context"]["frac"] == 0.5
    b, p = near.batch(64, 0, 2), plain.batch(64, 0, 2)
    assert torch.equal(p.xc, BOPrior(dims=(5,), near_context_frac=0.0).batch(64, 0, 2).xc)
    assert ((b.xt >= 0) & (b.xt <= 1)).all()
    k = b.xt.shape[1] // 2
    dist = torch.cdist(b.xt[..., :5].double(), b.xc[..., :5].double()).amin(-1)  # [64, nt]
    # moved targets sit far closer to the context than uniform ones (5-D: ~0.4 apart with
    # 3..100 context points); the unmoved rest is as uniform as before
    assert float(dist[:, :k].median()) < 0.5 * float(dist[:, k:].median())
    assert float(dist[:, :k].amin()) < 0.01
    resid = (b.yt - b.yt_mean) / b.yt_var.sqrt()
    assert abs(float(resid.mean())) < 0.1 and abs(float(resid.std()) - 1) < 0.1
    for bad in ({"near_context_frac": -0.1}, {"near_context_frac": 1.5}, {"near_context_scale": (0.0, 1.0)}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            BOPrior(**bad)


def test_bo_prior_clustered_context():
    """context_cluster_frac moves that share of the context (leaving two uniform points)
    near the uniform ones, down to near-repeats, inside the cube; the moments still hold."""
    prior = BOPrior(dims=(3,), context_cluster_frac=0.5, near_context_frac=0.5)
    assert prior.spec()["context_cluster"]["frac"] == 0.5
    for i in range(4):
        b = prior.batch(32, 0, i)
        nc = b.xc.shape[1]
        k = min(int(0.5 * nc), nc - 2)
        assert ((b.xc >= 0) & (b.xc <= 1)).all()
        x = b.xc[..., :3].double()
        nearest = torch.cdist(x[:, nc - k:], x[:, :nc - k]).amin(-1)  # moved -> nearest uniform point
        spread = torch.cdist(x[:, :nc - k], x[:, :nc - k])
        spread = spread[spread > 0].median()
        if k > 0:
            assert float(nearest.median()) < 0.5 * float(spread)
        resid = (b.yt - b.yt_mean) / b.yt_var.sqrt()
        assert abs(float(resid.mean())) < 0.15 and abs(float(resid.std()) - 1) < 0.15
    b = BOPrior(dims=(3,), context_cluster_frac=0.9, min_context=3, max_context=3).batch(8, 0, 0)
    assert b.xc.shape[1] == 3  # at most nc - 2 moved: one here
    with pytest.raises(ValueError, match="context_cluster_frac"):
        BOPrior(context_cluster_frac=1.0)


def _one_task(prior: BOPrior, index: int = 0, k: int = 0):
    b = prior.batch(4, 7, index)
    d = b.info["dim"]
    exact = torch.distributions.Normal(b.yt_mean[k], b.yt_var[k].sqrt()).log_prob(b.yt[k]).reshape(-1)
    return b.xc[k, :, :d].double(), b.yc[k].double(), b.xt[k, :, :d].double(), b.yt[k].double(), exact.double()


def test_bayes_predictive_with_the_true_hyperparameters_is_the_exact_gp():
    """A prior with one kernel, lengthscale and noise: the importance sampler has nothing to
    learn, and the Student-t predictive (unknown mean and scale) is the exact GP's up to the
    small price of not knowing the outputs' offset and scale."""
    prior = BOPrior(dims=(2,), min_context=60, max_context=60, lengthscale_range=(0.3, 0.3),
                    noise_std_range=(0.05, 0.05), kernels=("matern52",))
    xc, yc, xt, yt, exact = _one_task(prior)
    posterior = prior.bayes_posterior(xc, yc, num_samples=8)
    lp = posterior.log_prob(xt, yt)
    assert lp.shape == (len(xt),)
    assert posterior.ess == pytest.approx(8.0)  # identical draws, equal weights
    assert float(lp.mean()) == pytest.approx(float(exact.mean()), abs=0.05)
    b = prior.batch(4, 7, 0)  # the moments of the latent value plus the noise are the exact GP's
    mean, var = posterior.moments(xt, observation_noise=True)
    torch.testing.assert_close(mean, b.yt_mean[0].double().reshape(-1), atol=0.05, rtol=0.0)
    torch.testing.assert_close(var, b.yt_var[0].double().reshape(-1), atol=0.05, rtol=0.2)
    latent_mean, latent_var = posterior.moments(xt)
    torch.testing.assert_close(latent_mean, mean)
    assert (latent_var < var).all()


def test_bayes_predictive_is_affine_invariant_and_learns_the_hyperparameters():
    prior = BOPrior(dims=(3,))
    xc, yc, xt, yt, exact = _one_task(prior, index=3)
    lp, moved = (prior.bayes_posterior(xc, a * yc + b, num_samples=512, generator=torch.Generator().manual_seed(1))
                 .log_prob(xt, a * yt + b) for a, b in ((1.0, 0.0), (3.0, -7.0)))
    torch.testing.assert_close(moved, lp - math.log(3))
    posterior = prior.bayes_posterior(xc, yc, num_samples=512, generator=torch.Generator().manual_seed(1))
    assert 1.0 <= posterior.ess <= 512 and len(posterior.kernels) <= 512
    baseline = torch.distributions.Normal(yc.mean(), yc.std()).log_prob(yt).mean()
    assert baseline < lp.mean() <= exact.mean() + 0.5


def test_bayes_predictive_rejects_bad_inputs():
    prior = BOPrior(dims=(2,))
    x, y = torch.rand(5, 2, dtype=torch.float64), torch.randn(5, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="at least 3 context points"):
        prior.bayes_posterior(x[:2], y[:2])
    with pytest.raises(ValueError, match="d in"):
        prior.bayes_posterior(torch.rand(5, 3, dtype=torch.float64), y)
    with pytest.raises(ValueError, match="num_samples"):
        prior.bayes_posterior(x, y, num_samples=0)
    with pytest.raises(ValueError, match="finite"):
        prior.bayes_posterior(x, y.clone().fill_(float("nan")))
    with pytest.raises(ValueError, match="xt must be"):
        prior.bayes_posterior(x, y, num_samples=4).log_prob(torch.rand(3, 3, dtype=torch.float64), y[:3])


@pytest.mark.parametrize("kernel", ["rbf", "matern52", "matern32"])
def test_kernel_gradient_is_finite_where_points_coincide(kernel):
    x1 = torch.rand(1, 3, 2, dtype=torch.float64)
    x2 = x1[:, :2].clone().requires_grad_(True)  # two of them on top of x1's points
    kernel_matrix(kernel, x1, x2, torch.full((1, 2), 0.3, dtype=torch.float64), torch.ones(1, dtype=torch.float64)
                  ).sum().backward()
    assert torch.isfinite(x2.grad).all()


@pytest.mark.parametrize("make,match", [
    (lambda: GP1DPrior(lengthscale_range=(-0.6, -0.1)), "lengthscale_range"),
    (lambda: GP1DPrior(outputscale_range=(-1.0, -0.1)), "outputscale_range"),
    (lambda: GP1DPrior(noise_std=float("nan")), "noise_std"),
    (lambda: GP1DPrior(noise_std=-0.1), "noise_std"),
    (lambda: GP1DPrior(max_points=10.5), "max_points"),
    (lambda: GP1DPrior(x_range=(0.0, float("inf"))), "x_range"),
    (lambda: BOPrior(dims=(2.7,), x_dim=3), r"dims\[0\]"),
    (lambda: BOPrior(x_dim=6.5), "x_dim"),
    (lambda: BOPrior(max_context=100.5), "max_context"),
    (lambda: BOPrior(noise_std_range=(float("nan"), 0.3)), "noise_std_range"),
    (lambda: WheelPrior(small_reward_std=float("nan")), "small_reward_std"),
    (lambda: WheelPrior(small_reward_std=-1.0), "small_reward_std"),
    (lambda: WheelPrior(n_context=512.0), "n_context"),
    (lambda: GP1DPrior().batch(True, 0, 0), "batch_size"),
    (lambda: GP1DPrior().batch(2, 1.9, 0), "seed"),
    (lambda: GP1DPrior().batch(2, 0, -1), "index"),
])
def test_priors_refuse_parameters_that_would_be_truncated_or_poison_the_batches(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_gp1d_prior_on_another_box_says_so_in_its_card():
    from npbandit.surrogates.pretrained import checkpoint_use

    prior = GP1DPrior(x_range=(0.0, 4.0))
    assert prior.input_domain == (0.0, 4.0) and GP1DPrior().input_domain == (-2.0, 2.0)
    card = {"prior": prior.spec(), "x_dim": 1, "y_dim": 1}
    assert checkpoint_use(card)["input_domain"] == [0.0, 4.0]
    assert not GP1DPrior.symmetric_in(prior.spec())  # reflecting about 0 leaves [0, 4]
    assert GP1DPrior.symmetric_in(GP1DPrior().spec())


def test_bo_prior_warped_inputs_are_a_gp_in_the_warped_coordinates():
    """With every dimension warped, the batch's exact moments are those of a GP on the
    Kumaraswamy-warped inputs (computed here from the drawn concentrations), not on the
    inputs the model sees; without warping nothing is drawn or recorded."""
    prior = BOPrior(dims=(2,), min_context=20, max_context=20, kernels=("rbf",), noise_std_range=(0.1, 0.1),
                    input_warp_prob=1.0)
    b = prior.batch(3, 5, 0)
    ab = b.info["input_warp"].double()
    assert ab.shape == (3, 2, 2) and (ab != 1).all()
    k = 1
    a, c = ab[k, :, 0], ab[k, :, 1]
    xc, xt = b.xc[k, :, :2].double(), b.xt[k, :, :2].double()
    assert ((0 <= xc) & (xc <= 1)).all()
    wc, wt = 1 - (1 - xc ** a) ** c, 1 - (1 - xt ** a) ** c
    ls, noise = b.info["lengthscale"][k].double(), b.info["noise_std"][k].double()
    kern = lambda u, v: kernel_matrix("rbf", u[None], v[None], ls[None], torch.ones(1, dtype=torch.float64))[0]  # noqa: E731
    gram = kern(wc, wc) + (noise ** 2 + 1e-8) * torch.eye(20, dtype=torch.float64)
    # the predictive variance does not depend on the outputs: in the context's units it is
    # the GP's divided by the context's variance
    var = 1 + noise ** 2 - (kern(wt, wc) * torch.linalg.solve(gram, kern(wc, wt)).T).sum(-1)
    scale = b.info["context_std"][k].double() ** 2
    torch.testing.assert_close(b.yt_var[k].double().reshape(-1), var / scale, atol=1e-4, rtol=1e-3)
    unwarped = 1 + noise ** 2 - (kern(xt, xc) * torch.linalg.solve(
        kern(xc, xc) + (noise ** 2 + 1e-8) * torch.eye(20, dtype=torch.float64), kern(xc, xt)).T).sum(-1)
    assert not torch.allclose(b.yt_var[k].double().reshape(-1), unwarped / scale, atol=1e-2)
    yc = b.yc[k].double()
    assert prior.spec()["input_warp"]["prob"] == 1.0
    assert "input_warp" not in BOPrior(dims=(2,)).batch(3, 5, 0).info
    with pytest.raises(ValueError, match="input_warp_prob"):
        BOPrior(input_warp_prob=1.5)
    with pytest.raises(ValueError, match="input warps"):
        prior.bayes_posterior(xc, yc)
