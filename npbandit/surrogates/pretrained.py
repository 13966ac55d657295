"""Pretrained checkpoints: saving, verifying and loading without pickle.

A checkpoint is two files side by side:

- ``<name>.safetensors`` -- the weights (safetensors: tensors only, no code runs on load);
- ``<name>.json`` -- the card: model name and config, input/output dims, the prior
  it was trained on, what the checkpoint is for (``"use"``), its transforms
  (``"transforms"``), training settings and steps, evaluation log-likelihoods, the
  sha256 of the weights file, package/torch versions and the date.

``load_surrogate`` checks the card, the hash and that the weights fit the config
exactly, and fails with a message that says which of these went wrong. Checkpoints
shipped with the package live in ``npbandit/surrogates/weights/`` and are named
``<model>-<prior>`` (``cmanp-gp1d``, ``cmanp-bo``, ...).

What a checkpoint is for follows from the prior it was trained on: the task, the
input dimensions it saw, its input box and whether it expects standardised outputs.
:func:`checkpoint_use` reads that from a card (``"use"``; a card without
that field is read through its prior's name), and :func:`check_checkpoint_kind`
refuses a checkpoint used for something it was not trained for, naming the shipped
checkpoints that fit -- a ``gp1d`` model fed raw BO values of ~1000, or a ``bo``
model asked for five bandit arms, would otherwise run and produce nonsense or fail
later on a shape.

A checkpoint's transforms are part of the model: ``"transforms": {"input": null,
"outcome": ...}`` says how the values a caller observes become what the network reads
(:mod:`npbandit.transforms.spec`; the ``*-wheel`` checkpoints: ``{"type": "reward",
"reward_scale": 1.0, "reward_transform": "symlog", "reward_fill": "zeros"}``).
:func:`checkpoint_transforms` reads it from a card; a card without the field (written
before it existed) gets what its prior declares for its prior spec
(:meth:`~npbandit.priors.base.Prior.outcome_transform`: a ``wheel`` card's reward
fields, with raw rewards and N(0, 1) fill for the fields it predates; ``gp1d`` and
``bo``: none). :func:`load_surrogate` sets ``model.outcome_transform`` from it, so the
model takes raw values and predicts in their units (:mod:`npbandit.surrogates.base`;
a wheel model's reward rows are filled first by the bandit side,
:class:`npbandit.priors.wheel.RewardFill`).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save

from npbandit.exceptions import CheckpointError, UnknownCheckpointError
from npbandit.surrogates import NeuralProcess, available_models, build
from npbandit.surrogates.checkpoint_files import file_sha256, read_weights, replace_file, weights_file
from npbandit.transforms.base import OutcomeTransform
from npbandit.transforms.spec import transform_from_spec, transform_spec
from npbandit.validation import check_bool, check_device, check_float_dtype

__all__ = ["CheckpointError", "UnknownCheckpointError", "save_pretrained", "load_surrogate", "available_checkpoints",
           "read_card", "checkpoint_use", "checkpoint_transforms", "outcome_transform", "check_checkpoint_kind",
           "check_bo_checkpoint", "fitting_checkpoints", "context_limit", "weights_fingerprint",
           "check_weights_unchanged", "served_width", "weights_file", "WEIGHTS_DIR", "CARD_FORMAT"]

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
CARD_FORMAT = "npbandit-checkpoint/1"


#: what each prior's checkpoints are for, in words
TASKS = {"bo": "Bayesian optimisation on the unit cube (optimize, BOPolicy, NPModel)",
         "gp1d": "1-D regression of GP samples on [-2, 2]",
         "wheel": "the wheel bandit (2-D contexts, 5 arms)"}


def save_pretrained(model: NeuralProcess, directory: str | Path, name: str, *, prior: dict[str, Any],
                    training: dict[str, Any], evaluation: dict[str, Any]) -> Path:
    """Write ``<directory>/<name>.safetensors`` and its card ``<name>.json``; returns the card path.

    Weights are stored in float32 on the CPU whatever the model's dtype/device.

    Args:
        model: the trained surrogate.
        directory: where both files go (created if missing).
        name: the files' stem and the card's ``"name"``.
        prior: the prior's :meth:`~npbandit.priors.base.Prior.spec`; the card's ``"use"``
            and ``"transforms"`` are derived from it.
        training: training settings recorded on the card (JSON-serialisable).
        evaluation: evaluation scores recorded on the card (JSON-serialisable).

    Returns:
        The path of the card, ``<directory>/<name>.json``.

    Raises:
        OSError: a file cannot be written (a read-only directory, a full disk); each file
            is replaced whole or not at all, the weights before the card.
    """
    from npbandit._version import __version__

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    weights = directory / f"{name}.safetensors"
    tensors = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in model.state_dict().items()}
    # one metadata key: safetensors writes a map's keys in no fixed order, and the card's sha256 must name the
    # weights, not the order (the name is in the card). Serialised here and written by replace_file, not by
    # save_file: that one's file is readable by its owner alone whatever the umask, and its errors are no OSError
    replace_file(weights, save(tensors, metadata={"format": CARD_FORMAT}))
    card = {
        "format": CARD_FORMAT,
        "name": name,
        "model": model.name,
        "x_dim": model.x_dim,
        "y_dim": model.y_dim,
        "config": asdict(model.config),  # any registered family's frozen dataclass, NPConfig or not
        "parameters": sum(t.numel() for t in tensors.values()),
        "prior": prior,
        "use": checkpoint_use({"x_dim": model.x_dim, "y_dim": model.y_dim, "prior": prior}),
        "transforms": checkpoint_transforms({"prior": prior}),
        "training": training,
        "evaluation": evaluation,
        "weights": weights.name,
        "sha256": file_sha256(weights),
        "npbandit_version": __version__,
        "torch_version": torch.__version__,
        "date": _dt.date.today().isoformat(),
    }
    card_path = directory / f"{name}.json"
    replace_file(card_path, (json.dumps(card, indent=2) + "\n").encode())
    return card_path


def available_checkpoints() -> list[str]:
    """Names of the checkpoints shipped with the package."""
    return sorted(p.stem for p in WEIGHTS_DIR.glob("*.json"))


def _resolve(name_or_path: str | Path) -> Path:
    """The card path for a shipped name, a card, a weights file, or ``<dir>/<name>``."""
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"name_or_path must be a checkpoint name or a path, got {type(name_or_path).__name__}")
    text = str(name_or_path)
    if not text.strip():
        raise ValueError("name_or_path must be a checkpoint name or a path, got an empty string")
    if (WEIGHTS_DIR / f"{text}.json").exists():
        return WEIGHTS_DIR / f"{text}.json"
    path = Path(text)
    if path.suffix == ".safetensors":
        path = path.with_suffix(".json")
    elif path.suffix != ".json":
        path = path.with_name(path.name + ".json")
    if path.exists():
        return path
    for weights in (WEIGHTS_DIR / f"{text}.safetensors", path.with_suffix(".safetensors")):
        if weights.exists():  # a known checkpoint with its card missing is not an unknown name
            raise FileNotFoundError(f"checkpoint {text!r}: its card {weights.with_suffix('.json')} is missing "
                                    f"(the weights {weights.name} are there)")
    if Path(text).is_dir():  # a training run's directory (npbandit train --out): name a checkpoint in it
        cards = sorted(str(card.with_suffix("")) for card in Path(text).glob("*.json") if _is_card(card))
        if cards:
            err = UnknownCheckpointError(f"checkpoint {text!r} is a directory: name a checkpoint in it, "
                                         + " or ".join(repr(card) for card in cards[:4]))
        else:
            err = UnknownCheckpointError(f"checkpoint {text!r} is a directory holding no checkpoint (no .json card "
                                         "beside its .safetensors weights): name a checkpoint's card or weights "
                                         "file, or a shipped name")
        err.path = text
        raise err
    shipped = available_checkpoints()
    close = difflib.get_close_matches(text, shipped, n=2, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    err = UnknownCheckpointError(f"no checkpoint {text!r}: {hint}not a shipped name (shipped: "
                                 f"{', '.join(shipped) or 'none'}) and no card at {path}")
    # a path (not a bare name someone may have mistyped): callers that list the names they know say this instead
    if "/" in text or os.sep in text or Path(text).suffix in (".json", ".safetensors"):
        err.path = str(path)
    raise err


def _is_card(path: Path) -> bool:
    """Whether ``path`` is a checkpoint's card beside its weights (not a training run's saved
    state, ``train_state.json``, nor another JSON file)."""
    try:
        card = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(card, dict) and card.get("format") == CARD_FORMAT and path.with_suffix(".safetensors").exists()


def read_card(name_or_path: str | Path) -> dict[str, Any]:
    """The JSON card of a checkpoint (shipped name or path), checked for the required fields.

    Raises:
        UnknownCheckpointError: no checkpoint has that name or path.
        FileNotFoundError: a known checkpoint whose card is missing.
        CheckpointError: the card is not valid JSON, lacks a required field, or has
            another format than :data:`CARD_FORMAT`; or it is a training run's resumable
            state (``train_state.json``), named with the checkpoints beside it.
    """
    path = _resolve(name_or_path)
    try:
        card = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise CheckpointError(f"card {path} is not valid JSON: {err}") from None
    if isinstance(card, dict) and "format" not in card and {"config", "step", "prior_spec"} <= set(card):
        # npbandit train's train_state.json / .safetensors: the run's weights with its optimiser, no card
        cards = sorted(str(c.with_suffix("")) for c in path.parent.glob("*.json") if _is_card(c))
        there = f"; the checkpoints in its directory: {' or '.join(repr(c) for c in cards[:4])}" if cards else ""
        raise CheckpointError(f"{path} is a training run's resumable state, not a checkpoint: the run exports one "
                              "(<name>.json and <name>.safetensors) when it ends, or at its saved step with the same "
                              f"npbandit train command and --export-now{there}")
    required = {"format", "name", "model", "x_dim", "y_dim", "config", "weights", "sha256"}
    missing = sorted(required - set(card))
    if missing:
        raise CheckpointError(f"card {path} lacks {missing}")
    if card["format"] != CARD_FORMAT:
        raise CheckpointError(f"card {path} has format {card['format']!r}; this version reads {CARD_FORMAT!r}")
    card["_path"] = str(path)
    return card


def load_surrogate(name_or_path: str | Path, *, device: str | torch.device = "cpu",
                   dtype: torch.dtype = torch.float32, requires_grad: bool = False) -> NeuralProcess:
    """Load a pretrained surrogate, ready for ``condition``/``update``/``predict``.

    Args:
        name_or_path: a shipped name (see ``npbandit models``), or the path of a card
            (``.json``), of its weights (``.safetensors``), or ``<dir>/<name>``.
        device, dtype: where and in what precision to run the model.
        requires_grad: whether the weights track gradients. Off by default: an
            acquisition function's gradient in the inputs then skips the backward pass
            into the weights; pass ``True`` to fine-tune the network.

    Raises:
        FileNotFoundError: no such checkpoint, or its weights file is missing.
        CheckpointError: the card is malformed, the weights' sha256 differs from the
            card's (corrupted or replaced file), the weights file is damaged (truncated,
            not safetensors) or holds non-finite values, or the weights do not fit the config.

    The returned model is in eval mode, carries its card as ``model.card``, the
    fingerprint of the weights as read (:func:`weights_fingerprint`) as
    ``model.loaded_fingerprint`` (so code that records the card can tell the weights were
    changed since: :func:`check_weights_unchanged`), and its
    outcome transform (:func:`checkpoint_transforms`) as ``model.outcome_transform``:
    with one, ``condition`` / ``update`` take raw values and ``predict`` answers in raw
    units (:mod:`npbandit.surrogates.base`). The prior it was trained on need not be
    registered here (all of this is on the card); ``NPModel``, which reads the prior's input
    box and scaling, refuses a checkpoint of one that is not.
    """
    requires_grad = check_bool("requires_grad", requires_grad)  # a NumPy bool too
    device, dtype = check_device("device", device), check_float_dtype("dtype", dtype)
    card = read_card(name_or_path)
    weights = weights_file(card)
    digest = file_sha256(weights)
    if digest != card["sha256"]:
        raise CheckpointError(f"checkpoint {card['name']!r}: weights file {weights} has sha256 {digest[:12]}…, the "
                              f"card says {card['sha256'][:12]}…; the file is corrupted or was replaced")
    outcome = outcome_transform(card)
    if card["model"] not in available_models():
        raise CheckpointError(f"checkpoint {card['name']!r} is a {card['model']!r} model, a family this process has "
                              f"not registered (register_model; on the command line, --plugin MODULE); known: "
                              f"{available_models()}")
    try:
        model = build(card["model"], card["x_dim"], card["y_dim"], **card["config"])
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"checkpoint {card['name']!r}: its config does not build a {card['model']}: "
                              f"{err}") from None
    tensors = read_weights(card["name"], weights)
    expected = model.state_dict()
    missing, unexpected = sorted(set(expected) - set(tensors)), sorted(set(tensors) - set(expected))
    wrong = sorted(k for k in set(expected) & set(tensors) if expected[k].shape != tensors[k].shape)
    if missing or unexpected or wrong:
        raise CheckpointError(f"checkpoint {card['name']!r}: weights do not match the config "
                              f"(missing {missing[:3]}, unexpected {unexpected[:3]}, wrong shape {wrong[:3]})")
    model.load_state_dict(tensors)
    model = model.to(device=device, dtype=dtype).eval().requires_grad_(requires_grad)
    model.outcome_transform = outcome
    card.pop("_path")
    model.card = card
    model.loaded_fingerprint = weights_fingerprint(model)
    return model


def weights_fingerprint(model: torch.nn.Module) -> bytes:
    """sha256 of a network's state (names, shapes and the values in float32, as
    :func:`save_pretrained` writes them), whatever its device and floating dtype; computed
    on each call (a few ms for the shipped checkpoints), so weights changed in place are
    noticed."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        values = tensor.detach().to("cpu", torch.float32) if tensor.is_floating_point() else tensor.detach().cpu()
        digest.update(f"{name}|{values.dtype}|{tuple(values.shape)}|".encode())
        digest.update(values.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.digest()


def check_weights_unchanged(model: torch.nn.Module, purpose: str) -> None:
    """Refuse a network whose weights are no longer those its card names: loaded by
    :func:`load_surrogate` and changed since (fine-tuned, edited in place), or carrying a
    card it was not loaded with. Whatever records the card's name and sha256 for a run
    would otherwise record another network's.

    Raises:
        CheckpointError: as above, saying how to record the changed network.
    """
    loaded = getattr(model, "loaded_fingerprint", None)
    if loaded is None or weights_fingerprint(model) != loaded:
        name = model.card["name"]
        raise CheckpointError(f"{purpose}: the network's weights are not checkpoint {name!r}'s as load_surrogate read "
                              "them (changed since, or not loaded from that card), and a run records the checkpoint's "
                              "name and sha256; save the network with save_pretrained and pass its card, or load the "
                              "checkpoint afresh")


def served_width(model: torch.nn.Module) -> int:
    """The most inputs a ``bo`` network serves directly: the widest ``d`` its card's prior
    trained it on (a network padded wider than that was never shown more inputs), else,
    without a card, its ``x_dim``."""
    card = getattr(model, "card", None)
    return max(checkpoint_use(card)["x_dims"]) if card is not None else model.x_dim


def checkpoint_transforms(card: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's transforms as its card states them: ``{"input": None, "outcome":
    None | {"type": "reward", ...}}`` (see the module docstring).

    Read from ``card["transforms"]`` when the card has it; otherwise derived from its
    prior spec: what the prior declares (a ``wheel`` card's reward fields, its old
    defaults for the ones it predates), none for a prior this version does not know.

    Raises:
        CheckpointError: a ``"transforms"`` entry this version cannot read (not a dict
            with exactly ``input`` and ``outcome``, an input transform, an unknown
            outcome transform).
    """
    if not isinstance(card, dict):
        raise TypeError(f"card must be a checkpoint card (dict), got {type(card).__name__}")
    name = card.get("name", "?")
    if "transforms" in card:
        declared = card["transforms"]
        if not isinstance(declared, dict) or set(declared) != {"input", "outcome"}:
            raise CheckpointError(f"checkpoint {name!r}: transforms must be {{'input': ..., 'outcome': ...}}, "
                                  f"got {declared!r}")
        if declared["input"] is not None:
            raise CheckpointError(f"checkpoint {name!r} declares the input transform {declared['input']!r}; this "
                                  "version knows none (every prior feeds its networks inputs as observed)")
        try:
            transform_from_spec(declared["outcome"])
        except ValueError as err:
            raise CheckpointError(f"checkpoint {name!r}: {err}") from None
        return {"input": None, "outcome": declared["outcome"]}
    from npbandit.priors import PRIORS

    spec = card.get("prior") or {}
    prior = PRIORS.get(spec.get("name"))
    try:
        outcome = None if prior is None else prior.outcome_transform(spec)
    except ValueError as err:  # e.g. a wheel card with a reward_transform this version does not know
        raise CheckpointError(f"checkpoint {name!r}: its prior spec declares no readable outcome transform: "
                              f"{err}") from None
    return {"input": None, "outcome": transform_spec(outcome)}


def outcome_transform(card: dict[str, Any]) -> OutcomeTransform | None:
    """The outcome transform a checkpoint's card declares (:func:`checkpoint_transforms`).

    Raises:
        CheckpointError: the card declares one this version cannot read."""
    return transform_from_spec(checkpoint_transforms(card)["outcome"])


def checkpoint_use(card: dict[str, Any]) -> dict[str, Any]:
    """What a checkpoint is for, from its card: ``prior`` (name), ``task`` (words),
    ``x_dims`` (the input dimensions it was trained on; fewer than ``x_dim`` are
    zero-padded, unless its prior drew them at their own width: ``padding="none"``),
    ``x_dim``, ``y_dim``, ``input_domain`` (the box its inputs were drawn
    from) and ``standardizes_outputs`` (whether it expects standardised outputs;
    ``None`` when the prior is unknown to this version); optionally ``n_views``, the
    symmetric views ``NPModel.from_pretrained`` averages over (absent: 1, no averaging),
    and ``acq_optimizer``, the acquisition optimiser ``BOPolicy`` / ``optimize`` /
    ``NPSampler`` maximise this checkpoint's acquisition with by default (a name of
    :data:`npbandit.acquisition.optimizers.OPTIMIZERS`; absent: ``optimize_acqf``,
    ``GradientRestarts``), set on a card when the lab's BO suite showed it searches as well
    with it.

    A card written by :func:`save_pretrained` carries this as ``card["use"]``; for a
    card without it, it is derived from the prior's name and spec the same way."""
    if not isinstance(card, dict):
        raise TypeError(f"card must be a checkpoint card (dict), got {type(card).__name__}")
    if isinstance(card.get("use"), dict):
        return dict(card["use"])
    from npbandit.priors import PRIORS

    spec = card.get("prior") or {}
    name = spec.get("name")
    prior = PRIORS.get(name)
    x_dim = int(card["x_dim"])
    dims = spec.get("dims") if spec.get("padding") in ("zeros", "none") else None
    return {"prior": name, "task": TASKS.get(name, f"tasks of the {name!r} prior"),
            "x_dims": sorted(int(d) for d in dims) if dims else [x_dim], "x_dim": x_dim, "y_dim": int(card["y_dim"]),
            "input_domain": None if prior is None else list(prior.domain_of(spec)),
            "standardizes_outputs": None if prior is None else bool(prior.standardizes_outputs)}


def context_limit(card: dict[str, Any]) -> int | None:
    """The most context points the checkpoint was trained with (its prior's ``n_context``,
    ``["randint", low, high]`` drawing up to ``high - 1``), or ``None`` when the card does
    not say. Past it a network conditions on more points than it ever saw in training."""
    if not isinstance(card, dict):
        raise TypeError(f"card must be a checkpoint card (dict), got {type(card).__name__}")
    spec = (card.get("prior") or {}).get("n_context")
    if isinstance(spec, (list, tuple)) and len(spec) == 3 and spec[0] == "randint":
        return int(spec[2]) - 1
    if isinstance(spec, int) and not isinstance(spec, bool):
        return spec
    return None


def _fits(use: dict[str, Any], priors: tuple[str, ...] | None, x_dim: int | None, y_dim: int | None) -> bool:
    return ((priors is None or use["prior"] in priors) and (x_dim is None or x_dim in use["x_dims"])
            and (y_dim is None or y_dim == use["y_dim"]))


def _as_priors(prior: str | Sequence[str] | None) -> tuple[str, ...] | None:
    if prior is None:
        return None
    priors = (prior,) if isinstance(prior, str) else tuple(prior)
    if not priors or not all(isinstance(p, str) for p in priors):
        raise TypeError(f"prior must be a prior name or a sequence of them, got {prior!r}")
    return priors


def _check_dim(name: str, value: int | None) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(f"{name} must be a positive int or None, got {value!r}")


def fitting_checkpoints(*, prior: str | Sequence[str] | None = None, x_dim: int | None = None,
                        y_dim: int | None = None) -> list[str]:
    """The shipped checkpoints trained on ``prior`` (a name or several) that take
    ``x_dim`` inputs and give ``y_dim`` outputs (``None``: any), as sorted names; a
    checkpoint whose card cannot be read fits nothing.

    Raises:
        TypeError: ``prior`` is neither a name nor a sequence of names.
        ValueError: ``x_dim`` / ``y_dim`` not a positive int or ``None``.
    """
    priors = _as_priors(prior)
    _check_dim("x_dim", x_dim)
    _check_dim("y_dim", y_dim)
    names = []
    for name in available_checkpoints():
        try:
            use = checkpoint_use(read_card(name))
        except (CheckpointError, FileNotFoundError, KeyError):
            continue  # a broken card fits nothing; load_surrogate reports it when asked for
        if _fits(use, priors, x_dim, y_dim):
            names.append(name)
    return names


def check_checkpoint_kind(card: dict[str, Any], *, prior: str | Sequence[str] | None = None,
                          x_dim: int | None = None, y_dim: int | None = None, purpose: str = "this use") -> None:
    """Refuse a checkpoint that was not trained for the task at hand.

    Args:
        card: the checkpoint's card (``read_card(name)`` or ``model.card``).
        prior: the prior(s) whose checkpoints fit (e.g. ``"bo"``); ``None``: any.
        x_dim: the problem's input dimension; it must be one the checkpoint was trained
            on (``bo`` checkpoints: any ``d`` up to their width, zero-padded).
        y_dim: the number of outputs needed (e.g. 5 arms).
        purpose: what the checkpoint is wanted for, for the message (``"optimize"``).

    Raises:
        CheckpointError: in one line, naming what was asked, which of it the checkpoint
            misses (its prior, inputs or outputs, each with what was asked), then what the
            checkpoint is for, then the shipped checkpoints that fit (or that none does).
    """
    priors = _as_priors(prior)
    _check_dim("x_dim", x_dim)
    _check_dim("y_dim", y_dim)
    use = checkpoint_use(card)
    if _fits(use, priors, x_dim, y_dim):
        return
    dims = use["x_dims"]
    inputs = _count(dims[0], "input") if len(dims) == 1 else f"{dims[0]} to {dims[-1]} inputs"
    wanted, misses = [], []
    if x_dim is not None:
        wanted.append(_count(x_dim, "input"))
        if x_dim not in dims:
            misses.append(f"{inputs} (not {x_dim})")
    if y_dim is not None:
        wanted.append(_count(y_dim, "output"))
        if y_dim != use["y_dim"]:
            misses.append(f"{_count(use['y_dim'], 'output')} (not {y_dim})")
    if priors is not None and use["prior"] not in priors:
        from npbandit.priors import PRIORS

        # a prior added with register_prior in the process that trained it, not in this one
        unknown = ("" if use["prior"] in PRIORS or not isinstance(use["prior"], str)
                   else ", a prior this process has not registered (register_prior; on the command line, "
                        "--plugin MODULE)")
        misses.insert(0, f"prior {use['prior']!r} (not {_one_of(priors)}){unknown}")
    name = card.get("name", "?")
    kind = f"a {_one_of(priors)} checkpoint" if priors else "a checkpoint"
    scaling = {True: "standardised ", False: "raw ", None: ""}[use["standardizes_outputs"]]
    about = (f"It is for {use['task']}: {inputs}" + (f" in {use['input_domain']}" if use["input_domain"] else "")
             + f", {_count(use['y_dim'], scaling + 'output')}"
             + (" (their scaling unknown)" if use["standardizes_outputs"] is None else "") + ".")
    fit = fitting_checkpoints(prior=priors, x_dim=x_dim, y_dim=y_dim)
    fit_text = f"Shipped checkpoints that fit: {', '.join(fit)}." if fit else "No shipped checkpoint fits."
    # one line (the CLI prints an expected failure as one), in sentences: what was needed and what this
    # checkpoint lacks of it, then what the checkpoint is for, then the checkpoints that fit
    raise CheckpointError(f"{purpose} needs {kind}{' with ' + _and(wanted) if wanted else ''}; checkpoint {name!r} "
                          f"has {_and(misses)}. {about} {fit_text}")


def _count(n: int, unit: str) -> str:
    """``1 output``, ``5 outputs``."""
    return f"{n} {unit}{'' if n == 1 else 's'}"


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _one_of(priors: tuple[str, ...]) -> str:
    """``'bo'``, ``'bo' or 'wheel'``, ``'gp1d', 'bo' or 'wheel'``: the priors of which one fits."""
    names = [repr(p) for p in priors]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def check_bo_checkpoint(card: dict[str, Any], dim: int, purpose: str = "this use") -> int:
    """Refuse a checkpoint that is not a one-output ``bo`` checkpoint; return its width.

    A ``bo`` checkpoint serves any number of inputs ``dim``: up to its width (the largest
    ``d`` it was trained on) directly, beyond it through a low-dimensional subspace of
    that width (``npbandit.acquisition.subspace``). Checked as :func:`check_checkpoint_kind`
    checks ``x_dim = min(dim, width)``, so a checkpoint of another prior or output count
    is refused as before (asked for no inputs, which any ``bo`` checkpoint serves: the
    checkpoints named as fitting are every one-output ``bo`` one).

    Raises:
        CheckpointError: as :func:`check_checkpoint_kind`.
    """
    _check_dim("dim", dim)
    use = checkpoint_use(card)
    width = max(use["x_dims"])
    # any bo checkpoint serves any dim, so dim decides nothing for a checkpoint of another prior (nor the
    # checkpoints that fit): only the prior and the one output
    x_dim = min(dim, width) if use["prior"] == "bo" else None
    check_checkpoint_kind(card, prior="bo", x_dim=x_dim, y_dim=1, purpose=purpose)
    return width
