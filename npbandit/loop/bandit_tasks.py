"""The bandits a sweep plays (:func:`~npbandit.loop.run_bandit_sweep`): a :class:`BanditTask`
says which environment to make and what its runs record; :func:`wheel_task`,
:func:`dataset_task` and :func:`csv_task` make npbandit's own."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.validation import check_real

__all__ = ["BanditTask", "wheel_task", "dataset_task", "csv_task", "exact_delta"]

WHEEL_ID = "npbandit/WheelBandit-v0"
CLASSIFICATION_ID = "npbandit/ClassificationBandit-v0"


@dataclass(frozen=True, eq=False)
class BanditTask:
    """One bandit of a sweep: every policy x seed of the sweep is a run on it.

    A task travels to an executor's workers as it is (pickled), so it holds what makes the
    environment, not the environment: a CSV file's data travels as arrays, and a worker
    needs no copy of the file.

    Attributes:
        env_id: a registered Gymnasium id (``npbandit/WheelBandit-v0``, an id of one's own).
        env_kwargs: ``gymnasium.make``'s keyword arguments but ``horizon``, which is the
            sweep's ``steps``.
        env_params: what each run records of the environment in its ``env_params`` besides
            ``horizon`` and what the environment's ``task_params()`` says (the wheel's
            ``delta``; a CSV file's path and hash): part of what makes two runs the same run
            (:func:`~npbandit.storage.run_key`), so a sweep run again skips it. Every
            argument of ``env_kwargs`` that is a plain value (a number, str, bool or ``None``,
            or a list or dict of them) is recorded too, under its name, unless ``env_params``
            gives that name: two tasks of one id with other arguments are two tasks. Any
            other argument (an array, an object) is not: say what it is in ``env_params``, or
            in the environment's ``task_params()``.
        label: how the sweep's lines and progress bars name the task (``delta=0.9``,
            ``dataset=wine``).
        what: what a sweep over such tasks varies, as its line on skipped runs says it
            (``delta``, ``data set``).
    """

    env_id: str
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    env_params: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    what: str = "task"

    def __post_init__(self) -> None:
        if not isinstance(self.env_id, str) or not self.env_id:
            raise TypeError(f"env_id must be a registered Gymnasium id (a non-empty str), got {self.env_id!r}")
        for name in ("env_kwargs", "env_params"):
            value = getattr(self, name)
            if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
                raise TypeError(f"{name} must be a mapping with str keys, got {type(value).__name__}")
            if "horizon" in value:
                raise ValueError(f"{name} must not hold 'horizon': a sweep's runs take its steps")
        for name in ("label", "what"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, got {type(getattr(self, name)).__name__}")

    def make(self, steps: int) -> gym.Env:
        """The environment, ``steps`` rounds an episode."""
        return gym.make(self.env_id, **self.env_kwargs, horizon=steps)

    def run_info(self, steps: int) -> dict[str, Any]:
        """What a run of ``steps`` rounds on this task hands :func:`~npbandit.loop.run_episode`:
        its ``env_params``, the plain values of ``env_kwargs`` first (see the class docstring)."""
        plain = {name: _plain(value) for name, value in self.env_kwargs.items() if _is_plain(value)}
        return {"kind": "bandit", "env_id": self.env_id, "env_params": {**plain, **self.env_params, "horizon": steps}}


def _is_plain(value: Any) -> bool:
    """Whether ``value`` is a number (NumPy's too), str, bool or ``None``, or a list, tuple or
    str-keyed dict of such values: what a run records of an environment's arguments."""
    if value is None or isinstance(value, (bool, int, float, str, np.bool_, np.integer, np.floating)):
        return True
    if isinstance(value, (list, tuple)):
        return all(map(_is_plain, value))
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return False


def _plain(value: Any) -> Any:
    """A plain ``value`` (:func:`_is_plain`) in Python's own types, as JSON records it."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def exact_delta(name: str, delta: Any) -> float:
    """``delta`` as the float a run records, a real number in ``[0, 1]``; a NumPy float of a
    narrower type than float64 (``np.float32(0.9)``) whose value is not the decimal it prints as
    is refused, naming ``name``: its runs would record ``0.8999999761581421``, a wheel task apart
    from ``0.9``'s (its own rows in ``npbandit report``, its runs not found completed by a sweep
    of ``0.9``). Such a float whose value is exact (``np.float32(0.5)``) is taken.

    Raises:
        ValueError: ``delta`` is not a number in ``[0, 1]``, or a narrow float as above.
    """
    value = check_real(name, delta, low=0.0, high=1.0)
    if isinstance(delta, np.floating) and not isinstance(delta, float):  # float64 is a Python float; others are not
        shown = np.format_float_positional(delta, unique=True, trim="-")  # the shortest text of its own type
        if float(shown) != value:
            raise ValueError(f"{name} is a numpy.{type(delta).__name__} whose value is {value!r}, not {shown}: its "
                             f"runs would record {value!r}, a task apart from {shown}; pass a Python float ({shown}) "
                             "or a float64")
    return value


def wheel_task(delta: float) -> BanditTask:
    """The wheel bandit at ``delta`` (in ``[0, 1]``); its runs record ``delta``.

    Raises:
        ValueError: ``delta`` is not a number in ``[0, 1]``, or a NumPy float narrower than
            float64 whose value is not the decimal it prints as (:func:`exact_delta`).
    """
    delta = exact_delta("delta", delta)
    return BanditTask(WHEEL_ID, {"delta": delta}, {"delta": delta}, label=f"delta={delta}", what="delta")


def dataset_task(dataset: str) -> BanditTask:
    """The classification bandit of a data set scikit-learn bundles, or the synthetic one
    (:data:`~npbandit.envs.classification.DATASETS`); its runs record ``dataset``.

    Raises:
        ValueError: ``dataset`` is not one of ``DATASETS``.
    """
    from npbandit.envs.classification import DATASETS

    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {', '.join(DATASETS)}, got {dataset!r}")
    return BanditTask(CLASSIFICATION_ID, {"dataset": dataset}, {"dataset": dataset}, label=f"dataset={dataset}",
                      what="data set")


def csv_task(path: Any, label_column: str) -> BanditTask:
    """The classification bandit of a CSV file of one's own
    (:func:`~npbandit.envs.classification.read_csv`: ``label_column`` the labels, every
    other column a numeric feature), read once, here.

    Its runs record, besides the data's fingerprint and shape (the environment's
    ``task_params()``), the file's name (``csv``, what ``npbandit report`` shows), its
    absolute path (``csv_path``), the SHA-256 of its bytes (``csv_sha256``) and
    ``label_column``. The task is the data: a change to the file that changes the data read is
    another task, and a sweep run again after it runs again; the path and the bytes are where
    the data came from (:data:`~npbandit.storage.queries.SOURCE_PARAMS`), so the same data
    reached by another path (a copy in another directory) or in other bytes (other line ends)
    is the same task, its runs found completed, as ``npbandit report`` counts them in one row.

    Raises:
        FileNotFoundError, ValueError, TypeError: as ``read_csv``.
    """
    from npbandit.envs.classification import read_csv

    data = read_csv(path, label_column)
    params = {"csv": data.path.name, "csv_path": str(data.path), "csv_sha256": data.sha256,
              "label_column": label_column}
    return BanditTask(CLASSIFICATION_ID, {"X": data.X, "y": data.y}, params, label=f"dataset={data.path.name}",
                      what="data set")
