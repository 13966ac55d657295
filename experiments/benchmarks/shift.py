"""Translation test: every shipped ``*-gp1d`` checkpoint on the gp1d evaluation set
(RBF) with every input -- context and target -- shifted by Δ ∈ {0, 0.5, 1, 2, 5}.

A translation-equivariant model (TE-PT-TNP) must stay flat (within 0.02 of Δ = 0);
the others see inputs outside their training range and degrade.

    python experiments/benchmarks/shift.py [--batches 1000]
    python experiments/benchmarks/shift.py --checkpoints te-pt-tnp-gp1d    # refresh one row, keep the others
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, publish  # noqa: E402
from regression_ll import describe, provenance, steps_text  # noqa: E402

from npbandit import load_surrogate  # noqa: E402
from npbandit.priors import GP1DPrior  # noqa: E402
from npbandit.surrogates.pretrained import available_checkpoints, read_card  # noqa: E402
from npbandit.training.evaluation import eval_batches  # noqa: E402

COMMAND = "python experiments/benchmarks/shift.py"
SHIFTS = [0.0, 0.5, 1.0, 2.0, 5.0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--checkpoints", nargs="+", help="default: every shipped *-gp1d checkpoint; with a "
                        "subset, the other rows are kept from the last run with the same --batches")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true", help="re-render the table from its JSON, evaluating nothing")
    args = parser.parse_args(argv)
    out = ROOT / "experiments" / "log" / "results" / "shift.json"
    if args.no_run:
        previous = json.loads(out.read_text())
        text = render(previous["rows"], previous["batches"])
        print(text)
        if not args.no_write:
            publish("shift", text, "shift.json", COMMAND, {"packages": None} | previous)  # None: not recorded
        return
    shipped = [n for n in available_checkpoints() if n.endswith("-gp1d")]
    names = args.checkpoints or shipped
    unknown = [n for n in names if n not in shipped]
    if unknown:
        raise SystemExit(f"--checkpoints: not shipped *-gp1d checkpoints: {unknown} (shipped: {shipped})")
    batches = list(eval_batches(GP1DPrior("rbf"), args.batches, 16, cache=True))
    rows: dict[str, dict] = {}
    for name in names:
        model = load_surrogate(name)
        card = model.card
        rows[name] = {"values": [], "se": [], "model": describe(card), "steps": card["training"]["steps"],
                      **provenance(card)}
        for shift in SHIFTS:
            with torch.no_grad():
                values = [float(model.log_likelihood(b.xc + shift, b.yc, b.xt + shift, b.yt))
                          for b in tqdm(batches, desc=f"{name} Δ={shift}", leave=False)]
            rows[name]["values"].append(statistics.fmean(values))
            rows[name]["se"].append(statistics.stdev(values) / len(values) ** 0.5)
        print(name, [round(v, 3) for v in rows[name]["values"]])
    out = ROOT / "experiments" / "log" / "results" / "shift.json"
    if args.checkpoints and out.exists():
        previous = json.loads(out.read_text())
        if previous.get("batches") == args.batches and previous.get("shifts") == SHIFTS:
            rows = {n: previous["rows"][n] if n not in rows else rows[n] for n in shipped
                    if n in rows or n in previous["rows"]}
    text = render(rows, args.batches)
    print(text)
    if not args.no_write:
        publish("shift", text, "shift.json", COMMAND, {"shifts": SHIFTS, "batches": args.batches, "rows": rows})


def render(rows: dict[str, dict | list[float]], batches: int) -> str:
    """The section's Markdown. A row is ``{"values", "se", "sha256", "model", "steps"}``
    (rows written before those were recorded: the list of means); a row whose sha256 is
    not the shipped checkpoint's is marked."""
    lines = ["## Translation test: gp1d log-likelihood with every input shifted by Δ", "",
             f"Command: `{COMMAND}`. RBF evaluation set of the regression table (1-D GP, noise 0.02, context and "
             "targets "
             f"drawn on one interval), {batches} batches x 16 tasks, every input shifted by Δ; mean target "
             "log-likelihood ± standard error over batches (rows without one predate it); the last column is the "
             "largest drop from Δ = 0. Not the TE-TNP paper's translation protocol (protocols.md §2: a kernel "
             "mixture, noise 0.2, targets beyond the context), so no published number is set beside it.", "",
             "| checkpoint | steps | size | " + " | ".join(f"Δ={s:g}" for s in SHIFTS) + " | max drop |",
             "|---|---:|---|" + "---:|" * (len(SHIFTS) + 1)]
    for name, row in rows.items():
        if isinstance(row, list):  # written before the row recorded its checkpoint
            row = {"values": row}
        values, se = row["values"], row.get("se")
        drop = max(values[0] - v for v in values)
        shipped = name in available_checkpoints() and read_card(name)["sha256"]
        label = name if row.get("sha256") in (None, shipped) else f"{name} (an earlier version; not the one shipped)"
        cells = [f"{v:.3f}" if se is None else f"{v:.3f} ± {e:.3f}" for v, e in zip(values, se or values)]
        steps = steps_text(row) if row.get("steps") is not None else "-"
        lines.append(f"| {label} | {steps} | {row.get('model', '-')} | " + " | ".join(cells) + f" | {drop:.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
