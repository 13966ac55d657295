"""Translation test: every shipped ``*-gp1d`` checkpoint on the gp1d evaluation set
(RBF) with every input -- context and target -- shifted by Δ ∈ {0, 0.5, 1, 2, 5}.

A translation-equivariant model (TE-PT-TNP) must stay flat (within 0.02 of Δ = 0);
the others see inputs outside their training range and degrade.

    python benchmarks/shift.py [--batches 1000]
    python benchmarks/shift.py --checkpoints te-pt-tnp-gp1d    # refresh one row, keep the others
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

from npbandit import load_surrogate  # noqa: E402
from npbandit.priors import GP1DPrior  # noqa: E402
from npbandit.surrogates.pretrained import available_checkpoints  # noqa: E402
from npbandit.training.evaluation import eval_batches  # noqa: E402

COMMAND = "python benchmarks/shift.py"
SHIFTS = [0.0, 0.5, 1.0, 2.0, 5.0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=1000)
    parser.add_argument("--checkpoints", nargs="+", help="default: every shipped *-gp1d checkpoint; with a "
                        "subset, the other rows are kept from the last run with the same --batches")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    shipped = [n for n in available_checkpoints() if n.endswith("-gp1d")]
    names = args.checkpoints or shipped
    unknown = [n for n in names if n not in shipped]
    if unknown:
        raise SystemExit(f"--checkpoints: not shipped *-gp1d checkpoints: {unknown} (shipped: {shipped})")
    batches = list(eval_batches(GP1DPrior("rbf"), args.batches, 16, cache=True))
    rows = {}
    for name in names:
        model = load_surrogate(name)
        rows[name] = []
        for shift in SHIFTS:
            with torch.no_grad():
                values = [float(model.log_likelihood(b.xc + shift, b.yc, b.xt + shift, b.yt))
                          for b in tqdm(batches, desc=f"{name} Δ={shift}", leave=False)]
            rows[name].append(statistics.fmean(values))
        print(name, [round(v, 3) for v in rows[name]])
    out = ROOT / "docs" / "results" / "shift.json"
    if args.checkpoints and out.exists():
        previous = json.loads(out.read_text())
        if previous.get("batches") == args.batches and previous.get("shifts") == SHIFTS:
            rows = {n: previous["rows"][n] if n not in rows else rows[n] for n in shipped
                    if n in rows or n in previous["rows"]}
    lines = ["## Translation test: gp1d log-likelihood with every input shifted by Δ", "",
             f"Command: `{COMMAND}`. RBF evaluation set, {args.batches} batches x 16 tasks; mean target "
             "log-likelihood; the last column is the largest drop from Δ = 0.", "",
             "| checkpoint | " + " | ".join(f"Δ={s:g}" for s in SHIFTS) + " | max drop |",
             "|---|" + "---:|" * (len(SHIFTS) + 1)]
    for name, values in rows.items():
        drop = max(values[0] - v for v in values)
        lines.append(f"| {name} | " + " | ".join(f"{v:.3f}" for v in values) + f" | {drop:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("shift", text, "shift.json", COMMAND, {"shifts": SHIFTS, "batches": args.batches, "rows": rows})


if __name__ == "__main__":
    main()
