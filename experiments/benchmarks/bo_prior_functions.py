"""BO on functions drawn from a GP like the ``bo`` training prior: what the ``*-bo`` checkpoints were trained for.

A diagnostic beside ``experiments/benchmarks/bo.py``. The standard test functions (Branin, Hartmann,
...) are far from stationary unit-variance GP draws; when a checkpoint loses there, this
separates "the loop or adapter is broken" from "the model does not fit that function".
Each seed draws one function ``f(x) = sqrt(2 / F) sum_j a_j cos(w_j . x + b_j)`` (random
Fourier features of an RBF GP with lengthscale ``sqrt(d) * --lengthscale`` on the unit
cube; ``a ~ N(0, 1)``, ``w ~ N(0, I / l^2)``, ``b ~ U(0, 2 pi)``), so it is defined
everywhere; its minimum is found by a dense random search refined with L-BFGS-B.
Methods, initial designs and budget as in ``bo.py`` (``2d + 1`` Sobol points, LogEI).

    python experiments/benchmarks/bo_prior_functions.py --seeds 6 --workers 2
    python experiments/benchmarks/bo_prior_functions.py --dims 2 --seeds 2 --budget 15 --no-write   # quick look
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, publish  # noqa: E402

RUN_THREADS = 1  # torch threads per run (each worker process sets it)
COMMAND = "python experiments/benchmarks/bo_prior_functions.py --seeds 6 --workers 2"
N_FEATURES = 2000


class FourierFunction:
    """One RBF-GP sample path on ``[0, 1]^d`` (picklable, for worker processes)."""

    def __init__(self, dim: int, lengthscale: float, seed: int) -> None:
        rng = np.random.default_rng(10_000 + seed)
        self.w = rng.normal(size=(N_FEATURES, dim)) / lengthscale
        self.b = rng.uniform(0, 2 * math.pi, N_FEATURES)
        self.a = rng.normal(size=N_FEATURES) * math.sqrt(2.0 / N_FEATURES)

    def values(self, x: np.ndarray) -> np.ndarray:
        return np.cos(x @ self.w.T + self.b) @ self.a

    def __call__(self, x: np.ndarray) -> float:
        return float(self.values(np.asarray(x, dtype=np.float64)[None])[0])

    def minimum(self, seed: int) -> float:
        from scipy.optimize import minimize

        dim = self.w.shape[1]
        x = np.random.default_rng(seed).uniform(size=(200_000, dim))
        v = self.values(x)
        best = float(v.min())
        for start in x[np.argsort(v)[:10]]:
            res = minimize(self, start, method="L-BFGS-B", bounds=[(0.0, 1.0)] * dim)
            best = min(best, float(res.fun))
        return best


@functools.cache
def _minimum(dim: int, lengthscale: float, seed: int) -> float:
    return FourierFunction(dim, lengthscale, seed).minimum(seed)


def one_run(method: str, dim: int, lengthscale: float, seed: int, budget: int) -> dict:
    import torch

    torch.set_num_threads(RUN_THREADS)
    from npbandit.envs import BlackBoxEnv
    from npbandit.loop import run_episode
    from npbandit.policies import BOPolicy, SobolPolicy

    f = FourierFunction(dim, math.sqrt(dim) * lengthscale, seed)
    env = BlackBoxEnv(objective=f, bounds=[[0.0] * dim, [1.0] * dim], budget=budget)
    policy = SobolPolicy(dim) if method == "sobol" else BOPolicy(dim, model=method, acquisition="logei")
    result = run_episode(env, policy, seed=seed)
    optimum = _minimum(dim, math.sqrt(dim) * lengthscale, seed)
    curve = [math.log10(max(s["best_value"] - optimum, 1e-6)) for s in result.steps]
    return {"method": method, "dim": dim, "seed": seed, "curve": curve}


def main(argv: list[str] | None = None) -> None:
    from concurrent.futures import ProcessPoolExecutor

    from tqdm import tqdm

    from npbandit.surrogates.pretrained import available_checkpoints

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--lengthscale", type=float, default=0.2, help="per-dimension lengthscale / sqrt(d)")
    parser.add_argument("--methods", nargs="+",
                        default=[n for n in available_checkpoints() if n.endswith("-bo")] + ["gp", "sobol"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if args.lengthscale <= 0:
        raise SystemExit("--lengthscale must be positive")
    jobs = [(m, d, args.lengthscale, s, args.budget)
            for d in args.dims for s in range(args.seeds) for m in args.methods]
    runs = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for run in tqdm(pool.map(one_run, *zip(*jobs)), total=len(jobs), desc="prior-function BO runs"):
            runs.append(run)
    lines = ["## BO on functions drawn from the training prior (diagnostic)", "",
             f"Command: `{COMMAND}` (CPU: {machine_line(RUN_THREADS)}). Each seed is one RBF-GP sample path on the "
             "unit cube, "
             f"lengthscale sqrt(d) x {args.lengthscale} (inside the `bo` prior's range), {args.budget} evaluations "
             f"including the 2d + 1 Sobol points, {args.seeds} seeds. Median [quartiles] of log10 final simple regret "
             "(floored at -6).", "",
             "| method | " + " | ".join(f"d = {d}" for d in args.dims) + " |", "|---|" + "---:|" * len(args.dims)]
    summary = {}
    for m in args.methods:
        cells = []
        for d in args.dims:
            finals = [r["curve"][-1] for r in runs if r["method"] == m and r["dim"] == d]
            q = statistics.quantiles(finals, n=4) if len(finals) > 1 else [finals[0]] * 3
            summary[f"{m} d={d}"] = {"median": statistics.median(finals), "q1": q[0], "q3": q[2]}
            cells.append(f"{statistics.median(finals):.2f} [{q[0]:.2f}, {q[2]:.2f}]")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("bo-prior-functions", text, "bo_prior_functions.json", COMMAND,
                {"args": vars(args), "summary": summary, "runs": runs}, threads=RUN_THREADS)


if __name__ == "__main__":
    main()
