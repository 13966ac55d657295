"""Best value found on Branin under a linear input constraint, ``x0 + x1 <= 5`` (which cuts off all
three of its global minima, so the constrained optimum lies on the constraint's face), by
``npbandit.optimize`` with ``parameter_constraints`` against Sobol points inside it, BoTorch's
``SingleTaskGP`` through ``optimize(surrogate="gp")`` and an Ax ``Client`` given the same
``parameter_constraints``. Also counts evaluated points outside the constraint (every method should
show none). A measurement, nothing chosen by it:

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_linear_constraints.py --seeds 5 --budget 30
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

import numpy as np

BOUNDS = [[-5.0, 0.0], [10.0, 15.0]]
LIMIT = 5.0


def branin(x0: float, x1: float) -> float:
    a, b, c, r, s, t = 1.0, 5.1 / (4 * np.pi ** 2), 5 / np.pi, 6.0, 10.0, 1 / (8 * np.pi)
    return float(a * (x1 - b * x0 ** 2 + c * x0 - r) ** 2 + s * (1 - t) * np.cos(x0) + s)


def constrained_optimum() -> float:
    """The minimum of Branin on the box with ``x0 + x1 <= LIMIT``: SLSQP from a 40 x 40 grid's feasible points."""
    from scipy.optimize import minimize

    best = np.inf
    for x0 in np.linspace(-5, 10, 40):
        for x1 in np.linspace(0, 15, 40):
            if x0 + x1 > LIMIT:
                continue
            found = minimize(lambda x: branin(*x), [x0, x1], method="SLSQP", bounds=list(zip(*BOUNDS)),
                             constraints=[{"type": "ineq", "fun": lambda x: LIMIT - x[0] - x[1]}])
            if found.success and found.x.sum() <= LIMIT + 1e-9:
                best = min(best, float(found.fun))
    return best


def run_npbandit(surrogate: str, seed: int, budget: int) -> tuple[list[float], int]:
    from npbandit import optimize

    result = optimize(lambda x: branin(*x), BOUNDS, surrogate=surrogate, budget=budget, seed=seed, db=None,
                      progress=False, parameter_constraints=[f"x0 + x1 <= {LIMIT:g}"])
    xs = [h["x"] for h in result.history]
    return [branin(*x) for x in xs], sum(x[0] + x[1] > LIMIT for x in xs)


def run_ax(seed: int, budget: int) -> tuple[list[float], int]:
    import logging

    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig

    logging.getLogger("ax").setLevel(logging.ERROR)
    client = Client(random_seed=seed)
    client.configure_experiment(parameters=[
        RangeParameterConfig(name="x0", parameter_type="float", bounds=(BOUNDS[0][0], BOUNDS[1][0])),
        RangeParameterConfig(name="x1", parameter_type="float", bounds=(BOUNDS[0][1], BOUNDS[1][1]))],
        parameter_constraints=[f"x0 + x1 <= {LIMIT:g}"])
    client.configure_optimization(objective="-branin")
    values, outside = [], 0
    for _ in range(budget):
        for index, p in client.get_next_trials(max_trials=1).items():
            value = branin(p["x0"], p["x1"])
            outside += p["x0"] + p["x1"] > LIMIT
            client.complete_trial(index, raw_data={"branin": value})
            values.append(value)
    return values, outside


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--methods", nargs="+", default=["tnpd", "gp", "random", "ax"])
    parser.add_argument("--out", help="a JSON-lines file for the rows (default: none)")
    args = parser.parse_args(argv)
    optimum = constrained_optimum()
    print(f"constrained optimum {optimum:.6g}")
    rows = []
    for method in args.methods:
        for seed in range(args.seeds):
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                values, outside = run_ax(seed, args.budget) if method == "ax" else run_npbandit(method, seed,
                                                                                                 args.budget)
            row = {"method": method, "seed": seed, "budget": args.budget, "best": min(values),
                   "regret": min(values) - optimum, "best_at_15": min(values[:15]), "outside": int(outside),
                   "cpu_s": round(time.process_time() - start, 1)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    print("| method | median regret at 15 | median regret at budget | mean regret at budget | outside | CPU s/run |")
    print("|---|---:|---:|---:|---:|---:|")
    for method in args.methods:
        mine = [r for r in rows if r["method"] == method]
        print(f"| {method} | {statistics.median(r['best_at_15'] - optimum for r in mine):.4g} "
              f"| {statistics.median(r['regret'] for r in mine):.4g} "
              f"| {statistics.mean(r['regret'] for r in mine):.4g} "
              f"| {sum(r['outside'] for r in mine)} | {statistics.mean(r['cpu_s'] for r in mine):.1f} |")


if __name__ == "__main__":
    main()
