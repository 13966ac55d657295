"""Cost of one acquisition evaluation on a fixed batch, code tree against code tree.

One evaluation = LogEI's value and its gradient in the inputs, for an ``NPModel`` on N
observations of a smooth function on ``[0, 1]^d``, at a fixed batch of 10 x 1 x d points
(one L-BFGS-B step of ``optimize_acqf`` with 10 restarts asks for that): the work of one
acquisition evaluation without the optimiser's choices, so two code trees are compared on
the same work. One torch thread. ``--points P`` evaluates P x 1 x d points instead, and
``--no-grad`` the values alone under ``torch.no_grad()``: ``--points 256 --no-grad`` is one
refinement round of ``CandidateSearch`` (8 walkers x 32 samples; its first pass scores 512).
``--candidate-search`` times a whole proposal instead: ``CandidateSearch().maximise(acq, [0, 1]^d,
seed=0)`` with each tree's own ``CandidateSearch`` (2,560 values in 9 forward passes); the
differences are then those of the best values it returns.

``--trees A B ...``: each tree's ``npbandit`` package is copied into a temporary directory
under another name (``npbandit_t0``, ``npbandit_t1``, ...; its absolute imports rewritten to
that name), so that every tree runs in one process: a cell builds one model per tree and
then runs ``--rounds`` rounds, each round ``--per-round`` evaluations of every tree in turn
(the order reversed every other round), after a warm-up round. On a machine shared with
other work the load then falls on every tree alike; a tree's figure is the 10th percentile
of its rounds' means (a round at the machine's undisturbed pace, not its luckiest one), and
the median. The values and gradients of every tree are checked against the first tree's.

    python experiments/benchmarks/acq_eval_cost.py --trees /path/to/old/tree .
    python experiments/benchmarks/acq_eval_cost.py --trees /path/to/old/tree . --points 256 --no-grad
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


def measure(packages: list[str], model: str, n: int, d: int, rounds: int, per_round: int, points: int = 10,
            grad: bool = True, search: bool = False) -> dict:
    """One cell, every package in this process in turn: per package the 10th-percentile and
    median round's ms per evaluation (``points`` x 1 x d points; value and input gradient, or
    without ``grad`` the value alone under ``torch.no_grad()``), and the largest difference of
    its value and gradient (without ``grad``: 0) from the first package's. With ``search`` an
    evaluation is a whole ``CandidateSearch`` proposal (see the module docstring)."""
    import torch
    from botorch.acquisition import LogExpectedImprovement

    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    Y = (-(X - 0.35).pow(2).sum(-1) + 0.2 * torch.sin(4.0 * X).mean(-1)).unsqueeze(-1)
    batch = torch.rand(points, 1, d, generator=g, dtype=torch.float64)
    bounds = torch.stack([torch.zeros(d), torch.ones(d)]).to(torch.float64)
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
                    if search:
                        optimizer = importlib.import_module(f"{packages[i]}.acquisition").CandidateSearch()
                        _, values = optimizer.maximise(acqs[i], bounds, 0)
                        gradient = torch.zeros(())
                    elif grad:
                        x = batch.clone().requires_grad_(True)
                        values = acqs[i](x)
                        (gradient,) = torch.autograd.grad(values.sum(), x)
                    else:
                        with torch.no_grad():
                            values = acqs[i](batch)
                        gradient = torch.zeros(())
                if r:  # the first round warms up
                    means[i].append((time.perf_counter() - t0) / per_round)
                last[i] = (values.detach(), gradient)
    return {"p10_ms": [1e3 * sorted(m)[len(m) // 10] for m in means],
            "median_ms": [1e3 * statistics.median(m) for m in means],
            "value_diff": [(v - last[0][0]).abs().max().item() for v, _ in last],
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
    parser.add_argument("--points", type=int, default=10, help="t-batches (of one point) per evaluation")
    parser.add_argument("--no-grad", action="store_true", help="the values alone, under torch.no_grad()")
    parser.add_argument("--candidate-search", action="store_true", help="a whole CandidateSearch proposal")
    parser.add_argument("--section", default="acq-eval-cost",
                        help="the section of experiments/log/benchmarks.md to write (and results/<section>.json)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if min(args.rounds, args.per_round, args.points) < 1 or min(args.sizes) < 1 or min(args.dims) < 1:
        parser.error("--rounds, --per-round, --points, --sizes and --dims must be positive")
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
                    row = {"model": model, "d": d, "n": n, "points": args.points, "grad": not args.no_grad,
                           "candidate_search": args.candidate_search,
                           **measure(packages, model, n, d, args.rounds, args.per_round, args.points,
                                     not args.no_grad, args.candidate_search)}
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    wall = time.perf_counter() - start
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    heads = " | ".join([f"`{label}` ms (median)" for label in labels]
                       + [f"`{label}` / `{labels[0]}`" for label in labels[1:]])
    options = "".join(f" {flag}" for flag, on in (
        (f"--models {' '.join(args.models)}", args.models != ["tnpd-bo", "cmanp-bo"]),
        (f"--rounds {args.rounds}", args.rounds != 60), (f"--per-round {args.per_round}", args.per_round != 5),
        (f"--points {args.points}", args.points != 10), ("--no-grad", args.no_grad),
        ("--candidate-search", args.candidate_search), (f"--section {args.section}", args.section != "acq-eval-cost"))
        if on)
    work = ("value and input gradient" if not args.no_grad else "value alone (under `torch.no_grad()`)")
    what = (f"at a fixed batch of {args.points} x 1 x d points: one acquisition evaluation without the optimiser's "
            "choices")
    diffs = "of the LogEI value and of its gradient" if not args.no_grad else "of the LogEI values (no gradient)"
    if args.candidate_search:
        work, diffs = "maximised", "of the best LogEI values found"
        what = ("by `CandidateSearch().maximise(acq, [0, 1]^d, seed=0)` (each tree's own; 2,560 values in 9 "
                "forward passes): one whole proposal")
    lines = ["## Cost of one acquisition evaluation, code tree against code tree", "",
             f"Command: `{COMMAND} --trees {' '.join(str(t) for t in args.trees)}{options}` (CPU: "
             f"{machine_line(1)}; whole run {wall / 60:.1f} min; load average {' / '.join(load)} (1 / 5 / 15 min) at "
             f"its end). LogEI {work} of `NPModel.from_pretrained(checkpoint, X, Y)` (N points of a smooth "
             f"function on [0, 1]^d) {what}. Every tree in one process (its `npbandit` copied under another name), "
             f"{args.rounds} rounds of {args.per_round} evaluations per tree, the trees in turn within each round: "
             "the 10th percentile of a tree's round means (in brackets the median), and the ratio of the 10th "
             f"percentiles. Last columns: the largest difference {diffs} from the first tree's.", "",
             f"| checkpoint | d | N | {heads} | value diff | gradient diff |",
             "|---|---:|---:|" + "---:|" * (2 * len(trees) + 1)]
    for r in rows:
        cells = " | ".join([f"{lo:.2f} ({med:.2f})" for lo, med in zip(r["p10_ms"], r["median_ms"])]
                           + [f"{lo / r['p10_ms'][0]:.2f}" for lo in r["p10_ms"][1:]])
        grad_diff = f"{max(r['grad_diff']):.1e}" if r["grad"] and not r["candidate_search"] else "-"
        lines.append(f"| {r['model']} | {r['d']} | {r['n']:,} | {cells} | {max(r['value_diff']):.1e} | {grad_diff} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish(args.section, text, args.section.replace("-", "_") + ".json", COMMAND + options,
                {"trees": [str(t) for t in trees], "labels": labels, "rows": rows, "wall_s": wall, "load": load},
                threads=1)


if __name__ == "__main__":
    main()
