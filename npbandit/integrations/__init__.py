"""Doors into other optimisation frameworks.

``npbandit.integrations.optuna.NPSampler``: a pretrained NP as an Optuna sampler (the
``optuna`` extra: ``pip install -e ".[optuna]"`` in the clone).
``npbandit.integrations.ax``: ``NPModel`` as Ax's ``botorch_model_class`` (the ``ax`` extra).

Importing this package imports no framework; each submodule imports its own. It does
install one cheap hook (:class:`AxWhenLoaded`) so that an Ax loop configured with
``ModelConfig(botorch_model_class=NPModel, ...)`` alone finds the Ax integration: Ax
calls ``NPModel.construct_inputs`` before it fits the model, and the hook imports
:mod:`npbandit.integrations.ax` then if Ax is in use. ``npbandit`` imports this package,
so the hook is in place whenever ``NPModel`` is.
"""

from __future__ import annotations

import sys
from typing import Any

from npbandit.models.hooks import ConstructInputsHook, construct_inputs_hook, set_construct_inputs_hook

__all__ = ["NPSampler", "AxWhenLoaded"]

# the module of Ax's fit dispatcher: loaded whenever Ax's modular BoTorch generator is in use
AX_FIT_MODULE = "ax.generators.torch.botorch_modular.utils"


class AxWhenLoaded(ConstructInputsHook):
    """The plain :class:`~npbandit.models.hooks.ConstructInputsHook` until Ax is in use:
    then it imports :mod:`npbandit.integrations.ax` (which registers NPModel's fit and
    storage with Ax and installs its own hook in this one's place) and hands the dataset
    to that hook. Ax itself is never imported here."""

    def check_dataset(self, training_data: Any) -> None:
        if AX_FIT_MODULE not in sys.modules:
            return
        from npbandit.integrations import ax

        ax.AX_INPUTS.check_dataset(training_data)

    def width_note(self, training_data: Any) -> str:
        if AX_FIT_MODULE not in sys.modules:
            return ""
        from npbandit.integrations import ax

        return ax.AX_INPUTS.width_note(training_data)


if type(construct_inputs_hook()) is ConstructInputsHook:  # nothing installed yet
    set_construct_inputs_hook(AxWhenLoaded())


def __getattr__(name: str):
    # Optuna is an optional dependency: import it only when the sampler is asked for
    if name == "NPSampler":
        from npbandit.integrations.optuna import NPSampler

        return NPSampler
    raise AttributeError(f"module 'npbandit.integrations' has no attribute {name!r}")
