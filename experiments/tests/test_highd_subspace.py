"""experiments/benchmarks/highd_subspace.py: its columns build the strategies they name, and
its problems' optima are where their regret is measured from."""

import numpy as np
import pytest

from .helpers import load_benchmark

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("highd_subspace")


def test_each_column_builds_its_strategy(bench):
    params = {m: bench.make_policy(m, 12, 20).params() for m in bench.METHODS if m != "sobol"}
    assert params["coordinates-ard"]["subspace_scores"] == "ard_relevance"
    assert params["redealt-concentrated"]["subspace_relevance"] == "concentrated_ard"
    assert params["redealt-stalled"]["subspace_redeal"] == "when-stalled"
    assert "subspace_relevance" not in params["redealt-sketch"]


def test_the_shifted_rastrigin_in_48_is_zero_at_its_moved_minimum(bench):
    dim, f, optimum = bench.make_problem("rastrigin6-in-48-shifted")
    active = np.random.default_rng(3).permutation(48)[:6]
    shift = np.random.default_rng(4).uniform(-2.0, 2.0, 6)
    u = np.full(dim, 0.9)
    u[active] = (shift + 5.12) / 10.24  # x = 0 after the shift
    assert dim == 48 and optimum == 0.0 and abs(f(u)) < 1e-9 and f(np.full(dim, 0.1)) > 1.0


def test_the_bumps_in_60_read_six_inputs_and_their_minimum_is_the_lowest_value(bench):
    import scipy.optimize

    dim, f, optimum = bench.make_problem("bumps6-in-60")
    active = np.random.default_rng(7).permutation(60)[:6]
    six, minimum = bench.bumps6()
    assert dim == 60 and optimum == minimum
    rng = np.random.default_rng(0)
    points = rng.uniform(0.0, 1.0, (500, 60))
    assert all(f(u) >= optimum for u in points)  # no random point below the minimum found
    u = points[0].copy()
    u[np.setdiff1d(np.arange(60), active)] = rng.uniform(0.0, 1.0, 54)  # the inert inputs change nothing
    assert f(u) == f(points[0])
    found = scipy.optimize.minimize(six, np.full(6, 0.5), method="L-BFGS-B", bounds=[(0.0, 1.0)] * 6)
    assert found.fun >= optimum - 1e-9  # a further search finds nothing lower
    u[active] = found.x
    assert f(u) == six(found.x)
