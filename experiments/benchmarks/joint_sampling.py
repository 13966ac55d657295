"""Joint sampling with CMANP-AND: memory against the context size N and the number of
targets M, time against M and the block size b_Q (issue 18, item 4).

One joint draw (batch 1, one sample) at M targets, taken in autoregressive blocks of
b_Q, after conditioning on N points; paper-size CMANP-AND, float32 on CPU, random
weights (cost does not depend on training).

- ``peak MB``: resident memory that conditioning on N points *and* drawing the M
  targets adds, in a fresh process per cell with glibc's mmap threshold fixed (as
  ``experiments/benchmarks/streaming.py`` measures CMANP's conditioning);
- ``draw MB``: what the draw alone adds to a ready state (another fresh process);
- ``sample (s)``: median time of the draw from a ready state, drawn as Thompson sampling
  draws it (the latent values, ``noise=`` held out: ``NPModel.joint_sample``).

The bars: peak memory at N = 100,000 within 1.5x of N = 1,000 (constant in N), and
at most linear in M.

    python experiments/benchmarks/joint_sampling.py                     # full table into experiments/log/benchmarks.md
    python experiments/benchmarks/joint_sampling.py --quick --no-write  # small sizes, print only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import torch
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, median_time, peak_memory_mb, publish  # noqa: E402

from npbandit.surrogates import build  # noqa: E402

COMMAND = "python experiments/benchmarks/joint_sampling.py"
FIXED_MMAP = {"MALLOC_MMAP_THRESHOLD_": "131072"}  # see experiments/benchmarks/streaming.py


def make_model(seed: int = 0):
    torch.manual_seed(seed)
    return build("cmanp-and", 1, 1).eval()


def make_points(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(1, n, 1, generator=g) * 4 - 2
    return x, torch.sin(3 * x) + 0.1 * torch.randn(1, n, 1, generator=g)


NOISE = 0.01  # the variance held out of the draws (a noise estimate in standardised units)


def draw(model, state, xt: torch.Tensor, block: int) -> torch.Tensor:
    return model.sample(state, xt, 1, torch.Generator().manual_seed(0), block_size=block, noise=NOISE)


def memory_probe(n: int, m: int, block: int, draw_only: int) -> float:
    """Peak MB that conditioning on n points and one joint draw at m targets add, or with
    ``draw_only`` the draw alone from a ready state (fresh process)."""
    model = make_model()
    x, y = make_points(n, 0)
    xt, _ = make_points(m, 1)
    with torch.inference_mode():
        warm = model.condition(*make_points(64, 2))
        draw(model, warm, xt[:, :block], block)
        if draw_only:
            state = model.condition(x, y)
            return peak_memory_mb(lambda: draw(model, state, xt, block))
        return peak_memory_mb(lambda: draw(model, model.condition(x, y), xt, block))


def measure_memory(n: int, m: int, block: int, draw_only: bool) -> float:
    out = subprocess.run([sys.executable, __file__, "--memory-probe", str(n), str(m), str(block), str(int(draw_only))],
                         check=True, capture_output=True, text=True, env={**os.environ, **FIXED_MMAP})
    return float(out.stdout.strip().splitlines()[-1])


def measure_time(n: int, m: int, block: int) -> float:
    model = make_model()
    xt, _ = make_points(m, 1)
    with torch.inference_mode():
        state = model.condition(*make_points(n, 0))
        # at least 3 repetitions: other jobs share the machine, and one slow run of a long draw would be the number
        return median_time(lambda: draw(model, state, xt, block), min_reps=3, max_reps=5, budget_s=5.0, warmup=0)


def render(rows: list[dict]) -> str:
    lines = ["## Joint sampling with CMANP-AND (issue 18)", "",
             f"Command: `{COMMAND}` (CPU: {machine_line()}, a shared machine with other jobs running). One "
             "joint draw of the latent values (`noise=` held out, as Thompson sampling draws them), batch 1, "
             "paper-size CMANP-AND (rank 20), float32, random weights (cost does not depend on training). "
             "`peak` is what conditioning on N points and the draw add, `draw` what the draw alone adds to a "
             "ready state, each in a fresh process (`MALLOC_MMAP_THRESHOLD_=131072`); time is the draw alone "
             "from a ready state (median of 3 to 5). Two training runs share the machine's 2 cores, so a cell's "
             "time can be off by up to 2x; compare ms per target across many cells, not two.", "",
             "| N | M | b_Q | peak (MB) | draw (MB) | sample (s) | ms per target |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['n']:,} | {r['m']:,} | {r['block']} | {r['peak_mb']:.1f} | {r['draw_mb']:.1f} | "
                     f"{r['sample_s']:.3f} | {1e3 * r['sample_s'] / r['m']:.2f} |")
    by = {(r["n"], r["m"], r["block"]): r for r in rows}
    ns, ms = sorted({r["n"] for r in rows}), sorted({r["m"] for r in rows})
    lines += ["", "Ratios (within this run):", ""]
    for (n, m, b), r in sorted(by.items()):
        if n == ns[-1] and (ns[0], m, b) in by and ns[0] != n:
            lo = by[(ns[0], m, b)]
            lines.append(f"- N = {n:,} vs {ns[0]:,} (M = {m:,}, b_Q = {b}): peak memory "
                         f"{r['peak_mb'] / lo['peak_mb']:.2f}x (bar ≤ 1.5x), draw memory "
                         f"{r['draw_mb'] / lo['draw_mb']:.2f}x, time {r['sample_s'] / lo['sample_s']:.2f}x")
    b0 = rows[0]["block"]
    small, large = by.get((ns[0], ms[0], b0)), by.get((ns[0], ms[-1], b0))
    if small and large and small is not large:
        lines.append(f"- M = {ms[-1]:,} vs {ms[0]:,} (N = {ns[0]:,}, b_Q = {b0}; {ms[-1] / ms[0]:.0f}x the targets): "
                     f"draw memory {large['draw_mb'] / small['draw_mb']:.2f}x, time "
                     f"{large['sample_s'] / small['sample_s']:.2f}x (linear in M: {ms[-1] / ms[0]:.0f}x; a draw is "
                     f"M / b_Q blocks of equal cost)")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 10,000, M up to 1,024")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    parser.add_argument("--memory-probe", nargs=4, type=int, metavar=("N", "M", "B", "DRAW_ONLY"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_probe:
        print(memory_probe(*args.memory_probe))
        return
    if args.quick:
        cells = [(n, 256, 5) for n in (1_000, 10_000)] + [(1_000, m, 5) for m in (64, 1_024)] + [(1_000, 256, 64)]
    else:
        cells = ([(n, 1_024, 5) for n in (1_000, 10_000, 100_000)]
                 + [(1_000, m, 5) for m in (256, 4_096)]
                 + [(1_000, 1_024, b) for b in (1, 20, 100, 1_024)]
                 + [(100_000, 1_024, 1_024)])
    rows = []
    for n, m, block in tqdm(cells, desc="joint sampling", unit="cell"):
        row = {"n": n, "m": m, "block": block, "peak_mb": measure_memory(n, m, block, False),
               "draw_mb": measure_memory(n, m, block, True), "sample_s": measure_time(n, m, block)}
        tqdm.write(json.dumps(row))
        rows.append(row)
    text = render(rows)
    print(text)
    if not args.no_write:
        publish("joint-sampling", text, "joint_sampling.json", COMMAND, {"rows": rows})


if __name__ == "__main__":
    main()
