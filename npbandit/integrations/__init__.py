"""Doors into other optimisation frameworks.

``npbandit.integrations.optuna.NPSampler``: a pretrained NP as an Optuna sampler (the
``optuna`` extra: ``pip install "npbandit[optuna]"``).
``npbandit.integrations.ax``: ``NPModel`` as Ax's ``botorch_model_class`` (the ``ax`` extra).

Importing this package imports no framework; each submodule imports its own.
"""

from __future__ import annotations

__all__ = ["NPSampler"]


def __getattr__(name: str):
    # Optuna is an optional dependency: import it only when the sampler is asked for
    if name == "NPSampler":
        from npbandit.integrations.optuna import NPSampler

        return NPSampler
    raise AttributeError(f"module 'npbandit.integrations' has no attribute {name!r}")
