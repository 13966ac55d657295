"""Neural-process surrogates behind one protocol, and a registry to build them.

>>> from npbandit.surrogates import build
>>> model = build("cmanp", x_dim=1, y_dim=1)                 # paper size
>>> small = build("cmanp", x_dim=1, y_dim=1, size="small")   # CPU-friendly
>>> custom = build("lbanp", 2, 1, size="small", n_latents=16)

A new family is a :class:`NeuralProcess` subclass with its own ``name`` and
``config_class`` (a frozen dataclass, e.g. a subclass of :class:`NPConfig`), added with
:func:`register_model`; :func:`build`, :func:`model_config`, training and
``load_surrogate`` (its checkpoints) then find it by name.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

from npbandit.surrogates.base import NeuralProcess, NPConfig
from npbandit.surrogates.cmanp import CMANP, CMANPConfig, CMANPState
from npbandit.surrogates.cmanp_and import CMANPAND, CMANPANDConfig
from npbandit.surrogates.datnp import DATNP, DATNPConfig
from npbandit.surrogates.lbanp import LBANP, LBANPConfig
from npbandit.surrogates.retreever import ReTreever, ReTreeverConfig
from npbandit.surrogates.states import ContextSetState, NPState
from npbandit.surrogates.te_pt_tnp import TEPTTNP, TEPTTNPConfig
from npbandit.surrogates.tnp import TNPD, TNPDConfig
from npbandit.validation import register_class, unregistered

__all__ = [
    "build",
    "model_config",
    "available_models",
    "register_model",
    "SIZES",
    "NeuralProcess",
    "NPConfig",
    "NPState",
    "ContextSetState",
    "CMANP",
    "CMANPConfig",
    "CMANPState",
    "CMANPAND",
    "CMANPANDConfig",
    "LBANP",
    "LBANPConfig",
    "TNPD",
    "TNPDConfig",
    "TEPTTNP",
    "TEPTTNPConfig",
    "ReTreever",
    "ReTreeverConfig",
    "DATNP",
    "DATNPConfig",
]

_MODELS: dict[str, type[NeuralProcess]] = {m.name: m for m in (CMANP, CMANPAND, LBANP, TNPD, TEPTTNP, ReTreever, DATNP)}

# Named sizes. "paper" is each config's defaults. Keys a model does not have are
# skipped for that model, so one size name means the same shape everywhere.
SIZES: dict[str, dict[str, Any]] = {
    "paper": {},
    "small": {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_layers": 3, "emb_depth": 3,
              "n_latents": 32, "n_block_latents": 32, "n_pseudo": 16},
    "tiny": {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_layers": 2, "emb_depth": 2,
             "n_latents": 8, "n_block_latents": 8, "n_pseudo": 4},
}


def register_model(cls: type[NeuralProcess], *, replace: bool = False) -> type[NeuralProcess]:
    """Add the surrogate family ``cls`` under ``cls.name``, so that :func:`build`,
    :func:`model_config`, training (``TrainConfig(model=...)``) and ``load_surrogate`` (a
    checkpoint whose card names the family) find it. Returns ``cls`` (usable as a class
    decorator).

    Args:
        cls: a concrete :class:`NeuralProcess` subclass (``_condition`` and ``_predict``
            implemented) with a registry ``name`` (non-empty, lower-case, no whitespace, not
            the base class's ``"np"``) and a ``config_class`` that is a frozen dataclass (its
            fields are what :func:`build` takes as overrides and a checkpoint card stores as
            ``config``; frozen, so the config a card records is the one its checks passed
            and the weights were made with).
        replace: (a bool) allow ``cls.name`` to name a registered family, which ``cls`` then replaces.

    Raises:
        TypeError: ``cls`` is not a concrete :class:`NeuralProcess` subclass, its
            ``config_class`` is not a frozen dataclass, or ``replace`` is not a bool.
        ValueError: a bad ``name``, or one registered already (to another class) and
            ``replace`` is false.
    """
    if isinstance(cls, type) and issubclass(cls, NeuralProcess):  # the family's own rules; the rest below
        config_cls = cls.config_class
        if not (isinstance(config_cls, type) and is_dataclass(config_cls) and config_cls.__dataclass_params__.frozen):
            raise TypeError(f"cls.config_class must be a frozen dataclass (e.g. a subclass of NPConfig): a model's "
                            f"config is checked once, when it is made, and saved on its checkpoint's card as it is; "
                            f"got {config_cls!r}")
    return register_class(_MODELS, cls, NeuralProcess, getattr(cls, "name", None), replace,
                          "npbandit.surrogates.NeuralProcess")


def available_models() -> list[str]:
    """Names accepted by :func:`build`: the shipped families and those added with :func:`register_model`."""
    return sorted(_MODELS)


def build(name: str, x_dim: int, y_dim: int, *, size: str = "paper", **config: Any) -> NeuralProcess:
    """Build an untrained surrogate.

    Args:
        name: one of :func:`available_models`.
        x_dim, y_dim: input and output dimensions.
        size: ``"paper"`` (the papers' defaults), ``"small"`` or ``"tiny"``.
        **config: overrides of individual config fields (e.g. ``n_latents=16``);
            unknown fields raise ``TypeError``.

    Returns:
        The model, in training mode, with freshly initialised weights.

    Raises:
        ValueError: an unknown ``name`` or ``size``, or a config value the config refuses.
        TypeError: a config field the model does not have.
    """
    model_cls = _MODELS[_model_name(name)]
    return model_cls(x_dim, y_dim, model_config(name, size=size, **config))


def _model_name(name: Any) -> str:
    if not isinstance(name, str) or name.lower() not in _MODELS:
        raise unregistered("name", name, available_models(), "npbandit.surrogates.register_model")
    return name.lower()


def model_config(name: str, *, size: str = "paper", **config: Any) -> Any:
    """The config :func:`build` gives model ``name`` with ``size`` and the overrides
    ``config`` (unknown fields raise ``TypeError``): two calls that resolve to equal
    configs build the same architecture."""
    model_cls = _MODELS[_model_name(name)]
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    config_cls = model_cls.config_class
    known = {f.name for f in fields(config_cls)}
    unknown = sorted(set(config) - known)
    if unknown:
        raise TypeError(f"unknown config field(s) {unknown} for {name!r}; expected some of {sorted(known)}")
    values = {k: v for k, v in SIZES[size].items() if k in known}
    values.update(config)
    return config_cls(**values)
