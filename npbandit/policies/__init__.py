"""Policies: one interface (``reset`` / ``act`` / ``observe``) for bandits and BO."""

from npbandit.policies.bandit import (
    GPUCBPolicy,
    LinUCBPolicy,
    NPBanditPolicy,
    UniformPolicy,
    check_bandit_policy_name,
    parse_bandit_policy_name,
)
from npbandit.policies.base import Policy
from npbandit.policies.bo import ACQUISITIONS, BOPolicy, SobolPolicy
from npbandit.policies.trust_region import TrustRegionSettings

__all__ = ["Policy", "UniformPolicy", "LinUCBPolicy", "NPBanditPolicy", "GPUCBPolicy", "BOPolicy", "SobolPolicy",
           "ACQUISITIONS", "TrustRegionSettings", "make_bandit_policy"]


def make_bandit_policy(name: str, beta: float = 1.0) -> Policy:
    """``uniform``, ``linucb``, ``gp-ucb``, or ``<checkpoint>[-ucb|-thompson|-marginal-thompson]`` (e.g.
    ``cmanp-wheel``, ``tnpd-wheel-thompson``; a bare model name means its ``-wheel`` checkpoint)."""
    parsed = parse_bandit_policy_name(name)  # raises TypeError for a non-string
    if parsed is None:  # a baseline
        if name == "uniform":
            return UniformPolicy()
        if name == "linucb":  # beta is its exploration weight alpha (both default to 1)
            return LinUCBPolicy(alpha=beta)
        return GPUCBPolicy(beta=beta)
    check_bandit_policy_name(name)  # unknown names, missing files and checkpoints of another kind, by name
    from npbandit.surrogates.pretrained import load_surrogate

    checkpoint, rule = parsed
    return NPBanditPolicy(load_surrogate(checkpoint), rule=rule, beta=beta)
