"""The problems of the wide BO benchmark (bo_wide.py): BoTorch synthetic functions outside the
six-function suite, high-dimensional set-ups, and scikit-learn hyperparameter tuning.

Every problem is minimised and described once, in a neutral form: a tuple of :class:`Param`
(``float`` / ``int``, each optionally on a log scale, or ``choice`` among strings) and an
objective taking ``{name: value}``. bo_wide_methods.py translates the space to each method
(Optuna distributions, ``npbandit.space``, a unit cube with rounding for the BoTorch peers).

Constants a problem draws (which coordinates of an embedding are active, where a shifted
optimum lies) come from a generator seeded by the problem's label, so they are the same in
every process, run and method. Ackley, Griewank and Cosine-8 have their optimum at the
centre of their boxes, which a centre-biased method (or an embedding through the origin)
would hit for free; here their optimum is moved to a fixed random point
(``f(x - o)``, each coordinate of ``o`` uniform over the middle 70 % of its side).
"""


import functools
import math
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: evaluations per run by group (the issue's bars: 100 on synthetic and high-d, 40-100 trials when tuning)
BUDGETS = {"synthetic": 100, "high-d": 100, "tuning": 60, "mixed-choosing": 60}
#: groups chosen on, never part of the reporting suite (run only when named)
CHOOSING_GROUPS = ("mixed-choosing",)
#: a problem's definition, bumped when it changes so that runs of the old one are not summarised
#: (logreg-breast-cancer 2: liblinear seeded, its loss was not a function of the point alone)
PROBLEM_VERSIONS = {"logreg-breast-cancer": 2}
SHIFT_MARGIN = 0.15  # a shifted optimum's coordinates lie in [margin, 1 - margin] of their side
CV_FOLDS = 3
#: optima BoTorch states to fewer digits than the regret resolves (at (0.0898420, -0.7126564))
CLOSER_OPTIMA = {"SixHumpCamel": -1.0316284534898774}


@dataclass(frozen=True)
class Param:
    """One search dimension: ``kind`` is ``"float"``, ``"int"`` (``low``..``high`` inclusive,
    ``log`` for a log scale) or ``"choice"`` (one of ``choices``, unordered)."""

    name: str
    kind: str
    low: float = 0.0
    high: float = 1.0
    log: bool = False
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("float", "int", "choice"):
            raise ValueError(f"kind must be 'float', 'int' or 'choice', got {self.kind!r}")
        if self.kind == "choice" and len(self.choices) < 2:
            raise ValueError(f"a choice needs at least two choices, got {self.choices!r}")
        if self.kind != "choice" and not self.low < self.high:
            raise ValueError(f"{self.name}: low must be below high, got {self.low}, {self.high}")
        if self.log and self.low <= 0:
            raise ValueError(f"{self.name}: a log scale needs low > 0, got {self.low}")


@dataclass(frozen=True)
class Problem:
    """A minimised objective over ``space``; ``optimal_value``: its known minimum (simple
    regret is reported), ``None`` for tuning problems (the best loss is reported)."""

    label: str
    group: str  # "synthetic" | "high-d" | "tuning"
    space: tuple[Param, ...]
    objective: Callable[[dict], float]
    optimal_value: float | None
    loss: str  # what the value is, for the table
    optimizer: dict | None = None  # where the optimum is, where BoTorch says (so a test can check the set-up)

    @property
    def dim(self) -> int:
        return len(self.space)

    @property
    def continuous(self) -> bool:
        return all(p.kind == "float" and not p.log for p in self.space)

    @property
    def version(self) -> int:
        return PROBLEM_VERSIONS.get(self.label, 1)

    @property
    def budget(self) -> int:
        return BUDGETS[self.group]

    def __call__(self, params: dict) -> float:
        return float(self.objective(params))


def _rng(label: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(label.encode()))


def _box(bounds) -> tuple[Param, ...]:
    return tuple(Param(f"x{i}", "float", float(lo), float(hi)) for i, (lo, hi) in enumerate(bounds))


class _Synthetic:
    """A BoTorch test function on a vector of ``dim`` inputs, of which ``active`` (positions)
    are passed to the function after subtracting ``shift`` (zero unless shifted)."""

    def __init__(self, name: str, kwargs: dict, dim: int, active: list[int], shift: np.ndarray) -> None:
        self.name, self.kwargs, self.dim, self.active, self.shift = name, kwargs, dim, active, shift

    @functools.cached_property
    def function(self):
        from botorch.test_functions import synthetic

        return getattr(synthetic, self.name)(**self.kwargs)

    def __call__(self, params: dict) -> float:
        import torch

        x = np.array([params[f"x{i}"] for i in range(self.dim)], dtype=np.float64)
        z = torch.as_tensor(x[self.active] - self.shift, dtype=torch.float64)
        return float(self.function.evaluate_true(z.unsqueeze(0)))


def _synthetic(label: str, group: str, name: str, kwargs: dict | None = None, *, embed_in: int | None = None,
               shift: bool = False, sign: float = 1.0) -> Problem:
    from botorch.test_functions import synthetic

    fn = getattr(synthetic, name)(**(kwargs or {}))
    bounds = np.array(fn._bounds, dtype=np.float64)  # [d, 2]
    d = len(bounds)
    rng = _rng(label)
    offset = np.zeros(d)
    optimizer = np.asarray(fn._optimizers[0], dtype=np.float64) if getattr(fn, "_optimizers", None) else None
    if shift:  # the optimum moves from x* to o: f(x - (o - x*))
        u = rng.uniform(SHIFT_MARGIN, 1 - SHIFT_MARGIN, size=d)
        offset = bounds[:, 0] + u * (bounds[:, 1] - bounds[:, 0]) - optimizer
    where = None if optimizer is None else optimizer + offset
    if embed_in is None:
        active, space = list(range(d)), _box(bounds)
    else:  # the function's inputs at random positions; the other coordinates are inert, on [0, 1]
        active = sorted(rng.choice(embed_in, size=d, replace=False).tolist())
        full = np.tile([0.0, 1.0], (embed_in, 1))
        full[active] = bounds
        space = _box(full)
        if where is not None:
            where = np.put(full_point := np.full(embed_in, 0.5), active, where) or full_point
    kwargs = dict(kwargs or {})
    if shift:  # x - offset leaves the native box by up to one side: BoTorch checks inputs against its bounds
        width = bounds[:, 1] - bounds[:, 0]
        kwargs["bounds"] = list(zip((bounds[:, 0] - width).tolist(), (bounds[:, 1] + width).tolist()))
    objective = _Synthetic(name, kwargs, len(space), active, offset)
    if sign != 1.0:
        objective = _Negated(objective)
    where = None if where is None else {f"x{i}": float(v) for i, v in enumerate(where)}
    # BoTorch rounds some optima (to 1e-6, Six-Hump Camel to 1e-4) so that a point beats the stated optimum:
    # the optimum is the lowest of the stated value, a closer one where known and the value at the stated optimiser
    optimum = min(sign * float(fn.optimal_value), sign * CLOSER_OPTIMA[name] if name in CLOSER_OPTIMA else math.inf,
                  math.inf if where is None else objective(where))
    return Problem(label, group, space, objective, optimum, "simple regret", where)


class _Negated:
    def __init__(self, inner) -> None:
        self.inner = inner

    def __call__(self, params: dict) -> float:
        return -self.inner(params)


def synthetic_problems() -> list[Problem]:
    """BoTorch's synthetic functions that the six-function suite (bo.py) does not use, at the
    dimensions the issue names; Cosine-8 is a maximisation in BoTorch, negated here."""
    return [
        _synthetic("michalewicz5", "synthetic", "Michalewicz", {"dim": 5}),
        _synthetic("michalewicz10", "synthetic", "Michalewicz", {"dim": 10}),
        _synthetic("griewank8", "synthetic", "Griewank", {"dim": 8}, shift=True),
        _synthetic("styblinski-tang8", "synthetic", "StyblinskiTang", {"dim": 8}),
        _synthetic("powell8", "synthetic", "Powell", {"dim": 8}),
        _synthetic("dixon-price8", "synthetic", "DixonPrice", {"dim": 8}),
        _synthetic("shekel4", "synthetic", "Shekel"),
        _synthetic("six-hump-camel2", "synthetic", "SixHumpCamel"),
        _synthetic("cosine8", "synthetic", "Cosine8", shift=True, sign=-1.0),
    ]


def high_d_problems() -> list[Problem]:
    """Hartmann-6 in 30 and 60 inputs, Branin in 30 and 100 (the rest inert), and Ackley
    (optimum shifted), Levy and Rosenbrock at d = 12, 30 and 60 on BoTorch's boxes."""
    problems = [_synthetic("hartmann6-in30", "high-d", "Hartmann", {"dim": 6}, embed_in=30),
                _synthetic("hartmann6-in60", "high-d", "Hartmann", {"dim": 6}, embed_in=60),
                _synthetic("branin-in30", "high-d", "Branin", embed_in=30),
                _synthetic("branin-in100", "high-d", "Branin", embed_in=100)]
    for d in (12, 30, 60):
        problems += [_synthetic(f"ackley{d}", "high-d", "Ackley", {"dim": d}, shift=True),
                     _synthetic(f"levy{d}", "high-d", "Levy", {"dim": d}),
                     _synthetic(f"rosenbrock{d}", "high-d", "Rosenbrock", {"dim": d})]
    return problems


# -- scikit-learn tuning: 3-fold stratified CV, fixed folds, model random_state 0, one core --

@functools.cache
def _dataset(name: str):
    from sklearn import datasets

    return getattr(datasets, f"load_{name}")(return_X_y=True)


def _cv_loss(model, dataset: str, scoring: str) -> float:
    """Mean 3-fold CV loss of ``model`` (``scoring``: ``"log_loss"`` or ``"error"``), folds
    fixed by ``random_state=0``, inputs standardised inside each fold."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _dataset(dataset)
    folds = StratifiedKFold(CV_FOLDS, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        scores = cross_val_score(make_pipeline(StandardScaler(), model), X, y, cv=folds, n_jobs=1,
                                 scoring="neg_log_loss" if scoring == "log_loss" else "accuracy")
    return float(-scores.mean()) if scoring == "log_loss" else float(1.0 - scores.mean())


def _hgb(p: dict) -> float:
    from sklearn.ensemble import HistGradientBoostingClassifier

    return _cv_loss(HistGradientBoostingClassifier(
        learning_rate=p["learning_rate"], max_iter=int(p["max_iter"]), max_leaf_nodes=int(p["max_leaf_nodes"]),
        min_samples_leaf=int(p["min_samples_leaf"]), l2_regularization=p["l2_regularization"],
        max_features=p["max_features"], early_stopping=False, random_state=0), "breast_cancer", "log_loss")


def _svc(p: dict) -> float:
    from sklearn.svm import SVC

    return _cv_loss(SVC(C=p["C"], gamma=p["gamma"], kernel=p["kernel"], degree=int(p["degree"]), random_state=0),
                    "digits", "error")


def _mlp(p: dict) -> float:
    from sklearn.neural_network import MLPClassifier

    return _cv_loss(MLPClassifier(hidden_layer_sizes=(int(p["hidden"]),), activation=p["activation"],
                                  alpha=p["alpha"], learning_rate_init=p["learning_rate_init"],
                                  batch_size=int(p["batch_size"]), max_iter=200, random_state=0), "wine", "log_loss")


def _forest(p: dict) -> float:
    from sklearn.ensemble import RandomForestClassifier

    features = None if p["max_features"] == "all" else p["max_features"]
    return _cv_loss(RandomForestClassifier(
        n_estimators=int(p["n_estimators"]), max_depth=int(p["max_depth"]), min_samples_leaf=int(p["min_samples_leaf"]),
        max_features=features, criterion=p["criterion"], random_state=0, n_jobs=1), "wine", "log_loss")


def _logistic(p: dict) -> float:
    import sklearn
    from sklearn.linear_model import LogisticRegression

    # scikit-learn 1.8 deprecated penalty= for l1_ratio= (0: the L2 penalty, 1: L1); the same two models
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    penalty = ({"l1_ratio": 1.0 if p["penalty"] == "l1" else 0.0} if (major, minor) >= (1, 8)
               else {"penalty": p["penalty"]})
    return _cv_loss(LogisticRegression(
        C=p["C"], **penalty, solver="liblinear", fit_intercept=p["fit_intercept"] == "true",
        class_weight=None if p["class_weight"] == "none" else "balanced", max_iter=500, random_state=0),
        "breast_cancer", "log_loss")


def _sgd(p: dict) -> float:
    from sklearn.linear_model import SGDClassifier

    return _cv_loss(SGDClassifier(loss=p["loss"], penalty=p["penalty"], alpha=p["alpha"], l1_ratio=p["l1_ratio"],
                                  average=p["average"] == "true", max_iter=100, tol=1e-3, random_state=0),
                    "digits", "error")


def _knn(p: dict) -> float:
    from sklearn.neighbors import KNeighborsClassifier

    return _cv_loss(KNeighborsClassifier(n_neighbors=int(p["n_neighbors"]), weights=p["weights"], metric=p["metric"],
                                         algorithm=p["algorithm"], leaf_size=int(p["leaf_size"])),
                    "breast_cancer", "log_loss")


def _tree(p: dict) -> float:
    from sklearn.tree import DecisionTreeClassifier

    features = None if p["max_features"] == "all" else p["max_features"]
    return _cv_loss(DecisionTreeClassifier(
        criterion=p["criterion"], splitter=p["splitter"], max_depth=int(p["max_depth"]),
        min_samples_split=int(p["min_samples_split"]), min_samples_leaf=int(p["min_samples_leaf"]),
        max_features=features, random_state=0), "wine", "error")


def _extra_trees(p: dict) -> float:
    from sklearn.ensemble import ExtraTreesClassifier

    features = None if p["max_features"] == "all" else p["max_features"]
    return _cv_loss(ExtraTreesClassifier(
        n_estimators=int(p["n_estimators"]), max_depth=int(p["max_depth"]), max_features=features,
        criterion=p["criterion"], bootstrap=p["bootstrap"] == "true", random_state=0, n_jobs=1),
        "breast_cancer", "log_loss")


def mixed_choosing_problems() -> list[Problem]:
    """The choosing suite for how a mixed space wider than the checkpoint is searched (group
    ``mixed-choosing``): four scikit-learn models whose unordered choices make the unit cube
    8-10 columns wide. Chosen on, so never reported as the reporting suite: ``bo_wide.py``
    runs it only when named."""
    F, N, C = "float", "int", "choice"
    return [
        Problem("sgd-digits", "mixed-choosing", (
            Param("loss", C, choices=("hinge", "log_loss", "modified_huber")),
            Param("penalty", C, choices=("l2", "l1", "elasticnet")), Param("alpha", F, 1e-6, 1e-1, log=True),
            Param("l1_ratio", F, 0.0, 1.0), Param("average", C, choices=("false", "true"))),
            _sgd, None, "CV error"),
        Problem("knn-breast-cancer", "mixed-choosing", (
            Param("n_neighbors", N, 1, 64, log=True), Param("weights", C, choices=("uniform", "distance")),
            Param("metric", C, choices=("euclidean", "manhattan", "chebyshev")),
            Param("algorithm", C, choices=("ball_tree", "kd_tree", "brute")), Param("leaf_size", N, 5, 60)),
            _knn, None, "CV log loss"),
        Problem("tree-wine", "mixed-choosing", (
            Param("criterion", C, choices=("gini", "entropy", "log_loss")),
            Param("splitter", C, choices=("best", "random")), Param("max_depth", N, 1, 20),
            Param("min_samples_split", N, 2, 40, log=True), Param("min_samples_leaf", N, 1, 20, log=True),
            Param("max_features", C, choices=("sqrt", "log2", "all"))),
            _tree, None, "CV error"),
        Problem("extra-trees-breast-cancer", "mixed-choosing", (
            Param("n_estimators", N, 10, 100, log=True), Param("max_depth", N, 1, 20),
            Param("max_features", C, choices=("sqrt", "log2", "all")),
            Param("criterion", C, choices=("gini", "entropy", "log_loss")),
            Param("bootstrap", C, choices=("false", "true"))),
            _extra_trees, None, "CV log loss"),
    ]


def tuning_problems() -> list[Problem]:
    """Five scikit-learn models on the datasets scikit-learn bundles (one evaluation well under
    2 s on one core at the spaces' most expensive corners)."""
    F, N, C = "float", "int", "choice"
    return [
        Problem("hgb-breast-cancer", "tuning", (
            Param("learning_rate", F, 1e-3, 1.0, log=True), Param("max_iter", N, 10, 100),
            Param("max_leaf_nodes", N, 4, 32, log=True), Param("min_samples_leaf", N, 2, 64, log=True),
            Param("l2_regularization", F, 1e-6, 10.0, log=True), Param("max_features", F, 0.3, 1.0)),
            _hgb, None, "CV log loss"),
        Problem("svc-digits", "tuning", (
            Param("C", F, 1e-2, 1e3, log=True), Param("gamma", F, 1e-5, 1.0, log=True),
            Param("kernel", C, choices=("rbf", "poly", "sigmoid")), Param("degree", N, 2, 5)),
            _svc, None, "CV error"),
        Problem("mlp-wine", "tuning", (
            Param("hidden", N, 4, 128, log=True), Param("activation", C, choices=("relu", "tanh", "logistic")),
            Param("alpha", F, 1e-6, 1.0, log=True), Param("learning_rate_init", F, 1e-4, 1e-1, log=True),
            Param("batch_size", N, 16, 64)),
            _mlp, None, "CV log loss"),
        Problem("rf-wine", "tuning", (
            Param("n_estimators", N, 10, 100, log=True), Param("max_depth", N, 1, 20),
            Param("min_samples_leaf", N, 1, 10), Param("max_features", C, choices=("sqrt", "log2", "all")),
            Param("criterion", C, choices=("gini", "entropy"))),
            _forest, None, "CV log loss"),
        Problem("logreg-breast-cancer", "tuning", (
            Param("C", F, 1e-4, 1e3, log=True), Param("penalty", C, choices=("l1", "l2")),
            Param("fit_intercept", C, choices=("true", "false")),
            Param("class_weight", C, choices=("none", "balanced"))),
            _logistic, None, "CV log loss"),
    ]


@functools.cache
def all_problems() -> dict[str, Problem]:
    """Every problem by label, in table order (synthetic, high-d, tuning, then the choosing suite)."""
    return {p.label: p for p in synthetic_problems() + high_d_problems() + tuning_problems()
            + mixed_choosing_problems()}


def problem(label: str) -> Problem:
    problems = all_problems()
    if label not in problems:
        raise ValueError(f"problem must be one of {list(problems)}, got {label!r}")
    return problems[label]


def groups() -> dict[str, list[str]]:
    """Problem labels by group, so ``--problems high-d`` names a whole group."""
    out: dict[str, list[str]] = {}
    for p in all_problems().values():
        out.setdefault(p.group, []).append(p.label)
    return out

