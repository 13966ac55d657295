"""Task priors for meta-training and evaluation.

>>> from npbandit.priors import make_prior
>>> batch = make_prior("gp1d").batch(16, seed=0, index=0)   # deterministic
"""

from __future__ import annotations

from typing import Any

from npbandit.priors.base import Prior, TaskBatch, step_generator
from npbandit.priors.gp import BOPrior, GP1DPrior
from npbandit.priors.wheel import WheelPrior

__all__ = ["Prior", "TaskBatch", "GP1DPrior", "BOPrior", "WheelPrior", "make_prior", "PRIORS", "step_generator"]

PRIORS: dict[str, type[Prior]] = {"gp1d": GP1DPrior, "bo": BOPrior, "wheel": WheelPrior}


def make_prior(name: str, **params: Any) -> Prior:
    """Build a prior by name (``gp1d``, ``bo``, ``wheel``) with optional parameters.

    Args:
        name: a key of :data:`PRIORS`.
        **params: the prior class's constructor arguments.

    Raises:
        ValueError: an unknown ``name``, or a parameter value the prior refuses.
        TypeError: a parameter the prior does not take (naming the prior).
    """
    if name not in PRIORS:
        raise ValueError(f"prior must be one of {sorted(PRIORS)}, got {name!r}")
    try:
        return PRIORS[name](**params)
    except TypeError as err:
        raise TypeError(f"bad parameters for prior {name!r}: {err}") from None
