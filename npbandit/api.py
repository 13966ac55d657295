"""``npbandit.optimize``: Bayesian optimisation of a Python function in one call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from npbandit.envs.blackbox import BlackBoxEnv, as_bounds
from npbandit.loop import run_episode
from npbandit.policies.bo import ACQUISITIONS, BOPolicy, SobolPolicy
from npbandit.storage import DEFAULT_URL, RunLogger

__all__ = ["optimize", "OptimizeResult", "SURROGATES"]

#: short surrogate names -> checkpoint; "gp" and "random" are the baselines
SURROGATES = {"cmanp": "cmanp-bo", "gp": "gp", "random": "random"}


@dataclass(frozen=True)
class OptimizeResult:
    """Outcome of :func:`optimize`.

    Attributes:
        best_x: the best evaluated point, in the original bounds (numpy, shape ``[d]``).
        best_value: its objective value.
        history: one dict per evaluation: ``t``, ``x``, ``value``, ``best_value``,
            ``failed`` (in order of evaluation).
        run_id: the run's id in the database (``None`` when ``db=None``).
    """

    best_x: np.ndarray
    best_value: float
    history: list[dict[str, Any]]
    run_id: int | None


def optimize(objective: Callable[[Any], float], bounds: Any, surrogate: str = "cmanp", budget: int = 50,
             acquisition: str = "logei", minimize: bool = True, n_init: int | None = None, seed: int = 0,
             db: str | None = DEFAULT_URL, point_type: str = "numpy", on_error: str = "raise",
             progress: bool = True) -> OptimizeResult:
    """Optimise ``objective`` over the box ``bounds`` with a pretrained NP surrogate.

    Args:
        objective: a plain callable taking one point (a 1-D numpy array, or a torch
            tensor with ``point_type="torch"``) and returning a float.
        bounds: ``2 x d`` (lower row, upper row), as in BoTorch.
        surrogate: ``"cmanp"`` (the ``cmanp-bo`` checkpoint), any ``*-bo`` checkpoint
            name or path, ``"gp"`` (BoTorch ``SingleTaskGP``) or ``"random"`` (Sobol).
        budget: total evaluations, the initial design included.
        acquisition: ``"logei"``, ``"ucb"`` or ``"thompson"``.
        minimize: minimise (default) or maximise.
        n_init: initial Sobol points (default ``2d + 1``).
        seed: seeds the design and the acquisition optimisation.
        db: SQLAlchemy URL / SQLite path the run is logged to, or ``None``.
        on_error: an evaluation that raises or returns NaN/inf stops the run with
            :class:`~npbandit.envs.ObjectiveError` (``"raise"``) or is recorded as
            failed and skipped (``"skip"``).
    """
    if not callable(objective):
        raise TypeError(f"objective must be callable, got {type(objective).__name__}")
    box = as_bounds(bounds)
    d = box.shape[1]
    if not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be a positive int, got {budget!r}")
    if acquisition not in ACQUISITIONS:
        raise ValueError(f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r}")
    if point_type not in ("numpy", "torch"):
        raise ValueError(f"point_type must be 'numpy' or 'torch', got {point_type!r}")
    if not isinstance(surrogate, str):
        raise TypeError(f"surrogate must be a name, got {type(surrogate).__name__}")
    call = objective if point_type == "numpy" else (lambda x: objective(torch.as_tensor(x, dtype=torch.float64)))
    env = BlackBoxEnv(objective=call, bounds=box, minimize=minimize, budget=budget)
    env.name = getattr(objective, "__name__", "objective")
    if surrogate == "random":
        policy = SobolPolicy(d)
    else:
        model = SURROGATES.get(surrogate, surrogate)
        try:
            policy = BOPolicy(d, model=model, acquisition=acquisition, n_init=n_init)
        except FileNotFoundError as err:
            raise ValueError(f"surrogate must be one of {sorted(SURROGATES)} or a *-bo checkpoint: {err}") from None
    logger = None if db is None else RunLogger(db)
    info = {"kind": "bo", "env_id": "npbandit/BlackBox-v0",
            "env_params": {"objective": env.name, "bounds": box.tolist(), "minimize": minimize, "budget": budget}}
    result = run_episode(env, policy, seed=seed, logger=logger, run_info=info, on_error=on_error,
                         progress=progress, desc=f"optimize {env.name}")
    history = [{"t": r["t"], "x": env.to_bounds(r["action"]), "value": r["value"], "best_value": r.get("best_value"),
                "failed": r["failed"]} for r in result.steps]
    good = [h for h in history if not h["failed"]]
    if not good:
        raise RuntimeError("every evaluation failed; nothing to report")
    best = (min if minimize else max)(good, key=lambda h: h["value"])
    return OptimizeResult(np.asarray(best["x"]), float(best["value"]), history, result.run_id)
