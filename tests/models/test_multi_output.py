"""Several outputs through one-output networks: NPModel on an ``n x m`` train_Y is a model list
of per-column NPs sharing the network (independent outputs), inside BoTorch's multi-output
machinery (subsets, conditioning, constrained and multi-objective acquisitions)."""

import warnings

import pytest
import torch
from botorch.acquisition import qExpectedImprovement, qLogExpectedImprovement, qLogNoisyExpectedImprovement
from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
from botorch.acquisition.objective import ConstrainedMCObjective, GenericMCObjective, ScalarizedPosteriorTransform
from botorch.exceptions.errors import UnsupportedError
from botorch.models.transforms import Standardize
from botorch.optim import optimize_acqf
from botorch.sampling import SobolQMCNormalSampler
from botorch.utils.datasets import SupervisedDataset
from conftest import tiny_model
from helpers import tiny_checkpoint

from npbandit import NPModel

D = 3
BOUNDS = torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.float64)


def data(n=12, seed=0):
    """Three columns on very different scales: a sum, a scaled square and a negated coordinate."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, D, generator=g, dtype=torch.float64)
    Y = torch.stack([X.sum(-1), 10 * (X**2).sum(-1), -X[:, 0]], dim=-1) + 0.01 * torch.randn(n, 3, generator=g,
                                                                                             dtype=torch.float64)
    return X, Y


def columns(model_factory, Y):
    return [model_factory(Y[:, i:i + 1]) for i in range(Y.shape[-1])]


@pytest.mark.parametrize("name, n_views", [("cmanp", 1), ("cmanp", 3), ("tnpd", 1)])
def test_each_output_is_the_model_of_its_own_column(name, n_views):
    X, Y = data()
    net = tiny_model(name, x_dim=6)
    model = NPModel(net, X, Y, n_views=n_views)
    singles = columns(lambda y: NPModel(net, X, y, n_views=n_views), Y)
    assert model.num_outputs == 3
    Xt = torch.rand(4, 2, D, dtype=torch.float64)
    for noise in (False, True):
        post = model.posterior(Xt, observation_noise=noise)
        assert post.mean.shape == post.variance.shape == (4, 2, 3)
        for i, single in enumerate(singles):
            own = single.posterior(Xt, observation_noise=noise)
            torch.testing.assert_close(post.mean[..., i], own.mean[..., 0], rtol=1e-9, atol=1e-9)
            torch.testing.assert_close(post.variance[..., i], own.variance[..., 0], rtol=1e-9, atol=1e-9)
    # independent outputs: the covariance (interleaved (q, m) order) holds no cross-output entry
    covar = model.posterior(Xt).distribution.covariance_matrix
    output = torch.arange(6) % 3
    assert (covar[..., output[:, None] != output[None, :]] == 0).all()
    torch.testing.assert_close(model.likelihood.noise, torch.cat([s.likelihood.noise for s in singles]))


def test_a_joint_surrogate_gives_each_output_its_own_joint():
    X, Y = data()
    net = tiny_model("cmanp-and", x_dim=6)
    model = NPModel(net, X, Y)
    singles = columns(lambda y: NPModel(net, X, y), Y)
    Xt = torch.rand(2, 4, D, dtype=torch.float64)
    covar = model.posterior(Xt).distribution.covariance_matrix  # q = 4: the joint path
    for i, single in enumerate(singles):
        own = single.posterior(Xt).distribution.covariance_matrix
        torch.testing.assert_close(covar[..., i::3, i::3], own, rtol=1e-7, atol=1e-9)
    output = torch.arange(12) % 3
    assert (covar[..., output[:, None] != output[None, :]].abs() < 1e-12).all()
    draws = model.joint_sample(torch.rand(7, D, dtype=torch.float64), num_samples=5,
                               generator=torch.Generator().manual_seed(0))
    assert draws.shape == (5, 7, 3)


def test_subsets_hold_only_their_outputs_and_condition_on_their_columns():
    X, Y = data()
    net = tiny_model("cmanp", x_dim=6)
    model = NPModel(net, X, Y, outcome_transform=Standardize(3))
    Xt = torch.rand(3, 2, D, dtype=torch.float64)
    sub = model.subset_output([2, 0])
    assert sub.num_outputs == 2 and sub.train_Y.shape == (12, 2) and sub._state.batch_size == 2
    torch.testing.assert_close(sub.posterior(Xt).mean, model.posterior(Xt).mean[..., [2, 0]])
    torch.testing.assert_close(sub.posterior(Xt).variance, model.posterior(Xt).variance[..., [2, 0]])
    X_new = torch.rand(3, D, dtype=torch.float64)
    Y_new = torch.rand(3, 3, dtype=torch.float64)
    # conditioning a subset on its columns = subsetting the model conditioned on all of them
    left = sub.condition_on_observations(X_new, Y_new[:, [2, 0]])
    right = model.condition_on_observations(X_new, Y_new).subset_output([2, 0])
    torch.testing.assert_close(left.posterior(Xt).mean, right.posterior(Xt).mean)
    assert left.train_Y.shape == (15, 2)
    with pytest.raises(ValueError, match=r"Y must have shape batch_shape x 3 x 2"):
        sub.condition_on_observations(X_new, Y_new)
    with pytest.raises(ValueError, match="idcs"):
        model.subset_output([3])
    # a fantasy model's subsets too
    fantasy = model.fantasize(torch.rand(2, 1, D, dtype=torch.float64), SobolQMCNormalSampler(torch.Size([4])))
    assert fantasy.posterior(torch.rand(4, 2, 1, D, dtype=torch.float64)).mean.shape == (4, 2, 1, 3)
    part = fantasy.subset_output([1])
    Xf = torch.rand(4, 2, 1, D, dtype=torch.float64)
    torch.testing.assert_close(part.posterior(Xf).mean, fantasy.posterior(Xf).mean[..., [1]])


def test_streaming_restandardises_every_column_when_one_drifts():
    X, Y = data()
    net = tiny_model("cmanp", x_dim=6)
    model = NPModel(net, X, Y)
    X_new = torch.rand(4, D, dtype=torch.float64)
    Y_new = torch.cat([Y[:4, :1], 100 + Y[:4, 1:2], Y[:4, 2:]], dim=-1)  # only output 1 drifts
    streamed = model.condition_on_observations(X_new, Y_new)
    fresh = NPModel(net, torch.cat([X, X_new]), torch.cat([Y, Y_new]))
    Xt = torch.rand(5, 1, D, dtype=torch.float64)
    torch.testing.assert_close(streamed._y_std, fresh._y_std)
    torch.testing.assert_close(streamed.posterior(Xt).mean, fresh.posterior(Xt).mean)


def test_constrained_and_multi_objective_acquisitions_run():
    X, Y = data()
    model = NPModel(tiny_model("cmanp", x_dim=6).float(), X, Y)
    sampler = SobolQMCNormalSampler(torch.Size([16]))
    acquisitions = [
        # maximise output 0 subject to output 2 <= -0.3 (x0 >= 0.3) and output 1 <= 15
        qLogExpectedImprovement(model, best_f=Y[:, 0].max(), sampler=sampler,
                                objective=GenericMCObjective(lambda Z, X=None: Z[..., 0]),
                                constraints=[lambda Z: Z[..., 2] + 0.3, lambda Z: Z[..., 1] - 15]),
        qLogNoisyExpectedImprovement(model, X_baseline=X, sampler=sampler,
                                     objective=GenericMCObjective(lambda Z, X=None: Z[..., 0]),
                                     constraints=[lambda Z: Z[..., 2] + 0.3]),
        qLogNoisyExpectedHypervolumeImprovement(model, ref_point=[0.0, 0.0, -1.0], X_baseline=X, sampler=sampler),
    ]
    objective = ConstrainedMCObjective(objective=lambda Z, X=None: Z[..., 0], constraints=[lambda Z: Z[..., 2] + 0.3])
    acquisitions.append(qExpectedImprovement(model, best_f=Y[:, 0].max(), sampler=sampler, objective=objective))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # untrained weights: BoTorch warns about restarts
        for acq in acquisitions:
            cand, value = optimize_acqf(acq, BOUNDS, q=2, num_restarts=2, raw_samples=16)
            assert cand.shape == (2, D) and torch.isfinite(value), type(acq).__name__


@pytest.mark.parametrize("name", ["cmanp", "cmanp-and"])
def test_indices_into_a_subset_of_a_network_with_outputs_of_its_own_name_the_subsets_outputs(name):
    # such a subset predicts all the network's outputs and reports some: output_indices, a
    # further subset_output and a per-output observation noise are over the subset's outputs
    X, Y = data()
    model = NPModel(tiny_model(name, x_dim=6, y_dim=3), X, Y)
    Xt = torch.rand(2, 3, D, dtype=torch.float64)  # q = 3: the joint path of a joint-predictive network
    full = model.posterior(Xt)
    sub = model.subset_output([2, 0])
    torch.testing.assert_close(sub.posterior(Xt, output_indices=[1]).mean, full.mean[..., [0]])
    torch.testing.assert_close(sub.subset_output([0]).posterior(Xt).mean, full.mean[..., [2]])
    torch.testing.assert_close(sub.subset_output([1]).posterior(Xt).variance, full.variance[..., [0]])
    noise = torch.tensor([0.25, 0.5], dtype=torch.float64)
    added = sub.posterior(Xt, observation_noise=noise).variance - sub.posterior(Xt).variance
    torch.testing.assert_close(added, noise.expand_as(added))
    with pytest.raises(ValueError, match=r"output_indices .* below 2"):
        sub.posterior(Xt, output_indices=[2])
    with pytest.raises(ValueError, match=r"idcs .* below 2"):
        sub.subset_output([2])
    # the network reads its outputs together: conditioning the subset is refused, saying what to do instead
    for call in (lambda: sub.condition_on_observations(X[:2], Y[:2, [2, 0]]),
                 lambda: sub.fantasize(X[:2], SobolQMCNormalSampler(torch.Size([2])))):
        with pytest.raises(UnsupportedError, match=r"condition the full model on all 3 columns, then take subset"):
            call()


def test_checkpoints_and_construct_inputs_take_several_columns(tmp_path):
    X, Y = data()
    card = tiny_checkpoint(tmp_path)
    model = NPModel.from_pretrained(str(card), X, Y)
    assert model.num_outputs == 3 and model.posterior(X[:2].unsqueeze(-2)).mean.shape == (2, 1, 3)
    inputs = NPModel.construct_inputs(SupervisedDataset(X, Y, feature_names=["a", "b", "c"],
                                                        outcome_names=["f", "g", "h"]), checkpoint=str(card))
    assert NPModel(**inputs).num_outputs == 3


def test_a_network_with_outputs_of_its_own_takes_only_that_many_columns():
    X, Y = data()
    with pytest.raises(ValueError, match=r"train_Y must have 2 column\(s\)"):
        NPModel(tiny_model("cmanp", x_dim=6, y_dim=2), X, Y)
    with pytest.raises(ValueError, match="at least one column"):
        NPModel(tiny_model("cmanp", x_dim=6), X, Y[:, :0])


@pytest.mark.parametrize("name, y_dim", [("cmanp", 1), ("cmanp", 3), ("cmanp-and", 3)])
def test_output_indices_and_subsets_with_an_outcome_transform_report_the_named_outputs_in_their_units(name, y_dim):
    # the transform's means and stds are per output: the outputs reported must be untransformed
    # with their own (Y's columns lie on very different scales), whichever path selects them
    X, Y = data()
    model = NPModel(tiny_model(name, x_dim=6, y_dim=y_dim), X, Y, outcome_transform=Standardize(3))
    Xt = torch.rand(2, 3, D, dtype=torch.float64)  # q = 3: the joint path of a joint-predictive network
    full = model.posterior(Xt)
    for indices in ([1], [2, 0], [0, 1, 2]):
        part = model.posterior(Xt, output_indices=indices)
        torch.testing.assert_close(part.mean, full.mean[..., indices])
        torch.testing.assert_close(part.variance, full.variance[..., indices])
    sub = model.subset_output([2, 0])
    torch.testing.assert_close(sub.posterior(Xt).mean, full.mean[..., [2, 0]])
    torch.testing.assert_close(sub.posterior(Xt, output_indices=[1]).variance, full.variance[..., [0]])
    torch.testing.assert_close(sub.subset_output([1]).posterior(Xt).mean, full.mean[..., [0]])


@pytest.mark.parametrize("transform", [False, True])
def test_a_model_list_gp_of_np_models_conditions_and_fantasizes_as_each_model_does(transform):
    """``ModelListGP(NPModel, NPModel)`` (one model per output, as BoTorch's constrained-BO scripts
    build it) conditions through each model's ``get_fantasy_model``, handed the new points and
    the targets after the model's outcome transform: the result is each model's own
    ``condition_on_observations`` on the raw values. With a ``Standardize``, BoTorch hands the
    targets back with a leading batch dimension of one (for a GP too), so that update is the
    batched one."""
    from botorch.models import ModelListGP

    X, Y = data()
    net = tiny_model("tnpd", x_dim=6)
    singles = columns(lambda y: NPModel(net, X, y, outcome_transform=Standardize(m=1) if transform else None), Y[:, :2])
    models = ModelListGP(*singles)
    X_new, Y_new = data(n=3, seed=1)
    Y_new = Y_new[:, :2]
    conditioned = models.condition_on_observations([X_new, X_new], Y_new)
    Xt = torch.rand(5, D, dtype=torch.float64)
    for i, single in enumerate(singles):
        y = Y_new[:, i:i + 1].unsqueeze(0) if transform else Y_new[:, i:i + 1]
        own = single.condition_on_observations(X_new, y).posterior(Xt)
        got = conditioned.models[i].posterior(Xt)
        assert got.mean.shape == own.mean.shape
        torch.testing.assert_close(got.mean, own.mean, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(got.variance, own.variance, rtol=1e-9, atol=1e-9)
    fantasies = models.fantasize(X_new, SobolQMCNormalSampler(torch.Size([4])))
    assert fantasies.posterior(Xt).mean.shape == (4, 5, 2)


def test_get_fantasy_model_refuses_a_model_of_several_outputs():
    X, Y = data()
    model = NPModel(tiny_model("tnpd", x_dim=6), X, Y)
    with pytest.raises(UnsupportedError, match="3 outputs"):
        model.get_fantasy_model(X[:2], Y[:2].reshape(-1))


def test_get_fantasy_model_names_targets_of_the_wrong_shape():
    """GPyTorch's targets carry no output dimension (``batch_shape x n'``); a column of them
    (``n' x 1``, as condition_on_observations takes Y) is refused naming ``targets``, not read
    as a batch of ``n'`` one-point sets and then refused as a ``Y`` the caller never passed."""
    X, Y = data()
    model = NPModel(tiny_model("tnpd", x_dim=6), X, Y[:, :1])
    with pytest.raises(ValueError, match=r"targets must have shape batch_shape x 3 \(GPyTorch's, without an output "
                                         r"dimension\), got \(3, 1\)"):
        model.get_fantasy_model(X[:3], Y[:3, :1])
    fantasy = model.get_fantasy_model(X[:3], Y[:3, 0].expand(2, 3))  # a batch of two sets of 3 targets
    assert fantasy.batch_shape == (2,)


@pytest.mark.parametrize("covariance, transform", [("diagonal", False), ("conditioning", False), ("diagonal", True)])
def test_a_scalarized_posterior_weights_each_outputs_variance(covariance, transform):
    """``ScalarizedPosteriorTransform(w)`` on q > 1 distinct points (as ``posterior(X, posterior_transform=...)``
    and qNegIntegratedPosteriorVariance ask for it): outputs are independent, so the scalarised
    variance at a point is ``sum_i w_i^2 var_i`` there and the mean ``w . mean + offset``."""
    X, Y = data()
    model = NPModel(tiny_model("tnpd", x_dim=6), X, Y, covariance=covariance,
                    outcome_transform=Standardize(3) if transform else None)
    weights = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    scalarize = ScalarizedPosteriorTransform(weights, offset=0.5)
    Xt = torch.rand(2, 4, D, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    for noise in (False, True):
        post = model.posterior(Xt, observation_noise=noise)
        scalar = model.posterior(Xt, observation_noise=noise, posterior_transform=scalarize)
        assert scalar.mean.shape == scalar.variance.shape == (2, 4, 1)
        torch.testing.assert_close(scalar.mean[..., 0], post.mean @ weights + 0.5, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(scalar.variance[..., 0], post.variance @ weights**2, rtol=1e-12, atol=1e-12)
