"""Wheel-bandit run cost: per-step time vs t, wall time per policy, SQLite write rate.

- Per-step cost (act + observe) of NP policies at t ≈ 10 and t ≈ 2000 of one
  2000-step run: CMANP streams each observation with its constant-cost ``update``;
  TNP-D and LBANP re-condition on the whole history inside ``update``.
- Wall time of one 2000-step run (delta = 0.9, seed 0) per policy, logged to SQLite.
- Rows written per second by the logger (``commit_every`` = 50, the default).

    python experiments/benchmarks/bandit_cost.py            # needs the shipped *-wheel checkpoints
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, publish  # noqa: E402

from npbandit.envs import WheelBanditEnv  # noqa: E402
from npbandit.loop import run_episode  # noqa: E402
from npbandit.policies import make_bandit_policy  # noqa: E402
from npbandit.storage import RunLogger  # noqa: E402

COMMAND = "python experiments/benchmarks/bandit_cost.py"


def per_step(steps: list[dict], around: int, width: int = 10) -> float:
    window = steps[max(0, around - width // 2): around + width // 2]
    return 1e3 * statistics.median(s["act_s"] + s["observe_s"] for s in window)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=["cmanp-wheel", "lbanp-wheel", "tnpd-wheel", "uniform",
                                                           "linucb"])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/bench.db"
        for name in args.policies:
            policy = make_bandit_policy(name)
            logger = RunLogger(db)
            t0 = time.perf_counter()
            result = run_episode(WheelBanditEnv(delta=0.9, horizon=args.steps), policy, seed=0, logger=logger,
                                 run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                           "env_params": {"delta": 0.9, "horizon": args.steps}},
                                 progress=True, desc=name)
            wall = time.perf_counter() - t0
            db_s = wall - sum(s["act_s"] + s["env_s"] + s["observe_s"] for s in result.steps)
            row = {"policy": name, "wall_s": wall, "early_ms": per_step(result.steps, 10),
                   "late_ms": per_step(result.steps, args.steps - 5), "rows": logger.rows_written,
                   "overhead_s": db_s, "cumulative_regret": result.cumulative_regret}
            print(json.dumps(row))
            rows.append(row)
        t0 = time.perf_counter()
        logger = RunLogger(db, commit_every=50)
        logger.start(kind="bandit", env_id="write-test", env_params={}, policy="none")
        for t in range(20000):
            logger.log_step(t=t, action=t % 5, reward=1.0, regret=0.0, cumulative_regret=0.0, act_s=0.0, env_s=0.0,
                            observe_s=0.0)
        logger.finish()
        write_rate = 20000 / (time.perf_counter() - t0)
    lines = ["## Wheel-bandit run cost", "",
             f"Command: `{COMMAND}` (CPU: {machine_line()}). One {args.steps}-step run per policy, delta = 0.9, "
             "seed 0, logged to SQLite. Per-step cost = act + observe (median over 10 steps around t).", "",
             "| policy | step at t≈10 (ms) | step at t≈2000 (ms) | ratio | run wall time (s) | "
             "loop + logging overhead (s) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['policy']} | {r['early_ms']:.2f} | {r['late_ms']:.2f} | "
                     f"{r['late_ms'] / r['early_ms']:.2f}x | {r['wall_s']:.1f} | {r['overhead_s']:.2f} |")
    lines.append(f"\nSQLite write rate through `RunLogger` (commit_every = 50): {write_rate:,.0f} steps/s.")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("bandit-cost", text, "bandit_cost.json", COMMAND, {"rows": rows, "write_rate": write_rate})


if __name__ == "__main__":
    main()
