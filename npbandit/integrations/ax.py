"""NPModel inside Ax: what is Ax's own about it.

Ax (``pip install "npbandit[ax]"``) builds a BoTorch model for every trial from
``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})``
and then fits it through its own ``fit_botorch_model`` dispatcher, which knows GP
classes only. Importing this module

* registers :func:`fit_np_model` there: fitting a pretrained NP is nothing, so Ax's fit
  step costs nothing;
* registers ``NPModel`` with Ax's storage, so that a ``Client`` whose generation strategy
  names it can be saved (``save_to_json_file``) and loaded again;
* installs :data:`AX_INPUTS` as ``NPModel.construct_inputs``'s hook
  (:mod:`npbandit.models.hooks`): it refuses the one-hot columns Ax makes of an unordered
  choice parameter.

A loop need not import this module: ``npbandit`` installs a hook
(:class:`~npbandit.integrations.AxWhenLoaded`) that imports it from
``NPModel.construct_inputs`` -- which Ax calls just before the fit -- when Ax is in use.
Import it yourself to save a ``Client`` before its first model-based trial, or to load one
in a new process. The rest of the integration lives on ``NPModel`` itself
(``construct_inputs``, ``train_Yvar``, the transforms as Ax passes them, ``state_dict``;
see :mod:`npbandit.models.model`) and in :func:`~npbandit.models.shared_surrogate`, which
loads each checkpoint once per process although Ax rebuilds the model on every trial.
"""

from __future__ import annotations

from typing import Any

from ax.generators.torch.botorch_modular.utils import fit_botorch_model
from ax.storage.botorch_modular_registry import register_model

from npbandit.models.hooks import ConstructInputsHook, set_construct_inputs_hook
from npbandit.models.model import NPModel

__all__ = ["fit_np_model", "AxConstructInputs", "AX_INPUTS", "ONE_HOT_INFIX"]

# the infix of the columns Ax's OneHot transform makes of an unordered choice parameter
ONE_HOT_INFIX = "_OH_PARAM_"


class AxConstructInputs(ConstructInputsHook):
    """``NPModel.construct_inputs``'s hook under Ax: refuses a dataset whose features
    include Ax's one-hot encoding of a categorical parameter."""

    def check_dataset(self, training_data: Any) -> None:
        """Raise ``ValueError`` naming the categorical parameters when ``training_data``'s
        ``feature_names`` hold one-hot columns (``<parameter>_OH_PARAM_<k>``)."""
        # Ax one-hot encodes unordered choice parameters before the model sees them (its OneHot
        # transform names the columns <parameter>_OH_PARAM_<k>): 0/1 columns the NP would read as
        # smooth inputs of a box, one input of the checkpoint per level
        one_hot = sorted({name.split(ONE_HOT_INFIX)[0] for name in getattr(training_data, "feature_names", [])
                          if ONE_HOT_INFIX in name})
        if one_hot:
            raise ValueError(f"NPModel models continuous (range) parameters only; this search space has "
                             f"categorical parameters {one_hot} (Ax one-hot encodes them); use ordered choice or "
                             "range parameters, or one NPModel per category")


#: the hook installed while this module is loaded
AX_INPUTS = AxConstructInputs()
set_construct_inputs_hook(AX_INPUTS)

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
