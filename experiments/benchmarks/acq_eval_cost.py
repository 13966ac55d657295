"""Cost of one acquisition evaluation on a fixed batch, code tree against code tree.

One evaluation = LogEI's value and its gradient in the inputs, for an ``NPModel`` on N
observations of a smooth function on ``[0, 1]^d``, at a fixed batch of 10 x 1 x d points
(one L-BFGS-B step of ``optimize_acqf`` with 10 restarts asks for that): the work of one
acquisition evaluation without the optimiser's choices, so two code trees are compared on
the same work. One torch thread.

``--trees A B ...``: each tree's ``npbandit`` package is copied into a temporary directory
under another name (``npbandit_t0``, ``npbandit_t1``, ...; its absolute imports rewritten to
that name), so that every tree runs in one process: a cell builds one model per tree and
then runs ``--rounds`` rounds, each round ``--per-round`` evaluations of every tree in turn
(the order reversed every other round), after a warm-up round. On a machine shared with
other work the load then falls on every tree alike; a tree's figure is the 10th percentile
of its rounds' means (a round at the machine's undisturbed pace, not its luckiest one), and
the median. The values and gradients of every tree are checked against the first tree's.

    python experiments/benchmarks/acq_eval_cost.py --trees /path/to/old/tree .
    python experiments/benchmarks/acq_eval_cost.py --trees . --sizes 10 --models tnpd-bo --no-write
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, publish  # noqa: E402

COMMAND = "python experiments/benchmarks/acq_eval_cost.py"


def copy_package(tree: Path, name: str, into: Path) -> None:
    """``tree``'s ``npbandit`` as package ``name`` in directory ``into``, its imports of
    ``npbandit`` rewritten to ``name``."""
    target = into / name
    shutil.copytree(tree / "npbandit", target, ignore=shutil.ignore_patterns("__pycache__"))
    pattern = re.compile(r"\bnpbandit(?=[.:\s]|$)", re.M)
    for path in target.rglob("*.py"):
        path.write_text(pattern.sub(name, path.read_text()))


def measure(packages: list[str], model: str, n: int, d: int, rounds: int, per_round: int) -> dict:
    """One cell, every package in this process in turn: per package the 10th-percentile and
    median round's ms per evaluation, and the largest difference of its value and gradient
    from the first package's."""
    import torch
    from botorch.acquisition import LogExpectedImprovement

    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    Y = (-(X - 0.35).pow(2).sum(-1) + 0.2 * torch.sin(4.0 * X).mean(-1)).unsqueeze(-1)
    batch = torch.rand(10, 1, d, generator=g, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acqs = [LogExpectedImprovement(importlib.import_module(f"{p}.models").NPModel.from_pretrained(model, X, Y),
                                       best_f=Y.max()) for p in packages]
        means: list[list[float]] = [[] for _ in packages]
        last: list[tuple] = [()] * len(packages)
        for r in range(rounds + 1):
            order = list(range(len(packages)))[:: 1 if r % 2 == 0 else -1]
            for i in order:
                t0 = time.perf_counter()
                for _ in range(per_round):
                    x = batch.clone().requires_grad_(True)
                    value = acqs[i](x).sum()
                    (grad,) = torch.autograd.grad(value, x)
                if r:  # the first round warms up
                    means[i].append((time.perf_counter() - t0) / per_round)
                last[i] = (value.detach(), grad)
    return {"p10_ms": [1e3 * sorted(m)[len(m) // 10] for m in means],
            "median_ms": [1e3 * statistics.median(m) for m in means],
            "value_diff": [(v - last[0][0]).abs().item() for v, _ in last],
            "grad_diff": [(gr - last[0][1]).abs().max().item() for _, gr in last]}


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
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--per-round", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if min(args.rounds, args.per_round) < 1 or min(args.sizes) < 1 or min(args.dims) < 1:
        parser.error("--rounds, --per-round, --sizes and --dims must be positive")
    trees = [t.resolve() for t in args.trees]
    labels = [tree_label(t) for t in trees]
    rows = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        packages = [f"npbandit_t{i}" for i in range(len(trees))]
        for tree, package in zip(trees, packages):
            copy_package(tree, package, Path(tmp))
        sys.path.insert(0, tmp)
        for model in args.models:
            for d in args.dims:
                for n in args.sizes:
                    row = {"model": model, "d": d, "n": n,
                           **measure(packages, model, n, d, args.rounds, args.per_round)}
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    wall = time.perf_counter() - start
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    heads = " | ".join([f"`{label}` ms (median)" for label in labels]
                       + [f"`{label}` / `{labels[0]}`" for label in labels[1:]])
    lines = ["## Cost of one acquisition evaluation, code tree against code tree", "",
             f"Command: `{COMMAND} --trees {' '.join(str(t) for t in args.trees)}` (CPU: {machine_line(1)}; "
             f"whole run {wall / 60:.1f} min; load average {' / '.join(load)} (1 / 5 / 15 min) at its end). LogEI "
             "value and input gradient of `NPModel.from_pretrained(checkpoint, X, Y)` (N points of a smooth "
             "function on [0, 1]^d) at a fixed batch of 10 x 1 x d points: one acquisition evaluation without "
             "the optimiser's choices. Every tree in one process (its `npbandit` copied under another name), "
             f"{args.rounds} rounds of {args.per_round} evaluations per tree, the trees in turn within each round: "
             "the 10th percentile of a tree's round means (in brackets the median), and the ratio of the 10th "
             "percentiles. Last columns: the largest difference of the LogEI value and of its gradient from the "
             "first tree's.", "",
             f"| checkpoint | d | N | {heads} | value diff | gradient diff |",
             "|---|---:|---:|" + "---:|" * (2 * len(trees) + 1)]
    for r in rows:
        cells = " | ".join([f"{lo:.2f} ({med:.2f})" for lo, med in zip(r["p10_ms"], r["median_ms"])]
                           + [f"{lo / r['p10_ms'][0]:.2f}" for lo in r["p10_ms"][1:]])
        lines.append(f"| {r['model']} | {r['d']} | {r['n']:,} | {cells} | {max(r['value_diff']):.1e} "
                     f"| {max(r['grad_diff']):.1e} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("acq-eval-cost", text, "acq_eval_cost.json", COMMAND, {"trees": [str(t) for t in trees],
                "labels": labels, "rows": rows, "wall_s": wall, "load": load}, threads=1)


if __name__ == "__main__":
    main()
