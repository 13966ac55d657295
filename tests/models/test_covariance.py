"""NPModel's q-batch covariance for a diagonal surrogate, read from the network's responses
to conditioning (npbandit.models.covariance)."""

import warnings

import pytest
import torch
from conftest import tiny_model

from npbandit import NPModel, load_surrogate
from npbandit.acquisition.penalty import LocalPenalty
from npbandit.models.covariance import (
    MAX_CORRELATED_POINTS,
    MIN_EIGENVALUE,
    correlation_from_responses,
    decoupled,
    shrink_to_positive_definite,
)

D = 2


def _data(n=10, m=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, D, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X[:, :1]) + X[:, 1:] ** 2 + 0.1 * torch.arange(m, dtype=torch.float64)
    return X, Y


def _models(name="tnpd", m=1, **kwargs):
    X, Y = _data(m=m)
    net = tiny_model(name, x_dim=D)
    return (NPModel(net, X, Y, covariance="conditioning", **kwargs),
            NPModel(net, X, Y, covariance="diagonal", **kwargs))


def _correlation(cov):
    s = cov.diagonal(dim1=-2, dim2=-1).sqrt()
    return cov / (s.unsqueeze(-1) * s.unsqueeze(-2))


def test_correlations_from_responses_are_symmetric_scaled_by_the_own_responses_and_clipped():
    c = torch.tensor([[4.0, 2.0, 9.0, 1.0],
                      [1.0, 1.0, 0.0, 1.0],
                      [3.0, 0.0, 1.0, 1.0],
                      [1.0, 1.0, 1.0, -1.0]], dtype=torch.float64)
    r = correlation_from_responses(c)
    assert torch.equal(r, r.T) and torch.equal(r.diagonal(), torch.ones(4, dtype=torch.float64))
    assert r[0, 1] == pytest.approx(1.5 / 2.0)  # (2 + 1) / 2 / sqrt(4 * 1)
    assert r[0, 2] == 1.0  # (9 + 3) / 2 / 2 = 3: clipped
    assert torch.equal(r[3, :3], torch.zeros(3, dtype=torch.float64))  # no positive own response


def test_shrinkage_lifts_the_least_eigenvalue_and_keeps_a_positive_definite_matrix():
    r = torch.tensor([[1.0, 0.9, -0.9], [0.9, 1.0, 0.9], [-0.9, 0.9, 1.0]], dtype=torch.float64)
    assert torch.linalg.eigvalsh(r).min() < 0
    shrunk = shrink_to_positive_definite(r)
    assert torch.linalg.eigvalsh(shrunk).min() == pytest.approx(MIN_EIGENVALUE, abs=1e-12)
    assert torch.equal(shrunk.diagonal(), torch.ones(3, dtype=torch.float64))
    ok = torch.tensor([[1.0, 0.3], [0.3, 1.0]], dtype=torch.float64)
    assert torch.equal(shrink_to_positive_definite(ok), ok)
    # the shrinkage's share is differentiable: the gradient is the value's (finite differences)
    theta = torch.tensor(0.9, dtype=torch.float64, requires_grad=True)

    def entry(t):  # not positive definite at t = 0.9: shrunk
        one, half = torch.ones_like(t), torch.full_like(t, -0.5)
        m = torch.stack([torch.stack([one, t, half]), torch.stack([t, one, t]), torch.stack([half, t, one])])
        return shrink_to_positive_definite(m)[0, 1]

    value = entry(theta)
    value.backward()
    assert value.item() < 0.85  # shrunk
    step = 1e-6
    fd = (entry(theta.detach() + step) - entry(theta.detach() - step)) / (2 * step)
    assert theta.grad.item() == pytest.approx(fd.item(), rel=1e-5)


def test_later_copies_of_equal_points_are_decoupled():
    r = torch.full((1, 3, 3), 0.5, dtype=torch.float64)
    out = decoupled(r, torch.tensor([0, 1, 0]))
    assert torch.equal(out[0, 2], torch.tensor([0.0, 0.0, 0.5], dtype=torch.float64))
    assert torch.equal(out[0, :, 2], torch.tensor([0.0, 0.0, 0.5], dtype=torch.float64))
    assert out[0, 0, 1] == 0.5


@pytest.mark.parametrize("name", ["tnpd", "cmanp"])
def test_marginals_are_the_diagonal_posterior_s_and_correlations_follow_the_responses(name):
    correlated, diagonal = _models(name)
    Xq = torch.rand(3, 4, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    post, plain = correlated.posterior(Xq), diagonal.posterior(Xq)
    torch.testing.assert_close(post.mean, plain.mean, rtol=0, atol=0)
    torch.testing.assert_close(post.variance, plain.variance, rtol=1e-10, atol=1e-14)
    assert torch.count_nonzero(plain.covariance_matrix - torch.diag_embed(plain.variance.squeeze(-1))) == 0
    # the responses, computed apart through the public API: condition on one fantasy at
    # x_i, one predictive standard deviation above the mean, and read the means at every point
    noisy = diagonal.posterior(Xq, observation_noise=True)
    mu, v = noisy.mean.squeeze(-1), noisy.variance.squeeze(-1)
    delta = v.sqrt()
    fantasies = diagonal.condition_on_observations(Xq.unsqueeze(-2), (mu + delta).unsqueeze(-1).unsqueeze(-1))
    moved = fantasies.posterior(Xq.unsqueeze(1).expand(3, 4, 4, D)).mean.squeeze(-1)  # [b, i, j]
    c = (moved - mu.unsqueeze(1)) * (v / delta).unsqueeze(-1)
    expected = shrink_to_positive_definite(correlation_from_responses(c))
    torch.testing.assert_close(_correlation(post.covariance_matrix), expected, rtol=0, atol=1e-8)
    assert (torch.linalg.eigvalsh(post.covariance_matrix) > 0).all()


def test_equal_points_share_a_draw():
    correlated, _ = _models()
    pts = torch.rand(2, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    Xq = torch.stack([pts[0], pts[1], pts[0]])
    samples = correlated.posterior(Xq).rsample(torch.Size([64])).squeeze(-1)
    torch.testing.assert_close(samples[:, 0], samples[:, 2], rtol=0, atol=1e-10)
    assert (samples[:, 0] - samples[:, 1]).abs().max() > 1e-3


def test_a_trained_network_correlates_near_points_and_not_far_ones():
    X, Y = _data(n=15)
    model = NPModel.from_pretrained("tnpd-bo", X, Y, covariance="conditioning")
    Xq = torch.tensor([[0.30, 0.70], [0.31, 0.70], [0.95, 0.05]], dtype=torch.float64)
    corr = _correlation(model.posterior(Xq).covariance_matrix)
    assert corr[0, 1] > 0.9 and corr[0, 2].abs() < 0.5
    plain = NPModel.from_pretrained("tnpd-bo", X, Y).posterior(Xq)  # the default
    assert torch.count_nonzero(plain.covariance_matrix - torch.diag_embed(plain.variance.squeeze(-1))) == 0


def test_a_near_duplicate_adds_nothing_to_q_ei_only_when_correlated():
    """Why batches bunched: independent draws at two points 1e-4 apart are worth more than
    one draw, so a joint q-batch acquisition rewarded putting its points on one spot."""
    from botorch.acquisition import qExpectedImprovement
    from botorch.sampling import SobolQMCNormalSampler

    X, Y = _data(n=12)
    x = (X[Y.argmax()] + 0.03).clamp(0, 1).unsqueeze(0)  # some improvement to expect
    pair = torch.cat([x, x + 1e-4])
    gain = {}
    for covariance in ("diagonal", "conditioning"):
        model = NPModel.from_pretrained("tnpd-bo", X, Y, covariance=covariance)
        acq = qExpectedImprovement(model, best_f=Y.max(), sampler=SobolQMCNormalSampler(torch.Size([256]), seed=0))
        gain[covariance] = float(acq(pair.unsqueeze(0)) / acq(x.unsqueeze(0)))
    assert gain["conditioning"] < 1.05 and gain["diagonal"] > 1.5, gain


def test_the_covariance_is_differentiable_in_the_points():
    correlated, _ = _models()
    X0 = torch.tensor([[0.2, 0.3], [0.25, 0.35], [0.7, 0.6]], dtype=torch.float64)

    def entry(X):
        return correlated.posterior(X).covariance_matrix[0, 1]

    X = X0.clone().requires_grad_(True)
    entry(X).backward()
    eps = 1e-6
    for k in range(2):
        step = torch.zeros_like(X0)
        step[1, k] = eps
        fd = (entry(X0 + step) - entry(X0 - step)) / (2 * eps)
        assert X.grad[1, k].item() == pytest.approx(fd.item(), rel=1e-4, abs=1e-9)


@pytest.mark.parametrize("name", ["tnpd", "cmanp"])
def test_rows_shared_by_every_t_batch_are_conditioned_on_once_with_the_same_result(name):
    correlated, _ = _models(name, m=2)
    g = torch.Generator().manual_seed(2)
    observed = torch.rand(3, D, generator=g, dtype=torch.float64).expand(6, 3, D)
    own = torch.rand(6, 2, D, generator=g, dtype=torch.float64)
    Xq = torch.cat([own[:, :1], observed, own[:, 1:]], dim=1)  # shared rows between own points
    together = correlated.posterior(Xq).distribution.covariance_matrix
    apart = torch.stack([correlated.posterior(x).distribution.covariance_matrix for x in Xq])
    torch.testing.assert_close(together, apart, rtol=1e-9, atol=1e-12)


def test_an_observed_point_and_a_candidate_take_the_response_at_the_observed_point_alone():
    X, Y = _data(n=12)
    # the network in float64: the two routes below associate their sums differently, and the
    # fantasies' mean differences cancel most of the digits, so a float32 network leaves
    # machine-dependent errors of ~1e-6 in the correlations; in float64 they are far below atol
    network = load_surrogate("tnpd-bo", dtype=torch.float64)
    correlated = NPModel.from_pretrained(network, X, Y, covariance="conditioning")
    diagonal = NPModel.from_pretrained(network, X, Y, covariance="diagonal")
    cand = torch.rand(1, D, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    Xq = torch.cat([X[:2], cand])  # two observed points, one candidate
    corr = _correlation(correlated.posterior(Xq).covariance_matrix)
    # apart, through the public API: a fantasy at each observed point, read at all three
    noisy = diagonal.posterior(Xq, observation_noise=True)
    mu, v = noisy.mean.squeeze(-1), noisy.variance.squeeze(-1)
    latent = diagonal.posterior(Xq).variance.squeeze(-1)
    fantasies = diagonal.condition_on_observations(Xq[:2].unsqueeze(-2), (mu[:2] + v[:2].sqrt()).reshape(2, 1, 1))
    c = (fantasies.posterior(Xq.expand(2, 3, D)).mean.squeeze(-1) - mu) * v[:2].sqrt().unsqueeze(-1)  # [i, j]
    expected = torch.eye(3, dtype=torch.float64)
    expected[0, 1] = expected[1, 0] = (0.5 * (c[0, 1] + c[1, 0]) / (c[0, 0] * c[1, 1]).sqrt()).clamp(-1, 1)
    for i in range(2):  # c_ij sqrt(k_ii) / (c_ii sqrt(k_jj)), j the candidate
        expected[i, 2] = expected[2, i] = (c[i, 2] * latent[i].sqrt() / (c[i, i] * latent[2].sqrt())).clamp(-1, 1)
    torch.testing.assert_close(corr, shrink_to_positive_definite(expected), rtol=0, atol=1e-8)
    # the same in a batch of t-batches sharing the observed points, whose fantasies are kept
    batch = torch.cat([X[:2].expand(4, 2, D), torch.cat([cand, torch.rand(3, D, dtype=torch.float64)]).unsqueeze(1)],
                      dim=1)
    first = correlated.posterior(batch).covariance_matrix
    assert correlated._shared_fantasy is not None
    # (a float32 network: its batched predictions round differently)
    torch.testing.assert_close(first[0], correlated.posterior(Xq).covariance_matrix, rtol=1e-4, atol=1e-9)
    torch.testing.assert_close(correlated.posterior(batch).covariance_matrix, first, rtol=0, atol=0)
    child = correlated.condition_on_observations(cand, torch.zeros(1, 1, dtype=torch.float64))
    assert child._shared_fantasy is None  # another state: the parent's fantasies do not apply


def test_views_multi_output_batches_and_the_cap():
    X, Y = _data(m=2)
    net = tiny_model("cmanp", x_dim=D)
    viewed = NPModel(net, X, Y, n_views=2, covariance="conditioning")
    Xq = torch.rand(5, 3, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    post = viewed.posterior(Xq)
    assert post.mean.shape == (5, 3, 2)
    cov = post.distribution.covariance_matrix  # interleaved (q, m): the outputs independent
    assert torch.count_nonzero(cov[..., 0::2, 1::2]) == 0
    assert torch.count_nonzero(cov[..., 0::2, 0::2] - torch.diag_embed(cov[..., 0::2, 0::2].diagonal(dim1=-2,
                                                                                                    dim2=-1))) > 0
    one = viewed.subset_output([1]).posterior(Xq)
    torch.testing.assert_close(one.covariance_matrix, cov[..., 1::2, 1::2], rtol=1e-10, atol=1e-12)
    with pytest.warns(RuntimeWarning, match="MAX_CORRELATED_POINTS"):
        many = viewed.posterior(torch.rand(MAX_CORRELATED_POINTS + 1, D, dtype=torch.float64))
    assert torch.count_nonzero(many.covariance_matrix - torch.diag_embed(many.variance.reshape(-1))) == 0


def test_above_the_cap_the_diagonal_posterior_comes_with_one_warning_per_model():
    correlated, diagonal = _models()
    n = MAX_CORRELATED_POINTS + 1
    X = torch.rand(n, D, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    with pytest.warns(RuntimeWarning) as record:
        wide = correlated.posterior(X)
    assert len(record) == 1 and record[0].filename == __file__  # names the caller of posterior
    message = str(record[0].message)
    for says in (f"over {n} points", f"the {MAX_CORRELATED_POINTS} (MAX_CORRELATED_POINTS)",
                 "X.unsqueeze(-2)", "covariance='diagonal'"):
        assert says in message
    # the diagonal posterior, as covariance="diagonal" gives it
    torch.testing.assert_close(wide.covariance_matrix, diagonal.posterior(X).covariance_matrix, rtol=0, atol=0)
    child = correlated.condition_on_observations(X[:1], torch.zeros(1, 1, dtype=torch.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per model, and the models conditioned from it
        correlated.posterior(X)
        child.posterior(X)
        diagonal.posterior(X)  # asked for the diagonal posterior: no warning
        # what the warning offers instead: the same marginals
        single = correlated.posterior(X.unsqueeze(-2))
        correlated.posterior(X[:MAX_CORRELATED_POINTS])  # at the cap: correlated, no warning
    torch.testing.assert_close(single.variance.reshape(-1), wide.variance.reshape(-1), rtol=0, atol=0)
    torch.testing.assert_close(single.mean.reshape(-1), wide.mean.reshape(-1), rtol=0, atol=0)
    other, _ = _models()
    bounds = torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the library's own callers that read marginals ask for t-batches of one
        penalty = LocalPenalty.build(other, X[:2], 0.0, bounds, seed=0)
    assert penalty.lipschitz == LocalPenalty.build(diagonal, X[:2], 0.0, bounds, seed=0).lipschitz
    with pytest.warns(RuntimeWarning, match="MAX_CORRELATED_POINTS"):  # another model warns of its own
        other.posterior(X)


def test_an_unknown_covariance_is_refused():
    X, Y = _data()
    with pytest.raises(ValueError, match="covariance must be one of"):
        NPModel(tiny_model("tnpd", x_dim=D), X, Y, covariance="full")


def test_conditioning_is_refused_for_a_surrogate_of_several_outputs_and_kept_for_a_joint_one():
    """The correlations come from a one-output network's conditioning: a diagonal network of two
    outputs is refused by name (it would otherwise get the diagonal posterior unasked); a joint
    network gives its own joint whatever ``covariance`` says."""
    X, _ = _data()
    Y = torch.cat([X[:, :1], X[:, 1:] ** 2], dim=-1)
    net = tiny_model("tnpd", x_dim=D, y_dim=2)
    with pytest.raises(ValueError, match="covariance='conditioning'.*2 outputs"):
        NPModel(net, X, Y, covariance="conditioning")
    assert NPModel(net, X, Y, covariance="diagonal").posterior(X[:3]).mean.shape == (3, 2)
    joint = tiny_model("cmanp-and", x_dim=D, y_dim=2)
    NPModel(joint, X, Y, covariance="conditioning")  # accepted: its posterior is its own joint
