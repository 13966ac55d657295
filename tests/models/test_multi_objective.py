"""Several objectives in BoTorch: one ``NPModel`` on ``m`` columns and a ``ModelListGP`` of one-output
``NPModel``s under the hypervolume acquisitions (qLogNEHVI, qLogEHVI with a box decomposition),
qLogNParEGO and an outcome constraint, with ``optimize_acqf`` at ``q = 1`` and ``q = 2`` and pending
points; and the look-ahead one (qHVKG), which fantasizes."""

import warnings

import pytest
import torch
from botorch.acquisition.multi_objective.hypervolume_knowledge_gradient import qHypervolumeKnowledgeGradient
from botorch.acquisition.multi_objective.logei import (
    qLogExpectedHypervolumeImprovement,
    qLogNoisyExpectedHypervolumeImprovement,
)
from botorch.acquisition.multi_objective.objective import IdentityMCMultiOutputObjective
from botorch.acquisition.multi_objective.parego import qLogNParEGO
from botorch.models import ModelListGP
from botorch.optim import optimize_acqf
from botorch.sampling import SobolQMCNormalSampler
from botorch.utils.multi_objective.box_decompositions.non_dominated import FastNondominatedPartitioning
from conftest import tiny_model

from npbandit import NPModel

D = 3
BOUNDS = torch.tensor([[0.0] * D, [1.0] * D], dtype=torch.float64)
REF = torch.tensor([-2.0, -2.0], dtype=torch.float64)


def data(n=12):
    """Two objectives in conflict (maximised: near 0.2 and near 0.8 in every input) and a constraint
    column (feasible where ``x_0 <= 0.7``)."""
    X = torch.rand(n, D, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    Y = torch.stack([-((X - 0.2) ** 2).sum(-1), -((X - 0.8) ** 2).sum(-1), X[:, 0] - 0.7], dim=-1)
    return X, Y


def build(form, Y, name="tnpd"):
    """One NPModel on Y's columns (``"model"``) or a ModelListGP of one per column (``"list"``)."""
    X, _ = data()
    net = tiny_model(name, x_dim=6)
    if form == "model":
        return NPModel(net, X, Y)
    return ModelListGP(*[NPModel(net, X, Y[:, i:i + 1]) for i in range(Y.shape[-1])])


def acquisition(kind, form, X_pending=None):
    X, Y = data()
    sampler = SobolQMCNormalSampler(torch.Size([16]), seed=0)
    if kind == "nehvi-constrained":
        return qLogNoisyExpectedHypervolumeImprovement(
            build(form, Y), ref_point=REF, X_baseline=X, sampler=sampler, X_pending=X_pending,
            objective=IdentityMCMultiOutputObjective(outcomes=[0, 1]), constraints=[lambda Z: Z[..., 2]])
    model = build(form, Y[:, :2])
    if kind == "nehvi":
        return qLogNoisyExpectedHypervolumeImprovement(model, ref_point=REF, X_baseline=X, sampler=sampler,
                                                       X_pending=X_pending)
    if kind == "ehvi":
        with torch.no_grad():
            predicted = model.posterior(X).mean
        return qLogExpectedHypervolumeImprovement(model, ref_point=REF, sampler=sampler, X_pending=X_pending,
                                                  partitioning=FastNondominatedPartitioning(REF, Y=predicted))
    return qLogNParEGO(model, X_baseline=X, sampler=sampler, X_pending=X_pending)


@pytest.mark.slow
@pytest.mark.parametrize("form", ["model", "list"])
@pytest.mark.parametrize("kind", ["nehvi", "ehvi", "parego", "nehvi-constrained"])
def test_multi_objective_acquisitions_propose_in_the_box_at_q_1_and_2_with_and_without_pending_points(kind, form):
    X, _ = data()
    for q in (1, 2):
        for pending in (None, X[:1] * 0.9 + 0.05):
            acq = acquisition(kind, form, pending)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # untrained weights: BoTorch warns about restarts
                candidates, value = optimize_acqf(acq, BOUNDS, q=q, num_restarts=2, raw_samples=16,
                                                 options={"maxiter": 10})
            assert candidates.shape == (q, D) and candidates.dtype == torch.float64
            assert bool(((BOUNDS[0] <= candidates) & (candidates <= BOUNDS[1])).all())
            assert torch.isfinite(value), (kind, form, q, pending is not None)


def test_one_model_and_a_model_list_give_qlognehvi_one_posterior():
    """The t-batches qLogNEHVI asks about (candidates, a pending point, the observed points; here
    with a candidate on an observed point and two equal candidates): the same means and
    covariance through both forms, outputs independent (the model list's covariance is
    output-major, the model's interleaved)."""
    X, Y = data()
    model, models = build("model", Y[:, :2], "cmanp"), build("list", Y[:, :2], "cmanp")
    candidates = torch.rand(4, 2, D, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    candidates[1, 0] = X[2]
    candidates[2, 1] = candidates[2, 0]
    full = torch.cat([candidates, (X[:1] * 0.9 + 0.05).expand(4, 1, D), X.expand(4, -1, -1)], dim=-2)
    n = full.shape[-2]
    interleaved = torch.arange(2 * n).reshape(2, n).T.reshape(-1)  # output-major -> (point, output) order
    for noise in (False, True):
        one, listed = model.posterior(full, observation_noise=noise), models.posterior(full, observation_noise=noise)
        torch.testing.assert_close(one.mean, listed.mean, rtol=0, atol=1e-12)
        covar = one.distribution.covariance_matrix
        torch.testing.assert_close(covar, listed.distribution.covariance_matrix[..., interleaved, :][..., interleaved],
                                   rtol=0, atol=1e-12)
        output = torch.arange(2 * n) % 2
        assert (covar[..., output[:, None] != output[None, :]] == 0).all()


@pytest.mark.parametrize("kind", ["nehvi", "ehvi"])
def test_hypervolume_acquisitions_score_distinct_points_alike_through_one_model_and_a_model_list(kind):
    # with distinct points both posteriors are diagonal: the same base samples give the same draws
    candidates = torch.rand(5, 2, D, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    values = [acquisition(kind, form)(candidates) for form in ("model", "list")]
    torch.testing.assert_close(values[0], values[1], rtol=1e-9, atol=1e-9)


def test_hypervolume_knowledge_gradient_runs_on_a_model_list_of_np_models():
    """qHVKG fantasizes through each model (``ModelListGP.fantasize``) and then optimises the
    fantasy models' Pareto sets; BoTorch takes it on a model list only."""
    X, Y = data()
    models = build("list", Y[:, :2])
    acq = qHypervolumeKnowledgeGradient(models, ref_point=REF, num_fantasies=2, num_pareto=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        candidate, value = optimize_acqf(acq, BOUNDS, q=1, num_restarts=1, raw_samples=4, options={"maxiter": 3})
    assert candidate.shape == (1, D) and torch.isfinite(value)
    with pytest.raises(ValueError, match="ModelList"):
        qHypervolumeKnowledgeGradient(build("model", Y[:, :2]), ref_point=REF, num_fantasies=2, num_pareto=2)


@pytest.mark.parametrize("form", ["model", "list"])
def test_the_closed_form_on_np_models_takes_batches_and_gradient_restarts_with_finite_gradients(form):
    """npbandit's own AnalyticLogEHVI on an NPModel of two objectives and a constraint (one model or a
    model list): ``[b, 1, d]`` and ``[b1, b2, 1, d]`` batches agree point by point, gradients are
    finite there and at the observed points (where the NP's spread is smallest), and BoTorch's
    optimize_acqf (``GradientRestarts``) returns finite values in the box."""
    from npbandit.acquisition.multi_objective import log_hypervolume_improvement
    from npbandit.acquisition.optimizers import GradientRestarts

    X, Y = data()
    acq = log_hypervolume_improvement(build(form, Y), Y, 2, 1)
    points = torch.rand(6, 1, D, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    for batch in (points, points.reshape(2, 3, 1, D), X[:, None]):
        batch = batch.clone().requires_grad_(True)
        values = acq(batch)
        values.sum().backward()
        assert values.shape == batch.shape[:-2] and torch.isfinite(values).all()
        assert torch.isfinite(batch.grad).all()
    with torch.no_grad():
        torch.testing.assert_close(acq(points.reshape(2, 3, 1, D)).reshape(-1), acq(points), rtol=1e-9, atol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # untrained weights: BoTorch warns about restarts
        candidates, values = GradientRestarts(2, 16).maximise(acq, BOUNDS, 0)
    assert bool(((BOUNDS[0] <= candidates) & (candidates <= BOUNDS[1])).all()) and torch.isfinite(values).all()
