"""``npbandit/BlackBox-v0``: black-box optimisation as a Gymnasium environment.

``gym.make("npbandit/BlackBox-v0", function="branin")`` wraps a named
``botorch.test_functions`` problem; ``objective=callable, bounds=...`` wraps any
function of one point. Actions live in the unit cube ``[0, 1]^d`` and are mapped
affinely onto ``bounds`` (2 x d, lower row then upper row, as in BoTorch).

* Reward: the objective value, negated when ``minimize=True`` (the default, as for
  BoTorch's test problems), so policies always maximise reward.
* Observation: the last evaluated action and its reward (zeros before the first step).
* ``info``: ``x`` (the evaluated point in the original bounds), ``value``,
  ``best_value`` so far and, when the optimum is known, ``simple_regret``.
* An objective that raises or returns NaN/inf raises :class:`ObjectiveError` from
  ``step``; nothing non-finite ever reaches a policy.
* One episode = ``budget`` evaluations, then ``truncated=True``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch

__all__ = ["BlackBoxEnv", "ObjectiveError", "available_functions", "make_test_function"]


class ObjectiveError(RuntimeError):
    """The objective raised or returned a non-finite value at a point."""

    def __init__(self, message: str, x: np.ndarray) -> None:
        super().__init__(message)
        self.x = x


def available_functions() -> list[str]:
    """Names of ``botorch.test_functions`` synthetic problems usable by name."""
    from botorch.test_functions import synthetic

    names = []
    for name, cls in inspect.getmembers(synthetic, inspect.isclass):
        if issubclass(cls, synthetic.SyntheticTestFunction) and cls is not synthetic.SyntheticTestFunction \
                and not inspect.isabstract(cls):
            names.append(name.lower())
    return sorted(names)


def make_test_function(name: str, dim: int | None = None):
    """A ``botorch.test_functions`` problem by (case-insensitive) name, e.g. ``"branin"``, ``"hartmann"``."""
    from botorch.test_functions import synthetic

    if not isinstance(name, str):
        raise TypeError(f"function must be a name (str), got {type(name).__name__}")
    classes = {n.lower(): c for n, c in inspect.getmembers(synthetic, inspect.isclass)}
    if name.lower() not in available_functions():
        raise ValueError(f"function must be one of {available_functions()}, got {name!r}")
    cls = classes[name.lower()]
    kwargs = {"dim": dim} if dim is not None else {}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as err:
        raise ValueError(f"cannot build {name!r} with dim={dim}: {err}") from None


def as_bounds(bounds: Any, name: str = "bounds") -> np.ndarray:
    """Validate a 2 x d box (lower row, upper row) and return it as float64 numpy."""
    try:
        array = np.asarray(bounds.detach().cpu() if isinstance(bounds, torch.Tensor) else bounds, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 2 x d array of numbers (lower row, upper row)") from None
    if array.ndim != 2 or array.shape[0] != 2 or array.shape[1] < 1:
        raise ValueError(f"{name} must have shape 2 x d (lower row, upper row), got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite")
    if not (array[1] > array[0]).all():
        raise ValueError(f"{name}: every lower bound must be below its upper bound, got {array.tolist()}")
    return array


class BlackBoxEnv(gym.Env):
    """Sequential evaluation of a black-box function (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, function: str | None = None, objective: Callable[[np.ndarray], float] | None = None,
                 bounds: Any = None, dim: int | None = None, minimize: bool = True, budget: int = 100,
                 noise_std: float = 0.0, optimal_value: float | None = None) -> None:
        if (function is None) == (objective is None):
            raise ValueError("pass exactly one of function=<name> or objective=<callable>")
        if not isinstance(budget, int) or budget < 1:
            raise ValueError(f"budget must be a positive int, got {budget!r}")
        if noise_std < 0:
            raise ValueError(f"noise_std must be >= 0, got {noise_std}")
        if function is not None:
            problem = make_test_function(function, dim)
            self.name = function.lower()
            self._call = lambda x: float(problem.evaluate_true(torch.as_tensor(x, dtype=torch.float64)[None])[0])
            self.bounds = as_bounds(problem.bounds) if bounds is None else as_bounds(bounds)
            self.optimal_value = getattr(problem, "_optimal_value", None) if optimal_value is None else optimal_value
        else:
            if not callable(objective):
                raise TypeError(f"objective must be callable, got {type(objective).__name__}")
            if bounds is None:
                raise ValueError("bounds (2 x d) are required with objective=<callable>")
            self.name = getattr(objective, "__name__", "objective")
            self._call = objective
            self.bounds = as_bounds(bounds)
            self.optimal_value = optimal_value
        self.minimize = bool(minimize)
        self.budget = budget
        self.noise_std = float(noise_std)
        self.dim = self.bounds.shape[1]
        self.action_space = gym.spaces.Box(0.0, 1.0, shape=(self.dim,), dtype=np.float64)
        low = np.concatenate([np.zeros(self.dim), [-np.inf]])
        high = np.concatenate([np.ones(self.dim), [np.inf]])
        self.observation_space = gym.spaces.Box(low, high, dtype=np.float64)
        self.t = 0
        self.best_value: float | None = None

    def to_bounds(self, action: np.ndarray) -> np.ndarray:
        """Unit-cube action -> point in the original bounds."""
        return self.bounds[0] + np.asarray(action, dtype=np.float64) * (self.bounds[1] - self.bounds[0])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.t = 0
        self.best_value = None
        return np.zeros(self.dim + 1), {"bounds": self.bounds.copy()}

    def step(self, action):
        action = np.asarray(action, dtype=np.float64).reshape(-1)
        if action.shape != (self.dim,) or not np.isfinite(action).all() or (action < 0).any() or (action > 1).any():
            raise ValueError(f"action must be a finite point of [0, 1]^{self.dim}, got {action.tolist()}")
        if self.t >= self.budget:
            raise RuntimeError("the budget is spent; call reset()")
        x = self.to_bounds(action)
        self.t += 1  # a failed evaluation spends budget too
        try:
            value = float(self._call(x.copy()))
        except Exception as err:  # the user's objective: report, never hide
            raise ObjectiveError(f"objective raised {type(err).__name__}: {err} at x={x.tolist()}", x) from err
        if not np.isfinite(value):
            raise ObjectiveError(f"objective returned {value} at x={x.tolist()}", x)
        if self.noise_std:
            value += self.noise_std * float(self.np_random.standard_normal())
        better = self.best_value is None or (value < self.best_value if self.minimize else value > self.best_value)
        if better:
            self.best_value = value
        reward = -value if self.minimize else value
        info = {"x": x, "value": value, "best_value": self.best_value, "t": self.t - 1}
        if self.optimal_value is not None:
            info["simple_regret"] = abs(self.best_value - self.optimal_value)
        return np.concatenate([action, [reward]]), reward, False, self.t >= self.budget, info
