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
