"""Cost of one acquisition evaluation on a fixed batch, code tree against code tree.

One evaluation = LogEI's value and its gradient in the inputs, for an ``NPModel`` on N
observations of a smooth function on ``[0, 1]^d``, at a fixed batch of 10 x 1 x d points
(one L-BFGS-B step of ``optimize_acqf`` with 10 restarts asks for that): the work of one
acquisition evaluation without the optimiser's choices, so two code trees are compared on
the same work. One torch thread. A cell runs ``--rounds`` rounds of ``--per-round``
evaluations after a warm-up round; its figure is the fastest round's mean (the round least
disturbed by other work on the machine) and the median round's.

``--trees A B ...``: every cell is measured in a fresh process per tree (``PYTHONPATH`` set
to the tree), the trees taking turns, ``--repeats`` times; the table gives each tree's best
figure over the repeats and the ratio to the first tree's. Predictions are checked to agree
between the trees (the value and gradient of the last evaluation).

    python experiments/benchmarks/acq_eval_cost.py --trees /path/to/old/tree .
    python experiments/benchmarks/acq_eval_cost.py --trees . --sizes 10 --models tnpd-bo --no-write
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, publish  # noqa: E402

COMMAND = "python experiments/benchmarks/acq_eval_cost.py"


def measure(model: str, n: int, d: int, rounds: int, per_round: int) -> dict:
    """One cell in this process: ``{"min_ms", "median_ms", "value", "grad"}``."""
    import torch
    from botorch.acquisition import LogExpectedImprovement

    from npbandit.models import NPModel

    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    Y = (-(X - 0.35).pow(2).sum(-1) + 0.2 * torch.sin(4.0 * X).mean(-1)).unsqueeze(-1)
    batch = torch.rand(10, 1, d, generator=g, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acq = LogExpectedImprovement(NPModel.from_pretrained(model, X, Y), best_f=Y.max())
        means = []
        for _ in range(rounds + 1):
            t0 = time.perf_counter()
            for _ in range(per_round):
                x = batch.clone().requires_grad_(True)
                value = acq(x).sum()
                (grad,) = torch.autograd.grad(value, x)
            means.append((time.perf_counter() - t0) / per_round)
    means = means[1:]  # the first round warms up
    return {"min_ms": 1e3 * min(means), "median_ms": 1e3 * statistics.median(means), "value": value.item(),
            "grad": grad.flatten().tolist()}


def tree_label(tree: Path) -> str:
    """The tree's commit (short hash; ``+changes`` when its work tree differs from it)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "?"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=Path, nargs="+", default=[Path(".")])
    parser.add_argument("--models", nargs="+", default=["tnpd-bo", "cmanp-bo"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--dims", type=int, nargs="+", default=[6])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--per-round", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one[0], int(args.one[1]), int(args.one[2]), args.rounds, args.per_round)))
        return
    if min(args.rounds, args.per_round, args.repeats) < 1 or min(args.sizes) < 1 or min(args.dims) < 1:
        parser.error("--rounds, --per-round, --repeats, --sizes and --dims must be positive")
    trees = [t.resolve() for t in args.trees]
    labels = [tree_label(t) for t in trees]
    rows = []
    start = time.perf_counter()
    for model in args.models:
        for d in args.dims:
            for n in args.sizes:
                runs: list[list[dict]] = [[] for _ in trees]
                for _ in range(args.repeats):
                    for i, tree in enumerate(trees):
                        env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
                        out = subprocess.run([sys.executable, __file__, "--one", model, str(n), str(d), "--rounds",
                                              str(args.rounds), "--per-round", str(args.per_round)], env=env,
                                             capture_output=True, text=True, check=True)
                        runs[i].append(json.loads(out.stdout.strip().splitlines()[-1]))
                first = runs[0][0]
                row = {"model": model, "d": d, "n": n,
                       "min_ms": [min(r["min_ms"] for r in tree_runs) for tree_runs in runs],
                       "median_ms": [min(r["median_ms"] for r in tree_runs) for tree_runs in runs],
                       "value_diff": [abs(r[0]["value"] - first["value"]) for r in runs],
                       "grad_diff": [max(abs(a - b) for a, b in zip(r[0]["grad"], first["grad"])) for r in runs]}
                print(json.dumps(row), flush=True)
                rows.append(row)
    wall = time.perf_counter() - start
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    heads = " | ".join([f"`{label}` fastest (median) ms" for label in labels]
                       + [f"`{label}` / `{labels[0]}`" for label in labels[1:]])
    lines = ["## Cost of one acquisition evaluation, code tree against code tree", "",
             f"Command: `{COMMAND} --trees {' '.join(str(t) for t in args.trees)}` (CPU: {machine_line(1)}; "
             f"whole run {wall / 60:.1f} min; load average {' / '.join(load)} (1 / 5 / 15 min) at its end). LogEI "
             "value and input gradient of `NPModel.from_pretrained(checkpoint, X, Y)` (N points of a smooth "
             "function on [0, 1]^d) at a fixed batch of 10 x 1 x d points: one acquisition evaluation without "
             f"the optimiser's choices. Per cell and tree: {args.rounds} rounds of {args.per_round} evaluations in a "
             f"fresh process, the trees taking turns, {args.repeats} times; the fastest round's mean (the round "
             "least disturbed by other work on the machine; in brackets the median round's), best over the "
             "repeats. Last columns: the largest difference of the LogEI value and of its gradient from the first "
             "tree's.", "",
             f"| checkpoint | d | N | {heads} | value diff | gradient diff |",
             "|---|---:|---:|" + "---:|" * (2 * len(trees) + 1)]
    for r in rows:
        cells = " | ".join([f"{lo:.2f} ({med:.2f})" for lo, med in zip(r["min_ms"], r["median_ms"])]
                           + [f"{lo / r['min_ms'][0]:.2f}" for lo in r["min_ms"][1:]])
        lines.append(f"| {r['model']} | {r['d']} | {r['n']:,} | {cells} | {max(r['value_diff']):.1e} "
                     f"| {max(r['grad_diff']):.1e} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("acq-eval-cost", text, "acq_eval_cost.json", COMMAND, {"trees": [str(t) for t in trees],
                "labels": labels, "rows": rows, "wall_s": wall, "load": load}, threads=1)


if __name__ == "__main__":
    main()
