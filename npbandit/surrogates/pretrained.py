"""Pretrained checkpoints: saving, verifying and loading without pickle.

A checkpoint is two files side by side:

- ``<name>.safetensors`` -- the weights (safetensors: tensors only, no code runs on load);
- ``<name>.json`` -- the card: model name and config, input/output dims, the prior
  it was trained on, training settings and steps, evaluation log-likelihoods, the
  sha256 of the weights file, package/torch versions and the date.

``load_surrogate`` checks the card, the hash and that the weights fit the config
exactly, and fails with a message that says which of these went wrong. Checkpoints
shipped with the package live in ``npbandit/surrogates/weights/`` and are named
``<model>-<prior>`` (``cmanp-gp1d``, ``cmanp-bo``, ...).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from npbandit.surrogates import NeuralProcess, available_models, build

__all__ = ["CheckpointError", "save_pretrained", "load_surrogate", "available_checkpoints", "read_card",
           "WEIGHTS_DIR", "CARD_FORMAT"]

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
CARD_FORMAT = "npbandit-checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint is missing, corrupted, or does not match its card."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def save_pretrained(model: NeuralProcess, directory: str | Path, name: str, *, prior: dict[str, Any],
                    training: dict[str, Any], evaluation: dict[str, Any]) -> Path:
    """Write ``<directory>/<name>.safetensors`` and its card ``<name>.json``; returns the card path.

    Weights are stored in float32 on the CPU whatever the model's dtype/device.
    """
    from npbandit import __version__

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    weights = directory / f"{name}.safetensors"
    tensors = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, str(weights), metadata={"format": CARD_FORMAT, "name": name})
    card = {
        "format": CARD_FORMAT,
        "name": name,
        "model": model.name,
        "x_dim": model.x_dim,
        "y_dim": model.y_dim,
        "config": model.config.to_dict(),
        "parameters": sum(t.numel() for t in tensors.values()),
        "prior": prior,
        "training": training,
        "evaluation": evaluation,
        "weights": weights.name,
        "sha256": _sha256(weights),
        "npbandit_version": __version__,
        "torch_version": torch.__version__,
        "date": _dt.date.today().isoformat(),
    }
    card_path = directory / f"{name}.json"
    card_path.write_text(json.dumps(card, indent=2) + "\n")
    return card_path


def available_checkpoints() -> list[str]:
    """Names of the checkpoints shipped with the package."""
    return sorted(p.stem for p in WEIGHTS_DIR.glob("*.json"))


def _resolve(name_or_path: str | Path) -> Path:
    """The card path for a shipped name, a card, a weights file, or ``<dir>/<name>``."""
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"name_or_path must be a checkpoint name or a path, got {type(name_or_path).__name__}")
    text = str(name_or_path)
    if (WEIGHTS_DIR / f"{text}.json").exists():
        return WEIGHTS_DIR / f"{text}.json"
    path = Path(text)
    if path.suffix == ".safetensors":
        path = path.with_suffix(".json")
    elif path.suffix != ".json":
        path = path.with_name(path.name + ".json")
    if path.exists():
        return path
    shipped = ", ".join(available_checkpoints()) or "none"
    raise FileNotFoundError(f"no checkpoint {text!r}: not a shipped name (shipped: {shipped}) and no card at {path}")


def read_card(name_or_path: str | Path) -> dict[str, Any]:
    """The JSON card of a checkpoint (shipped name or path), checked for the required fields."""
    path = _resolve(name_or_path)
    try:
        card = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise CheckpointError(f"card {path} is not valid JSON: {err}") from None
    required = {"format", "name", "model", "x_dim", "y_dim", "config", "weights", "sha256"}
    missing = sorted(required - set(card))
    if missing:
        raise CheckpointError(f"card {path} lacks {missing}")
    if card["format"] != CARD_FORMAT:
        raise CheckpointError(f"card {path} has format {card['format']!r}; this version reads {CARD_FORMAT!r}")
    card["_path"] = str(path)
    return card


def load_surrogate(name_or_path: str | Path, *, device: str | torch.device = "cpu",
                   dtype: torch.dtype = torch.float32) -> NeuralProcess:
    """Load a pretrained surrogate, ready for ``condition``/``update``/``predict``.

    Args:
        name_or_path: a shipped name (see ``npbandit models``), or the path of a card
            (``.json``), of its weights (``.safetensors``), or ``<dir>/<name>``.
        device, dtype: where and in what precision to run the model.

    Raises:
        FileNotFoundError: no such checkpoint, or its weights file is missing.
        CheckpointError: the card is malformed, the weights' sha256 differs from the
            card's (corrupted or replaced file), or the weights do not fit the config.

    The returned model is in eval mode and carries its card as ``model.card``.
    """
    card = read_card(name_or_path)
    card_path = Path(card["_path"])
    weights = card_path.with_name(card["weights"])
    if not weights.exists():
        raise FileNotFoundError(f"checkpoint {card['name']!r}: weights file {weights} is missing")
    digest = _sha256(weights)
    if digest != card["sha256"]:
        raise CheckpointError(f"checkpoint {card['name']!r}: {weights.name} has sha256 {digest[:12]}…, the card says "
                              f"{card['sha256'][:12]}…; the file is corrupted or was replaced")
    if card["model"] not in available_models():
        raise CheckpointError(f"checkpoint {card['name']!r} is a {card['model']!r} model; known: {available_models()}")
    try:
        model = build(card["model"], card["x_dim"], card["y_dim"], **card["config"])
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"checkpoint {card['name']!r}: its config does not build a {card['model']}: {err}") from None
    tensors = load_file(str(weights))
    expected = model.state_dict()
    missing, unexpected = sorted(set(expected) - set(tensors)), sorted(set(tensors) - set(expected))
    wrong = sorted(k for k in set(expected) & set(tensors) if expected[k].shape != tensors[k].shape)
    if missing or unexpected or wrong:
        raise CheckpointError(f"checkpoint {card['name']!r}: weights do not match the config "
                              f"(missing {missing[:3]}, unexpected {unexpected[:3]}, wrong shape {wrong[:3]})")
    model.load_state_dict(tensors)
    model = model.to(device=device, dtype=dtype).eval()
    card.pop("_path")
    model.card = card
    return model
