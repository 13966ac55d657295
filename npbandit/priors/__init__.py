"""Task priors for meta-training and evaluation, and their registry.

>>> from npbandit.priors import make_prior
>>> batch = make_prior("gp1d").batch(16, seed=0, index=0)   # deterministic

A new prior is a :class:`Prior` subclass added with :func:`register_prior`; training
(``train(TrainConfig(prior=...))``) and its evaluation suite then find it by name.
"""

from __future__ import annotations

from typing import Any

from npbandit.priors.base import Prior, TaskBatch, step_generator
from npbandit.priors.gp import BOPrior, GP1DPrior
from npbandit.priors.wheel import WheelPrior
from npbandit.validation import register_class

__all__ = ["Prior", "TaskBatch", "GP1DPrior", "BOPrior", "WheelPrior", "make_prior", "PRIORS", "step_generator",
           "register_prior"]

#: every prior by name: the shipped three, then those added with :func:`register_prior`
PRIORS: dict[str, type[Prior]] = {"gp1d": GP1DPrior, "bo": BOPrior, "wheel": WheelPrior}


def register_prior(cls: type[Prior], *, replace: bool = False) -> type[Prior]:
    """Add the prior class ``cls`` to :data:`PRIORS` under ``cls.name``, so that
    :func:`make_prior`, training and the evaluation suite find it by name. Returns ``cls``
    (usable as a class decorator).

    Args:
        cls: a concrete :class:`Prior` subclass (``sample`` and ``spec`` implemented) whose
            ``name`` is a non-empty string.
        replace: allow ``cls.name`` to name a registered prior, which ``cls`` then replaces.

    Raises:
        TypeError: ``cls`` is not a concrete :class:`Prior` subclass.
        ValueError: ``cls.name`` is not a non-empty string, or is registered already
            (to another class) and ``replace`` is false.
    """
    name = getattr(cls, "name", None)
    if isinstance(cls, type) and issubclass(cls, Prior) and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"cls.name must be a non-empty string (the prior's registry name), got {name!r}")
    return register_class(PRIORS, cls, Prior, name, replace, "npbandit.priors.Prior")


def make_prior(name: str, **params: Any) -> Prior:
    """Build a prior by name (``gp1d``, ``bo``, ``wheel`` or a registered one) with optional parameters.

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
