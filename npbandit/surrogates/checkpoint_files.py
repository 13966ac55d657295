"""A checkpoint's files on disk: the weights file its card names (:func:`weights_file`), its
sha256 (:func:`file_sha256`), its tensors read back and checked (:func:`read_weights`), and
a file written whole or not at all (:func:`replace_file`). :mod:`npbandit.surrogates.pretrained`
builds saving and loading on these."""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from npbandit.exceptions import CheckpointError

__all__ = ["file_sha256", "replace_file", "weights_file", "read_weights"]


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, hex, read in blocks of 1 MiB."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, so a reader (or a run
    stopped half-way) sees the old file or the new one, never part of one. The temporary
    file's name is this write's own (``<name>.<random>.tmp``, created exclusively), so
    writers of one file at once -- two processes saving one checkpoint -- never move
    another's half-written file into place: the last to finish wins, whole. The file's mode
    is what the umask allows (``0o666`` less the umask, applied by ``open``; ``mkstemp``
    would give ``0o600``), as for any file the process writes. An ``OSError`` (a read-only
    directory, a full disk) leaves no temporary file behind."""
    path = Path(path)
    while True:
        tmp = path.with_name(f"{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:  # another write's name (a chance of 2**-48): draw again
            continue
        break
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def weights_file(card: dict[str, Any]) -> Path:
    """The weights file a card read by :func:`read_card` names (its ``"weights"``, beside the card).

    Raises:
        FileNotFoundError: the file is missing; where the card's own stem has a
            ``.safetensors`` beside it (the two files renamed together, as a copy under a
            name of one's own makes them), the message names both and how to pair them again.
    """
    card_path = Path(card["_path"])
    weights = card_path.with_name(card["weights"])
    if weights.exists():
        return weights
    renamed = card_path.with_suffix(".safetensors")
    if renamed.exists():
        raise FileNotFoundError(f"checkpoint {card['name']!r}: its card {card_path} names the weights file "
                                f"{weights.name} (the name it was saved under), which is not beside it; "
                                f"{renamed.name} is: if the two files were renamed together, set the card's "
                                f"\"weights\" to {renamed.name!r} (its sha256 is still checked) or give both files "
                                f"their saved name back")
    raise FileNotFoundError(f"checkpoint {card['name']!r}: weights file {weights} is missing")


def read_weights(name: str, weights: Path) -> dict[str, torch.Tensor]:
    """The tensors of checkpoint ``name``'s weights file ``weights``, every value finite.

    A file whose card hash matches can still be damaged (truncated before it was hashed)
    or hold NaN / inf (a diverged training run): both are refused here, naming the
    checkpoint, the file and the tensor, rather than failing later in the model.

    Raises:
        CheckpointError: the file is not readable safetensors, or a tensor holds a
            non-finite value.
    """
    try:
        tensors = load_file(str(weights))
    except SafetensorError as err:
        raise CheckpointError(f"checkpoint {name!r}: weights file {weights} is damaged (truncated or not "
                              f"safetensors): {err}") from None
    for key in sorted(tensors):
        bad = int((~torch.isfinite(tensors[key])).sum())
        if bad:
            raise CheckpointError(f"checkpoint {name!r}: weights file {weights} holds {bad} non-finite value(s) "
                                  f"in tensor {key!r} (shape {tuple(tensors[key].shape)}); the checkpoint was "
                                  "saved from a diverged model or altered")
    return tensors
