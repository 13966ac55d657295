"""The policy :func:`npbandit.optimize` runs for a problem: Sobol search (``surrogate="random"``),
one :class:`~npbandit.policies.BOPolicy`, a search of a conditional space by branch
(:class:`~npbandit.policies.branches.BranchBOPolicy`) or of several objectives
(:class:`~npbandit.policies.pareto.ParetoBOPolicy`), each model-based one behind the check
that its values can be standardised (:class:`~npbandit.policies.standardised_check.StandardisedDataCheck`)."""

from __future__ import annotations

import math
from typing import Any

from npbandit.policies.base import Policy
from npbandit.policies.bo import BOPolicy
from npbandit.policies.branches import BranchBOPolicy
from npbandit.policies.design import SobolPolicy
from npbandit.policies.pareto import ParetoBOPolicy
from npbandit.policies.standardised_check import StandardisedDataCheck

__all__ = ["optimize_policy"]


def optimize_policy(model: Any, *, dim: int, objectives: int, searched: Any, snap: Any, by_branch: bool, budget: int,
                    n_init: int | None, acquisition: str, output_warp: str | None, avoid_repeats: bool,
                    trust_region: Any, liar: Any, threads: Any, constrained: bool, acq_optimizer: Any,
                    subspace: Any, polytope: Any = None) -> tuple[Policy, Any, str]:
    """``(policy, the BO policy inside it or None for Sobol search, what the progress line adds
    about it)`` for a problem of ``dim`` cube columns and ``objectives`` objectives; ``model``:
    ``"random"`` or what :class:`~npbandit.policies.BOPolicy` takes; ``searched``: the search
    space (``None``: a box) and ``snap`` its snap; ``by_branch``: a conditional space searched
    by branch (:func:`~npbandit.policies.branches.by_branch` decided it); ``budget``: the
    evaluations the policy will see, given points included; ``polytope``: linear input constraints
    on the cube (:class:`~npbandit.space.linear_constraints.Polytope`, ``None``: none), for Sobol
    search and one BO policy (``set_up_search`` refuses them with several objectives and by branch);
    the rest as ``optimize`` takes them, except that without an ``n_init`` a discrete ``searched``
    of fewer points than the default design is designed over once (the policy's ``max_n_init``
    its size: more design points could only repeat its points)."""
    if model == "random":
        return SobolPolicy(dim, snap=snap, polytope=polytope), None, ""
    # a discrete space of fewer points than the default design is designed once over, point by point
    few = int(searched.size) if n_init is None and searched is not None and searched.size < math.inf else None
    if objectives > 1:
        bo = ParetoBOPolicy(dim, objectives, model=model, n_init=n_init, avoid_repeats=avoid_repeats, budget=budget,
                            threads=threads, snap=snap, constrained=constrained, acq_optimizer=acq_optimizer,
                            max_n_init=few)
        # say so where the run shows itself: the surrogate reads fewer inputs than dim
        more = f" ({dim} columns, the model reading the {bo.width} most relevant)" if bo.width < dim else ""
        return StandardisedDataCheck(bo), bo, more

    def searcher(width: int, snap: Any, n_init: int | None = n_init, max_n_init: int | None = None) -> BOPolicy:
        return BOPolicy(width, model=model, acquisition=acquisition, n_init=n_init, output_warp=output_warp,
                        avoid_repeats=avoid_repeats, trust_region=trust_region, liar=liar, budget=budget,
                        threads=threads, snap=snap, constrained=constrained, acq_optimizer=acq_optimizer,
                        subspace=subspace, polytope=polytope, max_n_init=max_n_init)

    if by_branch:
        bo = BranchBOPolicy(searched, lambda s: searcher(s.dim, None if s.continuous else s.snap, None), n_init=n_init)
        return StandardisedDataCheck(bo), bo, f" (by branch of {bo.gate!r})"
    bo = searcher(dim, snap, max_n_init=few)
    more = ""
    if bo.subspace is not None:  # say so where the run shows itself: the surrogate sees fewer inputs than dim
        strategy = getattr(bo.subspace, "name", type(bo.subspace).__name__)
        more = f" ({dim} columns, searched by {strategy} for a model of {bo.width})"
    return StandardisedDataCheck(bo), bo, more
