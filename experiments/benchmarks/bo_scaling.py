"""Time per BO iteration vs the number of observations N: CMANP vs an exact GP.

One iteration = fold one new observation into the model + one LogEI ``optimize_acqf``
(10 restarts, 512 raw samples) on Hartmann-6 (float64). CMANP: ``NPModel`` built once
on N points (untimed), then ``condition_on_observations`` and the streamed model's noise
estimate (both constant cost) + the acquisition optimisation. GP: ``SingleTaskGP`` refit
on N + 1 points (``fit_gpytorch_mll``) + the same optimisation; run in a subprocess and
stopped after ``--gp-timeout`` seconds.

The optimisation's length is set by L-BFGS-B, not by the model: the number of
acquisition evaluations varies several-fold from one data set to the next at the same
N. So each CMANP cell is the median of ``--repeats`` iterations on different data
(seeds), and the table also gives the median number of evaluations and the seconds
per evaluation -- the model's own cost, which is what should not grow with N.

    python experiments/benchmarks/bo_scaling.py
    python experiments/benchmarks/bo_scaling.py --sizes 1000 10000 100000 --no-gp --no-write --threads 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, new_figure, publish, save_figure  # noqa: E402

COMMAND = "python experiments/benchmarks/bo_scaling.py"
# docs/protocols.md §4: SingleTaskGP fit + LogEI on Hartmann-6, 2-core CPU, BoTorch 0.18 (s/iter)
PUBLISHED_GP = {200: "0.7", 1000: "5-12", 2000: "40-122", 4000: "~780 (fit alone)"}


def iteration(kind: str, n: int, seed: int = 0) -> dict:
    """One timed iteration: ``{"s": total, "update_s": model update, "evals": acquisition evaluations}``."""
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim import optimize_acqf
    from botorch.test_functions import Hartmann

    problem = Hartmann(dim=6, negate=True)
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n + 1, 6, generator=g, dtype=torch.float64)
    Y = problem(X).unsqueeze(-1)
    bounds = problem.bounds.to(torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "cmanp":
            from npbandit import NPModel

            model = NPModel.from_pretrained("cmanp-bo", X[:n], Y[:n])
            t0 = time.perf_counter()
            model = model.condition_on_observations(X[n:], Y[n:])
            model.noise_variance()  # re-estimated for every streamed model, from at most 256 points
        else:
            from botorch.fit import fit_gpytorch_mll
            from botorch.models import SingleTaskGP
            from gpytorch.mlls import ExactMarginalLogLikelihood

            t0 = time.perf_counter()
            model = SingleTaskGP(X, Y)
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        t1 = time.perf_counter()
        acq = LogExpectedImprovement(model, best_f=Y.max())
        evals = []
        acq.register_forward_hook(lambda *_: evals.append(1))
        torch.manual_seed(seed)  # the raw samples: each cell is reproducible whatever ran before it
        optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512)
        t2 = time.perf_counter()
    return {"s": t2 - t0, "update_s": t1 - t0, "evals": len(evals)}


def cell(runs: list[dict]) -> dict:
    """Median over iterations on different data; ``s_per_eval``: optimisation seconds per evaluation."""
    return {"s": statistics.median(r["s"] for r in runs), "s_min": min(r["s"] for r in runs),
            "s_max": max(r["s"] for r in runs), "update_s": statistics.median(r["update_s"] for r in runs),
            "evals": statistics.median(r["evals"] for r in runs),
            "s_per_eval": statistics.median((r["s"] - r["update_s"]) / r["evals"] for r in runs),
            "repeats": len(runs)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 2000, 10000, 100000])
    parser.add_argument("--gp-timeout", type=float, default=300.0)
    parser.add_argument("--repeats", type=int, default=3,
                        help="CMANP iterations per size, on data from seeds 0..repeats-1; the median is reported "
                             "(the GP: one iteration per size, seed 0)")
    parser.add_argument("--no-gp", action="store_true", help="CMANP rows only")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads for both methods (default: torch's choice); 1 when other jobs share "
                             "the machine, since oversubscribed threads slow both sides unevenly")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.one:
        print(json.dumps(iteration(args.one[0], int(args.one[1]))))
        return
    iteration("cmanp", 20)  # untimed warm-up: the first call pays for imports and lazy initialisation
    rows = []
    gp_gave_up = args.no_gp
    for n in args.sizes:
        cmanp = cell([iteration("cmanp", n, seed) for seed in range(args.repeats)])
        row = {"n": n, "cmanp_s": cmanp["s"], "cmanp": cmanp, "gp_s": None, "gp": None}
        if not gp_gave_up:
            try:
                threads = [] if args.threads is None else ["--threads", str(args.threads)]
                out = subprocess.run([sys.executable, __file__, "--one", "gp", str(n), *threads], capture_output=True,
                                     text=True, timeout=args.gp_timeout, check=True)
                row["gp"] = json.loads(out.stdout.strip().splitlines()[-1])
                row["gp_s"] = row["gp"]["s"]
            except subprocess.TimeoutExpired:
                gp_gave_up = True
        print(json.dumps(row))
        rows.append(row)
    if rows:
        first, last = rows[0], rows[-1]
        print(f"CMANP s/iter N={last['n']:,} / N={first['n']:,}: {last['cmanp_s'] / first['cmanp_s']:.2f}x; "
              f"s/evaluation: {last['cmanp']['s_per_eval'] / first['cmanp']['s_per_eval']:.2f}x")
    if not args.no_write:
        fig, (ax,) = new_figure(1, width=5.0, height=3.8)
        ax.plot([r["n"] for r in rows], [r["cmanp_s"] for r in rows], "o-", label="CMANP (NPModel, cmanp-bo)")
        gp = [r for r in rows if r["gp_s"] is not None]
        ax.plot([r["n"] for r in gp], [r["gp_s"] for r in gp], "s-", label="SingleTaskGP (refit)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("observations N")
        ax.set_ylabel("seconds per BO iteration")
        ax.set_title("Hartmann-6, LogEI")
        ax.legend(fontsize=8)
        save_figure(fig, "bo_scaling")
    command = COMMAND + ("" if args.threads is None else f" --threads {args.threads}")
    lines = ["## BO iteration time vs N (CMANP vs SingleTaskGP)", "",
             f"Command: `{command}` (CPU: {machine_line()}). Hartmann-6, one iteration = add one observation "
             "(CMANP: `condition_on_observations` and the streamed model's noise estimate; GP: refit with "
             "`fit_gpytorch_mll`) + LogEI `optimize_acqf` (10 restarts, 512 raw samples). CMANP: median of "
             f"{args.repeats} iterations on different data (range in brackets); the optimiser's number of "
             "acquisition evaluations varies several-fold between data sets at the same N, so the model's own "
             "cost is the update and the seconds per evaluation. GP: one iteration per cell, stopped after "
             f"{args.gp_timeout:.0f} s; from there on the GP column says `stopped`. Last column: the GP times "
             "quoted in protocols.md §4 (another 2-core CPU machine, BoTorch 0.18). ",
             "", "| N | CMANP (s/iter) | CMANP update (ms) | evaluations | CMANP ms/eval | SingleTaskGP (s/iter) "
             "| GP / CMANP | GP, protocols.md (s/iter) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        c = r["cmanp"]
        gp = ("not run" if args.no_gp else "stopped") if r["gp_s"] is None else f"{r['gp_s']:.2f}"
        ratio = "-" if r["gp_s"] is None else f"{r['gp_s'] / r['cmanp_s']:.1f}x"
        lines.append(f"| {r['n']:,} | {c['s']:.2f} ({c['s_min']:.2f}-{c['s_max']:.2f}) | {1e3 * c['update_s']:.1f} "
                     f"| {c['evals']:.0f} | {1e3 * c['s_per_eval']:.1f} | {gp} | {ratio} "
                     f"| {PUBLISHED_GP.get(r['n'], '-')} |")
    lines += ["", "![Seconds per BO iteration vs N, log axes](figures/bo_scaling.png)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("bo-scaling", text, "bo_scaling.json", COMMAND, {"rows": rows}, pages=("benchmarks.md", "results.md"))


if __name__ == "__main__":
    main()
