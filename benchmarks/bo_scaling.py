"""Time per BO iteration vs the number of observations N: CMANP vs an exact GP.

One iteration = fold one new observation into the model + one LogEI ``optimize_acqf``
(10 restarts, 512 raw samples) on Hartmann-6 (float64). CMANP: ``NPModel`` built once
on N points, then ``condition_on_observations`` (constant cost) + the acquisition
optimisation. GP: ``SingleTaskGP`` refit on N + 1 points (``fit_gpytorch_mll``) + the
same optimisation; run in a subprocess and stopped after ``--gp-timeout`` seconds.

    python benchmarks/bo_scaling.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, new_figure, publish, save_figure  # noqa: E402

COMMAND = "python benchmarks/bo_scaling.py"
# PROTOCOLS.md §4: SingleTaskGP fit + LogEI on Hartmann-6, 2-core CPU, BoTorch 0.18 (s/iter)
PUBLISHED_GP = {200: "0.7", 1000: "5-12", 2000: "40-122", 4000: "~780 (fit alone)"}


def iteration(kind: str, n: int, seed: int = 0) -> float:
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
            model.posterior(X[:1, None])  # the noise estimate is computed once per training set
            t0 = time.perf_counter()
            model = model.condition_on_observations(X[n:], Y[n:])
        else:
            from botorch.fit import fit_gpytorch_mll
            from botorch.models import SingleTaskGP
            from gpytorch.mlls import ExactMarginalLogLikelihood

            t0 = time.perf_counter()
            model = SingleTaskGP(X, Y)
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        optimize_acqf(LogExpectedImprovement(model, best_f=Y.max()), bounds, q=1, num_restarts=10, raw_samples=512)
        return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 1000, 2000, 5000, 10000])
    parser.add_argument("--gp-timeout", type=float, default=300.0)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads for both methods (default: torch's choice); 1 when other jobs share "
                             "the machine, since oversubscribed threads slow both sides unevenly")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)
    if args.one:
        print(iteration(args.one[0], int(args.one[1])))
        return
    iteration("cmanp", 20)  # untimed warm-up: the first call pays for imports and lazy initialisation
    rows = []
    gp_gave_up = False
    for n in args.sizes:
        row = {"n": n, "cmanp_s": iteration("cmanp", n), "gp_s": None}
        if not gp_gave_up:
            try:
                threads = [] if args.threads is None else ["--threads", str(args.threads)]
                out = subprocess.run([sys.executable, __file__, "--one", "gp", str(n), *threads], capture_output=True,
                                     text=True, timeout=args.gp_timeout, check=True)
                row["gp_s"] = float(out.stdout.strip().splitlines()[-1])
            except subprocess.TimeoutExpired:
                gp_gave_up = True
        print(json.dumps(row))
        rows.append(row)
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
    lines = ["## BO iteration time vs N (CMANP vs SingleTaskGP)", "",
             f"Command: `{COMMAND}{'' if args.threads is None else f' --threads {args.threads}'}` "
             f"(CPU: {machine_line()}). Hartmann-6, one iteration = add one observation "
             "(CMANP: `condition_on_observations`; GP: refit with `fit_gpytorch_mll`) + LogEI `optimize_acqf` "
             f"(10 restarts, 512 raw samples), one iteration per cell. GP runs stopped after "
             f"{args.gp_timeout:.0f} s; from there on the GP column says `stopped`. Last column: the GP times "
             "quoted in PROTOCOLS.md §4 (another 2-core CPU machine, BoTorch 0.18). ",
             "", "| N | CMANP (s/iter) | SingleTaskGP (s/iter) | GP / CMANP | GP, PROTOCOLS.md (s/iter) |",
             "|---:|---:|---:|---:|---:|"]
    for r in rows:
        gp = "stopped" if r["gp_s"] is None else f"{r['gp_s']:.2f}"
        ratio = "-" if r["gp_s"] is None else f"{r['gp_s'] / r['cmanp_s']:.1f}x"
        lines.append(f"| {r['n']:,} | {r['cmanp_s']:.2f} | {gp} | {ratio} | {PUBLISHED_GP.get(r['n'], '-')} |")
    lines += ["", "![Seconds per BO iteration vs N, log axes](figures/bo_scaling.png)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("bo-scaling", text, "bo_scaling.json", COMMAND, {"rows": rows}, pages=("benchmarks.md", "results.md"))


if __name__ == "__main__":
    main()
