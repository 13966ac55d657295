"""experiments/benchmarks/async_liar.py: the asynchronous loop replayed on a virtual clock."""

import numpy as np
import pytest

from npbandit import optimize
from npbandit.policies.bo import BOPolicy

from .helpers import load_benchmark

pytestmark = pytest.mark.lab


@pytest.mark.slow
def test_the_virtual_clock_replay_is_the_loop_optimize_runs():
    # experiments/benchmarks/async_liar.py replays the asynchronous loop without waiting: with q = 1 it is
    # optimize's sequential run, point for point, and its clock adds each evaluation and proposal
    bench = load_benchmark("async_liar")
    problem, f, optimum = load_benchmark("batch_bo")._problem("branin")
    one = bench.replay("branin", 1, "mean", 0, budget=8, eval_s=1.0, propose_s=0.5, surrogate="tnpd")
    result = optimize(f, problem.bounds.numpy(), surrogate="tnpd", budget=8, seed=0, db=None, progress=False)
    assert one["log10_regret"] == pytest.approx(np.log10(result.best_value - optimum))
    assert one["wall_s"] == pytest.approx(8 * 1.0 + (8 - 5) * 0.5)  # Branin's design: 2d + 1 = 5 points, free
    two = bench.replay("branin", 2, "mean", 0, budget=8, eval_s=1.0, propose_s=0.5, surrogate="tnpd")
    assert 4.0 <= two["wall_s"] < one["wall_s"] and np.isfinite(two["log10_regret"])
    import argparse
    args = argparse.Namespace(surrogate="tnpd", seeds=30, q=4, liars=["mean", "believer"], propose_s=0.5,
                              section="async-liar-believer")
    assert bench.command_line(args).endswith("--liars mean believer --propose-s 0.5 --section async-liar-believer")


def test_the_replay_has_a_gp_yardstick_and_counts_evaluations_to_a_regret(monkeypatch):
    bench = load_benchmark("async_liar")
    built = []
    monkeypatch.setattr(BOPolicy, "reset", lambda self, seed=None, real=BOPolicy.reset: (built.append(self),
                                                                                        real(self, seed))[1])
    run = bench.replay("branin", 2, "believer", 0, budget=7, eval_s=1.0, propose_s=0.5, surrogate="gp-tr")
    (policy,) = built
    assert (policy.model_name, policy.noise_free, policy.gp_kernel, policy.trust_region) == ("gp", True, "matern52",
                                                                                            True)
    assert len(run["trace"]) == 7 and np.isfinite(run["log10_regret"])
    runs = [{"trace": [0.0, -2.5, -3.1]}, {"trace": [-2.0, -2.0, -2.0]}, {"trace": [1.0, 1.0, -4.0]}]
    assert bench._to_reach(runs, -2, budget=3) == "2"  # 2, 1 and 3 evaluations
    assert bench._to_reach(runs, -3, budget=3) == "3"  # 3, never (4), 3
    assert bench._to_reach(runs, -5, budget=3) == "> 3"
