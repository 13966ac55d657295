"""A pretrained neural process as a BoTorch ``Model``: :class:`NPModel`.

>>> from npbandit.models import NPModel
>>> model = NPModel.from_pretrained("cmanp-bo", train_X, train_Y)   # in place of SingleTaskGP

One module per idea:

* :mod:`~npbandit.models.model` -- :class:`NPModel`: data, the constructor, state dict;
* :mod:`~npbandit.models.construction` -- the other constructors: ``from_pretrained`` (a
  checkpoint name) and ``construct_inputs`` (a dataset and Ax's model options);
* :mod:`~npbandit.models.network` -- the network's inputs, outputs (several columns: an NP
  per output), symmetric views, dtype;
* :mod:`~npbandit.models.posterior` -- the marginal (diagonal) posterior, equal points
  sharing a draw, the shared-row cache;
* :mod:`~npbandit.models.joint` -- the joint posterior of a joint-predictive surrogate and
  its joint draws;
* :mod:`~npbandit.models.conditioning` -- streamed observations and fantasies;
* :mod:`~npbandit.models.likelihood` -- the noise estimate, :class:`NPLikelihood` and the
  fit registration that makes ``fit_gpytorch_mll`` a no-op;
* :mod:`~npbandit.models.checkpoint` -- :func:`shared_surrogate`, a card's defaults, the
  network's fingerprint;
* :mod:`~npbandit.models.cache`, :mod:`~npbandit.transforms.moments` -- what a model keeps
  between calls, and its running moments;
* :mod:`~npbandit.models.columns` -- which columns of data wider than the network it
  reads (:class:`ColumnSelector`, :class:`RelevantColumns`), and the relevance estimate
  the acquisition's coordinate subspace shares;
* :mod:`~npbandit.models.checks` -- argument checks;
* :mod:`~npbandit.models.hooks` -- how a framework's integration (``npbandit.integrations.ax``)
  adapts ``NPModel.construct_inputs`` without this package importing it.

Importing the package loads BoTorch only when a name that needs it is asked for, so
:mod:`~npbandit.models.hooks` stays cheap to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npbandit.models.checkpoint import shared_surrogate
    from npbandit.models.columns import ColumnSelector, RelevantColumns
    from npbandit.models.hooks import ConstructInputsHook, construct_inputs_hook, set_construct_inputs_hook
    from npbandit.models.likelihood import NPLikelihood
    from npbandit.models.model import NPModel

__all__ = ["NPModel", "NPLikelihood", "shared_surrogate", "ColumnSelector", "RelevantColumns", "ConstructInputsHook",
           "construct_inputs_hook", "set_construct_inputs_hook"]

_HOMES = {"NPModel": "model", "NPLikelihood": "likelihood", "shared_surrogate": "checkpoint",
          "ColumnSelector": "columns", "RelevantColumns": "columns",
          "ConstructInputsHook": "hooks", "construct_inputs_hook": "hooks", "set_construct_inputs_hook": "hooks"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'npbandit.models' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"npbandit.models.{home}"), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
