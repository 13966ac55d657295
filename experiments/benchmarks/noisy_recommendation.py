"""Noisy objectives: the point a user would deploy, `optimize`'s recommendation against the best observation.

The reporting suite for the recommendation (issue 45 item 4), not used to choose it (the choice
was made by ``experiments/probes/probe_recommendation_view.py`` on other functions). Each
BoTorch test function below is minimised in its own bounds with Gaussian noise of sd
``NOISE * IQR(f)`` (the interquartile range of ``f`` over 2,048 scrambled Sobol points of the
box: robust to the few huge values of Powell or Dixon-Price at the corners) added to every
evaluation; ``--budget`` evaluations, ``--seeds`` seeds, the noise drawn from a generator of
its own per seed (the same for every method of a seed).

Tuning problems (``TUNING``; added to the suite after the synthetic table's first runs were
seen, because the IQR scale makes Shekel almost noise-free and Dixon-Price / Powell almost
pure noise, neither of which is the noise a tuning user has): the log loss of a scikit-learn
model on one random 70 / 30 split of a bundled dataset, drawn afresh at every evaluation
(the noise of a single hold-out score); its true value is the mean over 30 fixed splits.

Methods, through their public APIs with their defaults:

* ``npbandit.optimize(surrogate=s)`` for ``s`` in ``--surrogates``: the true value at
  ``best_x`` (the best observation) and at ``recommended_x`` (the model's pick);
* Optuna's ``TPESampler`` and ``GPSampler`` (``--optuna``): ``study.best_trial``, the point an
  Optuna user gets (Optuna makes no model-based recommendation).

Reported: the true simple regret ``f(x_pick) - f*`` of each pick, median and mean over seeds;
and, for npbandit, how often the recommendation is truly better / worse than ``best_x``, and the
mean of ``(f(recommended) - f(best_x)) / sd``.

    python experiments/benchmarks/noisy_recommendation.py --seeds 10 --out runs/noisy_recommendation.json
    python experiments/benchmarks/noisy_recommendation.py --summarise runs/noisy_recommendation.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line  # noqa: E402

NOISE = 0.2
# name: (botorch class name, dimension or None for the class's own)
FUNCTIONS = {
    "six-hump-camel": ("SixHumpCamel", None),
    "shekel": ("Shekel", None),
    "styblinski-tang-4": ("StyblinskiTang", 4),
    "dixon-price-4": ("DixonPrice", 4),
    "powell-4": ("Powell", 4),
}


# name: (dataset, model, search space as (low, high, log) per parameter)
TUNING = {
    "svc-breast-cancer": ("breast_cancer", "svc", {"C": (1e-3, 1e3, True), "gamma": (1e-5, 1e0, True)}),
    "logreg-wine": ("wine", "logreg", {"C": (1e-4, 1e3, True), "l1_ratio": (0.0, 1.0, False)}),
}
TRUE_SPLITS = 30


def _tuning_loss(name: str, params: dict, split_seed: int) -> float:
    """Log loss on the 30 % held out by one stratified random split (``split_seed``)."""
    import functools

    from sklearn import datasets
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    data, model, _ = TUNING[name]
    X, y = functools.cache(lambda d: getattr(datasets, f"load_{d}")(return_X_y=True))(data)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, stratify=y, random_state=split_seed)
    if model == "svc":
        est = SVC(C=params["C"], gamma=params["gamma"], probability=True, random_state=0)
    else:
        est = LogisticRegression(C=params["C"], l1_ratio=params["l1_ratio"], solver="saga", max_iter=2000,
                                 random_state=0)  # saga shuffles: fixed, so the noise is the split's alone
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = make_pipeline(StandardScaler(), est).fit(Xa, ya)
        return float(log_loss(yb, fitted.predict_proba(Xb), labels=np.unique(y)))


def tuning_true(name: str, params: dict) -> float:
    return float(np.mean([_tuning_loss(name, params, 1_000_000 + k) for k in range(TRUE_SPLITS)]))


def run_tuning(name: str, method: str, seed: int, budget: int) -> dict:
    space = TUNING[name][2]
    split = np.random.default_rng(20_000 + seed)

    def objective(params):
        return _tuning_loss(name, params, int(split.integers(2**31)))

    t0 = time.perf_counter()
    out = {"function": name, "method": method, "seed": seed}
    if method.startswith("optuna-"):
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = (optuna.samplers.TPESampler(seed=seed) if method == "optuna-tpe"
                   else optuna.samplers.GPSampler(seed=seed))
        study = optuna.create_study(sampler=sampler)
        study.optimize(lambda t: objective({k: t.suggest_float(k, lo, hi, log=lg) for k, (lo, hi, lg) in
                                            space.items()}), n_trials=budget)
        out["observed"] = tuning_true(name, study.best_trial.params)
    else:
        import npbandit
        from npbandit.space import Float

        result = npbandit.optimize(objective, {k: Float(lo, hi, log=lg) for k, (lo, hi, lg) in space.items()},
                                   surrogate=method.removeprefix("npbandit-"), budget=budget, seed=seed, db=None,
                                   progress=False)
        out["observed"] = tuning_true(name, result.best_x)
        out["recommended"] = tuning_true(name, result.recommended_x)
        out["recommended_by"] = result.recommended_by
    out["seconds"] = time.perf_counter() - t0
    return out


def problem(name: str):
    from botorch import test_functions

    cls_name, dim = FUNCTIONS[name]
    cls = getattr(test_functions, cls_name)
    return (cls() if dim is None else cls(dim=dim)).to(torch.float64)


def true_value(prob, x) -> float:
    return float(prob.evaluate_true(torch.as_tensor(np.asarray(x, dtype=np.float64))[None]))


def noise_sd(prob) -> float:
    from scipy.stats import qmc

    lo, hi = prob.bounds.numpy()
    X = lo + qmc.Sobol(len(lo), scramble=True, seed=0).random(2048) * (hi - lo)
    q1, q3 = np.percentile([true_value(prob, x) for x in X], [25, 75])
    return NOISE * float(q3 - q1)


def run_one(name: str, method: str, seed: int, budget: int) -> dict:
    prob = problem(name)
    sd = noise_sd(prob)
    rng = np.random.default_rng(10_000 + seed)

    def objective(x):
        return true_value(prob, x) + sd * float(rng.standard_normal())

    bounds = prob.bounds.numpy()
    t0 = time.perf_counter()
    out = {"function": name, "method": method, "seed": seed, "sd": sd, "optimum": float(prob.optimal_value)}
    if method.startswith("optuna-"):
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = (optuna.samplers.TPESampler(seed=seed) if method == "optuna-tpe"
                   else optuna.samplers.GPSampler(seed=seed))
        study = optuna.create_study(sampler=sampler)
        names = [f"x{i}" for i in range(bounds.shape[1])]
        study.optimize(lambda t: objective([t.suggest_float(n, bounds[0, i], bounds[1, i])
                                            for i, n in enumerate(names)]), n_trials=budget)
        best = [study.best_trial.params[n] for n in names]
        out["observed"] = true_value(prob, best)
    else:
        import npbandit

        result = npbandit.optimize(objective, bounds, surrogate=method.removeprefix("npbandit-"), budget=budget,
                                   seed=seed, db=None, progress=False)
        out["observed"] = true_value(prob, result.best_x)
        out["recommended"] = true_value(prob, result.recommended_x)
        out["recommended_by"] = result.recommended_by
        out["best_evaluated"] = min(true_value(prob, h["x"]) for h in result.history if not h.get("failed"))
    out["seconds"] = time.perf_counter() - t0
    return out


def summarise(rows: list[dict]) -> str:
    functions = list(dict.fromkeys(r["function"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    seeds = sorted({r["seed"] for r in rows})
    lines = [f"True simple regret f(pick) - f* at the point each method hands the user (tuning problems: the "
             f"true loss, the mean over {TRUE_SPLITS} splits): median [mean] over {len(seeds)} seeds; synthetic "
             f"noise sd {NOISE} x IQR(f) over the box.", "",
             "| function | " + " | ".join(f"{m} {p}" for m in methods
                                          for p in (("best_x", "recommended_x") if m.startswith("npbandit")
                                                    else ("best_trial",))) + " |",
             "|---|" + "---:|" * sum(2 if m.startswith("npbandit") else 1 for m in methods)]
    for f in functions:
        cells = []
        for m in methods:
            rs = [r for r in rows if r["function"] == f and r["method"] == m]
            for key in (("observed", "recommended") if m.startswith("npbandit") else ("observed",)):
                v = [r[key] - r.get("optimum", 0.0) for r in rs]  # tuning problems: the true loss itself
                cells.append(f"{statistics.median(v):.3g} [{statistics.fmean(v):.3g}]" if v else "-")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    lines += ["", "npbandit: recommended_x against best_x, seed by seed: truly better / equal / worse, and the mean "
              "of (f(recommended) - f(best_x)) / sd (tuning problems: of the loss difference itself; negative: "
              "the recommendation is better).", "",
              "| function | " + " | ".join(m for m in methods if m.startswith("npbandit")) + " |",
              "|---|" + "---:|" * sum(m.startswith("npbandit") for m in methods)]
    for f in functions:
        cells = []
        for m in methods:
            if not m.startswith("npbandit"):
                continue
            rs = [r for r in rows if r["function"] == f and r["method"] == m]
            diff = [(r["recommended"] - r["observed"]) / r.get("sd", 1.0) for r in rs]
            better = sum(d < -1e-12 for d in diff)
            worse = sum(d > 1e-12 for d in diff)
            cells.append(f"{better} / {len(diff) - better - worse} / {worse}, {statistics.fmean(diff):+.3g}"
                         if diff else "-")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", nargs="+", default=[*FUNCTIONS, *TUNING], choices=[*FUNCTIONS, *TUNING])
    parser.add_argument("--surrogates", nargs="+", default=["tnpd", "cmanp", "gp"])
    parser.add_argument("--optuna", nargs="*", default=["optuna-tpe", "optuna-gp"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=50)
    parser.add_argument("--out", default="runs/noisy_recommendation.json", help="results JSON (resumed if present)")
    parser.add_argument("--summarise", metavar="JSON", help="only print the tables of a results JSON")
    args = parser.parse_args()
    if args.summarise:
        print(summarise(json.loads(Path(args.summarise).read_text())))
        return
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    out = Path(args.out)
    rows = json.loads(out.read_text()) if out.exists() else []
    done = {(r["function"], r["method"], r["seed"]) for r in rows}
    methods = [f"npbandit-{s}" for s in args.surrogates] + list(args.optuna)
    print(machine_line(), flush=True)
    for seed in range(args.seeds):
        for f in args.functions:
            for m in methods:
                if (f, m, seed) in done:
                    continue
                rows.append(run_tuning(f, m, seed, args.budget) if f in TUNING else run_one(f, m, seed, args.budget))
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(rows, indent=1))
                r = rows[-1]
                best = r.get("optimum", 0.0)
                print(f"{f} {m} seed {seed}: observed {r['observed'] - best:.4g}"
                      + (f" recommended {r['recommended'] - best:.4g}" if "recommended" in r else "")
                      + f" ({r['seconds']:.0f} s)", flush=True)
    print(summarise(rows))


if __name__ == "__main__":
    main()
