"""``optimize``'s ``surrogate`` argument: the short names (:data:`SURROGATES`), and what a
name or a loaded surrogate means for a run, checked before anything is loaded or evaluated."""

from __future__ import annotations

import difflib

from npbandit.policies.factories import NPModelFactory
from npbandit.surrogates.base import NeuralProcess
from npbandit.surrogates.pretrained import (
    UnknownCheckpointError,
    check_bo_checkpoint,
    check_weights_unchanged,
    fitting_checkpoints,
    load_surrogate,
    read_card,
)

__all__ = ["SURROGATES", "check_loaded", "surrogate_checkpoint", "named_by_card"]

#: short surrogate names -> checkpoint; "gp" and "random" are the baselines
SURROGATES = {"cmanp": "cmanp-bo", "tnpd": "tnpd-bo", "gp": "gp", "random": "random"}


def check_loaded(surrogate: NeuralProcess) -> None:
    """A surrogate given as an instance must carry its checkpoint's card (``load_surrogate``
    sets it): the card's prior says the box its inputs come from and how its outputs are
    standardised, and its name and sha256 are what a run records of the model."""
    card = getattr(surrogate, "card", None)
    if not isinstance(card, dict) or "name" not in card or "sha256" not in card:
        raise TypeError(f"surrogate: a {type(surrogate).__name__} instance must be a checkpoint loaded by "
                        "load_surrogate (its card gives the input box, the output standardisation and the weights' "
                        "sha256 a run records); one built by build() or trained in memory has no card: save it "
                        "with save_pretrained and load it")


def surrogate_checkpoint(surrogate: str | NeuralProcess, d: int) -> str | NPModelFactory:
    """``"gp"``, ``"random"`` or the checkpoint a surrogate name means, checked to be a
    one-output ``bo`` checkpoint (before anything is loaded or evaluated); a ``d`` wider
    than the checkpoint is searched through a subspace (``BOPolicy(subspace=...)``). A
    loaded surrogate is checked the same way, from its card, and wrapped in a factory."""
    if isinstance(surrogate, NeuralProcess):
        card = surrogate.card
        check_bo_checkpoint(card, d, purpose=f"optimize (surrogate={card['name']!r}, d={d})")
        check_weights_unchanged(surrogate, purpose=f"optimize (surrogate={card['name']!r})")
        return NPModelFactory(surrogate)
    name = SURROGATES.get(surrogate, surrogate)
    if name in ("gp", "random"):
        return name
    try:
        card = read_card(name)
    except UnknownCheckpointError as err:
        if err.path is not None:  # a path: a run's directory (the checkpoints in it) or nothing there
            raise ValueError(f"surrogate {surrogate!r}: {err}") from None
        bo = fitting_checkpoints(prior="bo")
        close = difflib.get_close_matches(surrogate, [*SURROGATES, *bo], n=2, cutoff=0.6)
        hint = f" -- did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"surrogate must be one of {sorted(SURROGATES)}, a 'bo' checkpoint ({', '.join(bo)}) or a "
                         f"checkpoint path; got {surrogate!r}{hint}") from None
    check_bo_checkpoint(card, d, purpose=f"optimize (surrogate={surrogate!r}, d={d})")
    return name


def named_by_card(model: str | NPModelFactory) -> str | NPModelFactory:
    """``model`` for ``BOPolicy``: a checkpoint given by a path, loaded into a factory named by its
    card's name as when given loaded (the policy's name, one report row per checkpoint); else as is."""
    if not isinstance(model, str) or model == "gp" or read_card(model)["name"] == model:
        return model
    return NPModelFactory(load_surrogate(model))
