"""NPModel inside Ax: the fit step Ax's modular BoTorch generator needs.

Ax (``pip install "npbandit[ax]"``) builds a BoTorch model for every trial from
``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})``
and then fits it through its own ``fit_botorch_model`` dispatcher, which knows GP
classes only. Importing this module registers :func:`fit_np_model` there; fitting
a pretrained NP is nothing, so Ax's fit step costs nothing.

Importing it also registers ``NPModel`` with Ax's storage, so that a ``Client`` whose
generation strategy names it can be saved (``save_to_json_file``) and loaded again.

A loop need not import this module: ``NPModel.construct_inputs`` -- which Ax calls just
before the fit -- imports it when Ax's dispatcher is loaded. Import it yourself to save a
``Client`` before its first model-based trial, or to load one in a new process. The rest of the
integration lives on ``NPModel`` itself (``construct_inputs``, ``train_Yvar``, the
transforms as Ax passes them, ``state_dict``; see ``npbandit/surrogates/npmodel.py``)
and in :func:`~npbandit.surrogates.npmodel.shared_surrogate`, which loads each
checkpoint once per process although Ax rebuilds the model on every trial.
"""

from __future__ import annotations

from typing import Any

from ax.generators.torch.botorch_modular.utils import fit_botorch_model
from ax.storage.botorch_modular_registry import register_model

from npbandit.surrogates.npmodel import NPModel

__all__ = ["fit_np_model"]

# Ax's JSON / SQL storage names model classes through a registry: with NPModel in it, a
# Client (its generation strategy names the class) can be saved and loaded again.
register_model(NPModel)


@fit_botorch_model.register(NPModel)
def fit_np_model(model: NPModel, mll_class: Any = None, mll_options: dict[str, Any] | None = None) -> None:
    """Ax's fit step for an ``NPModel``: nothing to fit (the network is pretrained and the
    model is conditioned on its data when built). ``mll_class`` / ``mll_options`` (Ax
    passes its defaults) are accepted and not used; the model is left in eval mode."""
    if not isinstance(model, NPModel):
        raise TypeError(f"model must be an NPModel, got {type(model).__name__}")
    model.eval()
