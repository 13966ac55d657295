"""The contextual-bandit policies and their names, at the address they have always had.

Each family is in a module of its own, so that a process loads only what it plays:
:mod:`npbandit.policies.classical` (:class:`~npbandit.policies.classical.UniformPolicy`,
:class:`~npbandit.policies.classical.LinUCBPolicy`; NumPy alone),
:mod:`npbandit.policies.np_bandit` (:class:`~npbandit.policies.np_bandit.NPBanditPolicy`, on a
wheel checkpoint; torch) and :mod:`npbandit.policies.gp_ucb`
(:class:`~npbandit.policies.gp_ucb.GPUCBPolicy`; torch, BoTorch when it fits); the names are
parsed and checked in :mod:`npbandit.policies.names`. Every name below is importable from
here: the two torch policies load their module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from npbandit.policies.classical import LinUCBPolicy, UniformPolicy
from npbandit.policies.names import (
    BANDIT_PRIORS,
    BASELINES,
    RULES,
    check_bandit_policy_name,
    parse_bandit_policy_name,
)

if TYPE_CHECKING:
    from npbandit.policies.gp_ucb import GPUCBPolicy
    from npbandit.policies.np_bandit import NPBanditPolicy

__all__ = ["UniformPolicy", "LinUCBPolicy", "NPBanditPolicy", "GPUCBPolicy", "BASELINES", "BANDIT_PRIORS", "RULES",
           "parse_bandit_policy_name", "check_bandit_policy_name"]


def __getattr__(name: str) -> Any:
    # the two torch policies through the package's own loader (npbandit.policies.__getattr__),
    # which imports each from its module on first use
    if name in ("NPBanditPolicy", "GPUCBPolicy"):
        import npbandit.policies

        value = getattr(npbandit.policies, name)
    else:
        raise AttributeError(f"module 'npbandit.policies.bandit' has no attribute {name!r}")
    globals()[name] = value  # later look-ups find it without calling here again
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
