"""How an :class:`~npbandit.models.NPModel` is built other than by its constructor: from a
checkpoint's name (:meth:`ConstructionMixin.from_pretrained`), or from a BoTorch dataset and
model options (:meth:`ConstructionMixin.construct_inputs`, which is how Ax builds it).

Both read the checkpoint's card for what the constructor would otherwise be told: the box
the network's inputs were drawn from, whether its outputs were standardised, and which
columns of data wider than the network it reads
(:func:`~npbandit.models.checkpoint.pretrained_defaults`).

Inside Ax
---------
``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})``:
Ax builds the model through :meth:`~ConstructionMixin.construct_inputs` (the checkpoint is
loaded once per process, :func:`~npbandit.models.checkpoint.shared_surrogate`), passes the
transforms as arguments (positional-or-keyword: Ax reads ``getfullargspec``) and
``train_Yvar`` when the noise is known, fits it through ``npbandit.integrations.ax``
(nothing to fit) and loads state dicts for cross-validation (see "State dict" in
:mod:`npbandit.models.model`). What is Ax's own (its dataset encodings, its fit dispatcher
and storage) lives in ``npbandit.integrations.ax``, which reaches this class through
:mod:`npbandit.models.hooks`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

import torch
from botorch.utils.datasets import MultiTaskDataset, SupervisedDataset
from torch import Tensor

from npbandit.exceptions import CheckpointError
from npbandit.models.checkpoint import pretrained_defaults, shared_surrogate
from npbandit.models.checks import check_matrix
from npbandit.models.hooks import construct_inputs_hook
from npbandit.surrogates import pretrained
from npbandit.surrogates.base import NeuralProcess

__all__ = ["ConstructionMixin"]


class ConstructionMixin:
    """:class:`~npbandit.models.NPModel`'s constructors from a checkpoint name and from a
    dataset (see the module).

    A mixin of ``NPModel`` only, ahead of BoTorch's ``Model`` among its bases:
    :meth:`construct_inputs` starts from ``Model.construct_inputs``, and both end in the
    class's own constructor."""

    @classmethod
    def from_pretrained(cls, name: str | NeuralProcess, train_X: Tensor, train_Y: Tensor,
                        train_Yvar: Tensor | None = None, **kwargs: Any) -> Self:
        """Build from a shipped checkpoint (e.g. ``"cmanp-bo"``), a checkpoint path, or a
        surrogate already returned by ``load_surrogate`` (to load it once for many models);
        ``train_Yvar`` and the keywords as the constructor takes them (the data in the order
        ``SingleTaskGP`` takes them).

        The input box and output standardisation follow the prior the checkpoint was
        trained on; any keyword of the constructor can override them."""
        surrogate = name if isinstance(name, NeuralProcess) else pretrained.load_surrogate(name)
        defaults = pretrained_defaults(surrogate, train_X, train_Y, "from_pretrained", kwargs.get("columns"))
        kwargs["columns"] = defaults.pop("columns")
        for key, value in defaults.items():
            kwargs.setdefault(key, value)
        return cls(surrogate, train_X, train_Y, train_Yvar, **kwargs)

    #: the constructor's options that ``construct_inputs`` (Ax's ``model_options``) passes on
    OPTIONS = ("bounds", "input_domain", "standardize", "restandardize_tol", "noise_points", "n_views", "columns",
               "covariance")

    @classmethod
    def construct_inputs(cls, training_data: SupervisedDataset, *, checkpoint: str | Path | NeuralProcess | None = None,
                         network_dtype: torch.dtype | None = None, **options: Any) -> dict[str, Any]:
        """The constructor's keyword arguments from a dataset and model options: how Ax
        builds the model, ``ModelConfig(botorch_model_class=NPModel,
        model_options={"checkpoint": "cmanp-bo"})``.

        Args:
            training_data: a BoTorch ``SupervisedDataset`` (``X``: ``n x d``, ``Y``:
                ``n x m``, optional ``Yvar``: ``n x m`` known noise variances).
            checkpoint: a checkpoint name or path (loaded once per process and shared,
                see :func:`~npbandit.models.checkpoint.shared_surrogate`), or a loaded surrogate.
            network_dtype: the dtype a named checkpoint is loaded in; default float32,
                as ``load_surrogate`` and ``optimize`` use (faster per call than float64,
                for a few more restarted optimisations: see "dtype and device" in
                :mod:`npbandit.models.network`).
            options: any of :attr:`OPTIONS`, passed on to the constructor; ``columns``
                (``"all"``, ``"relevant"``, a list of column indices of ``X`` or of the dataset's
                ``feature_names`` (Ax's parameter names), or a
                :class:`~npbandit.models.columns.ColumnSelector`; default: ``"relevant"``
                when ``X`` is wider than the checkpoint, else every column) is resolved
                here, from this dataset.

        Returns ``train_X``, ``train_Y``, ``train_Yvar`` (when the dataset has it),
        ``surrogate``, the checkpoint's ``input_domain`` / ``standardize`` (as in
        :meth:`from_pretrained`), ``columns`` (the indices chosen, when the network reads
        fewer than all of ``X``'s columns) and ``options``.

        Raises:
            ValueError: no ``checkpoint``; a checkpoint for another kind of task; a
                dataset with categorical, fidelity or task features (Ax passes those
                for search spaces NPModel cannot model), or one the installed
                :class:`~npbandit.models.hooks.ConstructInputsHook` refuses; ``columns``
                indices out of range, repeated or more than the checkpoint's width.
            CheckpointError: ``columns="all"`` on data wider than the checkpoint takes
                (with Ax, the message counts the one-hot columns of its choice parameters).
            TypeError: an option the constructor does not take; ``columns`` of another kind;
                ``network_dtype`` that is not a floating-point ``torch.dtype``.
        """
        unsupported = {"categorical_features": "categorical parameters", "fidelity_features": "fidelity parameters",
                       "task_feature": "a task parameter", "hierarchical_dependencies": "a hierarchical search space"}
        for key, what in unsupported.items():
            if options.get(key):
                raise ValueError(f"NPModel models continuous (range) parameters only; this search space has {what} "
                                 f"({key}={options[key]!r})")
            options.pop(key, None)
        unknown = sorted(set(options) - set(cls.OPTIONS))
        if unknown:
            raise TypeError(f"NPModel got unknown model option(s) {unknown}; "
                            f"it takes checkpoint, network_dtype and {list(cls.OPTIONS)}")
        if checkpoint is None:
            raise ValueError("NPModel needs a checkpoint: model_options={'checkpoint': 'cmanp-bo'} in Ax's "
                             "ModelConfig (or construct_inputs(dataset, checkpoint=...)); see `npbandit models`")
        if network_dtype is not None and (not isinstance(network_dtype, torch.dtype)
                                          or not network_dtype.is_floating_point):
            raise TypeError("network_dtype must be a floating-point torch.dtype (torch.float32 or torch.float64), "
                            f"got {network_dtype!r}")
        if isinstance(training_data, MultiTaskDataset):
            raise ValueError("NPModel models a single task; training_data is a MultiTaskDataset")
        # a framework's own encodings of the dataset (Ax's one-hot columns: npbandit.integrations.ax)
        construct_inputs_hook().check_dataset(training_data)
        inputs: dict[str, Any] = dict(super().construct_inputs(training_data))
        check_matrix("training_data.X", inputs["train_X"])
        if isinstance(checkpoint, NeuralProcess):
            if network_dtype is not None:
                raise ValueError("network_dtype applies to a checkpoint name or path, not to a loaded surrogate")
            surrogate = checkpoint
        else:
            surrogate = shared_surrogate(checkpoint, dtype=network_dtype or torch.float32)
        inputs["surrogate"] = surrogate
        try:
            defaults = pretrained_defaults(surrogate, inputs["train_X"], inputs["train_Y"], "construct_inputs",
                                           _named_columns(options.pop("columns", None), training_data))
        except CheckpointError as err:  # say how the framework's encoding made the data this wide
            note = construct_inputs_hook().width_note(training_data)
            if not note:
                raise
            raise CheckpointError(f"{err}{note}") from None
        columns = defaults.pop("columns")
        inputs.update(defaults)
        if columns is not None:
            inputs["columns"] = columns
        inputs.update(options)
        return inputs


def _named_columns(columns: Any, training_data: SupervisedDataset) -> Any:
    """``columns`` with feature names (``str``) replaced by their positions in
    ``training_data.feature_names`` (as Ax names its parameters), so a user need not count
    columns; any other ``columns`` as given. ``ValueError`` naming ``columns`` and the names
    the dataset has for a name it lacks."""
    if not isinstance(columns, (list, tuple)) or not any(isinstance(c, str) for c in columns):
        return columns
    names = list(training_data.feature_names)
    unknown = [c for c in columns if isinstance(c, str) and c not in names]
    if unknown:
        raise ValueError(f"columns names {unknown}, which the dataset's feature_names {names} do not hold")
    return [names.index(c) if isinstance(c, str) else c for c in columns]
