"""The extension point of :meth:`NPModel.construct_inputs
<npbandit.models.NPModel.construct_inputs>` for a framework that builds models from its
own datasets (Ax): a :class:`ConstructInputsHook`, registered here and consulted by
``construct_inputs``.

The base class is the plain behaviour (the dataset is taken as it is); a framework's
integration subclasses it and installs an instance with :func:`set_construct_inputs_hook`
(``npbandit.integrations.ax`` does so on import). The model package never imports an
integration: an integration reaches the model through this module. It imports nothing
heavy, so a hook can be installed without loading BoTorch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ConstructInputsHook", "construct_inputs_hook", "set_construct_inputs_hook"]


class ConstructInputsHook:
    """How ``NPModel.construct_inputs`` treats a framework's dataset; this base class
    accepts every dataset (the plain behaviour)."""

    def check_dataset(self, training_data: Any) -> None:
        """Raise ``ValueError`` for a dataset (a BoTorch ``SupervisedDataset``) that a
        framework encoded in a way the model cannot read. ``construct_inputs`` calls it
        after its own checks of the options and the dataset, before building the inputs."""

    def width_note(self, training_data: Any) -> str:
        """Text appended to the error ``construct_inputs`` raises for a dataset wider than
        the checkpoint (with ``columns="all"``): how the framework's encoding made it that
        wide (``""``: nothing to add)."""
        return ""


_PLAIN = ConstructInputsHook()
_hook: ConstructInputsHook = _PLAIN


def construct_inputs_hook() -> ConstructInputsHook:
    """The hook ``NPModel.construct_inputs`` consults now (the plain one unless one was set)."""
    return _hook


def set_construct_inputs_hook(hook: ConstructInputsHook | None) -> ConstructInputsHook:
    """Install ``hook`` (``None``: the plain behaviour again); returns the one it replaces,
    so a caller can put it back."""
    global _hook
    if hook is not None and not isinstance(hook, ConstructInputsHook):
        raise TypeError(f"hook must be a ConstructInputsHook or None, got {type(hook).__name__}")
    previous, _hook = _hook, _PLAIN if hook is None else hook
    return previous
