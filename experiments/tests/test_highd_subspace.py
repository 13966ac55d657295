"""experiments/benchmarks/highd_subspace.py: the ARD relevance estimate its coordinates-ard
method injects into CoordinateSubspace(scores=...)."""

import pytest
import torch

from .helpers import load_benchmark

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("highd_subspace")


def test_ard_relevance_scores_an_interaction_the_marginal_estimate_misses(bench):
    ard_relevance = bench.ard_relevance
    g = torch.Generator().manual_seed(3)
    X = torch.rand(40, 10, generator=g, dtype=torch.float64)
    Y = torch.sin(6 * X[:, [1]]) * torch.cos(6 * X[:, [5]])  # columns 1 and 5, through their product
    score = ard_relevance(X, Y)
    assert score.shape == (10,) and score.dtype == torch.float64 and (score >= 0).all()
    noise = [i for i in range(10) if i not in (1, 5)]
    assert min(score[1], score[5]) > 10 * score[noise].max()
    assert torch.equal(score, ard_relevance(X, Y))  # deterministic
    # unchanged by shifting and scaling a column or the output (up to the optimiser's rounding)
    assert torch.allclose(ard_relevance(3 * X - 1, -2 * Y + 5), score, rtol=1e-4, atol=1e-8)
    X[:, 4] = 0.3
    assert ard_relevance(X, Y)[4] == 0  # a constant column carries nothing
    assert torch.equal(ard_relevance(X[:2], Y[:2]), torch.zeros(10, dtype=torch.float64))
    assert torch.equal(ard_relevance(X, torch.ones(40, 1)), torch.zeros(10, dtype=torch.float64))
    for bad, match in [(lambda: ard_relevance(X[0], Y), "X must have shape"),
                       (lambda: ard_relevance(X, Y.masked_fill(Y > 0.5, float("nan"))), "finite"),
                       (lambda: ard_relevance(X, Y, iterations=0), "iterations")]:
        with pytest.raises(ValueError, match=match):
            bad()


def test_the_ard_method_injects_the_estimate(bench):
    policy = bench.make_policy("coordinates-ard", 12, 20)
    assert policy.params()["subspace_scores"] == "ard_relevance"
