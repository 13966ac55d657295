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
from npbandit.validation import check_int, check_range, register_class, unregistered

__all__ = ["Prior", "TaskBatch", "GP1DPrior", "BOPrior", "WheelPrior", "make_prior", "PRIORS", "step_generator",
           "register_prior"]

#: every prior by name: the shipped three, then those added with :func:`register_prior`
PRIORS: dict[str, type[Prior]] = {"gp1d": GP1DPrior, "bo": BOPrior, "wheel": WheelPrior}


def register_prior(cls: type[Prior], *, replace: bool = False) -> type[Prior]:
    """Add the prior class ``cls`` to :data:`PRIORS` under ``cls.name``, so that
    :func:`make_prior`, training and the evaluation suite find it by name. Returns ``cls``
    (usable as a class decorator).

    Args:
        cls: a concrete :class:`Prior` subclass (``sample`` and ``spec`` implemented) with a
            registry ``name`` (non-empty, lower-case, no whitespace). ``x_dim`` and ``y_dim``,
            where the class sets them, must be positive ints and ``input_domain`` a finite
            ``(low, high)`` with ``low < high`` (what training builds the network from and a
            checkpoint records); one the class leaves to its constructor (``bo``'s ``x_dim``)
            is checked on each batch training draws.
        replace: (a bool) allow ``cls.name`` to name a registered prior, which ``cls`` then replaces.

    Raises:
        TypeError: ``cls`` is not a concrete :class:`Prior` subclass, or ``replace`` is not a bool.
        ValueError: ``cls.name`` is not a registry name, or is registered already (to another
            class) and ``replace`` is false; ``x_dim``, ``y_dim`` or ``input_domain`` as above.
    """
    if isinstance(cls, type) and issubclass(cls, Prior):  # the prior's own rules; the rest in register_class
        for attr in ("x_dim", "y_dim"):
            if hasattr(cls, attr):
                check_int(f"cls.{attr}", getattr(cls, attr), minimum=1)
        if hasattr(cls, "input_domain"):
            check_range("cls.input_domain", cls.input_domain)
    return register_class(PRIORS, cls, Prior, getattr(cls, "name", None), replace, "npbandit.priors.Prior")


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
        raise unregistered("prior", name, sorted(PRIORS), "npbandit.priors.register_prior")
    try:
        return PRIORS[name](**params)
    except TypeError as err:
        raise TypeError(f"bad parameters for prior {name!r}: {err}") from None
