"""ReTreever query cost vs N: tokens read and latency, tree retrieval vs full cross-attention.

For N context points (batch 1, paper size: d_model 64, 4 heads, binary tree, float32,
random weights -- cost does not depend on training): the tokens each query reads
((b - 1) depth + P, against N for full cross-attention) and the latency of ``predict``
for 256 queries from a conditioned state, both modes on the same state.

    python experiments/benchmarks/retreever_cost.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, median_time, publish  # noqa: E402

from npbandit.surrogates import build  # noqa: E402

COMMAND = "python experiments/benchmarks/retreever_cost.py"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = build("retreever", 1, 1).eval()
    rows = []
    g = torch.Generator().manual_seed(0)
    xt = torch.rand(1, 256, 1, generator=g) * 4 - 2
    for n in args.sizes:
        x = torch.rand(1, n, 1, generator=g) * 4 - 2
        y = torch.sin(3 * x)
        with torch.inference_mode():
            state = model.condition(x, y)
            model.full_retrieval = False
            tree_s = median_time(lambda state=state: model.predict(state, xt))
            model.full_retrieval = True
            full_s = median_time(lambda state=state: model.predict(state, xt))
            model.full_retrieval = False
        row = {"n": n, "tokens_read": model.tokens_read(n), "fraction": model.tokens_read(n) / n,
               "tree_ms": 1e3 * tree_s, "full_ms": 1e3 * full_s}
        print(json.dumps(row))
        rows.append(row)
    lines = ["## ReTreever: tokens read and query latency", "",
             f"Command: `{COMMAND}` (CPU: {machine_line()}). Batch 1, paper-size ReTreever (binary tree), "
             "random weights; `predict` for 256 queries on one conditioned state (median).", "",
             "| N | tokens read per query | fraction of N | tree predict (ms) | full cross-attention predict (ms) | "
             "full / tree |", "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['n']:,} | {r['tokens_read']} | {100 * r['fraction']:.1f}% | {r['tree_ms']:.2f} | "
                     f"{r['full_ms']:.2f} | {r['full_ms'] / r['tree_ms']:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("retreever-cost", text, "retreever_cost.json", COMMAND, {"rows": rows})


if __name__ == "__main__":
    main()
