"""Policies: one interface (``reset`` / ``act`` / ``observe``) for bandits and BO."""

from npbandit.policies.bandit import GPUCBPolicy, LinUCBPolicy, NPBanditPolicy, UniformPolicy
from npbandit.policies.base import Policy
from npbandit.policies.bo import ACQUISITIONS, BOPolicy, SobolPolicy

__all__ = ["Policy", "UniformPolicy", "LinUCBPolicy", "NPBanditPolicy", "GPUCBPolicy", "BOPolicy", "SobolPolicy",
           "ACQUISITIONS", "make_bandit_policy"]


def make_bandit_policy(name: str, beta: float = 1.0) -> Policy:
    """``uniform``, ``linucb``, ``gp-ucb``, or ``<checkpoint>[-ucb|-thompson]`` (e.g.
    ``cmanp-wheel``, ``tnpd-wheel-thompson``; a bare model name means its ``-wheel`` checkpoint)."""
    if not isinstance(name, str):
        raise TypeError(f"policy must be a name, got {type(name).__name__}")
    if name == "uniform":
        return UniformPolicy()
    if name == "linucb":
        return LinUCBPolicy()
    if name == "gp-ucb":
        return GPUCBPolicy(beta=beta)
    from npbandit.surrogates.pretrained import load_surrogate

    rule = "ucb"
    for suffix in ("-ucb", "-thompson"):
        if name.endswith(suffix):
            name, rule = name[: -len(suffix)], suffix[1:]
    checkpoint = name if "-" in name else f"{name}-wheel"
    try:
        surrogate = load_surrogate(checkpoint)
    except FileNotFoundError:
        raise ValueError(f"policy must be uniform, linucb, gp-ucb or a wheel checkpoint such as cmanp-wheel; "
                         f"got {name!r}") from None
    return NPBanditPolicy(surrogate, rule=rule, beta=beta)
