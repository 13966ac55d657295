"""Policies: one interface (``reset`` / ``act`` / ``observe``) for bandits and BO.

Importing the package loads NumPy alone: the classical bandit policies
(:class:`~npbandit.policies.classical.UniformPolicy`,
:class:`~npbandit.policies.classical.LinUCBPolicy`,
:class:`~npbandit.policies.linear_ts.LinearTSPolicy`), the bandit's shape and the context
projections are here at once; the policies on torch (the NP and GP policies, BO and its
designs) load their module on first use, so a process that plays only classical policies
never imports torch or BoTorch. :func:`make_bandit_policy` likewise imports a policy's module
only when it builds one.
"""

from typing import TYPE_CHECKING, Any

import numpy as np

from npbandit.policies.base import Policy
from npbandit.policies.classical import LinUCBPolicy, UniformPolicy
from npbandit.policies.context_projection import (
    ContextProjection,
    Identity,
    PrincipalComponents,
    RewardDirections,
    as_projection,
)
from npbandit.policies.linear_ts import LinearTSPolicy
from npbandit.policies.names import check_bandit_policy_name, parse_bandit_policy_name
from npbandit.policies.problem import ARM_PRIORS, WHEEL, BanditProblem, bandit_problem
from npbandit.validation import check_real

if TYPE_CHECKING:
    from npbandit.acquisition.proposal import ACQUISITIONS
    from npbandit.policies.bo import BOPolicy
    from npbandit.policies.branches import BranchBOPolicy
    from npbandit.policies.design import SobolPolicy
    from npbandit.policies.gp_ucb import GPUCBPolicy
    from npbandit.policies.np_bandit import NPBanditPolicy
    from npbandit.policies.pareto import ParetoBOPolicy
    from npbandit.policies.per_arm import PerArmNPPolicy
    from npbandit.policies.trust_region import TrustRegionSettings

__all__ = ["Policy", "UniformPolicy", "LinUCBPolicy", "LinearTSPolicy", "NPBanditPolicy", "PerArmNPPolicy",
           "GPUCBPolicy", "BOPolicy", "ParetoBOPolicy", "BranchBOPolicy", "SobolPolicy", "ACQUISITIONS",
           "TrustRegionSettings",
           "BanditProblem", "WHEEL",
           "make_bandit_policy", "ContextProjection", "PrincipalComponents", "RewardDirections", "Identity"]


def make_bandit_policy(name: str, beta: float = 1.0, *, env: Any = None, n_arms: int | None = None,
                       context_dim: int | None = None, bounds: Any = None, projection: Any = None) -> Policy:
    """The bandit policy ``name`` for a bandit of ``n_arms`` arms and contexts of shape
    ``(context_dim,)`` -- read from ``env`` (a ``gymnasium.Env`` with a ``Box`` observation
    space of contexts and a ``Discrete`` action space of arms), or given -- or, with
    neither, for the wheel bandit (2-D contexts in [-1, 1]^2, 5 arms).

    Names:

    - ``uniform``, ``linucb`` (β is its exploration weight α), ``lin-ts`` (linear Thompson
      sampling with unknown noise, :class:`LinearTSPolicy`; it draws from its posterior
      and reads no β), ``gp-ucb``: any bandit (``gp-ucb`` reads contexts mapped onto the
      unit cube from the finite bounds, when there are any: :class:`GPUCBPolicy`);
    - ``<bo checkpoint>[-ucb|-thompson]`` (``cmanp-bo``, ``cmanp-bo-thompson``, a path):
      :class:`PerArmNPPolicy`, one NP regression per arm, every arm's rewards on the scale
      of all rewards; any bandit whose contexts lie in a finite box: the ``Box``'s bounds,
      or ``bounds`` (``[2, d]``, lower row and upper row; contexts outside it are refused,
      and the models read the box of the contexts seen). Contexts are read through
      ``projection`` (a :class:`~npbandit.policies.context_projection.ContextProjection`
      or its name, ``"identity"`` / ``"principal-components"`` / ``"reward-directions"``;
      ``None``: the default, :func:`~npbandit.policies.context_projection.default_projection`:
      as they are for contexts that fit the checkpoint, 6 features for the shipped ones,
      ``reward-directions`` fitted on the rounds seen for wider ones);
    - ``<wheel checkpoint>[-ucb|-thompson|-marginal-thompson]`` (``cmanp-wheel``,
      ``tnpd-wheel-thompson``; a bare model name means its ``-wheel`` checkpoint):
      :class:`NPBanditPolicy`; the wheel bandit's shape only (2-D contexts, 5 arms).

    Raises:
        TypeError: ``env`` not a ``gymnasium.Env``; its observation space not a ``Box`` or
            its action space not a ``Discrete``; a ``name`` that is not a string.
        ValueError: an unknown name; ``env`` with ``n_arms`` / ``context_dim``, or one of
            those without the other; a ``Box`` that is not 1-D, a ``Discrete`` not from 0;
            ``bounds`` that do not contain ``env``'s ``Box``; a ``beta`` that is not a finite
            number >= 0; no finite ``bounds`` for a per-arm NP policy; ``projection`` for
            another policy; bad values.
        CheckpointError: a checkpoint that cannot serve this bandit (a wheel checkpoint
            for another shape).
        FileNotFoundError: a known checkpoint whose weights file is missing.
    """
    problem = bandit_problem(env, n_arms=n_arms, context_dim=context_dim, bounds=bounds)
    parsed = parse_bandit_policy_name(name)  # raises TypeError for a non-string
    beta = check_real("beta", beta, low=0.0)  # by the name the caller used (linucb calls it alpha)
    if projection is not None:
        projection = as_projection(projection)
    if parsed is None:  # a baseline
        _no_projection(name, projection)
        if name == "uniform":
            return UniformPolicy(n_arms=problem.n_arms, context_dim=problem.context_dim, bounds=problem.bounds)
        if name == "linucb":  # beta is its exploration weight alpha (both default to 1)
            return LinUCBPolicy(n_arms=problem.n_arms, context_dim=problem.context_dim, alpha=beta,
                                bounds=problem.bounds)
        if name == "lin-ts":  # a posterior draw explores: no weight to take
            return LinearTSPolicy(n_arms=problem.n_arms, context_dim=problem.context_dim, bounds=problem.bounds)
        from npbandit.policies.gp_ucb import GPUCBPolicy

        return GPUCBPolicy(n_arms=problem.n_arms, beta=beta, context_dim=problem.context_dim, bounds=problem.bounds)
    # unknown names, missing files and checkpoints of another kind or shape, by name
    check_bandit_policy_name(name, context_dim=problem.context_dim, n_arms=problem.n_arms)
    from npbandit.policies.np_bandit import NPBanditPolicy
    from npbandit.policies.per_arm import PerArmNPPolicy
    from npbandit.surrogates.pretrained import checkpoint_use, load_surrogate, read_card

    checkpoint, rule = parsed
    if checkpoint_use(read_card(checkpoint))["prior"] in ARM_PRIORS:
        if problem.bounds is None:
            raise _bounds_required(name, env, problem.context_dim)
        return PerArmNPPolicy(load_surrogate(checkpoint), problem.bounds, problem.n_arms, rule=rule, beta=beta,
                              projection=projection)
    _no_projection(name, projection)
    policy = NPBanditPolicy(load_surrogate(checkpoint), rule=rule, beta=beta)
    if env is not None:  # a Box the checkpoint was not trained on fails here, before a run
        policy.check_spaces(env.observation_space, env.action_space)
    return policy


def _bounds_required(name: str, env: Any, width: int) -> ValueError:
    """The error for a per-arm NP policy without a finite box: which of ``env``'s ``Box``
    dimensions have no finite side, and the call that gives the box. Never a box read from data."""
    shown = [0, 1, 2] if width <= 3 else [0, "...", width - 1]
    lows = ", ".join("..." if i == "..." else f"lower_{i}" for i in shown[:width])
    highs = ", ".join("..." if i == "..." else f"upper_{i}" for i in shown[:width])
    call = f"make_bandit_policy({name!r}, env=env, bounds=[[{lows}], [{highs}]])"
    if env is None:
        return ValueError(f"bounds are required: policy {name!r} refuses every context outside a finite box, and no "
                          f"bounds were given; pass bounds=[[{lows}], [{highs}]] with lower_i < upper_i, the box every "
                          "context lies in")
    box = env.observation_space
    open_ = np.flatnonzero(~(np.isfinite(box.low) & np.isfinite(box.high) & (box.low < box.high))).tolist()
    return ValueError(f"bounds are required: policy {name!r} refuses every context outside a finite box, and "
                      f"env.observation_space {box} has no finite one in dimension(s) {', '.join(map(str, open_))}; "
                      f"pass {call}, a box with lower_i < upper_i that holds every context the bandit gives and "
                      "the Box's finite sides (in a sweep, as a factory: lambda env: make_bandit_policy(..., "
                      "bounds=...))")


def _no_projection(name: str, projection: Any) -> None:
    if projection is not None:
        raise ValueError(f"projection is for a 'bo' checkpoint's per-arm policy (cmanp-bo, ...); policy {name!r} "
                         "reads its contexts as they are: leave projection=None")


def __getattr__(name: str) -> Any:
    # the policies on torch, each from its module on first use; the import statements are
    # spelled out (not importlib) so that tools reading imports see them
    if name == "NPBanditPolicy":
        from npbandit.policies.np_bandit import NPBanditPolicy as value
    elif name == "PerArmNPPolicy":
        from npbandit.policies.per_arm import PerArmNPPolicy as value
    elif name == "GPUCBPolicy":
        from npbandit.policies.gp_ucb import GPUCBPolicy as value
    elif name == "BOPolicy":
        from npbandit.policies.bo import BOPolicy as value
    elif name == "ParetoBOPolicy":
        from npbandit.policies.pareto import ParetoBOPolicy as value
    elif name == "BranchBOPolicy":
        from npbandit.policies.branches import BranchBOPolicy as value
    elif name == "SobolPolicy":
        from npbandit.policies.design import SobolPolicy as value
    elif name == "TrustRegionSettings":
        from npbandit.policies.trust_region import TrustRegionSettings as value
    elif name == "ACQUISITIONS":
        from npbandit.acquisition.proposal import ACQUISITIONS as value
    else:
        raise AttributeError(f"module 'npbandit.policies' has no attribute {name!r}")
    globals()[name] = value  # later look-ups find it without calling here again
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
