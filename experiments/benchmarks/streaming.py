"""Streaming cost and memory of CMANP vs LBANP and TNP-D (docs/protocols.md §5).

For N context points, batch 1, paper-size models (d_model 64, 4 heads, 6 layers,
128 latents), float32 on CPU:

- ``update``: one single-point update of an N-point state. CMANP folds the point
  into its running attention state; LBANP and TNP-D re-condition on N + 1 points.
- ``update+refresh``: the same, plus whatever must happen before the next
  ``predict`` (CMANP recomputes its block latents, O(L_B^2 + L_I^2), once per new
  state; for the re-conditioning models this is the update itself).
- ``predict``: 256 queries from a ready state.
- ``peak MB``: resident memory that conditioning on N points adds, measured in a
  fresh process per cell (see ``common.peak_memory_mb`` and ``FIXED_MMAP``).

Speed and memory are reported as ratios within this one run. Weights are random:
cost does not depend on training.

    python experiments/benchmarks/streaming.py                 # full table, writes experiments/log/benchmarks.md
    python experiments/benchmarks/streaming.py --sizes 100 1000 --no-write   # quick look
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

from npbandit.surrogates import CMANP, build  # noqa: E402

MODELS = ("cmanp", "lbanp", "tnpd")
N_QUERIES = 256
COMMAND = "python experiments/benchmarks/streaming.py"


def make_model(name: str, seed: int = 0):
    torch.manual_seed(seed)
    return build(name, 1, 1).eval()


def make_data(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(1, n, 1, generator=g) * 4 - 2
    return x, torch.sin(3 * x) + 0.1 * torch.randn(1, n, 1, generator=g)


def memory_probe(name: str, n: int) -> float:
    """Peak MB that conditioning on n points adds (meant to run in a fresh process)."""
    model = make_model(name)
    x, y = make_data(n)
    with torch.inference_mode():
        model.condition(*make_data(64, seed=1))  # load kernels and warm the allocator
        if isinstance(model, CMANP):
            return peak_memory_mb(lambda: model.latents(model.condition(x, y)))
        return peak_memory_mb(lambda: model.condition(x, y))


# glibc raises its mmap threshold after large frees and then serves big blocks from a
# heap that fragments, so RSS drifts with the *number* of allocations, not their size.
# A fixed threshold returns every large block to the OS on free, so the peak RSS then
# tracks the live tensors: the memory the algorithm needs. We report both.
FIXED_MMAP = {"MALLOC_MMAP_THRESHOLD_": "131072"}


def measure_memory(name: str, n: int, env_extra: dict[str, str] | None = None) -> float:
    env = {**os.environ, **(env_extra or {})}
    out = subprocess.run([sys.executable, __file__, "--memory-probe", name, str(n)],
                         check=True, capture_output=True, text=True, env=env)
    return float(out.stdout.strip().splitlines()[-1])


def measure_times(name: str, n: int) -> dict[str, float]:
    model = make_model(name)
    x, y = make_data(n)
    xu, yu = make_data(1, seed=2)
    xt, _ = make_data(N_QUERIES, seed=3)
    with torch.inference_mode():
        state = model.condition(x, y)
        update_s = median_time(lambda: model.update(state, xu, yu), max_reps=300)
        if isinstance(model, CMANP):
            refresh_s = median_time(lambda: model.latents(model.update(state, xu, yu)))
            model.latents(state)
        else:
            refresh_s = update_s
        predict_s = median_time(lambda: model.predict(state, xt))
    return {"update_ms": 1e3 * update_s, "update_refresh_ms": 1e3 * refresh_s, "predict_ms": 1e3 * predict_s}


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x"


def render(rows: list[dict], sizes: list[int], tnpd_max_n: int) -> str:
    by = {(r["model"], r["n"]): r for r in rows}
    lines = [
        "## Streaming and memory (protocols.md §5)",
        "",
        f"Command: `{COMMAND}` (CPU: {machine_line()}). Batch 1, paper-size models, float32, "
        f"random weights; {N_QUERIES} queries for `predict`. Times are medians; peak memory is what "
        "conditioning adds, measured in a fresh process per cell, with glibc's mmap threshold fixed "
        "(`MALLOC_MMAP_THRESHOLD_=131072`, so RSS tracks live tensors) and, for comparison, with the default "
        "allocator (whose heap fragmentation adds a few MB that drift with the number of allocations).",
        "",
        "| model | N | update (ms) | update+refresh (ms) | predict 256 (ms) | condition peak (MB) "
        "| peak, default malloc (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['model']} | {r['n']:,} | {r['update_ms']:.3f} | {r['update_refresh_ms']:.3f} | "
                     f"{r['predict_ms']:.2f} | {r['peak_mb']:.1f} | {r['peak_mb_default_malloc']:.1f} |")
    if tnpd_max_n < max(sizes):
        lines.append(f"\nTNP-D stops at N = {tnpd_max_n:,}: its re-conditioning is O(N²) in time "
                     "(at 100,000 points one update would take about 100x the time at 10,000).")
    lo, hi = min(sizes), max(sizes)
    lines += ["", "Ratios (the issue's bars):", ""]
    c_lo, c_hi = by.get(("cmanp", lo)), by.get(("cmanp", hi))
    if c_lo and c_hi:
        lines.append(f"- CMANP `update` at N = {hi:,} vs {lo:,}: {ratio(c_hi['update_ms'], c_lo['update_ms'])} "
                     f"(update+refresh: {ratio(c_hi['update_refresh_ms'], c_lo['update_refresh_ms'])}; bar ≤ 1.5x)")
        lines.append(f"- CMANP `predict` at N = {hi:,} vs {lo:,}: {ratio(c_hi['predict_ms'], c_lo['predict_ms'])}")
    c3 = by.get(("cmanp", 1000))
    if c3 and c_hi:
        lines.append(f"- CMANP conditioning peak memory at N = {hi:,} vs 1,000: "
                     f"{ratio(c_hi['peak_mb'], c3['peak_mb'])} (bar ≤ 1.5x, chunked); "
                     f"default malloc: {ratio(c_hi['peak_mb_default_malloc'], c3['peak_mb_default_malloc'])}")
    c4, l4 = by.get(("cmanp", 10000)), by.get(("lbanp", 10000))
    if c4 and l4:
        lines.append(f"- LBANP re-conditioning vs CMANP `update` at N = 10,000: "
                     f"{ratio(l4['update_ms'], c4['update_ms'])} faster (bar ≥ 100x); "
                     "counting CMANP's latent refresh before the next predict: "
                     f"{ratio(l4['update_ms'], c4['update_refresh_ms'])}")
    for model in ("lbanp", "tnpd"):
        measured = [n for (m, n) in by if m == model]
        if not measured:
            continue
        a, b = by.get((model, lo)), by.get((model, max(measured)))
        if a and b and a is not b:
            lines.append(f"- {model} update at N = {b['n']:,} vs {lo:,}: {ratio(b['update_ms'], a['update_ms'])}; "
                         f"peak memory {ratio(b['peak_mb'], a['peak_mb'])}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000, 100000])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--tnpd-max-n", type=int, default=10000, help="largest N for TNP-D (O(N^2) time)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    parser.add_argument("--memory-probe", nargs=2, metavar=("MODEL", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_probe:
        print(memory_probe(args.memory_probe[0], int(args.memory_probe[1])))
        return
    cells = [(m, n) for m in args.models for n in sorted(args.sizes) if not (m == "tnpd" and n > args.tnpd_max_n)]
    rows = []
    for model, n in tqdm(cells, desc="streaming benchmark", unit="cell"):
        row = {"model": model, "n": n, **measure_times(model, n), "peak_mb": measure_memory(model, n, FIXED_MMAP),
               "peak_mb_default_malloc": measure_memory(model, n)}
        tqdm.write(json.dumps(row))
        rows.append(row)
    text = render(rows, sorted(args.sizes), args.tnpd_max_n)
    print(text)
    if not args.no_write:
        publish("streaming", text, "streaming.json", COMMAND, {"rows": rows})


if __name__ == "__main__":
    main()
