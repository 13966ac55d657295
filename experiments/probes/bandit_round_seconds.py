"""Seconds per round of stored bandit runs, by task and column: act + observe, the median over a run's
rounds and over its last 500, then the median over the runs of a cell.

Reads the runs a benchmark logged with ``task`` and ``column`` in their ``env_params``
(``classification_bandits.py``'s), completed ones only:

    python experiments/probes/bandit_round_seconds.py sqlite:////work/runs50/cb_nearest.db
"""

from __future__ import annotations

import argparse
import statistics


def main(argv: list[str] | None = None) -> None:
    from npbandit.storage import list_runs, run_steps

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", help="the runs' database (SQLAlchemy URL or SQLite path)")
    args = parser.parse_args(argv)
    cells: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for run in list_runs(args.db, kind="bandit"):
        if run.status != "completed" or "column" not in run.env_params:
            continue
        per_round = [s["act_s"] + s["observe_s"] for s in run_steps(args.db, run.id)]
        cells.setdefault((run.env_params["task"], run.env_params["column"]), []).append(
            (statistics.median(per_round), statistics.median(per_round[-500:])))
    print("| task | column | runs | s per round (median) | last 500 rounds |\n|---|---|---:|---:|---:|")
    for (task, column), runs in sorted(cells.items()):
        print(f"| {task} | {column} | {len(runs)} | {statistics.median(a for a, _ in runs):.4f} | "
              f"{statistics.median(b for _, b in runs):.4f} |")


if __name__ == "__main__":
    main()
