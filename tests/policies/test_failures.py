"""Failed evaluations inform the search: BOPolicy.observe_failure and the loop that calls it."""

import numpy as np
import pytest
import torch

from npbandit import optimize
from npbandit.policies import BOPolicy
from npbandit.policies.base import Policy, PolicyWrapper
from npbandit.storage import list_runs, run_steps


def test_failed_design_points_count_as_design_and_join_the_models_data_at_the_worst_value():
    policy = BOPolicy(2, model="gp", n_init=4)
    policy.reset(seed=0)
    for i in range(4):
        x = policy.act(None)
        if i in (1, 2):
            policy.observe_failure(None, x, "boom")
        else:
            policy.observe(None, x, float(-i), {})
    assert len(policy.failed) == 2 and len(policy.Y) == 2
    X, Y = policy._data()
    assert X.shape == (4, 2) and Y[:, 0].tolist() == [0.0, -3.0, -3.0, -3.0]
    assert torch.equal(X[2:], torch.tensor(np.array(policy.failed)))
    # four points handed out: the design is over, although only two have values
    x = policy.act(None)
    assert not any(np.allclose(x, f) for f in policy.failed)


def test_a_failed_proposal_shrinks_the_trust_region_as_a_non_improving_one_does():
    policy = BOPolicy(2, model="tnpd-bo", n_init=3)
    policy.reset(seed=0)
    for _ in range(3):
        x = policy.act(None)
        policy.observe(None, x, float(-np.sum((x - 0.3) ** 2)), {})
    x = policy.act(None)
    policy.observe_failure(None, x, "diverged")
    assert policy.region.failures == 1 and policy.region.successes == 0


def test_a_run_whose_failures_share_a_region_never_repeats_a_failed_point_and_stores_each_reason(tmp_path):
    def objective(x):
        if x[0] > 0.5:  # a region where every evaluation fails
            raise FloatingPointError("diverged")
        return float(np.sum((x - 0.4) ** 2))

    db = str(tmp_path / "fail.db")
    result = optimize(objective, [[0.0, 0.0], [1.0, 1.0]], surrogate="gp", budget=12, seed=0, db=db,
                      on_error="skip", progress=False)
    points = np.array([h["x"] for h in result.history])
    gaps = np.linalg.norm(points[:, None] - points[None], axis=-1) + np.eye(len(points))
    assert gaps.min() > 1e-6, "a point was evaluated twice"
    assert all(("error" in h) == h["failed"] for h in result.history)
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    failed = [s for s in steps if s["failed"]]
    assert failed and all("FloatingPointError: diverged" in s["error"] for s in failed)
    assert all(s["error"] is None for s in steps if not s["failed"])


def test_a_wrapper_forwards_every_call_of_the_policy_interface():
    calls = []

    class Recording(Policy):
        name = "recording"

        def act(self, obs, pending=None):
            calls.append("act")
            return np.zeros(1)

        def observe(self, obs, action, reward, info):
            calls.append("observe")

        def observe_failure(self, obs, action, error):
            calls.append(f"failure:{error}")

    wrapped = PolicyWrapper(Recording())
    wrapped.reset(seed=0)
    wrapped.act(None)
    wrapped.observe(None, np.zeros(1), 0.0, {})
    wrapped.observe_failure(None, np.zeros(1), "boom")
    assert calls == ["act", "observe", "failure:boom"] and wrapped.name == "recording"
    with pytest.raises(TypeError, match="inner must be a Policy"):
        PolicyWrapper(object())
