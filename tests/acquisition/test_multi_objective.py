"""npbandit.acquisition.multi_objective: the feasible Pareto front, its reference point, the rows
a long run's model sees, the log expected hypervolume improvement, and propose(objectives=m)."""

import math

import numpy as np
import pytest
import torch
from botorch.models.model import Model

from npbandit.acquisition.multi_objective import (
    REFERENCE_MARGIN,
    front_rows,
    log_hypervolume_improvement,
    pareto_front,
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
