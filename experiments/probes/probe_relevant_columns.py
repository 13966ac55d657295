"""How often does ``RelevantColumns`` keep each truly relevant input of a wide problem?

A model narrower than its data reads ``width`` (6) of its ``D`` columns, chosen from the
observed data (:class:`npbandit.models.RelevantColumns`). This probe draws ``n`` uniform
points in ``[0, 1]^D`` (``D`` = 8 and 12), evaluates a function of a few of the columns
(placed at random, a fresh placement per seed; the rest inert) and reports, per rule, the
share of relevant inputs kept and the share of draws that kept all of them:

* ``marginal``: the rule before forward selection -- per column the largest absolute
  correlation of the output with the column or with its distance from the best or the
  worst observed point (:func:`npbandit.models.columns.relevance`), the top ``width``;
* ``forward``: :class:`~npbandit.models.RelevantColumns` as it is now.

Functions: ``quad4`` (four equal bowls, centres in ``[0.2, 0.8]``: the Ax review's case),
``mixed4`` (a trend, two bowls of unequal weight, a sine), ``styb4`` (Styblinski-Tang in 4
inputs), ``branin`` (2 inputs), ``hartmann6`` (6 inputs: all 6 read columns must be right).

    python experiments/probes/probe_relevant_columns.py --seeds 40
"""

from __future__ import annotations

import argparse
import math

import torch
from botorch.test_functions import Hartmann

from npbandit.models import RelevantColumns
from npbandit.models.columns import relevance

WIDTH = 6


def marginal(X: torch.Tensor, Y: torch.Tensor, width: int) -> tuple[int, ...]:
    """The rule before forward selection (see the module docstring)."""
    best, worst = int(torch.argmax(Y[:, 0])), int(torch.argmin(Y[:, 0]))
    score = torch.maximum(relevance(X, Y, X[best]), relevance(X, Y, X[worst]))
    return tuple(sorted(torch.sort(-score, stable=True).indices[:width].tolist()))


def forward(X: torch.Tensor, Y: torch.Tensor, width: int) -> tuple[int, ...]:
    return RelevantColumns().select(X, Y, width)


RULES = {"marginal": marginal, "forward": forward}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--dims", type=int, nargs="+", default=[8, 12])
    parser.add_argument("--points", type=int, nargs="+", default=[10, 20, 30])
    parser.add_argument("--problems", nargs="+", default=["quad4", "mixed4", "styb4", "branin", "hartmann6"])
    args = parser.parse_args()
    torch.set_num_threads(1)
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
