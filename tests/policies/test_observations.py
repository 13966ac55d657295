"""What BOPolicy keeps of a run (npbandit.policies.observations): the points in flight with
the best value known when each was handed out, and the observations the model is built on."""

import numpy as np
import pytest
import torch

from npbandit.policies.observations import HandOuts, Observations


def test_hand_outs_settle_each_hand_out_once_and_count_what_the_budget_spends():
    outs = HandOuts()
    a, b = np.array([0.25, 0.5]), np.array([0.75, 0.5])
    outs.add(a, None)  # a design point
    outs.add(b, 1.5)  # a proposal, the best then 1.5
    outs.add(b, 2.0)  # the same point handed out again later
    outs.spent = 3
    assert outs.design_in_flight(np.stack([a, b]), 2) == 1 and outs.design_in_flight(None, 2) == 0
    assert outs.settle(b, lambda: -1.0) == 1.5 and outs.settle(b, lambda: -1.0) == 2.0  # earliest first
    assert b.tobytes() not in outs.handed and outs.settle(a, lambda: -1.0) is None
    # a point not handed out: the fallback, spent now, and kept as given
    assert outs.settle(np.array([0.1, 0.1]), lambda: 7.0) == 7.0
    assert outs.spent == 4 and outs.given.array.tolist() == [[0.1, 0.1]]
    assert outs.remaining(10) == 6 and outs.remaining(2) == 0 and outs.remaining(None) is None


def test_observations_give_the_model_the_failures_at_the_worst_values_and_keep_the_feasible_best():
    seen = Observations()
    seen.add(np.array([0.1]), 3.0, np.array([1.0]))  # infeasible: no best
    seen.add(np.array([0.2]), 1.0, np.array([-1.0]))
    seen.add_failure(np.array([0.3]))
    assert (seen.best, seen.worst, seen.constraint_count, seen.failed_after) == (1.0, 1.0, 1, [2])
    assert seen.failure_outputs() == [1.0, 1.0]
    X, Y, warp = seen.data(None)
    assert warp is None and X.tolist() == [[0.1], [0.2], [0.3]]
    assert Y.tolist() == [[3.0, 1.0], [1.0, -1.0], [1.0, 1.0]]  # the failure at the worst value of each column
    _, warped, fitted = seen.data("yeo-johnson")
    torch.testing.assert_close(warped[:, :1], fitted.forward(Y[:, :1]))
    assert seen.constraint_values({"constraints": [0.5]}).tolist() == [0.5]
    with pytest.raises(ValueError, match=r"^info\['constraints'\]: each earlier observation carries 1 constraint "
                                         r"value, but this one holds 2$"):
        seen.constraint_values({"constraints": [0.5, 0.5]})
    with pytest.raises(ValueError, match="this observation has none"):
        seen.constraint_values({})
