"""A training run's directory on disk: its resumable state and the trainer's lock.

The state is two files, written every ``checkpoint_every`` steps and where a run stops:
``train_state.safetensors`` (the model's weights, the optimiser's moments, the random
generators) and ``train_state.json`` (the run's identity, its prior's spec, the step, the
evaluation log, the optimiser's parameter groups, the ``init_from`` provenance and the
tensors' sha256). Each is replaced atomically; the sha256 lets a reader tell a pair from two
saves apart. ``train.lock`` keeps a second trainer off a live run's directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load, save

from npbandit.surrogates import NeuralProcess

__all__ = ["STATE_TENSORS", "STATE_JSON", "save_state", "read_state", "load_state", "lock_run"]

STATE_TENSORS = "train_state.safetensors"
STATE_JSON = "train_state.json"


def save_state(out: Path, identity: dict[str, Any], prior_spec: dict[str, Any], model: NeuralProcess,
               optimizer: torch.optim.Optimizer, step: int, log: list[dict[str, Any]], elapsed: float,
               initial: dict[str, Any] | None, running_loss: float | None = None) -> None:
    """Write the run's state at ``step`` into ``out``: ``identity`` (``TrainConfig.identity()``,
    what a resumed run must share), the prior's ``prior_spec``, the evaluation ``log``, the
    seconds ``elapsed``, the ``init_from`` provenance ``initial`` and the training loss's
    running average ``running_loss`` beside the weights, the optimiser's state and the random
    generators.

    Raises:
        FloatingPointError: a non-finite weight (the run diverged); the state saved before is kept.
    """
    tensors = {f"model.{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    if not all(torch.isfinite(v).all() for v in tensors.values()):
        raise FloatingPointError(f"non-finite weights at step {step}: the run diverged; the state saved at an "
                                 "earlier step is intact: lower --lr and start again")
    opt = optimizer.state_dict()
    for idx, state in opt["state"].items():
        for key, value in state.items():
            tensors[f"optim.{idx}.{key}"] = torch.as_tensor(value).detach().cpu().contiguous()
    # the global generators: models that sample in their loss (ReTreever's tree paths) draw from them, and a
    # resumed run must draw what the uninterrupted one would
    tensors["rng.cpu"] = torch.get_rng_state()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for i, rng in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{i}"] = rng
    # what the run started from, as it was then: the source may be replaced (a shipped name re-exported) or
    # removed before the run resumes or exports
    # the running loss goes on where it stopped: seeded again from one batch, a resumed run's progress bar
    # and logged train_loss would differ from the uninterrupted run's for the average's whole memory
    meta = {"config": identity, "prior_spec": prior_spec, "step": step, "elapsed_s": elapsed, "log": log,
            "param_groups": opt["param_groups"], "init_from": initial, "running_loss": running_loss}
    # two files, each replaced atomically but not together: the JSON names the tensors' sha256, so a reader
    # (an --export-now beside the run, a resume after a crash between the two) can tell a mismatched pair
    blob = save(tensors)
    meta["tensors_sha256"] = hashlib.sha256(blob).hexdigest()
    for fname, writer in ((STATE_TENSORS, lambda p: p.write_bytes(blob)),
                          (STATE_JSON, lambda p: p.write_text(json.dumps(meta, indent=1)))):
        tmp = out / (fname + ".tmp")
        writer(tmp)
        tmp.replace(out / fname)


def read_state(out: Path, attempts: int = 5) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The state's JSON and tensors from one save: re-read while a run beside this call is
    between writing the two (states saved before the sha256 was recorded: read as they are)."""
    for attempt in range(attempts):
        meta = json.loads((out / STATE_JSON).read_text())
        blob = (out / STATE_TENSORS).read_bytes()
        expected = meta.get("tensors_sha256")
        if expected is None or hashlib.sha256(blob).hexdigest() == expected:
            break
        time.sleep(0.5 * (attempt + 1))
    else:
        raise ValueError(f"{out}: {STATE_JSON} and {STATE_TENSORS} are from different saves (a crash between the two "
                         "writes?); the run cannot resume from them")
    try:
        return meta, load(blob)
    except Exception as err:  # noqa: BLE001 - a truncated file (SafetensorError)
        raise ValueError(f"{out}: {STATE_TENSORS} cannot be read: {' '.join(str(err).split())[:200]}") from None


def load_state(out: Path, model: NeuralProcess, optimizer: torch.optim.Optimizer,
               device: torch.device) -> tuple[int, list[dict[str, Any]], float, float | None]:
    """Load the state saved in ``out`` into ``model``, ``optimizer`` (its moments onto
    ``device``) and the random generators; returns the step, the log, the seconds elapsed and
    the training loss's running average (``None`` in states saved before it was).

    Raises:
        ValueError: the two files from different saves, an unreadable tensors file, weights of
            another version of the model, or non-finite saved weights.
    """
    meta, tensors = read_state(out)
    try:
        model.load_state_dict({k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")})
    except RuntimeError as err:  # weights of another version of the model
        raise ValueError(f"{out}'s saved state cannot be loaded into this version's {model.name}: "
                         f"{' '.join(str(err).split())[:300]}") from None
    bad = [k for k, v in tensors.items() if k.startswith("model.") and not torch.isfinite(v).all()]
    if bad:
        raise ValueError(f"{out}'s saved state holds non-finite weights ({bad[0][len('model.'):]} ...): the run "
                         "diverged before this version caught it; start again with a lower --lr")
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        if key.startswith("optim."):
            _, idx, name = key.split(".", 2)
            state.setdefault(int(idx), {})[name] = value.to(device) if name != "step" else value
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    if "rng.cpu" in tensors:  # states saved before the generators were: resumed from the seed's
        torch.set_rng_state(tensors["rng.cpu"])
    cuda = [tensors[f"rng.cuda.{i}"] for i in range(torch.cuda.device_count()) if f"rng.cuda.{i}" in tensors]
    if cuda and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
    return meta["step"], meta["log"], meta["elapsed_s"], meta.get("running_loss")


def lock_run(out: Path) -> Any:
    """An exclusive lock on ``out/train.lock`` held while the returned file is open;
    ``ValueError`` when another process holds it. Where ``fcntl`` is missing (Windows):
    no lock."""
    try:
        import fcntl
    except ImportError:
        return None
    handle = open(out / "train.lock", "a+")  # noqa: SIM115 - closed by train() when the run stops
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise ValueError(f"{out} is being trained by another process{f' (pid {holder})' if holder else ''}; "
                         "wait for it, or stop it (SIGTERM saves its state)") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle
