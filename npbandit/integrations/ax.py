"""NPModel inside Ax: what is Ax's own about it.

Ax (``pip install -e ".[ax]"`` in the clone) builds a BoTorch model for every trial from
``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})``
and then fits it through its own ``fit_botorch_model`` dispatcher, which knows GP
classes only. Importing this module

* registers :func:`fit_np_model` there: fitting a pretrained NP is nothing, so Ax's fit
  step costs nothing;
* registers ``NPModel`` with Ax's storage, so that a ``Client`` whose generation strategy
  names it can be saved (``save_to_json_file``) and loaded again;
* installs :data:`AX_INPUTS` as ``NPModel.construct_inputs``'s hook
  (:mod:`npbandit.models.hooks`), which takes Ax's encodings of a mixed search space as
  they are (see :class:`AxConstructInputs`).

Mixed search spaces: Ax's transforms hand the model a cube the NP reads as it reads
:class:`npbandit.space.SearchSpace`'s own. An unordered ``ChoiceParameter`` becomes one
0/1 column per value (Ax's ``OneHot``: ``<name>_OH_PARAM_<k>``), as ``Choice`` of three or
more values does; an int ``RangeParameter`` stays one column of its values, a
``log_scale=True`` range one column of its logarithm, and the model's ``Normalize`` maps
each column's range onto ``[0, 1]``. Ax's own optimiser then keeps the proposals on the
ints and choices (``optimize_acqf_mixed``: one acquisition optimisation per combination of
the discrete values when they are few, else BoTorch's alternating mixed optimiser), so the
acquisition is judged at points the objective can be evaluated at. Every one-hot column is
a column of the dataset: a 3-valued choice takes 3 of them.

More columns than the checkpoint's inputs (6 for the ``*-bo`` ones): the model reads the
``width`` most relevant columns, chosen from the trial's data each time Ax rebuilds it
(``NPModel``'s ``columns``, default ``"relevant"`` for such data; see "Wider data" in
:mod:`npbandit.models.network`), and its acquisition is flat in the rest, which Ax's
optimiser then sets wherever its restarts leave them. ``model_options={"columns": ...}``
chooses otherwise (``"all"`` refuses such data, with the one-hot columns counted).

A loop need not import this module: ``npbandit`` installs a hook
(:class:`~npbandit.integrations.AxWhenLoaded`) that imports it from
``NPModel.construct_inputs`` -- which Ax calls just before the fit -- when Ax is in use.
Import it yourself to save a ``Client`` before its first model-based trial, or to load one
in a new process. The rest of the integration lives on ``NPModel`` itself
(``construct_inputs``, ``train_Yvar``, the transforms as Ax passes them, ``state_dict``;
see :mod:`npbandit.models.construction` and :mod:`npbandit.models.model`) and in
:func:`~npbandit.models.shared_surrogate`, which loads each checkpoint once per process
although Ax rebuilds the model on every trial.
"""

from __future__ import annotations

from typing import Any

from ax.generators.torch.botorch_modular.utils import fit_botorch_model
from ax.storage.botorch_modular_registry import register_model

from npbandit.models.hooks import ConstructInputsHook, set_construct_inputs_hook
from npbandit.models.model import NPModel

__all__ = ["fit_np_model", "AxConstructInputs", "AX_INPUTS", "ONE_HOT_INFIX", "one_hot_parameters"]

# the infix of the columns Ax's OneHot transform makes of an unordered choice parameter
ONE_HOT_INFIX = "_OH_PARAM_"


def one_hot_parameters(feature_names: Any) -> list[str]:
    """The unordered choice parameters whose one-hot columns (``<name>_OH_PARAM_<k>``) are
    among ``feature_names``, sorted."""
    return sorted({name.split(ONE_HOT_INFIX)[0] for name in feature_names or [] if ONE_HOT_INFIX in name})


class AxConstructInputs(ConstructInputsHook):
    """``NPModel.construct_inputs``'s hook under Ax: Ax's datasets are taken as they are,
    its one-hot columns of a choice parameter included (the encoding
    :class:`npbandit.space.Choice` gives three or more unordered values); the refusal of a
    dataset wider than the checkpoint (``columns="all"``) counts the one-hot columns."""

    def check_dataset(self, training_data: Any) -> None:
        """Nothing to refuse in Ax's encodings themselves (the width is checked against
        the checkpoint when the model is built: :meth:`width_note` says why it is wide)."""

    def width_note(self, training_data: Any) -> str:
        """Which of the dataset's columns are Ax's one-hot columns of choice parameters, for
        the error about a dataset wider than the checkpoint with ``columns="all"`` (``""``
        when none are)."""
        names = list(getattr(training_data, "feature_names", None) or [])
        choices = one_hot_parameters(names)
        if not choices:
            return ""
        count = sum(ONE_HOT_INFIX in name for name in names)
        return (f" ({count} of the {len(names)} columns are Ax's one-hot encoding of choice parameters {choices}: "
                "one column per value)")


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
