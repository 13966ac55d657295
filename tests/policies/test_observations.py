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


def test_the_model_sees_each_output_scaled_by_the_power_of_two_of_its_largest_magnitude():
    from npbandit.transforms.standardize import output_scale

    seen = Observations()
    seen.add(np.array([0.1]), 3.0, np.array([-1e300]))
    seen.add(np.array([0.2]), 1.0, np.array([0.5]))
    assert seen.scale.tolist() == [1.0, output_scale(torch.tensor([[1e300]], dtype=torch.float64)).item()]
    seen.add(np.array([0.3]), -1e300, np.array([0.5]))
    seen.add_failure(np.array([0.4]))  # seen at the worst values, which bring no new magnitude
    scale = seen.scale
    assert torch.equal(scale, output_scale(torch.tensor([[1e300, 1e300]], dtype=torch.float64))) and scale[0] < 1
    _, Y, _ = seen.data(None)
    raw = torch.tensor([[3.0, -1e300], [1.0, 0.5], [-1e300, 0.5], [-1e300, 0.5]], dtype=torch.float64)
    assert torch.equal(Y, raw * scale) and torch.equal(Y / scale, raw)  # exactly, both ways


def test_a_streamed_np_is_rebuilt_at_the_new_scale_when_a_larger_magnitude_arrives(tmp_path):
    from helpers import tiny_checkpoint

    from npbandit.policies.bo import BOPolicy

    def bowl(x):
        return -float(((x - 0.4) ** 2).sum())

    # a tiny random-weight CMANP: the streamed model's bookkeeping, at a fraction of the shipped one's cost
    policy = BOPolicy(2, model=str(tiny_checkpoint(tmp_path, "cmanp", "bo")), trust_region=False)
    policy.reset(0)
    for _ in range(policy.n_init + 1):  # the design, then a proposal that builds the model (at scale 1)
        x = policy.act(None)
        policy.observe(None, x, bowl(x), {})
    assert policy.np_model is not None and policy.seen.scale.tolist() == [1.0]
    x = policy.act(None)
    policy.observe(None, x, -1e300, {})  # a bad point's penalty: the scale changes, the streamed rows are let go
    assert policy.np_model is None and policy.seen.scale.item() < 1.0
    for _ in range(2):  # rebuilt from every observation at the new scale, then streamed at it
        x = policy.act(None)
        assert torch.equal(policy.np_model.train_Y, policy.seen.data(None)[1])
        policy.observe(None, x, bowl(x), {})
    assert torch.equal(policy.np_model.train_Y, policy.seen.data(None)[1])
