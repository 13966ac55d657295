"""Learning curves of training runs: held-out log-likelihood against steps and against hours.

Reads the periodic evaluations every ``npbandit train`` run keeps in
``<run dir>/train_state.json`` (one entry per ``--eval-every`` steps: step, seconds of
training so far, the log-likelihood per evaluation-suite entry -- per kernel for gp1d,
per input dimension for bo) and publishes a table of each run's latest evaluation and a
plot: one panel per suite entry, curves against steps (top) and hours (bottom).

    python experiments/benchmarks/training_curves.py training_runs/cmanp-gp1d-lr2 --section gp1d-long-runs
    python experiments/benchmarks/training_curves.py runs/probe-te-pt-tnp-gp1d/* --section te-pt-tnp-gp1d-probe --minutes
"""  # noqa: E501 (printed verbatim by --help: the usage line stays one pasteable command)

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def load_runs(run_dirs: list[Path]) -> dict[str, dict[str, Any]]:
    """``{run name: {"config", "step", "elapsed_s", "log"}}`` from each directory's saved state;
    only the log entries that carry an evaluation."""
    runs = {}
    for run_dir in run_dirs:
        state = run_dir / "train_state.json"
        if not state.is_file():
            raise FileNotFoundError(f"{run_dir} holds no train_state.json (not an `npbandit train` run directory)")
        meta = json.loads(state.read_text())
        log = [e for e in meta["log"] if e.get("eval_ll")]
        runs[run_dir.name] = {"config": meta["config"], "step": meta["step"], "elapsed_s": meta["elapsed_s"],
                              "log": log}
    return runs


def suite_entries(runs: dict[str, dict[str, Any]]) -> list[str]:
    """The evaluation-suite entries any run reports, in first-seen order."""
    keys: list[str] = []
    for run in runs.values():
        for entry in run["log"]:
            keys += [k for k in entry["eval_ll"] if k not in keys]
    return keys


def table(runs: dict[str, dict[str, Any]], keys: list[str], minutes: bool = False) -> str:
    """Markdown: each run's latest evaluation (and its best, where the curve has come down since)."""
    unit = "minutes" if minutes else "hours"
    lines = [f"| run | steps | {unit} | " + " | ".join(keys) + " | best mean (step) |",
             "|---|---:|---:|" + "---:|" * (len(keys) + 1)]
    for name, run in runs.items():
        if not run["log"]:
            lines.append(f"| {name} | {run['step']} | | " + " | ".join("" for _ in keys) + " | |")
            continue
        last = run["log"][-1]
        best = max(run["log"], key=lambda e: sum(e["eval_ll"].get(k, float("-inf")) for k in keys))
        t = last["elapsed_s"] / (60 if minutes else 3600)
        lines.append(f"| {name} | {last['step']} | {t:.2f} | " +
                     " | ".join(f"{last['eval_ll'][k]:.3f}" if k in last["eval_ll"] else "" for k in keys) +
                     f" | {sum(best['eval_ll'].get(k, float('nan')) for k in keys) / len(keys):.3f} ({best['step']}) |")
    return "\n".join(lines)


def plot(runs: dict[str, dict[str, Any]], keys: list[str], name: str, minutes: bool = False,
         reference: dict[str, dict[str, float]] | None = None) -> Path:
    """Curves per suite entry against steps (top row) and training time (bottom row) into
    experiments/log/figures/<name>.png; ``reference[key]`` draws horizontal lines labelled by their names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from benchmarks.common import save_figure

    fig, axes = plt.subplots(2, len(keys), figsize=(3.7 * len(keys) + 1, 6.5), squeeze=False)
    scale = 60 if minutes else 3600
    for col, key in enumerate(keys):
        for run_name, run in runs.items():
            log = [e for e in run["log"] if key in e["eval_ll"]]
            axes[0, col].plot([e["step"] for e in log], [e["eval_ll"][key] for e in log], label=run_name)
            axes[1, col].plot([e["elapsed_s"] / scale for e in log], [e["eval_ll"][key] for e in log], label=run_name)
        for row in (0, 1):
            for i, (ref_name, values) in enumerate((reference or {}).items()):
                if key in values:
                    axes[row, col].axhline(values[key], color="k", ls=(":", "--", "-.")[i % 3], lw=1, label=ref_name)
        axes[0, col].set_title(key)
        axes[0, col].set_xlabel("steps")
        axes[1, col].set_xlabel("minutes of training" if minutes else "hours of training")
    axes[0, 0].set_ylabel("held-out log-likelihood")
    axes[1, 0].set_ylabel("held-out log-likelihood")
    axes[0, 0].legend(fontsize=7)
    return save_figure(fig, name)


def render(run_dirs: list[Path], section: str, description: str, command: str, minutes: bool = False,
           reference: dict[str, dict[str, float]] | None = None, pages: tuple[str, ...] = ("benchmarks.md",),
           write: bool = True) -> str:
    """Table and plot of the runs; with ``write`` into section ``section`` of ``pages`` (figure
    experiments/log/figures/<section>.png, raw logs experiments/log/results/<section>.json)."""
    runs = load_runs(run_dirs)
    keys = suite_entries(runs)
    text = table(runs, keys, minutes)
    if reference:
        text += "\n\nReference lines: " + "; ".join(
            f"{ref}: " + " / ".join(f"{values[k]:.3f}" for k in keys if k in values)
            for ref, values in reference.items())
    if write:
        from benchmarks.common import publish

        plot(runs, keys, section.replace("-", "_"), minutes, reference)
        publish(section, f"{description} `{command}`.\n\n{text}\n\n"
                f"![learning curves](figures/{section.replace('-', '_')}.png)",
                f"{section.replace('-', '_')}.json", command, {"runs": runs}, pages=pages)
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", type=Path, nargs="+", help="run directories of `npbandit train`")
    parser.add_argument("--section", required=True, help="the docs section (and figure / JSON name) to write")
    parser.add_argument("--description", default="Held-out log-likelihood of each run's periodic evaluations "
                        "(`npbandit train --eval-every`, the run's own evaluation batches).")
    parser.add_argument("--minutes", action="store_true", help="time axis in minutes instead of hours")
    parser.add_argument("--reference", action="append", default=[], metavar="NAME=K:V,K:V",
                        help="a horizontal reference line per suite entry, e.g. paper=rbf:1.24,matern52:0.80")
    parser.add_argument("--page", action="append", default=None, help="docs page(s) to write (default benchmarks.md)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    reference = {}
    for item in args.reference:
        ref, sep, pairs = item.partition("=")
        try:
            reference[ref] = {k: float(v) for k, v in (p.split(":") for p in pairs.split(","))}
        except ValueError:
            raise SystemExit(f"--reference expects NAME=KEY:VALUE,KEY:VALUE, got {item!r}") from None
        if not sep or not ref:
            raise SystemExit(f"--reference expects NAME=KEY:VALUE,KEY:VALUE, got {item!r}")
    shown = list(argv if argv is not None else sys.argv[1:])
    if "--description" in shown:  # the description is the section's text already
        i = shown.index("--description")
        del shown[i:i + 2]
    # pastes back as run
    command = "python experiments/benchmarks/training_curves.py " + shlex.join(str(a) for a in shown)
    print(render(args.runs, args.section, args.description, command, args.minutes, reference or None,
                 tuple(args.page or ("benchmarks.md",)), write=not args.no_write))


if __name__ == "__main__":
    main()
