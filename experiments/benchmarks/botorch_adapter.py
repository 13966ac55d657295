"""Cost of NPModel inside BoTorch vs SingleTaskGP (issue: NPModel measurements).

For N training points of Hartmann-6 (unit cube, float64 as BoTorch recommends):
- one ``posterior`` call on 512 x 1 x 6 raw samples;
- one ``optimize_acqf`` (LogEI, 10 restarts, 512 raw samples), model build included:
  ``NPModel.from_pretrained("cmanp-bo", X, Y)`` vs ``SingleTaskGP`` + ``fit_gpytorch_mll``.

The GP is run up to ``--gp-max-n`` (an exact GP fit grows ~cubically: docs/protocols.md §4
measured ~13 minutes at N = 4000 on this kind of machine).

    python experiments/benchmarks/botorch_adapter.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf
from botorch.test_functions import Hartmann
from gpytorch.mlls import ExactMarginalLogLikelihood
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, median_time, publish  # noqa: E402

from npbandit import NPModel  # noqa: E402

COMMAND = "python experiments/benchmarks/botorch_adapter.py"


def build(kind: str, X, Y):
    if kind == "np":
        return NPModel.from_pretrained("cmanp-bo", X, Y)
    model = SingleTaskGP(X, Y)
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model


def measure(kind: str, n: int, seed: int = 0) -> dict:
    problem = Hartmann(dim=6, negate=True)
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 6, generator=g, dtype=torch.float64)
    Y = problem(X).unsqueeze(-1)
    bounds = problem.bounds.to(torch.float64)
    t0 = time.perf_counter()
    model = build(kind, X, Y)
    build_s = time.perf_counter() - t0
    raw = torch.rand(512, 1, 6, generator=g, dtype=torch.float64)
    with torch.no_grad():
        posterior_s = median_time(lambda: model.posterior(raw).mean, max_reps=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        optimize_acqf(LogExpectedImprovement(model, best_f=Y.max()), bounds, q=1, num_restarts=10, raw_samples=512)
        acq_s = time.perf_counter() - t0
    return {"kind": kind, "n": n, "build_s": build_s, "posterior_ms": 1e3 * posterior_s, "optimize_acqf_s": acq_s,
            "iteration_s": build_s + acq_s}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--gp-max-n", type=int, default=1000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    cells = [(k, n) for n in args.sizes for k in ("np", "gp") if not (k == "gp" and n > args.gp_max_n)]
    rows = []
    for kind, n in tqdm(cells, desc="botorch adapter", unit="cell"):
        rows.append(measure(kind, n))
        tqdm.write(json.dumps(rows[-1]))
    by = {(r["kind"], r["n"]): r for r in rows}
    lines = ["## NPModel in BoTorch vs SingleTaskGP", "",
             f"Command: `{COMMAND}` (CPU: {machine_line()}). Hartmann-6, float64 inputs, random training points; "
             "`posterior` on 512 x 1 x 6 points (median); one `optimize_acqf` with LogEI, 10 restarts, 512 raw "
             "samples; 'iteration' = model build (GP: fit) + that optimisation.", "",
             "| N | model | build / fit (s) | posterior 512x1x6 (ms) | optimize_acqf (s) | iteration (s) |",
             "|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        label = 'NPModel("cmanp-bo")' if r["kind"] == "np" else "SingleTaskGP"
        lines.append(f"| {r['n']:,} | {label} | {r['build_s']:.3f} | {r['posterior_ms']:.2f} | "
                     f"{r['optimize_acqf_s']:.2f} | {r['iteration_s']:.2f} |")
    skipped = [n for n in args.sizes if n > args.gp_max_n]
    if skipped:
        lines.append(f"\nSingleTaskGP not run at N = {', '.join(f'{n:,}' for n in skipped)}: an exact GP fit "
                     "grows ~cubically (protocols.md §4: ~13 min at N = 4,000 on this kind of machine).")
    ratios = [f"N = {n:,}: {by[('gp', n)]['iteration_s'] / by[('np', n)]['iteration_s']:.1f}x"
              for n in args.sizes if ('gp', n) in by and ('np', n) in by]
    if ratios:
        lines.append("\nSingleTaskGP iteration time / NPModel iteration time: " + "; ".join(ratios) + ".")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("botorch-adapter", text, "botorch_adapter.json", COMMAND, {"rows": rows})


if __name__ == "__main__":
    main()
