"""npbandit.acquisition.multi_objective: the feasible Pareto front, its reference point, the rows
a long run's model sees, the log expected hypervolume improvement, and propose(objectives=m)."""

import math

import numpy as np
import pytest
import torch
from botorch.models.model import Model
from botorch.utils.multi_objective.box_decompositions.non_dominated import FastNondominatedPartitioning

from npbandit.acquisition.multi_objective import (
    REFERENCE_MARGIN,
    AnalyticLogEHVI,
    box_decomposition,
    front_rows,
    log_expected_excess,
    log_hypervolume_improvement,
    pareto_front,
    partitioning_alpha,
    reference_point,
    warp_objectives,
)
from npbandit.acquisition.proposal import propose
from npbandit.models.posterior import first_equal_rows, gaussian_posterior
from npbandit.policies.gp import fit_single_task_gp

# two maximised objectives, one constraint (feasible at <= 0)
Y = torch.tensor([[1.0, 4.0, -1.0],   # front
                  [3.0, 3.0, -1.0],   # front
                  [4.0, 1.0, -1.0],   # front
                  [2.0, 2.0, -1.0],   # dominated by (3, 3)
                  [9.0, 9.0, 1.0],    # infeasible: would dominate everything
                  [3.0, 3.0, -2.0]],  # equal to an earlier front row
                 dtype=torch.float64)


def test_the_front_is_the_feasible_rows_no_other_feasible_row_dominates_each_once():
    front = pareto_front(Y, 2, 1)
    assert sorted(map(tuple, front.tolist())) == [(1.0, 4.0), (3.0, 3.0), (4.0, 1.0)]
    # without the constraint the infeasible row is the whole front
    assert pareto_front(Y[:, :2], 2).tolist() == [[9.0, 9.0]]
    assert pareto_front(Y[Y[:, 2] > 0], 2, 1).shape == (0, 2)  # nothing feasible
    with pytest.raises(ValueError, match=r"the outputs must be \[n >= 1, 2 \+ 1\]"):
        pareto_front(Y[:, :2], 2, 1)
    with pytest.raises(ValueError, match="must be finite"):
        pareto_front(torch.tensor([[1.0, math.nan]], dtype=torch.float64), 2)


def test_the_reference_point_is_the_nadir_a_tenth_of_the_range_further_and_moves_with_the_units():
    ref = reference_point(Y, 2, 1)
    span = Y[:, :2].amax(0) - Y[:, :2].amin(0)  # every row's range, the infeasible one included
    torch.testing.assert_close(ref, torch.tensor([1.0, 1.0], dtype=torch.float64) - REFERENCE_MARGIN * span,
                               rtol=0, atol=0)
    # shifted and scaled objectives (per objective, a > 0) move the point with them
    a, b = torch.tensor([3.0, 0.25], dtype=torch.float64), torch.tensor([-100.0, 7.0], dtype=torch.float64)
    moved = torch.cat([Y[:, :2] * a + b, Y[:, 2:]], dim=-1)
    torch.testing.assert_close(reference_point(moved, 2, 1), ref * a + b, rtol=1e-12, atol=1e-12)
    # a front of one point (a single row): a finite box below it all the same
    one = torch.tensor([[2.0, -5.0]], dtype=torch.float64)
    assert (reference_point(one, 2) < one[0]).all()
    assert (reference_point(torch.zeros(1, 2, dtype=torch.float64), 2) < 0).all()
    # nothing feasible: below every row, so that any feasible point adds volume
    infeasible = torch.cat([Y[:, :2], torch.ones(len(Y), 1, dtype=torch.float64)], dim=-1)
    torch.testing.assert_close(reference_point(infeasible, 2, 1), Y[:, :2].amin(0) - REFERENCE_MARGIN * span,
                               rtol=0, atol=0)


def test_a_long_runs_model_sees_the_best_layers_first():
    assert front_rows(Y, 2, 1, None).tolist() == list(range(6))
    assert front_rows(Y, 2, 1, 6).tolist() == list(range(6))
    # the feasible front (rows 0, 1, 2 and 5, equal to 1) comes first, then the next feasible layer
    assert front_rows(Y, 2, 1, 4).tolist() == [0, 1, 2, 5]
    assert front_rows(Y, 2, 1, 5).tolist() == [0, 1, 2, 3, 5]
    assert front_rows(Y, 2, 1, 2).tolist() == [2, 5]  # a layer taken in part: its most recent rows


def test_the_warp_keeps_each_objectives_order_and_leaves_the_constraints():
    skewed = Y.clone()
    skewed[:, 0] = torch.exp(3 * Y[:, 0])  # a long tail: the case the warp is for
    warped = warp_objectives(skewed, 2, 1)
    for j in range(2):
        order = torch.argsort(skewed[:, j], stable=True)
        assert (torch.diff(warped[order, j]) >= 0).all()  # increasing in each objective
    torch.testing.assert_close(warped[:, 2], skewed[:, 2], rtol=0, atol=0)
    assert sorted(map(tuple, pareto_front(warped, 2, 1).tolist())) == sorted(
        map(tuple, warped[[0, 1, 2]][:, :2].tolist()))  # the same rows make the front
    assert warped[:, :2].abs().max() < 10  # standardised: the tail pulled in


class _Exact(Model):
    """A model whose outputs at ``x`` are ``x`` itself, with a variance too small to matter."""

    num_outputs = Y.shape[-1]

    def posterior(self, X, output_indices=None, observation_noise=False, posterior_transform=None):
        return gaussian_posterior(X, torch.full_like(X, 1e-10), same=first_equal_rows(X))

    def condition_on_observations(self, X, Y, **kwargs):
        return self  # told its own values, an exact model is what it was

    def subset_output(self, idcs):
        raise NotImplementedError


def test_the_acquisition_ranks_points_by_the_volume_they_add_to_the_feasible_front():
    # a point's outputs are read from its first two inputs; the third input is its constraint value
    model = _Exact()
    acq = log_hypervolume_improvement(model, Y, 2, 1)
    points = torch.tensor([[[5.0, 5.0, -1.0]],   # dominates the whole front: the most volume
                           [[3.5, 3.5, -1.0]],   # adds a little
                           [[2.0, 2.0, -1.0]],   # dominated: adds nothing
                           [[5.0, 5.0, 1.0]]],   # would add the most, but is infeasible
                          dtype=torch.float64)
    values = acq(points)
    assert values.shape == (4,)
    assert values[0] > values[1] > values[2] and values[0] > values[3]
    assert values[2] < values[1] - 5 and values[3] < values[1] - 5  # nothing added: log of almost 0
    # a point being evaluated where the best candidate is: that candidate adds nothing the pending one does
    # not, and one that only extends the front sideways now ranks above it
    aside = torch.tensor([[[6.0, 0.5, -1.0]]], dtype=torch.float64)
    assert acq(aside) < values[0]
    with_pending = log_hypervolume_improvement(model, Y, 2, 1, pending=points[0, :, :])
    assert with_pending(aside) > with_pending(points[:1])
    with pytest.raises(ValueError, match="at least two objectives"):
        log_hypervolume_improvement(model, Y[:, :1], 1)


def test_the_expected_excess_is_the_integral_of_the_tail_probability():
    from scipy import integrate, stats

    cells = [(-40.0, -39.0), (-3.0, -1.0), (-1.0, 2.0), (0.0, 0.5), (0.5, math.inf), (5.0, 9.0), (12.0, math.inf),
             (30.0, 31.0)]
    lower = torch.tensor([c[0] for c in cells], dtype=torch.float64)
    upper = torch.tensor([c[1] for c in cells], dtype=torch.float64)
    got = log_expected_excess(lower, upper)
    for (a, b), value in zip(cells, got.tolist()):
        # E[(min(Z, b) - a)^+] = integral of P(Z > t) over [a, b]; the tail past 60 is below 1e-780
        expected, _ = integrate.quad(stats.norm.sf, a, min(b, 60.0), epsabs=0, epsrel=1e-13, limit=200)
        assert value == pytest.approx(math.log(expected), rel=1e-9, abs=1e-12)
    lower.requires_grad_(True)
    log_expected_excess(lower, upper).sum().backward()
    assert torch.isfinite(lower.grad).all() and (lower.grad < 0).all()  # a higher floor leaves less


def test_the_closed_form_is_botorchs_expected_hypervolume_improvement_in_log_space():
    from botorch.acquisition.multi_objective.analytic import ExpectedHypervolumeImprovement

    X, outputs, model = _two_output_gp()
    acq = log_hypervolume_improvement(model, outputs, 2)
    partitioning = FastNondominatedPartitioning(ref_point=reference_point(outputs, 2), Y=pareto_front(outputs, 2))
    theirs = ExpectedHypervolumeImprovement(model, ref_point=reference_point(outputs, 2).tolist(),
                                            partitioning=partitioning)
    candidates = torch.rand(64, 1, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ours, reference = acq(candidates), theirs(candidates)
    # where the plain value keeps its relative precision (below, its differences of near-equal terms lose it)
    shown = reference > 1e-6
    assert shown.sum() >= 8
    torch.testing.assert_close(ours[shown].exp(), reference[shown], rtol=1e-7, atol=0)
    far = reference < 1e-8  # far from the front: still finite, and below every shown value
    assert torch.isfinite(ours).all() and (ours[far] < ours[shown].min()).all()


def _two_output_gp():
    X = torch.tensor([[0.1, 0.2], [0.4, 0.9], [0.8, 0.5], [0.6, 0.1], [0.3, 0.6]], dtype=torch.float64)
    outputs = torch.stack([-(X[:, 0] - 0.3) ** 2, -(X[:, 1] - 0.7) ** 2], dim=-1)
    return X, outputs, fit_single_task_gp(X, outputs)


def test_propose_with_several_objectives_returns_a_new_point_of_the_box_and_repeats_itself():
    X, outputs, model = _two_output_gp()
    point = propose(model, "logei", dim=2, best_f=None, seed=3, outputs=outputs, observed=X, objectives=2,
                    num_restarts=2, raw_samples=32)
    assert point.shape == (2,) and ((0 <= point) & (point <= 1)).all()
    assert torch.cdist(torch.as_tensor(point)[None], X).min() > 1e-3  # not an observed point
    again = propose(model, "logei", dim=2, best_f=None, seed=3, outputs=outputs, observed=X, objectives=2,
                    num_restarts=2, raw_samples=32)
    np.testing.assert_array_equal(point, again)
    pending = torch.tensor([[0.3, 0.7]], dtype=torch.float64)
    with_pending = propose(model, "logei", dim=2, best_f=None, seed=3, outputs=outputs, pending=pending,
                           objectives=2, num_restarts=2, raw_samples=32)
    assert with_pending.shape == (2,)


def test_propose_with_several_objectives_refuses_what_it_cannot_honour():
    X, outputs, model = _two_output_gp()
    kwargs = {"dim": 2, "best_f": None, "seed": 0, "objectives": 2, "num_restarts": 2, "raw_samples": 32}
    with pytest.raises(ValueError, match="several objectives are searched by the log expected hypervolume "
                                         "improvement, acquisition 'logei'; got 'ucb'"):
        propose(model, "ucb", outputs=outputs, **kwargs)
    with pytest.raises(ValueError, match=r"outputs \(the observations' objective and constraint values"):
        propose(model, "logei", **kwargs)
    with pytest.raises(ValueError, match=r"the outputs must be \[n >= 1, 2 \+ 0\]"):
        propose(model, "logei", outputs=outputs[:, :1], **kwargs)
    with pytest.raises(ValueError, match="give no pending_strategy"):
        propose(model, "logei", outputs=outputs, pending=X[:1], pending_value=0.0, **kwargs)
    with pytest.raises(ValueError, match="objectives must be the number of objective columns"):
        propose(model, "logei", outputs=outputs, **{**kwargs, "objectives": 0})


class _FirstIsBest:
    """An acquisition optimiser that returns the points it was given, the first the best,
    whatever the acquisition: the repeat check is then all that decides."""

    def __init__(self, points):
        self.points = torch.tensor(points, dtype=torch.float64)

    def maximise(self, acq, bounds, seed):
        return self.points.to(bounds), -torch.arange(len(self.points), dtype=torch.float64)

    def params(self):
        return {"name": "first-is-best"}


def test_propose_with_several_objectives_does_not_repeat_a_pending_point():
    # a point being evaluated is no new point, as an evaluated one is not (the repeat check of one
    # objective's default liar takes the pending points too): the optimiser's best is the pending point
    X, outputs, model = _two_output_gp()
    pending = torch.tensor([[0.3, 0.7]], dtype=torch.float64)
    point = propose(model, "logei", dim=2, best_f=None, seed=0, outputs=outputs, observed=X, pending=pending,
                    objectives=2, acq_optimizer=_FirstIsBest([[0.3, 0.7], [0.5, 0.5]]))
    assert point.tolist() == [0.5, 0.5]


def test_pending_points_are_believed_at_the_models_mean_and_their_outcomes_join_the_front():
    # an NP predicts each point on its own (NPModel's diagonal posterior): a candidate judged jointly with a
    # pending point beside it draws its value apart from the pending one's, so a worker gets no push away from
    # what another evaluates, and the joint improvement of q points sums 2 ** q - 1 terms (each pending point
    # doubles an evaluation's cost). Believed (the kriging believer), the model's spread there goes, and the
    # point's expected outcome is on the front a candidate must improve
    X, outputs, model = _two_output_gp()
    pending = torch.tensor([[0.3, 0.7], [0.95, 0.05], [0.05, 0.95], [0.5, 0.5]], dtype=torch.float64)
    acq = log_hypervolume_improvement(model, outputs, 2, pending=pending)
    assert isinstance(acq, AnalyticLogEHVI)  # one point per evaluation, whatever the number of pending ones
    with torch.no_grad():
        before, after = model.posterior(pending), acq.model.posterior(pending)
    torch.testing.assert_close(after.mean, before.mean, rtol=1e-6, atol=1e-6)
    assert (after.variance < before.variance).all()
    rows = torch.cat([outputs, before.mean])  # the front's; the reference point stays the observed rows'
    cells = FastNondominatedPartitioning(ref_point=reference_point(outputs, 2), Y=pareto_front(rows, 2))
    torch.testing.assert_close(torch.stack([acq.cell_lower, acq.cell_upper]),
                               cells.get_hypercell_bounds(), rtol=0, atol=0)
    # none pending: the model as it was, the front the observed one
    plain = log_hypervolume_improvement(model, outputs, 2, pending=pending[:0])
    assert plain.model is model


def test_the_fronts_functions_refuse_counts_that_misread_the_columns():
    # a negative constraint count balancing a larger objective count passed the width check, and read the
    # outputs as three objectives of which one does not exist; a limit below 1 gave a model no rows
    with pytest.raises(ValueError, match=r"constraints must be the number of constraint columns \(an int >= 0\), "
                                         r"got -1"):
        pareto_front(Y[:, :2], 3, -1)
    with pytest.raises(ValueError, match=r"objectives must be the number of objective columns \(an int >= 1\), "
                                         r"got 0"):
        reference_point(Y, 0, 3)
    for limit in (0, -2, 2.5, True):
        with pytest.raises(ValueError, match=r"limit must be an int >= 1"):
            front_rows(Y, 2, 1, limit)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_a_cell_of_no_width_adds_nothing_and_a_narrow_one_its_width_times_the_tail_probability(dtype):
    # a zero-width cell (BoTorch's NondominatedPartitioning makes them on fronts with ties) holds no
    # volume: log 0 = -inf with a zero gradient, not a rounding-sized value; a cell too narrow for the
    # difference h(lower) - h(upper) to survive rounding (float32) is still its width times P(Z > t) there
    from scipy import integrate, stats

    lower = torch.tensor([0.5, 3.0, -2.0, 0.5, 3.0, -2.0, 20.0], dtype=dtype, requires_grad=True)
    upper = torch.tensor([0.5, 3.0, -2.0, 0.5 + 2 ** -20, 3.0 + 2 ** -18, -2.0 + 2 ** -21, 20.0 + 2 ** -16],
                         dtype=dtype)
    got = log_expected_excess(lower, upper)
    assert got[:3].tolist() == [-math.inf] * 3
    for a, b, value in zip(lower[3:].tolist(), upper[3:].tolist(), got[3:].tolist()):
        expected, _ = integrate.quad(stats.norm.sf, a, b, epsabs=0, epsrel=1e-13)
        tolerance = 1e-9 if dtype == torch.float64 else 1e-5
        assert value == pytest.approx(math.log(expected), rel=tolerance)
    got.sum().backward()
    assert torch.isfinite(lower.grad).all()
    assert lower.grad[:3].tolist() == [0.0] * 3 and (lower.grad[3:] < 0).all()


def test_a_nan_posterior_gives_a_nan_acquisition_not_a_point_that_adds_nothing():
    # a NaN bound is no evidence of no improvement: the NaN reaches the optimiser's check, which names it
    nan = torch.tensor([math.nan], dtype=torch.float64)
    assert math.isnan(log_expected_excess(nan, torch.tensor([1.0], dtype=torch.float64)).item())
    assert math.isnan(log_expected_excess(torch.tensor([0.0], dtype=torch.float64), nan).item())

    class _NaNMean(_Exact):
        def posterior(self, X, output_indices=None, observation_noise=False, posterior_transform=None):
            mean = torch.where(X[..., :1] > 4, math.nan, X)
            return gaussian_posterior(mean, torch.full_like(X, 1e-2), same=first_equal_rows(X))

    acq = log_hypervolume_improvement(_NaNMean(), Y, 2, 1)
    values = acq(torch.tensor([[[3.5, 3.5, -1.0]], [[5.0, 5.0, -1.0]]], dtype=torch.float64))
    assert math.isfinite(values[0].item()) and math.isnan(values[1].item())


def test_the_acquisition_judges_one_point_per_t_batch_and_refuses_q_points():
    # summed by optimize_acqf, [b, q] values would optimise q points each on its own, not jointly
    acq = log_hypervolume_improvement(_Exact(), Y, 2, 1)
    assert acq(torch.tensor([[[3.5, 3.5, -1.0]]], dtype=torch.float64).expand(2, 3, 1, 3)).shape == (2, 3)
    with pytest.raises(ValueError, match=r"X must be \[\.\.\., 1, d\] \(one point per t-batch\), got \[4, 2, 3\]"):
        acq(torch.zeros(4, 2, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"X must be \[\.\.\., 1, d\]"):
        acq(torch.zeros(3, dtype=torch.float64))


def test_gradients_are_finite_in_float32_over_a_decomposition_with_empty_cells():
    from botorch.utils.multi_objective.box_decompositions.non_dominated import NondominatedPartitioning

    front = torch.tensor([[0.0, 1.0, 3.0], [1.0, 0.0, 3.0], [3.0, 3.0, 0.0], [2.0, 2.0, 1.0], [1.0, 1.0, 2.0]])
    ref = torch.full((3,), -0.3)
    partitioning = NondominatedPartitioning(ref_point=ref, Y=front)
    bounds = partitioning.get_hypercell_bounds()
    assert ((bounds[1] <= bounds[0]).any(dim=-1)).any()  # the case: cells without volume

    class _Noisy(_Exact):
        num_outputs = 3

        def posterior(self, X, output_indices=None, observation_noise=False, posterior_transform=None):
            return gaussian_posterior(X, torch.full_like(X, 0.25), same=first_equal_rows(X))

    ours = AnalyticLogEHVI(_Noisy(), partitioning, 3)
    fast = AnalyticLogEHVI(_Noisy(), FastNondominatedPartitioning(ref_point=ref, Y=front), 3)
    X = torch.tensor([[[1.5, 1.5, 1.5]], [[0.2, 0.2, 0.2]], [[4.0, 0.5, 0.5]]], requires_grad=True)
    values = ours(X)
    values.sum().backward()
    assert torch.isfinite(values).all() and torch.isfinite(X.grad).all()
    torch.testing.assert_close(values, fast(X), rtol=1e-5, atol=1e-5)  # one region, however it is cut


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_excess_far_below_a_cell_keeps_its_digits(dtype):
    # a model all but certain (an NP's floor variance, sigma near 1e-15) puts a cell's floor at z of
    # 1e8 and more, where 1 - z Phi(-z) / phi(z) (about 1 / z^2) rounds to 0: the value is then
    # log phi(z) - 2 log z to the series' digits, not a rounding-sized floor below log phi(z)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    points = [3.0, 7.5, 31.0, 1e3, 1e5, 1e8]
    z = torch.tensor(points, dtype=dtype, requires_grad=True)
    got = log_expected_excess(z, torch.full_like(z, math.inf))
    for a, value in zip(points, got.tolist()):
        a = mpmath.mpf(a)
        expected = float(mpmath.log(mpmath.npdf(a) - a * mpmath.ncdf(-a)))
        assert value == pytest.approx(expected, rel=1e-12 if dtype == torch.float64 else 1e-5)
    got.sum().backward()
    assert torch.isfinite(z.grad).all() and (z.grad < 0).all()


def test_the_feasible_rows_of_several_objectives_are_judged_where_one_objectives_are():
    # one home for "every constraint value <= 0" over rows of outputs: constrained.feasible, told how many
    # objective columns lead
    from npbandit.acquisition.constrained import feasible

    assert feasible(Y, 1, objectives=2).tolist() == [True, True, True, True, False, True]
    assert feasible(Y[:, :2], 0, objectives=2).all()
    with pytest.raises(ValueError, match=r"the outputs must be \[n, 2 \+ 0\] \(the objectives, then the constraint "):
        feasible(Y, 0, objectives=2)


def test_a_model_whose_outputs_are_not_the_objectives_and_constraints_is_refused():
    # a two-output model with constraints=1 had no constraint output to read: the acquisition dropped the
    # constraint silently (an empty product of feasibility probabilities)
    X, outputs, model = _two_output_gp()
    with_constraint = torch.cat([outputs, -torch.ones(len(outputs), 1, dtype=torch.float64)], dim=-1)
    with pytest.raises(ValueError, match=r"model must have 2 \+ 1 outputs \(the objectives, then the constraints\), "
                                         r"got 2"):
        log_hypervolume_improvement(model, with_constraint, 2, 1)
    partitioning = FastNondominatedPartitioning(ref_point=reference_point(outputs, 2), Y=pareto_front(outputs, 2))
    with pytest.raises(ValueError, match=r"model must have 3 \+ 0 outputs"):
        AnalyticLogEHVI(model, partitioning, 3)
    with pytest.raises(ValueError, match=r"partitioning must cut the space of the 1 objectives, got cells of 2"):
        AnalyticLogEHVI(_Exact(), partitioning, 1, 2)


def test_the_hypervolume_acquisition_finds_the_observed_front_once(monkeypatch):
    # the observed rows' front decides both the reference point and the cells: it is found once per call (it
    # was found a second time for the cells); points pending have their believed rows merged into that
    # front (a row dominated among the observed rows is dominated among them all), the front not taken
    # again over every row. Counted at BoTorch's is_non_dominated, the one place a front is found
    from botorch.utils.multi_objective import pareto

    real = pareto.is_non_dominated
    rows = []
    monkeypatch.setattr(pareto, "is_non_dominated", lambda Z, *a, **k: rows.append(Z.shape[-2]) or real(Z, *a, **k))
    log_hypervolume_improvement(_Exact(), Y, 2, 1)
    assert rows == [5]  # the 5 feasible rows of Y
    rows.clear()
    pending = torch.tensor([[5.0, 5.0, -1.0], [6.0, 6.0, 1.0], [3.5, 0.5, -1.0]], dtype=torch.float64)
    acq = log_hypervolume_improvement(_Exact(), Y, 2, 1, pending=pending)
    assert rows == [5, 3 + 2]  # then the observed front's 3 rows and the 2 feasible believed ones
    monkeypatch.setattr(pareto, "is_non_dominated", real)
    # the cells those of the front of every row, observed and believed, as taken over all of them
    every_row = pareto_front(torch.cat([Y, pending]), 2, 1)
    cells = FastNondominatedPartitioning(ref_point=reference_point(Y, 2, 1), Y=every_row)
    torch.testing.assert_close(torch.stack([acq.cell_lower, acq.cell_upper]), cells.get_hypercell_bounds(),
                               rtol=0, atol=0)
    # nothing feasible, observed or believed: no front (and no rows to find one in), as over every row
    infeasible = torch.cat([Y[:, :2], torch.ones(len(Y), 1, dtype=torch.float64)], dim=-1)
    acq = log_hypervolume_improvement(_Exact(), infeasible, 2, 1, pending=pending[1:2])
    cells = FastNondominatedPartitioning(ref_point=reference_point(infeasible, 2, 1), Y=torch.zeros(0, 2,
                                                                                                 dtype=torch.float64))
    torch.testing.assert_close(torch.stack([acq.cell_lower, acq.cell_upper]), cells.get_hypercell_bounds(),
                               rtol=0, atol=0)


@pytest.mark.parametrize("shift", [1e6, -3.7])
def test_an_objective_of_no_range_moves_its_reference_point_by_its_shift(shift):
    # with every row equal in an objective there is no range to take a tenth of: the margin is then in the
    # objective's own units, so that a shift c of its values moves the point by c (a margin of a tenth of
    # the values' magnitude moved it by 1.1 c). Both points are c's and the margin's sums and differences:
    # four roundings, each at most half the epsilon times a value below |v| + |c| + 1, hence the tolerance
    rows = torch.tensor([[2.5, 1.0], [2.5, 3.0], [2.5, -0.5]], dtype=torch.float64)
    moved = rows.clone()
    moved[:, 0] += shift
    ref, ref_moved = reference_point(rows, 2), reference_point(moved, 2)
    tolerance = 2 * torch.finfo(torch.float64).eps * (2.5 + abs(shift) + 1)
    torch.testing.assert_close(ref_moved[0], ref[0] + shift, rtol=0, atol=tolerance)
    assert ref_moved[1] == ref[1]  # the other objective's point is its own
    assert ref[0] < 2.5 and ref[1] == 3.0 - REFERENCE_MARGIN * 3.5  # below the front in each objective
    # values so large that a margin of one unit is lost to rounding keep a box below the front
    huge = torch.tensor([[1e20, 1.0], [1e20, 2.0]], dtype=torch.float64)
    assert reference_point(huge, 2)[0] < 1e20
    assert (reference_point(torch.tensor([[-1e300, 1e300]], dtype=torch.float64), 2) < torch.tensor([-1e300, 1e300],
                                                                                              dtype=torch.float64)).all()


def test_the_warp_takes_values_of_any_finite_magnitude_and_leaves_ordinary_ones_as_they_were():
    # a direct caller's objective near 1e160 has a variance past float64's largest value: its column is
    # brought into range by an exact power of two first (output_scale, as NPSampler's values are), which
    # standardisation undoes exactly, so ordinary values are warped bit for bit as before (the expected
    # rows below are the warp's output before the scaling was added) and values a power of two apart alike
    A = torch.tensor([[1.0, -2.0, 5.0, -1.0], [3.0, 0.5, 5.000003, 0.2], [4.0, 7.25, 5.000001, -3.0],
                      [2.0, -1.5, 5.000007, 1.0], [9.0, 0.0, 5.000002, -0.5], [3.0, 3.0, 5.000002, 0.0],
                      [0.5, 1.0, 5.0, 2.0]], dtype=torch.float64)
    A[:, 0] = torch.exp(3 * A[:, 0])  # a long tail; the third objective's range (7e-6) is one output_scale scales
    expected = torch.tensor([
        [-1.0189059903018955, -1.5891460601252687, -1.4097521831836204, -1.0],
        [-1.0189057859104556, -0.2563963288051614, 0.3261163686504203, 0.2],
        [-1.0189018753021313, 1.2150732748764714, -0.6402820930484768, -3.0],
        [-1.0189059806084528, -1.2750349940938484, 1.1692782317028314, 1.0],
        [0.2800573134589536, -0.47472314586853015, -0.06602580697497212, -0.5],
        [-1.0189057859104556, 0.5018491284075086, -0.06602580697497212, 0.0],
        [-1.018905990696464, -0.06295969915449269, -1.4097521831836204, 2.0]], dtype=torch.float64)
    torch.testing.assert_close(warp_objectives(A, 3, 1), expected, rtol=0, atol=0)
    scaled = A.clone()
    scaled[:, :3] *= 2.0 ** 530  # near 1e160 and beyond: the first objective's largest is 1.9e171
    torch.testing.assert_close(warp_objectives(scaled, 3, 1), expected, rtol=0, atol=0)
    huge = torch.cat([A[:, :3] * 1e160, A[:, 3:]], dim=-1)
    warped = warp_objectives(huge, 3, 1)
    assert torch.isfinite(warped).all()
    for j in range(3):
        assert torch.equal(torch.argsort(warped[:, j], stable=True), torch.argsort(huge[:, j], stable=True))


class _Spread(_Exact):
    """As :class:`_Exact`, with a spread that makes every cell count."""

    def __init__(self, outputs: int) -> None:
        super().__init__()
        self.num_outputs = outputs

    def posterior(self, X, output_indices=None, observation_noise=False, posterior_transform=None):
        return gaussian_posterior(X, torch.full_like(X, 0.04), same=first_equal_rows(X))


def _sphere_front(n, m, seed=0):
    """``n`` rows of ``m`` objectives on the positive unit sphere: every row on the front."""
    W = torch.rand(n, m, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    return W / W.norm(dim=-1, keepdim=True)


def test_two_to_four_objectives_are_cut_exactly_and_five_or_more_by_botorchs_approximation():
    from botorch.utils.multi_objective.box_decompositions.non_dominated import NondominatedPartitioning

    assert [partitioning_alpha(m) for m in (2, 3, 4, 5, 6, 9)] == [0.0, 0.0, 0.0, 1e-3, 1e-2, 1e-2]
    for m in (2, 3, 4):  # exactly as before: BoTorch's exact decomposition, bit for bit
        outputs = _sphere_front(30, m)
        acq = log_hypervolume_improvement(_Spread(m), outputs, m)
        cells = FastNondominatedPartitioning(ref_point=reference_point(outputs, m), Y=pareto_front(outputs, m))
        torch.testing.assert_close(torch.stack([acq.cell_lower, acq.cell_upper]), cells.get_hypercell_bounds(),
                                   rtol=0, atol=0)
    outputs = _sphere_front(30, 5)
    acq = log_hypervolume_improvement(_Spread(5), outputs, 5)
    ref, front = reference_point(outputs, 5), pareto_front(outputs, 5)
    approx = NondominatedPartitioning(ref_point=ref, Y=front, alpha=1e-3).get_hypercell_bounds()
    torch.testing.assert_close(torch.stack([acq.cell_lower, acq.cell_upper]), approx, rtol=0, atol=0)
    exact = FastNondominatedPartitioning(ref_point=ref, Y=front).get_hypercell_bounds()
    assert approx.shape[-2] < exact.shape[-2]  # the point of it: fewer cells than the exact cut
    # its cells lie in the region the exact ones cover, so it misses improvement and adds none
    points = torch.rand(32, 1, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * 0.4 + 0.5
    full = AnalyticLogEHVI(_Spread(5), FastNondominatedPartitioning(ref_point=ref, Y=front), 5)
    with torch.no_grad():
        ours, theirs = acq(points), full(points)
    assert torch.isfinite(ours).all() and (ours <= theirs + 1e-12).all() and (ours < theirs - 1e-6).any()


@pytest.mark.parametrize("rows", [1, 2])
def test_the_approximate_cells_give_the_exact_acquisition_where_they_cut_the_same_region(rows):
    # one or two points on the front: no box is small enough to leave out, so the approximate cells cover the
    # exact region and the improvement is the exact one, cut differently (rounding apart)
    outputs = torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 3.0, 4.0, 5.0]], dtype=torch.float64)[:rows]
    outputs = torch.cat([outputs, torch.zeros(1, 5, dtype=torch.float64)])  # a dominated row sets the range
    acq = log_hypervolume_improvement(_Spread(5), outputs, 5)
    assert type(box_decomposition(reference_point(outputs, 5), pareto_front(outputs, 5))).__name__ == (
        "NondominatedPartitioning")  # five objectives: the approximate decomposition
    exact = AnalyticLogEHVI(_Spread(5), FastNondominatedPartitioning(ref_point=reference_point(outputs, 5),
                                                                     Y=pareto_front(outputs, 5)), 5)
    points = torch.rand(32, 1, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(2)) * 6
    with torch.no_grad():
        torch.testing.assert_close(acq(points), exact(points), rtol=1e-12, atol=1e-12)


def test_the_box_decomposition_takes_an_alpha_in_zero_to_one():
    from botorch.utils.multi_objective.box_decompositions.non_dominated import NondominatedPartitioning

    front = _sphere_front(6, 3)
    ref = torch.zeros(3, dtype=torch.float64)
    assert type(box_decomposition(ref, front)) is FastNondominatedPartitioning  # three objectives: exact
    assert type(box_decomposition(ref, front, 0.0)) is FastNondominatedPartitioning
    approx = box_decomposition(ref, front, 0.01)
    assert type(approx) is NondominatedPartitioning and approx.alpha == 0.01
    for alpha in (-0.1, 1.0, math.nan, "0.01", True):
        with pytest.raises(ValueError, match=r"alpha must be None or a float in \[0, 1\)"):
            box_decomposition(ref, front, alpha)
    for objectives in (1, 0, 2.0):
        with pytest.raises(ValueError, match="objectives"):
            partitioning_alpha(objectives)
