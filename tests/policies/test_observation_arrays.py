"""BOPolicy keeps its observations in arrays grown in place (npbandit.rows.RowBuffer) and their
running extremes, so that a proposal late in a long run restacks nothing: what the model is
given must be what restacking the observation lists from scratch gives, bit for bit."""

import warnings

import numpy as np
import pytest
import torch
from helpers import tiny_checkpoint

from npbandit.acquisition import CandidateSearch
from npbandit.envs import BlackBoxEnv
from npbandit.feasibility import is_feasible
from npbandit.loop import run_episode
from npbandit.policies import BOPolicy
from npbandit.policies.standardised_check import StandardisedDataCheck, standardisable
from npbandit.transforms.yeo_johnson import YeoJohnson


def data_from_scratch(policy: BOPolicy) -> tuple[torch.Tensor, torch.Tensor, YeoJohnson | None]:
    """The model's data recomputed from the policy's lists: its observations, then the failed
    points at the worst value (and each constraint's worst value); and the output warp fitted."""
    failed = policy.failed if policy.Y else []
    values = policy.Y + [min(policy.Y)] * len(failed)
    Y = torch.tensor(np.asarray(values, dtype=np.float64), dtype=torch.float64).unsqueeze(-1)
    warp = None if policy.output_warp is None else YeoJohnson.fit(Y)
    if warp is not None:
        Y = warp.forward(Y)
    if policy.C:
        C = torch.tensor(np.array(policy.C), dtype=torch.float64)
        Y = torch.cat([Y, torch.cat([C, C.amax(dim=0).expand(len(failed), -1)])], dim=-1)
    return torch.tensor(np.array(policy.X + failed), dtype=torch.float64), Y, warp


def best_from_scratch(policy: BOPolicy) -> float:
    """The best value (with constraints, the best feasible one; -inf while none is) by a scan."""
    values = [y for y, c in zip(policy.Y, policy.C or [None] * len(policy.Y)) if c is None or is_feasible(c)]
    return max(values) if values else -np.inf


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shape, dtype and bytes (``torch.equal`` reads -0.0 and 0.0 as equal)."""
    return a.shape == b.shape and a.dtype == b.dtype and a.numpy().tobytes() == b.numpy().tobytes()


class FromScratch(BOPolicy):
    """BOPolicy with its model's data recomputed from the lists before every
    proposal: the path the arrays replace."""

    def _data(self):
        X, Y, self._fitted_warp = data_from_scratch(self)
        return X, Y


@pytest.mark.parametrize("constrained", [False, True])
def test_the_arrays_give_the_model_what_restacking_the_lists_gives(constrained):
    # past the buffers' first capacity (64 rows), with failures, ties, -0.0 and 0.0 among the values
    rng = np.random.default_rng(0)
    policy = BOPolicy(3, model="gp", constrained=constrained, output_warp=None if constrained else "yeo-johnson")
    policy.reset(0)
    for i in range(150):
        x = rng.random(3)
        if i % 11 == 5:
            policy.observe_failure(None, x, "boom")
        else:
            value = [0.0, -0.0, 1.5, -2.0, float(rng.normal())][i % 5]
            info = {"constraints": rng.normal(size=2).tolist()} if constrained else {}
            policy.observe(None, x, value, info)
        if len(policy.Y) >= 1 and (constrained or i % 25 == 0):  # (the warp's fit takes a while)
            X, Y = policy._data()
            X_ref, Y_ref, _ = data_from_scratch(policy)
            assert same_bits(X, X_ref) and same_bits(Y, Y_ref), i
            assert np.float64(policy.seen.best).tobytes() == np.float64(best_from_scratch(policy)).tobytes()
    assert len(policy.failed) == 14 and len(policy.Y) == 136


def objective(x: np.ndarray) -> float:
    if x[0] > 0.6:
        raise RuntimeError("diverged")
    return float(np.sum((x - 0.3) ** 2)) - 0.5 * float(np.prod(np.cos(9 * x)))


def propose_run(policy_class, card: str, constrained: bool) -> np.ndarray:
    constraints = (lambda x: [float(x[1] - 0.35)]) if constrained else None
    env = BlackBoxEnv(objective=objective, bounds=[[0.0, 0.0], [1.0, 1.0]], budget=30, constraints=constraints)
    # a small context limit, so that the box's nearest observations are chosen from more
    policy = policy_class(2, model=card, max_context=8, budget=30, constrained=constrained,
                          acq_optimizer=CandidateSearch(raw_samples=32, walkers=2, rounds=2, samples=8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = run_episode(env, policy, seed=3, on_error="skip").steps
    assert sum(s["failed"] for s in steps) >= 2  # failed points are among the model's data
    return np.array([s["action"] for s in steps])


@pytest.mark.parametrize("constrained", [False, True])
def test_proposals_are_those_of_the_policy_that_restacks_its_lists(tmp_path, constrained):
    card = str(tiny_checkpoint(tmp_path, "tnpd"))
    proposed = propose_run(BOPolicy, card, constrained)
    assert proposed.tobytes() == propose_run(FromScratch, card, constrained).tobytes()


def test_the_standardisation_check_reads_every_value_observed():
    inner = BOPolicy(2, model="gp")
    check = StandardisedDataCheck(inner)
    check.reset(0)
    values = [float(v) for v in np.random.default_rng(1).normal(size=100)]
    for i, v in enumerate(values):
        check.observe(None, np.full(2, i / 100), v, {"constraints": [v, -v]})
    assert check.rewards.array.tolist() == values == inner.Y
    assert check.limits.array.tolist() == [[v, -v] for v in values]
    check.observe(None, np.full(2, 0.5), 1e300, {})  # past float64's variance unscaled; in range scaled
    with pytest.raises(ValueError, match="cannot be standardised in float64, even scaled"):  # nothing scales it
        check.observe(None, np.full(2, 0.6), np.inf, {})


@pytest.mark.parametrize("column, finite", [
    ([1e308, -1e308, 1e308], True),  # a spread whose variance float64 cannot hold unscaled
    ([5e-324, 0.0, -5e-324], True),  # a range of subnormals, scaled by float64's largest power of two
    ([1.0, np.nextafter(1.0, 2.0), 1.0], True),  # neighbours in the last place
    ([3.0, 3.0], True), ([7.5], True),
    ([1.0, np.inf], False), ([-np.inf, np.inf], False), ([0.0, np.nan, 1.0], False),
])
def test_values_standardise_once_scaled_exactly_when_they_are_finite(column, finite):
    Y = torch.tensor(column, dtype=torch.float64)[:, None]
    assert standardisable(Y) is finite
    assert standardisable(torch.cat([torch.zeros_like(Y), Y], dim=-1)) is finite  # column by column
