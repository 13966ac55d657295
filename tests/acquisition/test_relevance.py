"""Input relevance from a run's observations (npbandit.acquisition.relevance)."""

import pytest
import torch

from npbandit.acquisition.relevance import CONCENTRATION, MAX_ROWS, ard_relevance, concentrated_ard
from npbandit.acquisition.wide_spaces import default_subspace


def _interaction(n=40, seed=3):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 10, generator=g, dtype=torch.float64)
    return X, torch.sin(6 * X[:, [1]]) * torch.cos(6 * X[:, [5]])  # columns 1 and 5, through their product


def test_ard_relevance_scores_an_interaction_a_marginal_estimate_misses():
    X, Y = _interaction()
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


def test_the_fit_sees_only_the_most_recent_rows():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(MAX_ROWS + 5, 7, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X[:, :1]) + X[:, 2:3]
    assert torch.equal(ard_relevance(X, Y, iterations=5), ard_relevance(X[5:], Y[5:], iterations=5))


def test_concentrated_keeps_only_the_inputs_that_stand_out():
    X, Y = _interaction()
    score, kept = ard_relevance(X, Y), concentrated_ard(X, Y)
    assert torch.equal(kept.nonzero().reshape(-1), torch.tensor([1, 5]))
    assert torch.equal(kept[[1, 5]], score[[1, 5]])  # the scores themselves, not a rescaling
    assert (kept[[1, 5]] >= CONCENTRATION * score.median()).all()
    assert torch.equal(concentrated_ard(X[:2], Y[:2]), torch.zeros(10, dtype=torch.float64))


def test_a_wide_box_s_default_deals_the_concentrated_inputs_first():
    strategy = default_subspace()
    assert strategy.relevance is concentrated_ard
    assert strategy.bind(12, 6, seed=0).params()["subspace_relevance"] == "concentrated_ard"


@pytest.mark.parametrize("bad, match", [(lambda X, Y: ard_relevance(X[0], Y), "X must have shape"),
                                        (lambda X, Y: ard_relevance(X, Y[:-1]), "Y must be"),
                                        (lambda X, Y: ard_relevance(X, Y.masked_fill(Y > 0.5, float("nan"))),
                                         "finite"),
                                        (lambda X, Y: ard_relevance(X, Y, iterations=0), "iterations"),
                                        (lambda X, Y: ard_relevance(X, Y, iterations=True), "iterations")])
def test_bad_arguments_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        bad(*_interaction())
