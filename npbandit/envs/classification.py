"""``npbandit/ClassificationBandit-v0``: a labelled data set as a contextual bandit.

The classification-to-bandit construction of Riquelme et al. (2018), "Deep Bayesian
Bandits Showdown": each round shows the features of one row of the data set; each class
is an arm; playing the row's class pays 1, any other arm 0.

One episode is one run of ``horizon`` rounds, then ``truncated=True``. ``reset`` draws
the run's rows (``horizon + 1`` row indices, uniformly with replacement, so a run may be
longer than the data set) from a generator it seeds from ``self.np_random``, so every
policy can be replayed on the same rows with the same seed, and a policy's own generator
seeded with that seed does not share their stream.

* Observation: the row's features, standardised by the data set's own per-feature mean
  and std (population std, over all its rows), as float32, in a ``Box`` whose bounds are
  each standardised feature's minimum and maximum over the data set. A feature constant
  over the data set is centred to 0 (its std taken as 1) and its interval is ``[-1, 1]``.
* Action: ``Discrete(n_classes)``; arm ``a`` is the ``a``-th class in sorted order
  (``classes``).
* ``info``: ``t``, ``optimal_action`` (the row's class), ``row`` (its index in the data
  set), ``regret`` and ``expected_regret`` (both ``1 - reward``: given the round's row the
  right arm is known, so the expected regret of a policy is ``1 - P(correct)``).
  ``reset``'s ``info`` holds the first round's ``row``.

Data: ``X`` and ``y`` of one's own (:func:`read_csv` reads them from a CSV file), or
``dataset=`` one of :data:`DATASETS` -- the data sets scikit-learn bundles (``iris``,
``wine``, ``breast-cancer``, ``digits``; read from the installed package, no download) and
``synthetic``, :func:`sklearn.datasets.make_classification` with a fixed seed
(:data:`SYNTHETIC`). Those need scikit-learn (the ``bench`` extra).
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.validation import check_arm, check_int, check_options, check_render_mode

__all__ = ["ClassificationBanditEnv", "DATASETS", "SYNTHETIC", "load_dataset", "read_csv", "CsvData"]

#: the named data sets (``dataset=``)
DATASETS = ("iris", "wine", "breast-cancer", "digits", "synthetic")
#: the arguments of ``make_classification`` behind ``dataset="synthetic"``
SYNTHETIC = {"n_samples": 10000, "n_features": 20, "n_informative": 10, "n_redundant": 4, "n_classes": 5,
             "n_clusters_per_class": 2, "class_sep": 1.0, "random_state": 0}


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The features ``[n, d]`` (float64) and labels ``[n]`` of the named data set (:data:`DATASETS`).

    Raises:
        ValueError: an unknown name.
        ImportError: scikit-learn is not installed (the ``bench`` extra).
    """
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {DATASETS}, got {name!r}")
    try:
        from sklearn import datasets
    except ImportError as err:
        raise ImportError(f"dataset={name!r} needs scikit-learn: pip install -e '.[bench]' in the clone "
                          "(or pass X and y of your own)") from err
    if name == "synthetic":
        X, y = datasets.make_classification(**SYNTHETIC)
    else:
        loader = {"iris": datasets.load_iris, "wine": datasets.load_wine,
                  "breast-cancer": datasets.load_breast_cancer, "digits": datasets.load_digits}[name]
        X, y = loader(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


@dataclass(frozen=True, eq=False)
class CsvData:
    """A labelled data set read from a CSV file (:func:`read_csv`).

    Attributes:
        X: the feature columns, ``[n, d]`` float64, in the file's column order.
        y: each row's label ``[n]``, the label column's text (arm ``a`` is the ``a``-th
            label in sorted text order, as :class:`ClassificationBanditEnv` numbers them).
        path: the file, resolved to an absolute path.
        label_column: the column the labels came from.
        features: the names of the feature columns, in order.
        sha256: the SHA-256 (hex) of the file's bytes as read, those the data was parsed from.
    """

    X: np.ndarray
    y: np.ndarray
    path: Path
    label_column: str
    features: tuple[str, ...]
    sha256: str


def read_csv(path: Any, label_column: str) -> CsvData:
    """A labelled data set from a CSV file: a header row naming the columns, then one row
    per example; ``label_column`` holds the labels (any text), every other column is a
    feature and must hold a finite number in every row, or ``True`` / ``False`` (any case)
    in every row, read as 1.0 / 0.0 (a bool column as pandas writes it).

    The file is read once: its hash (:attr:`CsvData.sha256`) is of the bytes the data was
    parsed from. It is UTF-8 text (a byte-order mark is allowed) in the ``csv`` module's
    default dialect: commas, double quotes (which may follow a space after the comma).
    Blank lines are not rows; a cell's surrounding whitespace is not part of it. Nothing is
    dropped or filled: a missing or NaN feature, a missing label, a row of another length
    than the header are refused.

    Raises:
        TypeError: ``path`` not a str or ``os.PathLike``, ``label_column`` not a str.
        FileNotFoundError: no file at ``path``.
        ValueError: a file that is not UTF-8 text, has no header or no rows, leaves a
            column without a name (a trailing comma in the header) or repeats a column name;
            ``label_column`` not among the columns, or no other column; a row of another
            length than the header; a feature that is not a number, NaN or infinite, or a
            column mixing True/False with numbers; an empty label; fewer than 2 distinct
            labels (one arm each).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    if not isinstance(label_column, str):
        raise TypeError(f"label_column must be a str (a column name), got {type(label_column).__name__}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path {str(path)!r}: no such file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text: {err}") from None
    reader = csv.reader(io.StringIO(text, newline=""), skipinitialspace=True)
    rows: list[tuple[int, list[str]]] = []  # (line of the file, cells)
    try:
        for cells in reader:
            if cells and any(cell.strip() for cell in cells):
                rows.append((reader.line_num, [cell.strip() for cell in cells]))
    except csv.Error as err:
        raise ValueError(f"{path} is not readable as CSV (line {reader.line_num}): {err}") from None
    if not rows:
        raise ValueError(f"{path} is empty: a CSV file of a data set starts with a header row naming its columns")
    (_, header), body = rows[0], rows[1:]
    _check_names(path, header)
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise ValueError(f"{path}'s header names column(s) {', '.join(map(repr, repeated))} more than once")
    if label_column not in header:
        raise ValueError(f"label_column {label_column!r} is not a column of {path}; its columns: "
                         f"{', '.join(header)}{_header_hint(header)}")
    if len(header) < 2:
        raise ValueError(f"{path} has the label column {label_column!r} alone: no feature column")
    if not body:
        raise ValueError(f"{path} has a header and no rows")
    for line, cells in body:
        if len(cells) != len(header):
            raise ValueError(f"{path}, line {line}: {len(cells)} fields, but the header names {len(header)} columns")
    label_at = header.index(label_column)
    features = tuple(name for name in header if name != label_column)
    X = np.empty((len(body), len(features)), dtype=np.float64)
    for j, name in enumerate(features):
        at = header.index(name)
        X[:, j] = _feature_column(path, name, [(line, cells[at]) for line, cells in body], label_column)
        bad = [body[i][0] for i in np.flatnonzero(~np.isfinite(X[:, j]))]
        if bad:
            raise ValueError(f"feature column {name!r} of {path} has {len(bad)} missing, NaN or infinite value(s) "
                             f"(line(s) {', '.join(map(str, bad[:5]))}{', ...' if len(bad) > 5 else ''}); "
                             "every feature must be a finite number")
    y = np.array([cells[label_at] for _, cells in body])
    empty = [line for line, cells in body if not cells[label_at]]
    if empty:
        raise ValueError(f"label column {label_column!r} of {path} is empty on {len(empty)} line(s) "
                         f"({', '.join(map(str, empty[:5]))}{', ...' if len(empty) > 5 else ''})")
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(f"label column {label_column!r} of {path} holds {len(classes)} class ({str(classes[0])!r}); "
                         "a bandit needs at least 2, one arm each")
    return CsvData(X, y, path.resolve(), label_column, features, hashlib.sha256(raw).hexdigest())


#: the cells of a bool feature column (compared in lower case), as pandas and R write True / False
BOOL_CELLS = {"true": 1.0, "false": 0.0}


def _feature_column(path: Path, name: str, cells: list[tuple[int, str]], label_column: str) -> np.ndarray:
    """The values ``[n]`` of feature column ``name`` from its ``(line, cell)`` pairs: numbers,
    or, in a column whose every filled cell is ``True`` / ``False`` (any case, as pandas and R
    write a bool column), 1.0 / 0.0, as pandas reads such a column and scikit-learn takes it.
    An empty cell is NaN (a missing value, refused by the caller naming its lines); a cell
    that is neither, or bools mixed with numbers, is refused naming the line."""
    values = np.full(len(cells), np.nan)  # an empty cell stays NaN: a missing value, counted by the caller
    bools = [(line, cell) for line, cell in cells if cell.lower() in BOOL_CELLS]
    for i, (line, cell) in enumerate(cells):
        if not cell or cell.lower() in BOOL_CELLS:
            continue
        try:
            values[i] = float(cell)
        except ValueError:
            raise ValueError(f"feature column {name!r} of {path} is not numeric: line {line} holds {cell!r} "
                             f"(every column but the label column {label_column!r} is a feature, a number or "
                             "True/False)") from None
    if not bools:
        return values
    if len(bools) < sum(1 for _, cell in cells if cell):
        line, cell = bools[0]
        raise ValueError(f"feature column {name!r} of {path} mixes True/False with numbers: line {line} holds "
                         f"{cell!r}; a feature column holds numbers, or True/False alone (read as 1/0)")
    for i, (_, cell) in enumerate(cells):
        if cell:
            values[i] = BOOL_CELLS[cell.lower()]
    return values


def _check_names(path: Path, header: list[str]) -> None:
    """Refuse a header with a column of no name: a trailing comma (``a,b,species,``, as some
    spreadsheets write) makes an empty last column, which would otherwise be read as a
    feature of missing values, or rows one field short of the header."""
    empty = [j for j, name in enumerate(header) if not name]
    if not empty:
        return
    j = empty[0]
    if j == len(header) - 1 and len(header) > 1:
        raise ValueError(f"{path}'s header ends with a comma: its last column (column {j + 1}, after "
                         f"{header[j - 1]!r}) has no name; remove the trailing comma from the header line (and from "
                         "every row that has one), or name the column")
    if j == 0:
        raise ValueError(f"{path}'s header starts with a comma: its first column has no name (an index column, as "
                         "pandas' to_csv writes one, looks so); name it in the header row, or remove the column (its "
                         "field in every row too)")
    raise ValueError(f"{path}'s header has no name for column {j + 1}, between {header[j - 1]!r} and "
                     f"{header[j + 1]!r} (two commas in a row); name it in the header row, or remove the column (its "
                     "field in every row too)")


def _header_hint(header: list[str]) -> str:
    """Why ``header`` may not name the columns meant: a first row of numbers (a file without a
    header row) or one column holding ``;`` or a tab (fields not separated by commas); ``""``."""
    def number(cell: str) -> bool:
        try:
            float(cell)
        except ValueError:
            return False
        return True

    if any(map(number, header)):
        return " (the first line is the header row naming the columns; this one holds numbers: add a header row)"
    if len(header) == 1 and any(sep in header[0] for sep in ";\t"):
        return " (fields are separated by commas)"
    return ""


def _check_data(X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(features [n, d] float64, arm of each row [n], classes)``; errors name ``X`` / ``y``."""
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"X must be a 2-D array of real numbers: {err}") from None
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be a 2-D array [rows, features] with at least one of each, got shape {X.shape}")
    bad = np.argwhere(~np.isfinite(X))  # [k, 2] (row, column), in row order
    if len(bad):
        where = ", ".join(f"X[{i}, {j}] = {float(X[i, j])!r}" for i, j in bad[:5].tolist())
        raise ValueError(f"X must be finite; {len(bad)} value(s) are NaN or infinite ({where}"
                         f"{', ...' if len(bad) > 5 else ''})")
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != len(X):
        raise ValueError(f"y must be 1-D with one label per row of X ({len(X)}), got shape {y.shape}")
    # a missing label (NaN, None) would become a class of its own, an arm that pays its rows
    missing = [i for i, label in enumerate(y.tolist())
               if label is None or (isinstance(label, float) and label != label)]
    if missing:
        raise ValueError(f"y must hold a label for every row; {len(missing)} are NaN or None (rows {missing[:5]}"
                         f"{', ...' if len(missing) > 5 else ''})")
    try:
        classes, arms = np.unique(y, return_inverse=True)
    except TypeError as err:  # labels of kinds that do not compare (1 and "a")
        raise ValueError(f"y's labels must be values that sort together (arm a is the a-th class in sorted order): "
                         f"{err}") from None
    if len(classes) < 2:
        raise ValueError(f"y must hold at least 2 classes (one arm each), got {classes.tolist()}")
    return X, arms.astype(np.int64), classes


class ClassificationBanditEnv(gym.Env):
    """A labelled data set as a contextual bandit (see the module docstring).

    Args:
        X: the features, ``[n, d]`` real numbers (``None`` with ``dataset``).
        y: the labels, ``[n]``, any values that sort together, none missing (NaN, None);
            at least two classes.
        dataset: the name of a bundled data set (:data:`DATASETS`) instead of ``X`` and ``y``.
        horizon: rounds per episode, a positive int.
        render_mode: ``None`` only (nothing is drawn).

    Attributes:
        features: the standardised features ``[n, d]`` (float32), the observations.
        labels: each row's arm ``[n]``.
        classes: the label of each arm.
        mean, std: the per-feature statistics the features were standardised by.

    Raises:
        ValueError: both or neither of ``(X, y)`` and ``dataset``; data or arguments
            outside the ranges above.
        ImportError: a named data set without scikit-learn installed.
    """

    metadata = {"render_modes": []}
    #: the parameters that define the task (:meth:`task_params`): a named data set's name, or
    #: one's own data's fingerprint and shape, and, for data a sweep read from a CSV file
    #: (:func:`npbandit.loop.csv_task`, ``npbandit bandit --dataset FILE``), the file's name it
    #: records as ``csv``: what ``npbandit report`` groups and names runs by
    TASK_PARAMS = ("dataset", "data", "context_dim", "n_arms", "csv")

    def __init__(self, X: Any = None, y: Any = None, *, dataset: str | None = None, horizon: int = 2000,
                 render_mode: str | None = None) -> None:
        check_render_mode(render_mode)
        self.render_mode = render_mode
        if (dataset is None) == (X is None and y is None):
            raise ValueError("give either X and y or dataset=, not both or neither")
        if dataset is None and (X is None or y is None):
            raise ValueError("X and y must be given together")
        self.dataset = dataset
        if dataset is not None:
            X, y = load_dataset(dataset)
        X, self.labels, self.classes = _check_data(X, y)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.mean = X.mean(0)
        std = X.std(0)
        constant = std == 0
        self.std = np.where(constant, 1.0, std)
        self.features = ((X - self.mean) / self.std).astype(np.float32)
        low = np.where(constant, -1.0, self.features.min(0))
        high = np.where(constant, 1.0, self.features.max(0))
        self.observation_space = gym.spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(len(self.classes))
        self.n_arms, self.context_dim = len(self.classes), X.shape[1]
        self.t = 0
        self._drawn = False  # no run drawn before the first reset

    def task_params(self) -> dict[str, Any]:
        """What defines the task (:data:`TASK_PARAMS`), as :func:`~npbandit.loop.run_episode`
        records it in a run's ``env_params``: ``{"dataset": name}`` for a named data set;
        for ``X`` and ``y`` of one's own, ``{"data", "context_dim", "n_arms"}``, ``data`` the
        first 12 hex digits of a SHA-256 of the observations (the standardised features) and
        each row's arm, so that runs on two data sets of one shape are told apart."""
        if self.dataset is not None:
            return {"dataset": self.dataset}
        digest = hashlib.sha256()
        for array in (np.asarray(self.features.shape, np.int64), self.features, self.labels.astype(np.int64)):
            digest.update(np.ascontiguousarray(array).tobytes())
        return {"data": digest.hexdigest()[:12], "context_dim": self.context_dim, "n_arms": self.n_arms}

    def render(self) -> None:
        """Draw nothing and return ``None``: Gymnasium's convention for an environment made
        with ``render_mode=None``, the only mode this one takes (so a generic loop that calls
        ``render()`` runs on it)."""
        return None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        check_options(options, ())
        # the rows come from a generator seeded by two draws of ``np_random``, not from ``np_random``
        # itself: a policy seeded with the same seed (``run_episode`` seeds both) owns a generator whose
        # stream is ``np_random``'s, and on a data set sorted by class its uniform arm draws would
        # then be the rows' classes
        rows = np.random.default_rng(self.np_random.integers(2**63, size=2))
        self.rows = rows.integers(len(self.labels), size=self.horizon + 1)
        self.t = 0
        self._drawn = True
        return self.features[self.rows[0]].copy(), {"row": int(self.rows[0])}

    def step(self, action: Any):
        """Pay arm ``action`` for this round's row: ``(next context, reward, False,
        truncated, info)`` (see the module docstring for ``info``).

        Raises:
            ValueError: ``action`` is not an arm.
            RuntimeError: before the first ``reset``, or after the last round.
        """
        if not self._drawn:
            raise RuntimeError("call reset() before step(): no run has been drawn")
        if self.t >= self.horizon:
            raise RuntimeError("the episode is over (truncated); call reset()")
        action = check_arm("action", action, self.n_arms)
        row = int(self.rows[self.t])
        best = int(self.labels[row])
        reward = 1.0 if action == best else 0.0
        info = {"t": self.t, "row": row, "optimal_action": best, "regret": 1.0 - reward,
                "expected_regret": 1.0 - reward}
        self.t += 1
        return self.features[self.rows[self.t]].copy(), reward, False, self.t >= self.horizon, info
