"""Learning-efficiency study for the ``bo`` checkpoints: which recipe learns fastest.

Every candidate trains for the same wall-clock budget (all candidates run at once,
each in its own process with one torch thread, so they share the machine equally),
and every candidate is scored on one yardstick: held-out tasks of the default ``bo``
prior standardised by their *context* (what ``NPModel`` sees), per input dimension,
every ``--eval-every`` steps. The log-likelihood curves against minutes are the
result; ``--render`` turns saved logs into the "bo-training-study" section of experiments/log/benchmarks.md
(raw numbers: experiments/log/results/bo_training_study.json) and a plot.

Candidates (``--candidates`` picks a subset; names say what differs from ``ctx-expected``):

- ``task-sampled``: the recipe of the shipped checkpoints (targets standardised with
  the whole task, sampled targets);
- ``ctx-sampled`` / ``ctx-expected``: context standardisation (as the adapter), with
  sampled targets or the expected loss under the exact predictive moments;
- ``ctx-expected-lr``: learning rate 1e-3 and batch 64;
- ``ctx-expected-irrelevant``: a quarter of the dimensions nearly irrelevant;
- ``ctx-expected-botorch-ls``: BoTorch's LogNormal lengthscale prior;
- ``ctx-expected-d3``: one model for d = 3 only (per-d model vs shared);
- ``ctx-expected-curriculum``: d in 1..3 for the first third of the budget, then 1..6;
- ``ctx-expected-clip10`` / ``-lr1e-4`` / ``-lr2e-3``: gradient clipping at 10, learning rates;
- ``ctx-expected-latents128``: the paper's 128 latents per block (the shipped model has 32);
- ``ctx-expected-from-shipped``: fine-tunes the shipped ``cmanp-bo`` (trained on the old recipe);
- ``tnpd-ctx-expected``, ``tnpd-ctx-sampled``, ``te-pt-tnp-ctx-expected``: other families;
  ``te-pt-tnp-ctx-expected-spread32``: TE-PT-TNP with 32 pseudo-tokens spread at the start.

Every run keeps its resumable state in ``<out>/<candidate>``, so the winner continues
into the long run with ``npbandit train`` and the same settings (printed per candidate).

    python experiments/benchmarks/bo_training_study.py --out runs/study --minutes 20          # CPU: 20 min each
    python experiments/benchmarks/bo_training_study.py --render runs/study                    # table + plot into docs/
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: the benchmarks package

COMMAND = "python experiments/benchmarks/bo_training_study.py --out runs/study --minutes 8 --eval-every 500"
STEPS = 200_000  # the cosine schedule's length: nearly constant over a study, and the long run's total
CMANP = {"model": "cmanp", "model_config": {"n_latents": 32, "n_block_latents": 32}}
CTX = {"prior_params": {}, "loss": "expected"}

CANDIDATES: dict[str, dict[str, Any]] = {
    "task-sampled": {**CMANP, "prior_params": {"standardize": "task"}, "loss": "sampled"},
    "ctx-sampled": {**CMANP, "prior_params": {}, "loss": "sampled"},
    "ctx-expected": {**CMANP, **CTX},
    "ctx-expected-lr": {**CMANP, **CTX, "lr": 1e-3, "batch_size": 64},
    "ctx-expected-irrelevant": {**CMANP, "prior_params": {"irrelevant_prob": 0.25}, "loss": "expected"},
    "ctx-expected-botorch-ls": {**CMANP, "prior_params": {"lengthscale_prior": "botorch"}, "loss": "expected"},
    "ctx-expected-d3": {**CMANP, "prior_params": {"dims": [3]}, "loss": "expected"},
    "ctx-expected-curriculum": {**CMANP, **CTX, "curriculum": {"dims": [1, 2, 3], "fraction": 1 / 3}},
    "ctx-expected-clip10": {**CMANP, **CTX, "grad_clip": 10.0},
    "ctx-expected-lr1e-4": {**CMANP, **CTX, "lr": 1e-4},
    "ctx-expected-lr2e-3": {**CMANP, **CTX, "lr": 2e-3},
    "ctx-expected-latents128": {"model": "cmanp", **CTX},
    "ctx-expected-from-shipped": {**CMANP, **CTX, "init_from": "cmanp-bo"},
    "tnpd-ctx-expected": {"model": "tnpd", **CTX},
    "tnpd-ctx-sampled": {"model": "tnpd", "prior_params": {}, "loss": "sampled"},
    "te-pt-tnp-ctx-expected": {"model": "te-pt-tnp", "size": "small", **CTX},
    "te-pt-tnp-ctx-expected-from-shipped": {"model": "te-pt-tnp", "size": "small", **CTX, "init_from": "te-pt-tnp-bo"},
    # what made te-pt-tnp-gp1d learn (experiments/log/results.md, "te-pt-tnp-gp1d"): 32 pseudo-tokens whose
    # offsets start spread (uniform on [-0.5, 0.5]^d around the context's centre: the unit cube's extent)
    "te-pt-tnp-ctx-expected-spread32": {"model": "te-pt-tnp", "size": "small", **CTX,
                                        "model_config": {"n_pseudo": 32, "pseudo_offset_range": 0.5}},
    "retreever-ctx-expected-from-shipped": {"model": "retreever", **CTX, "init_from": "retreever-bo"},
}


def _config(name: str, out: Path, device: str, eval_every: int, prior_params: dict[str, Any] | None = None):
    from npbandit.training import TrainConfig

    spec = {k: v for k, v in CANDIDATES[name].items() if k != "curriculum"}
    if prior_params is not None:
        spec["prior_params"] = prior_params
    return TrainConfig(prior="bo", steps=STEPS, out=str(out / name), name=f"{spec['model']}-bo", device=device,
                       eval_every=eval_every, eval_batches=16, eval_prior_params={}, checkpoint_every=1000, **spec)


def _run(name: str, out: str, minutes: float, device: str, eval_every: int) -> None:
    import torch

    from npbandit.training import train

    torch.set_num_threads(1)
    budget = 60 * minutes
    curriculum = CANDIDATES[name].get("curriculum")
    if curriculum is not None:
        # a separate run directory per phase: the prior differs, so they are different runs
        first = _config(name, Path(out), device, eval_every, {"dims": curriculum["dims"]})
        first.out = str(Path(out) / name / "phase1")
        t0 = time.perf_counter()
        result = train(first, progress=False, export=False, stop_after_s=budget * curriculum["fraction"])
        from npbandit.surrogates.pretrained import save_pretrained

        save_pretrained(result.model, Path(first.out), "phase1", prior={"name": "bo"}, training={}, evaluation={})
        second = _config(name, Path(out), device, eval_every)
        second.init_from = str(Path(first.out) / "phase1.json")
        train(second, progress=False, export=False, stop_after_s=budget - (time.perf_counter() - t0))
        return
    train(_config(name, Path(out), device, eval_every), progress=False, export=False, stop_after_s=budget)


def collect(out: Path) -> dict[str, Any]:
    """``{candidate: {"config": ..., "log": [...], "step": int}}`` from the run directories."""
    runs = {}
    for name in CANDIDATES:
        phases = [out / name / "phase1", out / name]
        logs, offset, config, step = [], 0.0, None, 0
        for phase in phases:
            state = phase / "train_state.json"
            if not state.exists():
                continue
            meta = json.loads(state.read_text())
            for entry in meta["log"]:
                logs.append({**entry, "elapsed_s": entry["elapsed_s"] + offset, "phase": phase.name})
            offset += meta["elapsed_s"]
            config, step = meta["config"], meta["step"]
        if logs:
            runs[name] = {"config": config, "log": logs, "step": step}
    return runs


def pack(out: Path, dest: Path) -> list[str]:
    """Copy what continues a study elsewhere into ``dest``: every candidate's log
    (one JSON) and the resumable states of the best CMANP candidate (by mean held-out
    log-likelihood at its last evaluation) and of each other family's candidate.
    Returns the candidates whose states were copied."""
    import tarfile

    runs = collect(out)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "study_logs.json").write_text(json.dumps(runs, indent=1))

    def score(name: str) -> float:
        ll = runs[name]["log"][-1]["eval_ll"]
        return sum(ll.values()) / len(ll)

    cmanp = [n for n in runs if CANDIDATES[n]["model"] == "cmanp" and "curriculum" not in CANDIDATES[n]
             and "dims" not in CANDIDATES[n].get("prior_params", {})]
    chosen = ([max(cmanp, key=score)] if cmanp else []) + [n for n in runs if CANDIDATES[n]["model"] != "cmanp"]
    for name in chosen:  # one file per run: the device tool returns at most 8 files
        with tarfile.open(dest / f"{name}.state.tar", "w") as tar:
            for suffix in ("safetensors", "json"):
                tar.add(out / name / f"train_state.{suffix}", arcname=f"{name}/train_state.{suffix}")
    return chosen


def render(out: Path, write: bool = True, budget_minutes: float = 6.5) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from benchmarks.common import ROOT

    runs = json.loads(out.read_text()) if out.is_file() else collect(out)
    budget = 60 * budget_minutes
    yardstick = ROOT / "experiments" / "log" / "results" / "bo_yardstick.json"
    reference = json.loads(yardstick.read_text())["per_d"] if yardstick.exists() else None
    dims = [f"d={d}" for d in range(1, 7)]
    # the equal-budget comparison: each candidate at its last evaluation within the budget;
    # runs continued past it also show their latest evaluation
    lines = [f"Equal budget: every candidate at its last evaluation within {budget / 60:.1f} minutes.", "",
             "| candidate | steps | minutes | " + " | ".join(dims) + " | mean |", "|---|---:|---:|" + "---:|" * 7]

    def row(name: str, entry: dict[str, Any]) -> str:
        ll = [entry["eval_ll"].get(d, float("nan")) for d in dims]
        return (f"| {name} | {entry['step']} | {entry['elapsed_s'] / 60:.1f} | " +
                " | ".join(f"{v:.3f}" for v in ll) + f" | {sum(ll) / len(ll):.3f} |")

    for name, run in runs.items():
        within = [e for e in run["log"] if e["elapsed_s"] <= budget + 1e-6]
        if within:
            lines.append(row(name, within[-1]))
    longer = {n: r for n, r in runs.items() if r["log"][-1]["elapsed_s"] > 1.5 * budget}
    if longer:
        lines += ["", "Candidates trained on past the budget (latest evaluation):", "",
                  "| candidate | steps | minutes | " + " | ".join(dims) + " | mean |", "|---|---:|---:|" + "---:|" * 7]
        lines += [row(n, r["log"][-1]) for n, r in longer.items()]
    if reference is not None:
        for key in ("baseline", "exact_gp"):
            lines.append(f"| {key} (yardstick) | | | " + " | ".join(f"{reference[d][key]:.3f}" for d in dims) + " | |")
    fig, axes = plt.subplots(2, 3, figsize=(13, 7), sharex=True)
    for ax, d in zip(axes.flat, dims):
        for name, run in runs.items():
            ax.plot([e["elapsed_s"] / 60 for e in run["log"]], [e["eval_ll"].get(d) for e in run["log"]], label=name)
        if reference is not None:
            ax.axhline(reference[d]["baseline"], color="k", ls=":", lw=1)
            ax.axhline(reference[d]["exact_gp"], color="k", ls="--", lw=1)
        ax.set_title(d)
        ax.set_xlabel("minutes")
    axes.flat[0].set_ylabel("held-out log-likelihood (context-standardised)")
    axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    text = "\n".join(lines)
    if write:
        from benchmarks.common import figure_path, publish

        fig.savefig(figure_path("bo_training_study"), dpi=110)
        header = (f"Held-out log-likelihood (default `bo` prior, context-standardised, 16 x 16 tasks per d) at each "
                  f"candidate's last evaluation. `{COMMAND}`; then "
                  "`python experiments/benchmarks/bo_training_study.py --render "
                  f"<study dir or logs JSON>`.\n\n")
        publish("bo-training-study", header + text + "\n\n![learning curves](figures/bo_training_study.png)",
                "bo_training_study.json", COMMAND, {"runs": runs}, pages=("benchmarks.md",))
    return text


def render_long_runs(run_dirs: list[Path], write: bool = True) -> str:
    """Learning curves of the long runs (``training_runs/*``): held-out log-likelihood per
    d against steps and against hours of training, and a table of the latest evaluation."""
    from benchmarks.common import ROOT
    from benchmarks.training_curves import render as render_curves

    yardstick = ROOT / "experiments" / "log" / "results" / "bo_yardstick.json"
    reference = None
    if yardstick.exists():
        per_d = json.loads(yardstick.read_text())["per_d"]
        reference = {"N(0, 1)": {d: v["baseline"] for d, v in per_d.items()}}
    command = "python experiments/benchmarks/bo_training_study.py --long-runs training_runs/*-bo-long"
    return render_curves(run_dirs, "bo-long-runs", "Periodic evaluations of each long run (16 x 16 held-out tasks per "
                         "d of the default `bo` prior, the model's own log-likelihood in context-standardised units; "
                         "hours: of training, GPU then CPU).", command, reference=reference,
                         pages=("benchmarks.md", "results.md"), write=write)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("runs/study"))
    parser.add_argument("--minutes", type=float, default=20.0, help="wall-clock budget of every candidate")
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES))
    parser.add_argument("--device", default="auto")
    parser.add_argument("--eval-every", type=int, default=1000)
    parser.add_argument("--render", type=Path, help="only render the saved logs of this study directory")
    parser.add_argument("--long-runs", type=Path, nargs="+", help="only render the curves of these long runs")
    parser.add_argument("--budget-minutes", type=float, default=6.5, help="--render: the equal-budget column")
    parser.add_argument("--pack", type=Path, help="after the study, copy logs and the best states here")
    args = parser.parse_args(argv)
    if args.long_runs:
        print(render_long_runs(args.long_runs))
        return
    if args.render is not None:
        print(render(args.render, budget_minutes=args.budget_minutes))
        return
    if not args.minutes > 0:
        raise SystemExit(f"--minutes must be positive, got {args.minutes}")
    args.out.mkdir(parents=True, exist_ok=True)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_run, args=(name, str(args.out), args.minutes, args.device, args.eval_every))
             for name in args.candidates]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    failed = [n for n, p in zip(args.candidates, procs) if p.exitcode != 0]
    print(render(args.out, write=False))
    if args.pack is not None:
        print("packed states of", pack(args.out, args.pack))
    if failed:
        raise SystemExit(f"candidates failed: {failed}")


if __name__ == "__main__":
    main()
