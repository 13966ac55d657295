"""Optuna samplers on conditional (define-by-run) search spaces: a choice decides which other
parameters a trial suggests.

Problems (each a define-by-run objective, minimised):

- choosing suite (synthetic; NPSampler's conditional defaults are chosen here, never reported
  as its quality):
  - ``two-branch``: ``classifier`` in {svc, rf}; svc's three floats in [0, 1] with the optimum
    0 at (0.7, 0.2, 0.4), rf's three with a floor of 0.1 at (0.25, 0.6, 0.8); the squared
    distance to the branch's optimum plus its floor;
  - ``three-branch``: ``kind`` in {a, b, c} and a shared float ``s`` (adds ``0.05 (s - 0.3)^2``);
    branch a one float (floor 0.3), b two (floor 0.15), c four (floor 0, each input's distance
    weighted 2x, so its optimum is narrow);
- reporting suite (scikit-learn on its bundled datasets, 3-fold stratified CV with fixed folds,
  inputs standardised in each fold, as ``bo_wide_problems.py``):
  - ``model-breast-cancer`` (CV log loss): logistic regression (``C``), random forest
    (``n_estimators``, ``max_depth``, ``max_features``) or histogram gradient boosting
    (``learning_rate``, ``max_leaf_nodes``, ``l2_regularization``);
  - ``model-wine`` (CV log loss): k nearest neighbours (``n_neighbors``, ``weights``), an MLP
    (``hidden``, ``alpha``, ``learning_rate_init``) or a random forest (``n_estimators``,
    ``max_depth``);
  - ``pca-svc-digits`` (CV error): an RBF SVC (``C``, ``gamma``) after ``reduce`` in {none, pca}
    (pca: ``n_components``);
  - ``wide-boosting-breast-cancer`` (CV log loss): logistic regression (``C``) or histogram gradient
    boosting with seven parameters, a branch wider than the shipped checkpoints' six columns.

Besides the samplers, ``optimize``: ``npbandit.optimize`` with its defaults on the same problem
written as a conditional search space (a choice's ``dependents``; :func:`spaces`), the objective
called with the active parameters of each point (one policy per branch); ``optimize-whole``: the
same with ``branches=False`` (one model over the whole cube, inactive parameters pinned).

Samplers, each seeded by the seed, every other option at its default: ``np`` ``NPSampler()``
(``conditional=True``), ``np-plain`` ``NPSampler(conditional=False)`` (the intersection space
only; the branches' parameters drawn at random), ``tpe`` ``TPESampler()``, ``tpe-group``
``TPESampler(multivariate=True, group=True)`` (Optuna's option for conditional spaces), ``gp``
``GPSampler()``, ``random`` ``RandomSampler()``.

Reported: the best value after ``--trials`` trials, median and quartiles over seeds, per problem
and sampler, and the paired comparison of ``np`` with each other sampler (seeds lower / higher).
Rows are appended to ``--out`` (JSON lines) and skipped when there, so the script resumes. One
torch thread.

    nice -n 10 python experiments/benchmarks/optuna_conditional.py --suite choosing --seeds 10
    nice -n 10 python experiments/benchmarks/optuna_conditional.py --suite reporting --seeds 10
    python experiments/benchmarks/optuna_conditional.py --summarise runs/optuna_conditional.jsonl
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import append_missing_rows, jsonl_rows, quartile_text  # noqa: E402

COMMAND = "python experiments/benchmarks/optuna_conditional.py"
SAMPLERS = ("np", "np-plain", "tpe", "tpe-group", "gp", "random", "optimize", "optimize-whole")


def two_branch(t) -> float:
    branches = {"svc": (0.0, {"svc_c": 0.7, "svc_gamma": 0.2, "svc_tol": 0.4}),
                "rf": (0.1, {"rf_depth": 0.25, "rf_leaf": 0.6, "rf_split": 0.8})}
    floor, best = branches[t.suggest_categorical("classifier", list(branches))]
    return floor + sum((t.suggest_float(name, 0.0, 1.0) - x) ** 2 for name, x in best.items())


def three_branch(t) -> float:
    kind = t.suggest_categorical("kind", ["a", "b", "c"])
    shared = 0.05 * (t.suggest_float("s", 0.0, 1.0) - 0.3) ** 2
    if kind == "a":
        return shared + 0.3 + (t.suggest_float("a1", 0.0, 1.0) - 0.5) ** 2
    if kind == "b":
        return shared + 0.15 + sum((t.suggest_float(f"b{i}", 0.0, 1.0) - x) ** 2 for i, x in enumerate((0.2, 0.9)))
    return shared + 2.0 * sum((t.suggest_float(f"c{i}", 0.0, 1.0) - x) ** 2
                              for i, x in enumerate((0.3, 0.7, 0.5, 0.1)))


def model_breast_cancer(t) -> float:
    from bo_wide_problems import _cv_loss
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression

    kind = t.suggest_categorical("classifier", ["logistic", "forest", "boosting"])
    if kind == "logistic":
        model = LogisticRegression(C=t.suggest_float("lr_C", 1e-4, 1e2, log=True), max_iter=500)
    elif kind == "forest":
        model = RandomForestClassifier(n_estimators=t.suggest_int("rf_n_estimators", 10, 100),
                                       max_depth=t.suggest_int("rf_max_depth", 2, 16),
                                       max_features=t.suggest_float("rf_max_features", 0.1, 1.0),
                                       random_state=0, n_jobs=1)
    else:
        model = HistGradientBoostingClassifier(
            learning_rate=t.suggest_float("hgb_learning_rate", 1e-3, 1.0, log=True),
            max_leaf_nodes=t.suggest_int("hgb_max_leaf_nodes", 4, 64, log=True),
            l2_regularization=t.suggest_float("hgb_l2", 1e-6, 10.0, log=True), max_iter=100,
            early_stopping=False, random_state=0)
    return _cv_loss(model, "breast_cancer", "log_loss")


def model_wine(t) -> float:
    from bo_wide_problems import _cv_loss
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier

    kind = t.suggest_categorical("classifier", ["knn", "mlp", "forest"])
    if kind == "knn":
        model = KNeighborsClassifier(n_neighbors=t.suggest_int("knn_n_neighbors", 1, 50, log=True),
                                     weights=t.suggest_categorical("knn_weights", ["uniform", "distance"]))
    elif kind == "mlp":
        model = MLPClassifier(hidden_layer_sizes=(t.suggest_int("mlp_hidden", 8, 128, log=True),),
                              alpha=t.suggest_float("mlp_alpha", 1e-6, 1e-1, log=True),
                              learning_rate_init=t.suggest_float("mlp_learning_rate_init", 1e-4, 1e-1, log=True),
                              max_iter=200, random_state=0)
    else:
        model = RandomForestClassifier(n_estimators=t.suggest_int("rf_n_estimators", 10, 100),
                                       max_depth=t.suggest_int("rf_max_depth", 2, 16), random_state=0, n_jobs=1)
    return _cv_loss(model, "wine", "log_loss")


def pca_svc_digits(t) -> float:
    from bo_wide_problems import _cv_loss
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import SVC

    svc = SVC(C=t.suggest_float("C", 1e-2, 1e3, log=True), gamma=t.suggest_float("gamma", 1e-5, 1e-1, log=True))
    if t.suggest_categorical("reduce", ["none", "pca"]) == "pca":
        svc = make_pipeline(PCA(n_components=t.suggest_int("n_components", 5, 60), random_state=0), svc)
    return _cv_loss(svc, "digits", "error")


def wide_boosting_breast_cancer(t) -> float:
    from bo_wide_problems import _cv_loss
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    if t.suggest_categorical("classifier", ["logistic", "boosting"]) == "logistic":
        return _cv_loss(LogisticRegression(C=t.suggest_float("lr_C", 1e-4, 1e2, log=True), max_iter=500),
                        "breast_cancer", "log_loss")
    model = HistGradientBoostingClassifier(
        learning_rate=t.suggest_float("hgb_learning_rate", 1e-3, 1.0, log=True),
        max_iter=t.suggest_int("hgb_max_iter", 20, 150),
        max_leaf_nodes=t.suggest_int("hgb_max_leaf_nodes", 4, 64, log=True),
        min_samples_leaf=t.suggest_int("hgb_min_samples_leaf", 2, 64, log=True),
        l2_regularization=t.suggest_float("hgb_l2", 1e-6, 10.0, log=True),
        max_features=t.suggest_float("hgb_max_features", 0.2, 1.0),
        max_bins=t.suggest_int("hgb_max_bins", 32, 255), early_stopping=False, random_state=0)
    return _cv_loss(model, "breast_cancer", "log_loss")


SUITES = {"choosing": {"two-branch": two_branch, "three-branch": three_branch},
          "reporting": {"model-breast-cancer": model_breast_cancer, "model-wine": model_wine,
                        "pca-svc-digits": pca_svc_digits, "wide-boosting-breast-cancer": wide_boosting_breast_cancer}}
PROBLEMS = {name: fn for suite in SUITES.values() for name, fn in suite.items()}


class ParamsTrial:
    """A define-by-run objective's ``trial`` that reads every suggestion from ``params`` (what
    ``npbandit.optimize`` calls the objective with: the active parameters of a point), so the
    problems above serve ``optimize`` unchanged."""

    def __init__(self, params: dict) -> None:
        self.params = params

    def _get(self, name: str, *args, **kwargs):
        return self.params[name]

    suggest_float = suggest_int = suggest_categorical = _get


def spaces() -> dict:
    """Each problem's search space for ``npbandit.optimize``, the same parameters, ranges and
    scales as its define-by-run objective suggests, the branch parameters as dependents of the
    choice that gates them."""
    from npbandit.space import Choice, Float, Int

    unit = Float(0.0, 1.0)
    return {
        "two-branch": {"classifier": Choice(["svc", "rf"], dependents={
            "svc": ["svc_c", "svc_gamma", "svc_tol"], "rf": ["rf_depth", "rf_leaf", "rf_split"]}),
            **{n: unit for n in ("svc_c", "svc_gamma", "svc_tol", "rf_depth", "rf_leaf", "rf_split")}},
        "three-branch": {"kind": Choice(["a", "b", "c"], dependents={
            "a": ["a1"], "b": ["b0", "b1"], "c": ["c0", "c1", "c2", "c3"]}), "s": unit,
            **{n: unit for n in ("a1", "b0", "b1", "c0", "c1", "c2", "c3")}},
        "model-breast-cancer": {"classifier": Choice(["logistic", "forest", "boosting"], dependents={
            "logistic": ["lr_C"], "forest": ["rf_n_estimators", "rf_max_depth", "rf_max_features"],
            "boosting": ["hgb_learning_rate", "hgb_max_leaf_nodes", "hgb_l2"]}),
            "lr_C": Float(1e-4, 1e2, log=True), "rf_n_estimators": Int(10, 100), "rf_max_depth": Int(2, 16),
            "rf_max_features": Float(0.1, 1.0), "hgb_learning_rate": Float(1e-3, 1.0, log=True),
            "hgb_max_leaf_nodes": Int(4, 64, log=True), "hgb_l2": Float(1e-6, 10.0, log=True)},
        "model-wine": {"classifier": Choice(["knn", "mlp", "forest"], dependents={
            "knn": ["knn_n_neighbors", "knn_weights"], "mlp": ["mlp_hidden", "mlp_alpha", "mlp_learning_rate_init"],
            "forest": ["rf_n_estimators", "rf_max_depth"]}),
            "knn_n_neighbors": Int(1, 50, log=True), "knn_weights": Choice(["uniform", "distance"]),
            "mlp_hidden": Int(8, 128, log=True), "mlp_alpha": Float(1e-6, 1e-1, log=True),
            "mlp_learning_rate_init": Float(1e-4, 1e-1, log=True), "rf_n_estimators": Int(10, 100),
            "rf_max_depth": Int(2, 16)},
        "pca-svc-digits": {"C": Float(1e-2, 1e3, log=True), "gamma": Float(1e-5, 1e-1, log=True),
                           "reduce": Choice(["none", "pca"], dependents={"pca": ["n_components"]}),
                           "n_components": Int(5, 60)},
        "wide-boosting-breast-cancer": {"classifier": Choice(["logistic", "boosting"], dependents={
            "logistic": ["lr_C"], "boosting": ["hgb_learning_rate", "hgb_max_iter", "hgb_max_leaf_nodes",
                                               "hgb_min_samples_leaf", "hgb_l2", "hgb_max_features", "hgb_max_bins"]}),
            "lr_C": Float(1e-4, 1e2, log=True), "hgb_learning_rate": Float(1e-3, 1.0, log=True),
            "hgb_max_iter": Int(20, 150), "hgb_max_leaf_nodes": Int(4, 64, log=True),
            "hgb_min_samples_leaf": Int(2, 64, log=True), "hgb_l2": Float(1e-6, 10.0, log=True),
            "hgb_max_features": Float(0.2, 1.0), "hgb_max_bins": Int(32, 255)},
    }


def run_optimize(cell: dict) -> dict:
    """``npbandit.optimize`` with its defaults on the problem's space (:func:`spaces`), one
    evaluation per trial (``optimize-whole``: ``branches=False``)."""
    import npbandit

    objective = PROBLEMS[cell["problem"]]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = npbandit.optimize(lambda params: objective(ParamsTrial(params)), spaces()[cell["problem"]],
                                   budget=cell["trials"], seed=cell["seed"], db=None, progress=False,
                                   branches=cell["sampler"] == "optimize")
    values = [h["value"] for h in result.history]
    return {**cell, "best": min(values), "values": values, "seconds": time.perf_counter() - t0,
            "branches": [h["x"].get(_gate(cell["problem"])) for h in result.history]}


def make_sampler(name: str, seed: int):
    import optuna

    from npbandit.integrations.optuna import NPSampler

    return {"np": lambda: NPSampler(seed=seed), "np-plain": lambda: NPSampler(seed=seed, conditional=False),
            "tpe": lambda: optuna.samplers.TPESampler(seed=seed),
            "tpe-group": lambda: optuna.samplers.TPESampler(seed=seed, multivariate=True, group=True),
            "gp": lambda: optuna.samplers.GPSampler(seed=seed),
            "random": lambda: optuna.samplers.RandomSampler(seed=seed)}[name]()


def run(cell: dict) -> dict:
    import optuna

    if cell["sampler"] in ("optimize", "optimize-whole"):
        return run_optimize(cell)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.create_study(direction="minimize", sampler=make_sampler(cell["sampler"], cell["seed"]))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(PROBLEMS[cell["problem"]], n_trials=cell["trials"])
    values = [t.value for t in study.trials]
    return {**cell, "best": min(values), "values": values, "seconds": time.perf_counter() - t0,
            "branches": [t.params.get(_gate(cell["problem"])) for t in study.trials]}


def _gate(problem: str) -> str:
    return {"three-branch": "kind", "pca-svc-digits": "reduce"}.get(problem, "classifier")


def summarise(path: Path, trials: int | None = None) -> str:
    rows = [r for r in jsonl_rows(path) if trials is None or r["trials"] == trials]
    problems = [p for p in PROBLEMS if any(r["problem"] == p for r in rows)]
    lines = ["| problem | " + " | ".join(SAMPLERS) + " |", "|---|" + "---:|" * len(SAMPLERS)]
    best = {(r["problem"], r["sampler"], r["seed"]): r["best"] for r in rows}
    for p in problems:
        cells = []
        for s in SAMPLERS:
            values = [v for (pp, ss, _), v in best.items() if pp == p and ss == s]
            cells.append(quartile_text(values, ".3g") + f" (n={len(values)})" if values else "-")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    lines += ["", "Paired seeds, `np` against each sampler: lower / higher / equal best value.", "",
              "| problem | " + " | ".join(s for s in SAMPLERS if s != "np") + " |",
              "|---|" + "---:|" * (len(SAMPLERS) - 1)]
    for p in problems:
        cells = []
        for s in SAMPLERS[1:]:
            pairs = [(best[(p, "np", k)], best[(p, s, k)]) for (pp, ss, k) in best
                     if pp == p and ss == s and (p, "np", k) in best]
            cells.append(f"{sum(a < b for a, b in pairs)} / {sum(a > b for a, b in pairs)} / "
                         f"{sum(a == b for a, b in pairs)}" if pairs else "-")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    seconds = {s: statistics.median([r["seconds"] / r["trials"] for r in rows if r["sampler"] == s])
               for s in SAMPLERS if any(r["sampler"] == s for r in rows)}
    lines += ["", "Median seconds per trial (objective included): " +
              ", ".join(f"{s} {v:.2f}" for s, v in seconds.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=list(SUITES), default="choosing")
    parser.add_argument("--problems", nargs="+", choices=list(PROBLEMS), default=None)
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=list(SAMPLERS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--out", type=Path, default=Path("runs/optuna_conditional.jsonl"))
    parser.add_argument("--summarise", type=Path, default=None, help="print the tables of a JSON-lines file")
    args = parser.parse_args(argv)
    if args.summarise is not None:
        print(summarise(args.summarise, args.trials))
        return
    torch.set_num_threads(1)
    problems = args.problems or list(SUITES[args.suite])
    cells = [{"problem": p, "sampler": s, "seed": seed, "trials": args.trials}
             for p in problems for seed in range(args.seeds) for s in args.samplers]
    append_missing_rows(args.out, " ".join([COMMAND, *(argv if argv is not None else sys.argv[1:])]),
                        ("problem", "sampler", "seed", "trials"), cells, run,
                        lambda r: f"{r['problem']} {r['sampler']} seed {r['seed']}: best {r['best']:.4f} "
                                  f"({r['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
