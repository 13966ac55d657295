"""The model factories a :class:`~npbandit.policies.BOPolicy` builds its model with: a callable
``(train_X [n, d], train_Y [n, m]) -> Model`` called with the observations the model sees
(``m = 1``, or ``1 + k`` with ``k`` outcome constraints).

:class:`GPModelFactory` fits BoTorch's ``SingleTaskGP`` on every call; :class:`NPModelFactory`
wraps a pretrained surrogate in an :class:`~npbandit.models.NPModel` (which the policy may
then stream later observations into); :func:`model_factory` resolves the names ``"gp"`` and
checkpoint names, and :func:`as_model_factory` ``BOPolicy``'s ``model`` argument, a name or a
factory. ``npbandit.policies.bo`` re-exports the first three.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from npbandit.policies.gp import GP_KERNELS, fit_single_task_gp

__all__ = ["GPModelFactory", "NPModelFactory", "model_factory", "as_model_factory"]


class GPModelFactory:
    """BoTorch's ``SingleTaskGP`` fitted to ``(train_X, train_Y)`` on every call, through
    :func:`npbandit.policies.gp.fit_single_task_gp` (``noise_free``, ``kernel``: its options).
    What ``BOPolicy(model="gp")`` runs."""

    name = "gp"

    def __init__(self, noise_free: bool = False, kernel: str = "rbf") -> None:
        if not isinstance(noise_free, bool):
            raise TypeError(f"noise_free must be a bool, got {type(noise_free).__name__}")
        if kernel not in GP_KERNELS:
            raise ValueError(f"gp_kernel must be one of {GP_KERNELS}, got {kernel!r}")
        self.noise_free, self.kernel = noise_free, kernel

    def __call__(self, train_X: torch.Tensor, train_Y: torch.Tensor):
        return fit_single_task_gp(train_X, train_Y, noise_free=self.noise_free, kernel=self.kernel)

    def params(self) -> dict[str, Any]:
        """The settings a run logs."""
        return {"noise_free": self.noise_free, "gp_kernel": self.kernel}


class NPModelFactory:
    """``NPModel.from_pretrained(surrogate, train_X, train_Y)`` for a loaded pretrained
    surrogate (``load_surrogate``). ``BOPolicy`` may build its model once and stream later
    observations into it (``condition_on_observations``) instead of calling the factory
    again. ``name``: what the policy's name starts with (default: the checkpoint's)."""

    def __init__(self, surrogate, name: str | None = None) -> None:
        card = getattr(surrogate, "card", None)
        if not isinstance(card, dict) or "name" not in card:
            raise TypeError("surrogate must be a pretrained surrogate (load_surrogate), got "
                            f"{type(surrogate).__name__}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None, got {type(name).__name__}")
        self.surrogate = surrogate
        self.name = card["name"] if name is None else name

    def __call__(self, train_X: torch.Tensor, train_Y: torch.Tensor):
        from npbandit.models import NPModel

        return NPModel.from_pretrained(self.surrogate, train_X, train_Y)

    def params(self) -> dict[str, Any]:
        """The settings a run logs: none (the checkpoint is logged with the run)."""
        return {}


def model_factory(model: str, *, noise_free: bool = False, gp_kernel: str = "rbf") -> GPModelFactory | NPModelFactory:
    """The model factory a name means: ``"gp"`` a :class:`GPModelFactory` (``noise_free``,
    ``gp_kernel`` its options), any other name a checkpoint loaded by ``load_surrogate``
    (the surrogate registry) in an :class:`NPModelFactory`."""
    if not isinstance(model, str):
        raise TypeError(f"model must be a name, got {type(model).__name__}")
    if gp_kernel not in GP_KERNELS:
        raise ValueError(f"gp_kernel must be one of {GP_KERNELS}, got {gp_kernel!r}")
    if model == "gp":
        return GPModelFactory(noise_free=bool(noise_free), kernel=gp_kernel)
    if noise_free:
        raise ValueError("noise_free configures the GP (model='gp') only")
    if gp_kernel != "rbf":
        raise ValueError("gp_kernel configures the GP (model='gp') only")
    from npbandit.surrogates.pretrained import load_surrogate

    return NPModelFactory(load_surrogate(model), name=model)


def as_model_factory(model: str | Callable[[torch.Tensor, torch.Tensor], Any], *, noise_free: bool = False,
                     gp_kernel: str = "rbf") -> tuple[Callable[[torch.Tensor, torch.Tensor], Any], str]:
    """``BOPolicy``'s ``model`` as ``(factory, name)``: a name through :func:`model_factory`,
    named by itself; a factory as it is, named by its ``name`` attribute if it is a string,
    else by its ``__name__`` or its class's (``noise_free`` and ``gp_kernel`` refused then: a
    factory takes its own options)."""
    if isinstance(model, str):
        return model_factory(model, noise_free=noise_free, gp_kernel=gp_kernel), model
    if not callable(model):
        raise TypeError(f"model must be a name or a model factory (train_X, train_Y) -> Model, got "
                        f"{type(model).__name__}")
    if noise_free or gp_kernel != "rbf":
        raise ValueError("noise_free and gp_kernel configure the GP (model='gp') only; give a factory its "
                         "own options")
    name = getattr(model, "name", None)
    return model, name if isinstance(name, str) else getattr(model, "__name__", type(model).__name__)
