"""How often does ``RelevantColumns`` keep each truly relevant input of a wide problem?

A model narrower than its data reads ``width`` (6) of its ``D`` columns, chosen from the
observed data (:class:`npbandit.models.RelevantColumns`). This probe draws ``n`` uniform
points in ``[0, 1]^D`` (``D`` = 8 and 12), evaluates a function of a few of the columns
(placed at random, a fresh placement per seed; the rest inert) and reports, per rule, the
share of relevant inputs kept and the share of draws that kept all of them:

* ``marginal``: the rule before the joint fit -- per column the largest absolute
  correlation of the output with the column or with its distance from the best or the
  worst observed point (:func:`npbandit.models.columns.relevance`), the top ``width``;
* ``forward``: forward selection on each column's quadratic (``x``, ``x**2``), taking each
  chosen column's fit out of the output before scoring the next (when an F test at 0.2,
  Bonferroni over the columns left, supports it) -- tried and rejected: it loses on Ax's
  own data, where the inputs that matter move together;
* ``joint``: :class:`~npbandit.models.RelevantColumns` as it is now (ridge regression on
  every column's quadratic at once).

With ``--datasets DIR`` it scores the rules instead on datasets saved by
``probe_ax_wide_review.py --dump DIR`` (each model-based trial's data of an Ax loop on 8
parameters of which ``x0..x3`` matter): how many of them each rule would read all four of.

Functions: ``quad4`` (four equal bowls, centres in ``[0.2, 0.8]``: the Ax review's case),
``mixed4`` (a trend, two bowls of unequal weight, a sine), ``styb4`` (Styblinski-Tang in 4
inputs), ``branin`` (2 inputs), ``hartmann6`` (6 inputs: all 6 read columns must be right).

    python experiments/probes/probe_relevant_columns.py --seeds 40
    python experiments/probes/probe_relevant_columns.py --datasets runs/ax_wide_review
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import torch
from botorch.test_functions import Hartmann

from npbandit.models import RelevantColumns
from npbandit.models.columns import _quadratic_features, relevance

WIDTH = 6


def marginal(X: torch.Tensor, Y: torch.Tensor, width: int) -> tuple[int, ...]:
    """The rule before forward selection (see the module docstring)."""
    best, worst = int(torch.argmax(Y[:, 0])), int(torch.argmin(Y[:, 0]))
    score = torch.maximum(relevance(X, Y, X[best]), relevance(X, Y, X[worst]))
    return tuple(sorted(torch.sort(-score, stable=True).indices[:width].tolist()))


def forward(X: torch.Tensor, Y: torch.Tensor, width: int, alpha: float = 0.2) -> tuple[int, ...]:
    """Forward selection on each column's quadratic (see the module docstring)."""
    n, D = X.shape
    F = _quadratic_features(X)  # [n, D, 2], orthonormal per column
    y = Y - Y.mean(dim=0)
    residual, taken, chosen = y, [], []
    for _ in range(min(width, D)):
        proj = torch.einsum("ndk,nm->dmk", F, residual)
        score = ((proj**2).sum(-1) / (residual**2).sum(0).clamp_min(1e-300)).amax(-1).clamp(0, 1)
        score[chosen] = -1.0
        j = int(torch.sort(-score, stable=True).indices[0])
        chosen.append(j)
        df = n - 1 - 2 * len(taken) - 2
        if df >= 1 and (1 - float(score[j])) ** (df / 2) * (D - len(chosen) + 1) < alpha:
            taken.append(j)
            A = torch.cat([torch.ones(n, 1, dtype=X.dtype)] + [F[:, c, :] for c in taken], dim=1)
            residual = y - A @ torch.linalg.lstsq(A, y).solution
    return tuple(sorted(chosen))


def joint(X: torch.Tensor, Y: torch.Tensor, width: int) -> tuple[int, ...]:
    return RelevantColumns().select(X, Y, width)


RULES = {"marginal": marginal, "forward": forward, "joint": joint}


def problem(name: str, D: int, g: torch.Generator):
    """``(relevant column indices, f: [n, D] -> [n])``."""
    perm = torch.randperm(D, generator=g)
    centre = 0.2 + 0.6 * torch.rand(4, generator=g, dtype=torch.float64)
    if name == "quad4":
        idx = perm[:4]
        return idx, lambda X: ((X[:, idx] - centre) ** 2).sum(-1)
    if name == "mixed4":
        idx = perm[:4]
        return idx, lambda X: (X[:, idx[0]] + 2 * (X[:, idx[1]] - centre[1]) ** 2 + (X[:, idx[2]] - centre[2]) ** 2
                               + 0.5 * torch.sin(6 * X[:, idx[3]]))
    if name == "styb4":
        idx = perm[:4]

        def styb(X):
            z = 10 * X[:, idx] - 5
            return (z**4 - 16 * z**2 + 5 * z).sum(-1) / 2
        return idx, styb
    if name == "branin":
        idx = perm[:2]

        def branin(X):
            x1, x2 = 15 * X[:, idx[0]] - 5, 15 * X[:, idx[1]]
            b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
            return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * torch.cos(x1) + 10
        return idx, branin
    if name == "hartmann6":
        idx, h = perm[:6], Hartmann(6)
        return idx, lambda X: h(X[:, idx])
    raise ValueError(name)


def saved(folder: Path) -> None:
    """Per rule, how many of the saved datasets (``x0..x3`` relevant) it reads all four of, by
    the dataset's size."""
    files = sorted(folder.glob("*.pt"))
    print(f"datasets in which each rule chooses all of x0..x3 ({len(files)} datasets, width {WIDTH})")
    print("| points | datasets | " + " | ".join(RULES) + " |")
    print("|---|---:|" + "---:|" * len(RULES))
    groups = {"5-12": lambda n: n < 13, "13-24": lambda n: n >= 13, "all": lambda n: True}
    data = [torch.load(f) for f in files]
    for label, keep in groups.items():
        chosen = [d for d in data if keep(len(d["X"]))]
        cells = []
        for rule in RULES.values():
            hits = sum({0, 1, 2, 3} <= set(rule(d["X"].double(), d["Y"].double().reshape(len(d["X"]), -1), WIDTH))
                       for d in chosen)
            cells.append(f"{hits} / {len(chosen)}")
        print(f"| {label} | {len(chosen)} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--dims", type=int, nargs="+", default=[8, 12])
    parser.add_argument("--points", type=int, nargs="+", default=[10, 20, 30])
    parser.add_argument("--problems", nargs="+", default=["quad4", "mixed4", "styb4", "branin", "hartmann6"])
    parser.add_argument("--datasets", default=None, help="a folder of datasets saved by probe_ax_wide_review.py")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.datasets:
        saved(Path(args.datasets))
        return
    print(f"share of relevant inputs kept / share of draws keeping all ({args.seeds} seeds, width {WIDTH})")
    print("| D | problem | n | " + " | ".join(RULES) + " |")
    print("|---:|---|---:|" + "---:|" * len(RULES))
    for D in args.dims:
        for name in args.problems:
            for n in args.points:
                kept = {k: [0.0, 0] for k in RULES}
                for seed in range(args.seeds):
                    g = torch.Generator().manual_seed(1000 * seed + D)
                    idx, f = problem(name, D, g)
                    X = torch.rand(n, D, generator=g, dtype=torch.float64)
                    Y = (f(X) + 1e-3 * torch.randn(n, generator=g, dtype=torch.float64))[:, None]
                    for k, rule in RULES.items():
                        hits = sum(int(i) in set(rule(X, Y, WIDTH)) for i in idx.tolist())
                        kept[k][0] += hits / len(idx)
                        kept[k][1] += hits == len(idx)
                cells = " | ".join(f"{a / args.seeds:.2f} / {b / args.seeds:.2f}" for a, b in kept.values())
                print(f"| {D} | {name} | {n} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
