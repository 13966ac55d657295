"""Argument checks shared by the public entry points: each raises naming the argument
and what was expected, and none converts what it is given (``True`` is not 1, ``"0.1"``
is not 0.1)."""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # torch loads only where a check needs it
    import torch

__all__ = ["check_bool", "check_int", "check_seed", "MAX_SEED", "check_arm",
           "check_real", "real_as_float", "check_range", "check_render_mode",
           "check_options", "check_device", "check_float_dtype", "is_real", "is_tensor", "register_class",
           "unregistered", "path_as_str", "json_default", "FACE_ULPS", "rounding_of", "face_slack"]

#: how many roundings (of the range's magnitude, in the float type a value came in) a given value
#: may lie past an end of its range and still count as on it: arithmetic such as ``0.1 + 0.2``
#: lands there for an end of ``0.3``, so does ``0.3`` given in float32, and box points a run
#: recorded before its faces mapped exactly onto the bounds lie one rounding past them
FACE_ULPS = 4

#: the largest seed a run takes: runs record it in a signed 64-bit integer column (SQLite's
#: INTEGER) and torch's ``SobolEngine`` takes it as a C ``long long``; a larger one failed there,
#: after the run had started, with an ``OverflowError`` naming neither
MAX_SEED = 2**63 - 1


def is_real(value: Any) -> bool:
    """Whether ``value`` is a real number of any type but bool (a Python or NumPy bool is an
    int to ``isinstance``, and a flag passed where a number belongs is a mistake); finite or not."""
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real)


def rounding_of(value: Any) -> float:
    """The relative rounding (machine epsilon) of the narrowest float type ``value`` came in:
    an array's or tensor's, a NumPy scalar's, or that of the entries of a list, tuple or
    mapping of them; float64's at least."""
    entries = (list(value.values()) if isinstance(value, Mapping)
               else list(value) if isinstance(value, (list, tuple)) else [])
    eps = float(np.finfo(np.float64).eps)
    for dtype in [getattr(value, "dtype", None)] + [getattr(v, "dtype", None) for v in entries]:
        if isinstance(dtype, np.dtype):
            if np.issubdtype(dtype, np.floating):
                eps = max(eps, float(np.finfo(dtype).eps))
        elif dtype is not None and getattr(dtype, "is_floating_point", False):  # a torch dtype
            import torch

            eps = max(eps, float(torch.finfo(dtype).eps))
    return eps


def face_slack(value: Any, low: Any, high: Any) -> Any:
    """How far past ``low`` / ``high`` (numbers or arrays of them) ``value`` may lie and still
    count as on that end: :data:`FACE_ULPS` roundings of ``value``'s float type
    (:func:`rounding_of`) at the range's magnitude."""
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    return FACE_ULPS * rounding_of(value) * np.maximum(np.maximum(np.abs(low), np.abs(high)), high - low)


def real_as_float(value: Any) -> float:
    """A real number (see :func:`is_real`) as a float; one whose magnitude no float64 holds (a
    Python int or ``Fraction`` past 1.8e308, where ``float()`` raises ``OverflowError``) as the
    infinity of its sign, which every caller already treats as not finite."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def is_tensor(value: Any) -> bool:
    """Whether ``value`` is a ``torch.Tensor``, without importing torch: a value can only be a
    tensor once torch is loaded, so modules that accept tensors among other types need not
    load it (the CLI, storage and report start without torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _held_hint(value: Any) -> str:
    """For an error refusing ``value``: how to pass a number held in a tensor or array (which
    the checks do not unwrap), else ``""``."""
    if is_tensor(value) or isinstance(value, np.ndarray):
        kind = "torch.Tensor" if is_tensor(value) else "numpy.ndarray"
        shape = tuple(value.shape)
        return f", a {kind}: pass a number (.item())" if math.prod(shape) == 1 else \
            f", a {kind} of shape {shape}: pass one number"
    return ""


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool; a Python or NumPy bool only."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def check_int(name: str, value: Any, *, minimum: int | None = None) -> int:
    """``value`` as an int (Python or NumPy integer, not a bool), at least ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int{'' if minimum is None else f' >= {minimum}'}, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_seed(name: str, value: Any) -> int:
    """``value`` as a seed: an int (see :func:`check_int`) in ``[0, MAX_SEED]``."""
    seed = check_int(name, value, minimum=0)
    if seed > MAX_SEED:
        raise ValueError(f"{name} must be an int <= 2**63 - 1 (a run records it as a signed 64-bit integer), "
                         f"got {value!r}")
    return seed


def check_arm(name: str, arm: Any, n_arms: int, start: int = 0) -> int:
    """``arm`` as an arm index in ``start .. start + n_arms - 1`` (an int, a NumPy integer or a
    0-d integer array), returned as an int; ``ValueError`` naming it ``name`` otherwise. A
    bool is not an index (Gymnasium's ``Discrete.contains`` takes ``True`` as 1), and a
    negative one would silently mean the last arm of an array."""
    value = arm.item() if isinstance(arm, np.ndarray) and arm.ndim == 0 else arm
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or not start <= value < start + n_arms:
        hint = _held_hint(arm) if value is arm else ""  # a 0-d integer array is an index; its value was refused
        raise ValueError(f"{name} must be an arm index (int) in [{start}, {start + n_arms}), got {arm!r}{hint}")
    return int(value)


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a finite float (any real number type but bool) in ``[low, high]``."""
    if not is_real(value) or not math.isfinite(real_as_float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}{_held_hint(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"in [{low}, {high}]" if low is not None and high is not None else (
            f">= {low}" if low is not None else f"<= {high}")
        raise ValueError(f"{name} must be {span}, got {value!r}")
    return float(value)


def check_range(name: str, value: Any, *, positive: bool = False, strict: bool = True) -> tuple[float, float]:
    """``value`` as ``(lo, hi)``: two finite reals with ``lo < hi`` (``lo <= hi`` unless
    ``strict``), and ``lo > 0`` if ``positive`` (a range of lengthscales, of noise stds)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise ValueError(f"{name} must be (low, high), got {value!r}")
    lo, hi = (check_real(f"{name}[{i}]", v) for i, v in enumerate(value))
    if (lo >= hi) if strict else (lo > hi):
        raise ValueError(f"{name} must be (low, high) with low {'<' if strict else '<='} high, got {value!r}")
    if positive and not lo > 0:
        raise ValueError(f"{name} must be (low, high) with 0 < low, got {value!r}")
    return lo, hi


def check_device(name: str, value: Any) -> torch.device:
    """``value`` (a str such as ``"cpu"`` / ``"cuda:1"`` or a ``torch.device``) as a
    device this machine has; ``ValueError`` naming ``name`` otherwise (torch would raise
    an ``AssertionError`` or a ``RuntimeError`` from deep inside the first ``.to``)."""
    import torch

    if not isinstance(value, (str, torch.device)):
        raise TypeError(f"{name} must be a str or torch.device, got {type(value).__name__} {value!r}")
    try:
        device = torch.device(value)
    except (RuntimeError, TypeError):
        raise ValueError(f"{name} must be 'cpu', 'cuda' or 'cuda:N' (or another torch device), got {value!r}") from None
    mps = getattr(torch.backends, "mps", None)
    available = {"cpu": True, "cuda": torch.cuda.is_available(), "mps": mps is not None and mps.is_available()}
    if not available.get(device.type, False):
        raise ValueError(f"{name} {str(value)!r}: not available on this machine (torch {torch.__version__}); "
                         "use 'cpu'")
    if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
        raise ValueError(f"{name} {str(value)!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return device


def check_float_dtype(name: str, value: Any) -> torch.dtype:
    """``value`` as a floating-point ``torch.dtype`` (``torch.float32``, ``torch.float64``...)."""
    import torch

    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise TypeError(f"{name} must be a floating-point torch.dtype such as torch.float64, got {value!r}")
    return value


def check_render_mode(render_mode: Any) -> None:
    """Gymnasium passes ``render_mode`` to every environment; these draw nothing."""
    if render_mode is not None:
        raise ValueError(f"render_mode must be None (this environment does not render), got {render_mode!r}")


def check_options(options: Any, known: tuple[str, ...]) -> dict[str, Any]:
    """``reset(options=...)``: a dict with no key outside ``known`` (a misspelt key would
    otherwise be ignored)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"options has unknown key(s) {unknown}; this environment takes "
                         f"{list(known) if known else 'none'}")
    return options


def register_class(registry: dict[str, type], cls: Any, base: type, name: Any, replace: Any,
                   base_path: str) -> type:
    """Add ``cls`` to ``registry`` under ``name`` (a registration function's shared part): ``cls``
    must be a concrete subclass of ``base`` (``base_path``: its public address, for messages),
    ``name`` a registry name (a non-empty, lower-case string without whitespace or control
    characters, other than ``base``'s own ``name`` if it has one: it is typed on command lines
    and stored on checkpoint cards), free or already ``cls``'s unless ``replace`` (a bool).
    Returns ``cls`` (so a registration function can serve as a decorator).

    Raises:
        TypeError: ``cls`` is not a subclass of ``base``, or leaves abstract methods
            unimplemented; ``replace`` is not a bool.
        ValueError: ``name`` is not a registry name, or names another registered class and
            ``replace`` is false.
    """
    replace = check_bool("replace", replace)
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise TypeError(f"cls must be a subclass of {base_path}, got {cls!r}")
    if getattr(cls, "__abstractmethods__", None):
        raise TypeError(f"cls must implement {sorted(cls.__abstractmethods__)} ({base.__name__}'s abstract methods); "
                        f"{cls.__name__} does not")
    reserved = getattr(base, "name", None)
    if (not isinstance(name, str) or not name or name != name.lower() or not name.isprintable()
            or any(ch.isspace() for ch in name) or name == reserved):
        mine = "" if reserved is None else f", not the base class's {reserved!r}"
        raise ValueError(f"cls.name must be a non-empty, lower-case string without whitespace{mine} (the registry "
                         f"name), got {name!r}")
    if name in registry and registry[name] is not cls and not replace:
        raise ValueError(f"{name!r} is registered already ({registry[name].__qualname__}); give the new class "
                         "another name, or pass replace=True")
    registry[name] = cls
    return cls


def unregistered(argument: str, name: Any, known: list[str], register: str) -> ValueError:
    """The error for a ``name`` that no registry entry has (its registry's ``known`` names):
    it names ``argument`` and the names known, and says how a class of one's own is added
    (``register``, the registration function; ``--plugin MODULE`` imports the module that
    calls it before a command reads its arguments), since a missing registration, not a
    typo, is the usual cause when the name is one's own."""
    return ValueError(f"{argument} must be one of {known}, got {name!r} (one of your own is added with {register}; "
                      "on the command line, --plugin MODULE imports the module that adds it)")


def path_as_str(value: Any) -> Any:
    """A path-like ``value`` (``pathlib.Path``, what ``train()`` returns as a checkpoint's card)
    as its ``str``; anything else as given, for the caller's own checks of names and paths."""
    import os

    return os.fspath(value) if isinstance(value, os.PathLike) else value


def json_default(value: Any) -> Any:
    """``json.dumps``'s ``default=`` for what a run records: a NumPy value or a tensor as its
    ``tolist()``, as the run's storage writes it; anything else is refused (``TypeError``, the
    type named), so that a value JSON cannot hold fails as such rather than being passed on."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")
