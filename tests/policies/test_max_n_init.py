"""``max_n_init`` caps a BO policy's default design (``optimize``: at the points of a discrete
space smaller than it), so ``optimize_policy`` builds its policy once; an ``n_init`` given is
kept as it is."""

from __future__ import annotations

import pytest

import npbandit.optimize_policy as optimize_policy_module
from npbandit.optimize_policy import optimize_policy
from npbandit.policies import BOPolicy
from npbandit.policies.pareto import ParetoBOPolicy
from npbandit.space import Choice, SearchSpace


def test_the_default_design_is_capped_and_a_given_one_kept():
    assert BOPolicy(4, model="gp", max_n_init=6).n_init == 6  # 2 x 4 + 1 = 9, capped
    assert BOPolicy(2, model="gp", max_n_init=6).n_init == 5  # under the cap
    assert BOPolicy(4, model="gp", n_init=8, max_n_init=6).n_init == 8  # given
    assert ParetoBOPolicy(4, 2, model="gp", max_n_init=6).n_init == 6
    assert ParetoBOPolicy(4, 2, model="gp", n_init=8, max_n_init=6).n_init == 8
    for cls, args in ((BOPolicy, (4,)), (ParetoBOPolicy, (4, 2))):
        with pytest.raises(ValueError, match="max_n_init must be an int >= 1, got 0"):
            cls(*args, model="gp", max_n_init=0)


@pytest.mark.parametrize("objectives", [1, 2])
def test_a_small_discrete_space_builds_its_policy_once(monkeypatch, objectives):
    built = []
    cls = BOPolicy if objectives == 1 else ParetoBOPolicy

    class Counted(cls):
        def __init__(self, *args, **kwargs):
            built.append(kwargs.get("max_n_init"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(optimize_policy_module, cls.__name__, Counted)
    small = SearchSpace({"flag": Choice([False, True]), "k": Choice(["a", "b", "c"])})  # 6 points, 4 columns
    policy, bo, _ = optimize_policy("gp", dim=small.dim, objectives=objectives, searched=small, snap=small.snap,
                                    by_branch=False, budget=10, n_init=None, acquisition="logei", output_warp=None,
                                    avoid_repeats=True, trust_region=None, liar="believer", threads=None,
                                    constrained=False, acq_optimizer=None, subspace=None)
    assert built == [6] and bo.n_init == 6
