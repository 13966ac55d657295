"""Symmetric views: InputViews, and NPModel averaging over them (n_views)."""

import math

import pytest
import torch
from botorch.sampling import SobolQMCNormalSampler
from conftest import tiny_model
from helpers import tiny_checkpoint

from npbandit import NPModel, load_surrogate
from npbandit.surrogates.pretrained import checkpoint_use
from npbandit.surrogates.views import InputViews, symmetry_count


def test_views_are_distinct_symmetries_of_the_box_that_leave_the_padding_alone():
    views = InputViews(3, 6, 8, (0.0, 1.0))
    assert views.order.shape == (8, 6) and views.reflect.shape == (8, 6)
    assert torch.equal(views.order[0], torch.arange(6)) and not views.reflect[0].any()  # view 0: the data as given
    assert torch.equal(views.order[:, 3:], torch.arange(3, 6).expand(8, 3)) and not views.reflect[:, 3:].any()
    assert len({(tuple(o.tolist()), tuple(r.tolist())) for o, r in zip(views.order, views.reflect)}) == 8
    assert all(sorted(o[:3].tolist()) == [0, 1, 2] for o in views.order)
    x = torch.rand(2, 5, 6, dtype=torch.float64)
    x[..., 3:] = 0.0
    viewed = views.inputs(x).reshape(2, 8, 5, 6)
    for k in range(8):  # element b * K + k is element b in view k
        expected = torch.where(views.reflect[k], 1.0 - x, x)[..., views.order[k]]
        assert torch.equal(viewed[:, k], expected)
    assert (viewed[..., 3:] == 0).all()
    assert torch.equal(views.outputs(torch.tensor([[1.0], [2.0]])).squeeze(-1), torch.tensor([1.0] * 8 + [2.0] * 8))
    assert InputViews(2, 2, 1, (-2.0, 2.0)).inputs(x[..., :2]).equal(x[..., :2])  # one view: the identity


def test_views_combine_into_the_moments_of_the_mixture():
    views = InputViews(2, 2, 3, (0.0, 1.0))
    mean = torch.tensor([1.0, 2.0, 6.0, 0.0, 0.0, 0.0]).reshape(6, 1)
    var = torch.tensor([1.0, 1.0, 4.0, 2.0, 2.0, 2.0]).reshape(6, 1)
    centre, spread = views.combine(mean, var)
    assert torch.allclose(centre.squeeze(-1), torch.tensor([3.0, 0.0]))
    # E[var] + Var[mean]: (1 + 1 + 4) / 3 + ((1-3)^2 + (2-3)^2 + (6-3)^2) / 3
    assert torch.allclose(spread.squeeze(-1), torch.tensor([2.0 + 14.0 / 3.0, 2.0]))


def test_views_refuse_what_the_box_does_not_have():
    assert symmetry_count(1) == 2 and symmetry_count(3) == 48
    with pytest.raises(ValueError, match="n_views must be at most 2"):
        InputViews(1, 6, 3, (0.0, 1.0))
    with pytest.raises(ValueError, match="d must be at most"):
        InputViews(7, 6, 2, (0.0, 1.0))
    with pytest.raises(ValueError, match="n_views"):
        InputViews(2, 6, 0, (0.0, 1.0))


def _data(n=12, d=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    return X, torch.sin(6 * X).sum(-1, keepdim=True)


def test_npmodel_with_views_predicts_the_mixture_of_the_network_in_each_view():
    net = tiny_model("cmanp", x_dim=3)
    X, Y = _data()
    model = NPModel(net, X, Y, n_views=3)
    xt = torch.rand(4, 2, dtype=torch.float64)
    views = InputViews(2, 3, 3, (0.0, 1.0))
    means, variances = [], []
    for k in range(3):  # the network conditioned on one view at a time, padded and standardised as NPModel does
        def viewed(x, k=k):
            x = torch.cat([x, torch.zeros(len(x), 1, dtype=x.dtype)], -1)
            return torch.where(views.reflect[k], 1.0 - x, x)[:, views.order[k]].unsqueeze(0)
        y = (Y - Y.mean()) / Y.std()
        dist = net.predict(net.condition(viewed(X), y.unsqueeze(0)), viewed(xt))
        means.append(dist.loc.reshape(-1))
        variances.append(dist.variance.reshape(-1))
    M, V = torch.stack(means), torch.stack(variances)
    mean, var = model._marginals(xt.unsqueeze(-2))
    assert torch.allclose(mean.reshape(-1), M.mean(0), atol=1e-10)
    assert torch.allclose(var.reshape(-1), V.mean(0) + M.var(0, unbiased=False), atol=1e-10)
    assert not torch.allclose(mean.reshape(-1), M[0])  # the views differ for an untrained network


def test_a_model_over_every_symmetry_of_the_box_is_invariant():
    net = tiny_model("cmanp", x_dim=1)
    X, Y = _data(d=1)
    xt = torch.rand(5, 1, 1, dtype=torch.float64)
    a = NPModel(net, X, Y, n_views=2).posterior(xt)
    b = NPModel(net, 1.0 - X, Y, n_views=2).posterior(1.0 - xt)  # the same data, reflected
    assert torch.allclose(a.mean, b.mean, atol=1e-10) and torch.allclose(a.variance, b.variance, atol=1e-10)
    c = NPModel(net, 1.0 - X, Y).posterior(1.0 - xt)
    assert not torch.allclose(NPModel(net, X, Y).posterior(xt).mean, c.mean)  # one view is not invariant


def test_streaming_and_fantasies_work_view_by_view():
    net = tiny_model("cmanp", x_dim=2)
    X, Y = _data(n=15)
    model = NPModel(net, X[:10], Y[:10], n_views=4, restandardize_tol=100.0)
    streamed = model.condition_on_observations(X[10:], Y[10:])
    full = NPModel(net, X, Y, n_views=4, restandardize_tol=100.0)
    full._set_statistics(model._train_Y_t)  # the streamed model keeps its first standardisation
    full._state = full._condition(full._to_surrogate_inputs(X), Y)
    xt = torch.rand(6, 1, 2, dtype=torch.float64)
    assert torch.allclose(streamed.posterior(xt).mean, full.posterior(xt).mean, atol=1e-9)
    fantasy = model.fantasize(X[10:12].unsqueeze(0), SobolQMCNormalSampler(torch.Size([3]), seed=0))
    assert fantasy.batch_shape == torch.Size([3, 1])
    f_mean = fantasy.posterior(xt[:1]).mean  # 3 x 1 x 1 x 1
    for s in range(3):  # each fantasy is the model with its own two points streamed in
        Y_s = fantasy._pending[2][s].reshape(2, 1)  # the fantasy's observations: (parent, X, Y)
        one = model.condition_on_observations(X[10:12], Y_s)
        assert torch.allclose(f_mean[s].reshape(-1), one.posterior(xt[:1]).mean.reshape(-1), atol=1e-9)


def test_joint_draws_of_a_model_with_views_follow_its_posterior():
    net = tiny_model("cmanp", x_dim=2)
    X, Y = _data()
    model = NPModel(net, X, Y, n_views=4)
    xs = torch.rand(3, 2, dtype=torch.float64)
    draws = model.joint_sample(xs, 4000, torch.Generator().manual_seed(0))
    post = model.posterior(xs.unsqueeze(-2))
    assert draws.shape == (4000, 3, 1)
    tolerance = float(4 * post.variance.max().sqrt() / 60)  # 4 standard errors of a mean of 4000 draws
    assert torch.allclose(draws.mean(0).reshape(-1), post.mean.reshape(-1), atol=tolerance)
    assert torch.allclose(draws.var(0).reshape(-1), post.variance.reshape(-1), rtol=0.15)


def test_from_pretrained_takes_the_views_the_card_recommends_and_refuses_them_elsewhere(tmp_path):
    X, Y = _data(d=3)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    assert model._views is not None and model._views.n_views == checkpoint_use(model.surrogate.card)["n_views"] == 4
    assert NPModel.from_pretrained("cmanp-bo", X[:, :1], Y)._views.n_views == 2  # a 1-D box has two symmetries
    assert NPModel.from_pretrained("cmanp-bo", X, Y, n_views=1)._views is None
    assert NPModel.from_pretrained("cmanp-and-bo", X, Y)._views is None  # joint-predictive: none by default
    assert NPModel.from_pretrained("tnpd-bo", X, Y)._views is None  # its card recommends none
    assert NPModel.from_pretrained("tnpd-bo", X, Y, n_views=4)._views.n_views == 4
    with pytest.raises(ValueError, match="joint-predictive"):
        NPModel.from_pretrained("cmanp-and-bo", X, Y, n_views=2)
    wheel = load_surrogate(tiny_checkpoint(tmp_path, prior="wheel"))
    wheel.outcome_transform = None
    with pytest.raises(ValueError, match="'wheel' prior"):
        NPModel(wheel, torch.rand(4, wheel.x_dim, dtype=torch.float64) * 2 - 1,
                torch.randn(4, wheel.y_dim, dtype=torch.float64),
                input_domain=(-1.0, 1.0), n_views=2)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="n_views"):
            NPModel.from_pretrained("cmanp-bo", X, Y, n_views=bad)
    assert math.isfinite(float(model.posterior(X[:2].unsqueeze(-2)).mean.sum()))
