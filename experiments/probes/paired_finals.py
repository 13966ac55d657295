"""One bo.py column against a published one, seed by seed: final log10 simple regret per function.

The published side is a ``final_by_seed`` record of a bo.py JSON (``experiments/log/results/bo.json``
by default); the other side is a column of the runs in ``--db`` (collected as bo.py collects them).
Per function: both medians over the seeds both have, the median of the paired differences (new
minus published) and on how many seeds the new column ended lower.

    python experiments/probes/paired_finals.py --db runs/s34_six_cs.db --column tnpd-bo-tr \\
        --published tnpd-bo-tr-gr
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "benchmarks"))


def main(argv: list[str] | None = None) -> None:
    import bo  # the benchmark's own collection, so a column means what it means there

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--column", required=True, help="the column of --db's runs")
    parser.add_argument("--published", required=True,
                        help="the column of the JSON (its runs' name then; e.g. tnpd-bo-tr for the record made "
                             "before the optimiser suffixes, as 'tnpd-bo-tr-gr' names it now)")
    parser.add_argument("--json", default=str(ROOT / "experiments" / "log" / "results" / "bo.json"))
    parser.add_argument("--published-key", default=None,
                        help="the JSON's key for the published column (default: --published less a -gr suffix)")
    parser.add_argument("--budget", type=int, default=60)
    args = parser.parse_args(argv)
    summary = json.loads(Path(args.json).read_text())["summary"]
    key = args.published_key or args.published.removesuffix("-gr")
    runs = bo.collect(bo.prepare_db(args.db), args.budget)
    print(f"| function | seeds | {args.published} (published) | {args.column} | median of paired differences "
          f"| {args.column} lower |")
    print("|---|---:|---:|---:|---:|---:|")
    total = 0.0
    for function in bo.FUNCTIONS:
        published = summary.get(f"{function}/{key}", {}).get("final_by_seed", {})
        new = {r["seed"]: r["curve"][-1] for r in runs.get((function, args.column), [])}
        seeds = sorted(s for s in new if str(s) in published)
        if not seeds:
            continue
        old = [published[str(s)] for s in seeds]
        now = [new[s] for s in seeds]
        diffs = [b - a for a, b in zip(old, now)]
        total += statistics.median(now) - statistics.median(old)
        print(f"| {function} | {len(seeds)} | {statistics.median(old):.2f} | {statistics.median(now):.2f} "
              f"| {statistics.median(diffs):+.2f} | {sum(d < 0 for d in diffs)}/{len(seeds)} |")
    print(f"\nSum over functions of (median {args.column} - median {args.published}): {total:+.2f}")


if __name__ == "__main__":
    main()
