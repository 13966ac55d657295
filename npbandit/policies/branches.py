"""A search of a conditional space with one BO policy per branch (:class:`BranchBOPolicy`).

In a conditional space (:mod:`npbandit.space.conditions`) a choice, the *gate*, decides which
other parameters a point has: a classifier's own hyperparameters. One model over the whole
cube (what :class:`~npbandit.policies.BOPolicy` does with a conditional space) reads every
branch's points side by side, the parameters a point lacks pinned, and is wide: three
classifiers of three parameters each are eleven columns, more than a ``bo`` checkpoint reads.
Here each value of the gate is a *branch* with a policy of its own, over the branch's own
space (every parameter a point with that value can have, the gate left out), which sees only
that branch's evaluations, at the branch's scale; the search

1. starts with ``n_init`` points of a Sobol design over the whole cube, snapped (each with the
   parameters of its own branch);
2. then takes any branch tried fewer than :data:`MIN_BRANCH_TRIES` times first (the least
   tried; a try is an evaluation, failed or in flight too), so every branch gets a model (a
   branch without parameters, one point, once);
3. then asks every branch's policy for its next point and takes the one with the highest
   acquisition value, each read by its branch's model over every evaluation of the branch,
   against the best value of the whole search, in the objective's units
   (:meth:`BOPolicy.acquisition_value`): a branch is worth what its best next point is
   expected to improve on the best found anywhere. The other branches' points are withdrawn.

This is how Optuna's ``NPSampler`` searches such a study (``npbandit.integrations
.optuna_branches``). Parameters of another gate nested in a branch stay in that branch's
space, conditional there (its policy reads them with the pins).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from npbandit.policies.base import Policy, Recommendation
from npbandit.policies.design import SobolDesign
from npbandit.space import Choice, SearchSpace

__all__ = ["BranchBOPolicy", "gate_of", "branch_spaces", "by_branch", "MIN_BRANCH_TRIES", "DESIGN_POINTS"]

#: evaluations a branch has before the branches are compared (its model needs two values)
MIN_BRANCH_TRIES = 2
#: the Sobol design over the whole cube before the branches' policies propose (as NPSampler's start-up trials)
DESIGN_POINTS = 10


def gate_of(space: SearchSpace) -> str | None:
    """The first choice (in the space's order) that other parameters depend on and that depends
    on none itself; ``None`` for a space that is not conditional."""
    for name, parameter in space.items():
        if isinstance(parameter, Choice) and parameter.dependents and space.depends_on(name) is None:
            return name
    return None


def by_branch(branches: Any, space: SearchSpace | None, *, objectives: int = 1, surrogate: Any = None,
              subspace: Any = None, output_warp: Any = None) -> bool:
    """Whether ``optimize(..., branches=branches)`` searches ``space`` by branch: ``None``
    where it can (a conditional space of one objective with a branch of more than one point,
    searched by a model without a subspace strategy or an output warp, whose values the
    branches compare in the objective's units), ``True`` likewise but refused where it
    cannot, ``False`` never.

    Raises:
        TypeError: ``branches`` is not ``None`` or a bool.
        ValueError: ``branches=True`` and something above rules a search by branch out (named)."""
    if branches is not None and not isinstance(branches, (bool, np.bool_)):
        raise TypeError(f"branches must be None, True or False, got {type(branches).__name__} {branches!r}")
    if branches is not None and not branches:
        return False
    if space is None or not space.conditional:
        why = "branches=True needs a conditional space (a Choice with dependents)"
    elif objectives > 1:
        why = "branches=True is for one objective; several objectives are searched by one model over the whole cube"
    elif isinstance(surrogate, str) and surrogate == "random":
        why = "branches=True needs a model to compare the branches by; surrogate='random' (Sobol points) has none"
    elif all(s is None for s in branch_spaces(space, gate_of(space)).values()):
        why = (f"branches=True needs a branch with something to search; every value of {gate_of(space)!r} is one "
               "point")
    elif subspace is not None or output_warp is not None:
        setting = "subspace" if subspace is not None else "output_warp"
        why = (f"branches=True compares the branches' values in the objective's units; {setting} is searched by one "
               "model over the whole cube (branches=False)")
    else:
        return True
    if branches:
        raise ValueError(why)
    return False


def branch_spaces(space: SearchSpace, gate: str) -> dict[Any, SearchSpace | None]:
    """For each value of ``gate``, the space of its branch: every parameter a point with that
    value can have, ``gate`` left out, in the space's order (``None``: a value whose points
    have no other parameter, or only one-value choices: one point, nothing to search)."""
    out: dict[Any, SearchSpace | None] = {}
    for value in space[gate].values:
        names = [n for n in space if n != gate and _under(space, n, gate, value)]
        searched = sum(space[n].columns for n in names) > 0
        out[value] = SearchSpace({n: space[n] for n in names}) if searched else None
    return out


def _under(space: SearchSpace, name: str, gate: str, value: Any) -> bool:
    """Whether a point whose ``gate`` takes ``value`` can have ``name``: its chain of choices
    does not pass through ``gate``, or enters it under ``value``."""
    while (found := space.depends_on(name)) is not None:
        parent, values = found
        if parent == gate:
            return any(v == value and type(v) is type(value) for v in values)
        name = parent
    return True


class BranchBOPolicy(Policy):
    """BO of a conditional space, one policy per branch of its gate (see the module).

    Args:
        space: the conditional search space (its cube is the one acted in).
        branch_policy: ``(branch_space) -> BOPolicy`` over that branch's cube (its settings,
            model and budget; ``output_warp`` must be ``None``, so values compare in the
            objective's units).
        n_init: points of the Sobol design over the whole cube (default :data:`DESIGN_POINTS`,
            at least two per branch).
        snap: the space's snap (``space.snap``) applied to the design's points.

    Raises:
        ValueError: ``space`` is not conditional.
    """

    def __init__(self, space: SearchSpace, branch_policy: Callable[[SearchSpace], Policy], n_init: int | None = None
                 ) -> None:
        gate = gate_of(space)
        if gate is None:
            raise ValueError("space must be conditional (a Choice with dependents) for a search by branch")
        self.space, self.gate, self.dim = space, gate, space.dim
        self.spaces = branch_spaces(space, gate)
        self.policies = {v: None if s is None else branch_policy(s) for v, s in self.spaces.items()}
        first = next(p for p in self.policies.values() if p is not None)
        self.name = f"branches-{first.name}"
        self.checkpoint = first.checkpoint
        self.n_init = max(DESIGN_POINTS, MIN_BRANCH_TRIES * len(self.spaces)) if n_init is None else n_init

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        for k, policy in enumerate(p for p in self.policies.values() if p is not None):
            policy.reset(None if seed is None else int(np.random.default_rng([seed, k]).integers(2**31)))
        self.design = SobolDesign(self.dim, int(self.rng.integers(2**31)))
        self.tries = {v: 0 for v in self.spaces}  # evaluations per branch: observed, failed or in flight
        self.evaluated: set[bytes] = set()  # every point handed out or observed: the design passes over them
        self.best = -math.inf
        # point -> (branch, its branch point), for each time it was handed out and has not come back
        self.in_flight: dict[bytes, list[tuple[Any, np.ndarray | None]]] = {}

    # -- between the whole cube and a branch's -----------------------------------------------

    def split(self, point: np.ndarray) -> tuple[Any, np.ndarray | None]:
        """``point`` ``[D]`` of the whole cube as its gate's value and the point ``[d_b]`` of that
        branch's cube (``None`` for a branch without parameters)."""
        params = self.space.decode(point)
        value, space = params[self.gate], self.spaces[params[self.gate]]
        return value, None if space is None else space.encode({n: params[n] for n in space if n in params})

    def join(self, value: Any, point: np.ndarray | None) -> np.ndarray:
        """The point of the whole cube of the branch point ``point`` of the gate's ``value``."""
        space = self.spaces[value]
        if space is None:  # one point: the branch's parameters, if any, are choices of one value each
            params = {n: self.space[n].values[0] for n in self.space if n != self.gate
                      and _under(self.space, n, self.gate, value)}
        else:
            params = space.decode(point)
        return self.space.encode({self.gate: value, **params})

    # -- the loop ------------------------------------------------------------------------------

    def act(self, obs: np.ndarray, pending: np.ndarray | None = None) -> np.ndarray:
        """The next point ``[D]``; ``pending`` ``[p, D]``: points in flight, each given to its
        branch's policy as in flight there."""
        pending_by: dict[Any, list[np.ndarray]] = {}
        for x in [] if pending is None else np.asarray(pending, dtype=np.float64).reshape(-1, self.dim):
            value, u = self.split(x)
            if u is not None:
                pending_by.setdefault(value, []).append(u)
        if sum(self.tries.values()) < self.n_init:
            point = self.design.next_new(self.space.snap, self.evaluated)
            return self._hand_out(point, *self.split(point))
        # a branch without parameters is one point: once tried, there is nothing more to try in it
        open_ = [v for v in self.tries if self.policies[v] is not None or self.tries[v] == 0]
        least = min(open_, key=lambda v: self.tries[v])
        if self.tries[least] < MIN_BRANCH_TRIES:
            return self._from_branch(least, pending_by)
        proposals = {}
        for value, policy in self.policies.items():
            if policy is None:
                continue
            u = self._propose(value, pending_by)
            proposals[value] = (u, policy.acquisition_value(u, self.best))
        best = max(proposals, key=lambda v: proposals[v][1])
        for value, (u, _) in proposals.items():
            if value != best:
                self.policies[value].withdraw(u)
        return self._hand_out(self.join(best, proposals[best][0]), best, proposals[best][0])

    def _propose(self, value: Any, pending_by: dict[Any, list[np.ndarray]]) -> np.ndarray:
        pending = pending_by.get(value)
        policy = self.policies[value]
        return policy.act(None) if not pending else policy.act(None, pending=np.stack(pending))

    def _from_branch(self, value: Any, pending_by: dict[Any, list[np.ndarray]]) -> np.ndarray:
        if self.policies[value] is None:
            return self._hand_out(self.join(value, None), value, None)
        u = self._propose(value, pending_by)
        return self._hand_out(self.join(value, u), value, u)

    def _hand_out(self, point: np.ndarray, value: Any, u: np.ndarray | None) -> np.ndarray:
        """``point`` (of branch ``value``, branch point ``u``), a try of its branch from now: the
        branch's policy observes it when it comes back (its own proposal, or the design's)."""
        self.tries[value] += 1
        key = np.asarray(point, dtype=np.float64).tobytes()
        self.evaluated.add(key)
        self.in_flight.setdefault(key, []).append((value, u))
        return point

    def _route(self, action: Any) -> tuple[Any, np.ndarray | None]:
        """The branch and branch point of an evaluated ``action``: as handed out, or split."""
        x = np.asarray(action, dtype=np.float64)
        handed = self.in_flight.get(x.tobytes())
        if handed:
            found = handed.pop(0)
            if not handed:
                del self.in_flight[x.tobytes()]
            return found
        value, u = self.split(x)
        self.tries[value] += 1  # not handed out here (a warm start): a try all the same
        self.evaluated.add(x.tobytes())
        return value, u

    def observe(self, obs: np.ndarray, action: Any, reward: float, info: dict[str, Any]) -> None:
        value, u = self._route(action)
        c = info.get("constraints") if isinstance(info, dict) else None
        if c is None or all(float(v) <= 0 for v in c):
            self.best = max(self.best, float(reward))
        if u is not None:
            self.policies[value].observe(obs, u, reward, info)

    def observe_failure(self, obs: np.ndarray, action: Any, error: str) -> None:
        value, u = self._route(action)
        if u is not None:
            self.policies[value].observe_failure(obs, u, error)

    def recommend(self) -> Recommendation | None:
        """Of the branches' recommendations (each its model's best evaluated point), the one
        with the highest predicted value, as a point of the whole cube."""
        found = []
        for value, policy in self.policies.items():
            r = None if policy is None else policy.recommend()
            if r is not None:
                found.append(Recommendation(self.join(value, r.action), r.reward))
        return max(found, key=lambda r: r.reward) if found else None

    def params(self) -> dict[str, Any]:
        first = next(p for p in self.policies.values() if p is not None)
        return {"dim": self.dim, "branches": self.gate, "n_init": self.n_init, "branch": first.params()}
