"""CMANP-AND: the not-diagonal head, its autoregressive deployment, joint sampling,
training on the joint likelihood; and the joint protocol's defaults for diagonal models."""

import json
import math

import pytest
import torch
from conftest import random_set, tiny_model
from torch.distributions import MultivariateNormal

from npbandit.surrogates import CMANPAND, build
from npbandit.training import TrainConfig, train


def setup(y_dim=1, n=7, m=11, batch=3, seed=0, **config):
    model = tiny_model("cmanp-and", y_dim=y_dim, seed=seed, **config)
    xc, yc = random_set(batch, n, y_dim=y_dim, seed=seed + 1)
    xt, yt = random_set(batch, m, y_dim=y_dim, seed=seed + 2)
    return model, xc, yc, xt, yt


def dense_joint(model, state, xt):
    """The ND Gaussian written out: mean and ``Phi Phi^T + diag(s^2)`` as dense tensors."""
    joint = model.joint(state, xt)
    cov = joint.cov_factor @ joint.cov_factor.transpose(-1, -2) + torch.diag_embed(joint.cov_diag)
    return joint.loc, cov


def test_registered_with_sizes_and_paper_defaults():
    for size in ("paper", "small", "tiny"):
        model = build("cmanp-and", 1, 1, size=size)
        assert isinstance(model, CMANPAND) and model.joint_predictive
    c = build("cmanp-and", 1, 1).config
    assert (c.d_model, c.n_layers, c.n_latents, c.n_block_latents, c.rank, c.block_size) == (64, 6, 128, 128, 20, 5)
    assert not build("cmanp", 1, 1, size="tiny").joint_predictive
    with pytest.raises(ValueError, match="rank"):
        build("cmanp-and", 1, 1, rank=0)
    with pytest.raises(ValueError, match="block_size"):
        build("cmanp-and", 1, 1, block_size=0)


@pytest.mark.parametrize("y_dim", [1, 2])
def test_shapes(y_dim):
    model, xc, yc, xt, yt = setup(y_dim=y_dim)
    state = model.condition(xc, yc)
    g = torch.Generator().manual_seed(0)
    assert model.sample(state, xt, 4, g).shape == (4, 3, 11, y_dim)
    assert model.sample(state, xt, 1, g, block_size=3).shape == (1, 3, 11, y_dim)
    assert model.sample(state, xt[:, :0], 2, g).shape == (2, 3, 0, y_dim)
    joint = model.joint(state, xt)
    assert joint.batch_shape == (3,) and joint.event_shape == (11 * y_dim,)
    assert joint.cov_factor.shape == (3, 11 * y_dim, model.config.rank)
    assert model.joint_log_prob(state, xt, yt).shape == (3,)
    assert model.joint_log_likelihood(xc, yc, xt, yt).shape == ()
    assert model.predict(state, xt).loc.shape == (3, 11, y_dim)


@pytest.mark.parametrize("y_dim", [1, 2])
def test_joint_log_prob_is_the_nd_gaussians(y_dim):
    """One block holding every target: the log-density of N(mu, Phi Phi^T + diag(s^2))
    written out densely, and the marginals are that Gaussian's."""
    model, xc, yc, xt, yt = setup(y_dim=y_dim)
    state = model.condition(xc, yc)
    loc, cov = dense_joint(model, state, xt)
    expected = MultivariateNormal(loc, covariance_matrix=cov).log_prob(yt.flatten(-2))
    assert torch.allclose(model.joint_log_prob(state, xt, yt, block_size=11), expected, atol=1e-10)
    assert torch.allclose(model.joint_log_prob(state, xt, yt, block_size=1000), expected, atol=1e-10)
    ll = model.joint_log_likelihood(xc, yc, xt, yt, block_size=11)
    assert torch.allclose(ll, (expected / 11).mean(), atol=1e-10)
    marginal = model.predict(state, xt)
    assert torch.allclose(marginal.variance.flatten(-2), torch.diagonal(cov, dim1=-2, dim2=-1), atol=1e-12)
    assert torch.allclose(marginal.loc.flatten(-2), loc, atol=1e-12)
    # consistent: a sub-block's joint is the sub-matrix, whatever else shares the block
    sub = model.joint(state, xt[:, 2:5])
    sub_cov = sub.cov_factor @ sub.cov_factor.transpose(-1, -2) + torch.diag_embed(sub.cov_diag)
    rows = slice(2 * y_dim, 5 * y_dim)
    assert torch.allclose(sub_cov, cov[:, rows, rows], atol=1e-12)


def test_autoregressive_log_prob_streams_exactly():
    """Blocks of b_Q: each block's joint given the context plus the earlier blocks' true
    values, folded in with ``update``, equals re-conditioning on that union."""
    model, xc, yc, xt, yt = setup()
    state = model.condition(xc, yc)
    for b in (1, 3, 5):
        expected = torch.zeros(3, dtype=torch.float64)
        for start in range(0, 11, b):
            union = model.condition(torch.cat([xc, xt[:, :start]], 1), torch.cat([yc, yt[:, :start]], 1))
            block = slice(start, start + b)
            expected += model.joint(union, xt[:, block]).log_prob(yt[:, block].flatten(-2))
        assert torch.allclose(model.joint_log_prob(state, xt, yt, block_size=b), expected, atol=1e-9), b
    default = model.joint_log_prob(state, xt, yt)
    assert torch.equal(default, model.joint_log_prob(state, xt, yt, block_size=model.config.block_size))
    # blocks of b_Q < M give another joint than one block
    assert not torch.allclose(default, model.joint_log_prob(state, xt, yt, block_size=11))


@pytest.mark.slow
def test_sample_with_one_block_is_a_draw_from_the_one_shot_joint():
    model, xc, yc, xt, _ = setup(y_dim=2)
    state = model.condition(xc, yc)
    draws = model.sample(state, xt, 3, torch.Generator().manual_seed(4), block_size=11)
    # the documented draw order: r shared normals per draw, then b * dy own normals
    g = torch.Generator().manual_seed(4)
    joint = model.joint(state.repeat(3), xt.repeat(3, 1, 1))
    shared = torch.randn((9, model.config.rank), generator=g, dtype=torch.float64)
    own = torch.randn((9, 11, 2), generator=g, dtype=torch.float64)
    by_hand = (joint.loc + (joint.cov_factor @ shared.unsqueeze(-1)).squeeze(-1)
               + joint.cov_diag.sqrt() * own.flatten(-2))
    assert torch.allclose(draws, by_hand.reshape(3, 3, 11, 2), atol=1e-12)
    # and its moments are the joint's
    with torch.no_grad():
        one = model.condition(xc[:1], yc[:1])
        many = model.sample(one, xt[:1, :4], 20000, torch.Generator().manual_seed(5), block_size=4).reshape(20000, -1)
        loc, cov = dense_joint(model, one, xt[:1, :4])
    assert torch.allclose(many.mean(0), loc[0], atol=4 * float(cov[0].diagonal().max().sqrt()) / 20000 ** 0.5)
    assert torch.allclose(torch.cov(many.T), cov[0], atol=0.05 * float(cov[0].diagonal().max()))


def test_autoregressive_sample_streams_exactly():
    """A draw in blocks of 2 equals drawing each block from the state re-conditioned on
    the context and the draw's earlier blocks, with the same normals."""
    model, xc, yc, xt, _ = setup(m=5, batch=2)
    state = model.condition(xc, yc)
    draws = model.sample(state, xt, 2, torch.Generator().manual_seed(7), block_size=2)
    g = torch.Generator().manual_seed(7)
    x_all, y_all = xc.repeat(2, 1, 1), yc.repeat(2, 1, 1)
    targets, blocks = xt.repeat(2, 1, 1), []
    for start in range(0, 5, 2):
        x = targets[:, start:start + 2]
        joint = model.joint(model.condition(x_all, y_all), x)
        shared = torch.randn((4, model.config.rank), generator=g, dtype=torch.float64)
        own = torch.randn((4, x.shape[1], 1), generator=g, dtype=torch.float64)
        y = joint.loc + (joint.cov_factor @ shared.unsqueeze(-1)).squeeze(-1) + joint.cov_diag.sqrt() * own.flatten(-2)
        blocks.append(y.unsqueeze(-1))
        x_all, y_all = torch.cat([x_all, x], 1), torch.cat([y_all, blocks[-1]], 1)
    assert torch.allclose(draws, torch.cat(blocks, 1).reshape(2, 2, 5, 1), atol=1e-10)


def test_sample_is_reproducible_and_differentiable():
    model, xc, yc, xt, _ = setup()
    state = model.condition(xc, yc)
    a = model.sample(state, xt, 2, torch.Generator().manual_seed(1))
    b = model.sample(state, xt, 2, torch.Generator().manual_seed(1))
    assert torch.equal(a, b)
    x = xt.clone().requires_grad_(True)
    model.sample(state, x, 2, torch.Generator().manual_seed(1)).sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()


def test_arguments_are_validated():
    model, xc, yc, xt, yt = setup()
    state = model.condition(xc, yc)
    with pytest.raises(ValueError, match="num_samples"):
        model.sample(state, xt, 0)
    with pytest.raises(TypeError, match="generator"):
        model.sample(state, xt, 2, generator=0)
    with pytest.raises(ValueError, match="block_size"):
        model.sample(state, xt, 2, block_size=0)
    with pytest.raises(ValueError, match="block_size"):
        model.joint_log_prob(state, xt, yt, block_size=2.0)
    with pytest.raises(TypeError, match="state"):
        model.sample({"xc": xc}, xt, 2)
    with pytest.raises(ValueError, match="batch size"):
        model.joint_log_prob(state, xt[:1], yt[:1])
    with pytest.raises(ValueError, match="at least one target"):
        model.joint(state, xt[:, :0])
    with pytest.raises(ValueError, match="yt_var"):
        model.training_loss(xc, yc, xt, yt, yt_var=torch.ones_like(yt))


def test_training_loss_is_the_joint_negative_log_likelihood():
    model, xc, yc, xt, yt = setup()
    joint = model.joint_log_likelihood(xc, yc, xt, yt, block_size=xt.shape[1])
    assert torch.allclose(model.training_loss(xc, yc, xt, yt), -joint)
    # not the marginal one: the head's correlations enter the loss
    assert not torch.allclose(model.training_loss(xc, yc, xt, yt), -model.log_likelihood(xc, yc, xt, yt))


def test_trains_through_the_trainer_and_records_the_joint_metric(tmp_path):
    config = TrainConfig(model="cmanp-and", prior="gp1d", steps=4, out=str(tmp_path / "run"), size="tiny",
                         eval_every=4, eval_batches=1, final_eval_batches=1, checkpoint_every=4)
    card = json.loads(train(config, progress=False).card.read_text())
    assert card["model"] == "cmanp-and"
    joint = card["evaluation"]["joint_log_likelihood"]
    assert set(joint) == {"rbf", "matern52"} and all(v == v for v in joint.values())
    assert card["evaluation"]["joint_block_size"] == 5
    # gp1d batches carry the targets' joint covariance, so the expected joint loss trains there
    expected = train(TrainConfig(model="cmanp-and", prior="gp1d", steps=2, out=str(tmp_path / "gp"), size="tiny",
                                 eval_every=2, eval_batches=1, final_eval_batches=1, loss="expected"), progress=False)
    assert json.loads(expected.card.read_text())["training"]["loss"] == "expected"
    with pytest.raises(ValueError, match="yt_cov_factor"):  # a prior without the targets' joint covariance
        train(TrainConfig(model="cmanp-and", prior="wheel", steps=1, out=str(tmp_path / "wheel"), size="tiny",
                          loss="expected"), progress=False)


def test_expected_joint_loss_is_the_dense_gaussian_expectation():
    """E[-log q(y)] over y ~ N(mu, F F^T), q = N(m, S): (n log 2 pi + log|S| + tr(S^-1 F F^T)
    + (mu - m)^T S^-1 (mu - m)) / 2, per target, averaged over tasks."""
    model, xc, yc, xt, yt = setup(m=6)
    g = torch.Generator().manual_seed(3)
    factor = torch.randn(xt.shape[0], 6, 6, generator=g, dtype=torch.float64).tril() * 0.3
    loc, cov = dense_joint(model, model.condition(xc, yc), xt)
    mu = yt.flatten(-2)
    inv = torch.linalg.inv(cov)
    diff = (mu - loc).unsqueeze(-1)
    dense = 0.5 * (6 * math.log(2 * math.pi) + torch.logdet(cov) + torch.diagonal(inv @ factor @ factor.mT, dim1=-2,
                   dim2=-1).sum(-1) + (diff.mT @ inv @ diff).reshape(-1))
    loss = model.training_loss(xc, yc, xt, yt, yt_var=factor.pow(2).sum(-1, keepdim=True), yt_cov_factor=factor)
    assert torch.allclose(loss, (dense / 6).mean())
    # no spread: the sampled loss at yt
    zero = torch.zeros_like(factor)
    assert torch.allclose(model.training_loss(xc, yc, xt, yt, yt_cov_factor=zero), model.training_loss(xc, yc, xt, yt))
    # its Monte Carlo estimate agrees (the formula is the expectation of the sampled loss)
    draws = mu + (factor @ torch.randn(4000, *mu.shape, 1, generator=g, dtype=torch.float64)).squeeze(-1)
    joint = model.joint(model.condition(xc, yc), xt)
    with torch.no_grad():
        mc = -(joint.log_prob(draws) / 6).mean()
    assert abs(float(mc - loss)) < 0.05 * abs(float(loss)) + 0.05
    with pytest.raises(ValueError, match="yt_cov_factor"):
        model.training_loss(xc, yc, xt, yt, yt_cov_factor=factor[:, :5, :5])


def test_trains_with_the_expected_joint_loss_on_the_bo_prior(tmp_path):
    config = TrainConfig(model="cmanp-and", prior="bo", steps=3, out=str(tmp_path / "bo"), size="tiny",
                         loss="expected", prior_params={"max_context": 10}, eval_every=3, eval_batches=1,
                         final_eval_batches=1, checkpoint_every=3)
    result = train(config, progress=False)
    assert result.step == 3 and math.isfinite(result.log[-1]["train_loss"])


def test_starts_from_a_trained_cmanp(tmp_path):
    """--init-from a CMANP: its weights become the encoder, the covariance factors start
    small, so the marginal predictive starts next to the CMANP's."""
    source = train(TrainConfig(model="cmanp", prior="gp1d", steps=2, out=str(tmp_path / "src"), size="tiny",
                               eval_every=2, eval_batches=1, final_eval_batches=1, checkpoint_every=2),
                   progress=False)
    run = train(TrainConfig(model="cmanp-and", prior="gp1d", steps=1, lr=1e-12, out=str(tmp_path / "and"),
                            size="tiny", init_from=str(source.card), eval_every=1, eval_batches=1,
                            final_eval_batches=1, checkpoint_every=1), progress=False)
    for (k, p), q in zip(source.model.state_dict().items(), run.model.cmanp.state_dict().values()):
        assert torch.allclose(p, q, atol=1e-6), k
    xc, yc = random_set(2, 8, x_dim=1, seed=4)
    xt, _ = random_set(2, 5, x_dim=1, seed=5)
    cmanp, joint = source.model.float().eval(), run.model.float().eval()
    with torch.no_grad():
        a = cmanp.predict(cmanp.condition(xc.float(), yc.float()), xt.float())
        b = joint.predict(joint.condition(xc.float(), yc.float()), xt.float())
        factors = joint._heads(joint.condition(xc.float(), yc.float()), xt.float())[2]
    assert torch.allclose(a.loc, b.loc, atol=1e-5)
    assert torch.allclose(a.scale, b.scale, rtol=0.05)
    assert 0 < float(factors.abs().max()) < 0.05  # small, not zero: a zero factor would never learn
    card = json.loads(run.card.read_text())
    assert card["training"]["init_from"]["name"] == json.loads(source.card.read_text())["name"]
    with pytest.raises(ValueError, match="init_from"):  # another encoder size
        train(TrainConfig(model="cmanp-and", prior="gp1d", steps=1, out=str(tmp_path / "bad"), size="small",
                          init_from=str(source.card)), progress=False)
    with pytest.raises(ValueError, match="starts only from"):
        tiny_model("cmanp-and", x_dim=1).initialise_from(tiny_model("cmanp", x_dim=1, n_latents=4))
    with pytest.raises(ValueError, match="tnpd"):
        tiny_model("cmanp-and", x_dim=1).initialise_from(tiny_model("tnpd", x_dim=1))


def test_diagonal_models_joint_is_the_product_of_their_marginals():
    model = tiny_model("cmanp")
    xc, yc = random_set(2, 6, seed=1)
    xt, yt = random_set(2, 5, seed=2)
    state = model.condition(xc, yc)
    dist = model.predict(state, xt)
    assert torch.allclose(model.joint_log_prob(state, xt, yt), dist.log_prob(yt).sum((-2, -1)))
    assert torch.allclose(model.joint_log_likelihood(xc, yc, xt, yt), model.log_likelihood(xc, yc, xt, yt))
    with torch.no_grad():
        draws = model.sample(state, xt, 4000, torch.Generator().manual_seed(0))
    assert draws.shape == (4000, 2, 5, 1)
    corr = torch.corrcoef(draws[:, 0, :, 0].T)
    assert (corr - torch.eye(5)).abs().max() < 0.1  # independent across targets
    assert torch.allclose(draws.mean(0), dist.loc.detach(), atol=0.1 * float(dist.scale.detach().max()))
