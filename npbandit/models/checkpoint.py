"""The network a model runs on: loaded once per process, read for its card's defaults, and
named by a fingerprint of its weights.

* :func:`shared_surrogate` loads a checkpoint once and hands the same network to every
  caller (Ax builds a model for every trial and every cross-validation fold).
* :func:`pretrained_defaults` gives the constructor options of the prior a checkpoint was
  trained on (input box, output standardisation, symmetric views) and the columns of the
  data its network reads, after checking that the checkpoint fits them.
* :func:`fingerprint` is the sha256 of a network's state: what a model's state dict
  carries in place of a GP's hyperparameters.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from npbandit.models.checks import check_training_data
from npbandit.models.columns import resolve_columns
from npbandit.priors import PRIORS
from npbandit.surrogates import pretrained
from npbandit.surrogates.base import NeuralProcess
from npbandit.surrogates.views import symmetry_count

__all__ = ["shared_surrogate", "pretrained_defaults", "input_symmetric", "fingerprint"]

_SHARED: dict[tuple[str, str, int, int, torch.dtype], NeuralProcess] = {}
_SHARED_LOCK = threading.Lock()


def shared_surrogate(name_or_path: str | Path, *, dtype: torch.dtype = torch.float32) -> NeuralProcess:
    """A checkpoint's network, loaded once per process and shared by every caller.

    Ax builds a new model for every trial (and for every cross-validation fold); with
    this cache that costs no reload. The key is the card's path and its whole content
    (the weights' sha256 with the settings that shape the network, such as ``config``),
    plus the weights file's size and modification time, so a replaced checkpoint, or a
    card edited over the same weights, is loaded (and verified) afresh; one copy per
    ``dtype`` (CPU). The network is shared:
    treat it as read-only (``NPModel`` never changes it); for a network of your own,
    use :func:`~npbandit.surrogates.pretrained.load_surrogate`.
    """
    card = pretrained.read_card(name_or_path)
    card_path = Path(card["_path"])
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    try:
        stat = card_path.with_name(card["weights"]).stat()
    except FileNotFoundError:
        return pretrained.load_surrogate(card_path)  # raises its own message for the missing weights
    content = json.dumps({k: v for k, v in card.items() if k != "_path"}, sort_keys=True, default=str)
    key = (str(card_path), content, stat.st_size, stat.st_mtime_ns, dtype)
    with _SHARED_LOCK:
        surrogate = _SHARED.get(key)
        if surrogate is None:
            surrogate = pretrained.load_surrogate(card_path, dtype=dtype)  # checks the hash
            _SHARED[key] = surrogate
    return surrogate


def pretrained_defaults(surrogate: NeuralProcess, train_X: Tensor, train_Y: Tensor, caller: str,
                        columns: Any = None) -> dict[str, Any]:
    """The constructor options a checkpoint and data of this shape (``train_X`` ``n x D``,
    ``train_Y`` ``n x m``, any ``m`` for a one-output checkpoint) call for: ``columns``,
    resolved (:func:`~npbandit.models.columns.resolve_columns`; ``None``: every column), and
    ``input_domain`` / ``standardize`` (and ``n_views`` where the card recommends views)
    of the prior the checkpoint was trained on, after checking that it fits the columns
    the network reads (``CheckpointError`` naming the checkpoints that do). ``caller``
    names the method in the error for a surrogate without a card."""
    card = getattr(surrogate, "card", None)
    if card is None:
        raise ValueError(f"{caller} needs a checkpoint name/path or a surrogate from load_surrogate")
    check_training_data("train_X", train_X)
    check_training_data("train_Y", train_Y)
    # a one-output network models every column of train_Y with an NP of its own
    y_dim = 1 if surrogate.y_dim == 1 else train_Y.shape[-1]
    pretrained.check_checkpoint_kind(card, prior=tuple(PRIORS), y_dim=y_dim, purpose="NPModel")
    columns = resolve_columns(columns, train_X, train_Y, pretrained.served_width(surrogate))
    d = train_X.shape[-1] if columns is None else len(columns)
    pretrained.check_checkpoint_kind(card, prior=tuple(PRIORS), x_dim=d, y_dim=y_dim, purpose="NPModel")
    defaults: dict[str, Any] = {"columns": columns}
    prior = PRIORS.get(card["prior"]["name"])
    if prior is None:
        return defaults
    defaults.update(input_domain=prior.input_domain, standardize=prior.standardizes_outputs)
    views = pretrained.checkpoint_use(card).get("n_views", 1)
    if views > 1 and prior.input_symmetric and not surrogate.joint_predictive:
        defaults["n_views"] = min(views, symmetry_count(d))
    return defaults


def input_symmetric(surrogate: NeuralProcess) -> bool:
    """Whether ``surrogate``'s prior is unchanged by permuting and reflecting its inputs:
    what its card says; a surrogate without a card (built, not loaded) is taken at the
    caller's word."""
    card = getattr(surrogate, "card", None)
    if card is None:
        return True
    spec = card.get("prior", {})
    prior = PRIORS.get(spec.get("name"))
    return prior is not None and prior.symmetric_in(spec)


def fingerprint(surrogate: NeuralProcess) -> Tensor:
    """:func:`npbandit.surrogates.pretrained.weights_fingerprint` as 32 ``uint8`` values
    (what ``NPModel`` keeps in its state dict)."""
    return torch.tensor(list(pretrained.weights_fingerprint(surrogate)), dtype=torch.uint8)
