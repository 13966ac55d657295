"""Wheel-bandit run cost: per-step time vs t, wall time per policy, SQLite write rate; with
``--long``, one long run's step cost, steps per second and peak memory against rounds.

- Per-step cost (act + observe) of NP policies at t ≈ 10 and t ≈ 2000 of one
  2000-step run: CMANP streams each observation with its constant-cost ``update``;
  TNP-D and LBANP re-condition on the whole history inside ``update``.
- Wall time of one 2000-step run (delta = 0.9, seed 0) per policy, logged to SQLite.
- Rows written per second by the logger (``commit_every`` = 50, the default).
- ``--long N`` (e.g. 100000): one ``--long-policy`` run of N rounds twice: the policy alone
  (act -> env.step -> observe, nothing logged: the cost of the bandit step itself) and the
  same run through ``run_episode`` logged to SQLite (what ``npbandit bandit`` does). At
  rounds 10, 100, 1e3, 1e4, 2e4, 5e4, 1e5 (those <= N): the step cost (act + observe, median
  over the 100 steps before; over steps 5-14 at t = 10), steps per second over the segment
  since the previous point, and peak resident memory (the kernel's high-water mark
  ``VmHWM``, reset as each run starts; it counts torch's CPU tensors, which tracemalloc
  does not see) and what it grew since round 1,000.

    python experiments/benchmarks/bandit_cost.py            # needs the shipped *-wheel checkpoints
    python experiments/benchmarks/bandit_cost.py --policies cmanp-wheel --long 100000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, publish  # noqa: E402

from npbandit.envs import WheelBanditEnv  # noqa: E402
from npbandit.loop import run_episode  # noqa: E402
from npbandit.policies import make_bandit_policy  # noqa: E402
from npbandit.storage import RunLogger, run_steps  # noqa: E402

COMMAND = "python experiments/benchmarks/bandit_cost.py"
#: rounds at which a long run is read (those <= --long)
POINTS = (10, 100, 1_000, 10_000, 20_000, 50_000, 100_000)
#: the step-cost bar's two points: the cost at the later within BAR_RATIO of the earlier
BAR_POINTS, BAR_RATIO = (10, 20_000), 1.3
LONG_DELTA = 0.9


def per_step(steps: list[dict], around: int, width: int = 10) -> float:
    window = steps[max(0, around - width // 2): around + width // 2]
    return 1e3 * statistics.median(s["act_s"] + s["observe_s"] for s in window)


def step_ms(costs: np.ndarray, t: int, q: float = 50) -> float:
    """The ``q``-th percentile (default: the median) of act + observe (ms) over the steps
    before round ``t`` (100 of them; steps 5-14 at t = 10)."""
    window = costs[5:15] if t <= 10 else costs[max(0, t - 100):t]
    return 1e3 * float(np.percentile(window, q))


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not found in /proc/self/status")


def _reset_peak() -> None:
    """Start the kernel's resident-memory high-water mark (VmHWM) afresh (Linux >= 4.0)."""
    Path("/proc/self/clear_refs").write_text("5")


class _Readings:
    """What a long run is read at: wall clock and peak memory at each of ``points``."""

    def __init__(self, points: list[int]) -> None:
        self.points, self.rows = points, []
        self.t0 = self.last = time.perf_counter()
        self.last_t = 0

    def at(self, t: int) -> None:
        if t not in self.points:
            return
        now = time.perf_counter()
        self.rows.append({"t": t, "steps_per_s": (t - self.last_t) / (now - self.last),
                          "peak_rss_mb": _status_kb("VmHWM") / 1024, "rss_mb": _status_kb("VmRSS") / 1024})
        self.last, self.last_t = now, t


class _Counted(gym.Wrapper):
    """The env, read at the long run's points as ``run_episode`` steps it."""

    def __init__(self, env: gym.Env, readings: _Readings) -> None:
        super().__init__(env)
        self.readings, self.t = readings, 0

    def step(self, action: Any):
        out = self.env.step(action)
        self.t += 1
        self.readings.at(self.t)
        return out


def long_run(name: str, rounds: int, db: str | None) -> dict[str, Any]:
    """One ``rounds``-round wheel run of policy ``name``: alone (``db`` None) or through
    ``run_episode`` logged to ``db``; its readings and per-step costs at the points."""
    points = [p for p in POINTS if p <= rounds]
    policy = make_bandit_policy(name)
    env = WheelBanditEnv(delta=LONG_DELTA, horizon=rounds)
    _reset_peak()
    readings = _Readings(points)
    if db is None:
        obs, _ = env.reset(seed=0)
        policy.reset(0)
        # allocated up front: nothing the benchmark keeps grows with the rounds
        costs, cpu = np.empty(rounds), np.empty(rounds)
        for t in range(1, rounds + 1):
            c0, t0 = time.thread_time(), time.perf_counter()
            action = policy.act(obs)
            t1, c1 = time.perf_counter(), time.thread_time()
            next_obs, reward, _, _, info = env.step(action)
            c2, t2 = time.thread_time(), time.perf_counter()
            policy.observe(obs, action, reward, info)
            costs[t - 1] = t1 - t0 + time.perf_counter() - t2
            cpu[t - 1] = c1 - c0 + time.thread_time() - c2
            obs = next_obs
            readings.at(t)
    else:
        # as the sweep runs it: the steps in the database only, none kept in memory
        result = run_episode(_Counted(env, readings), policy, seed=0, steps=rounds,
                             logger=RunLogger(db, commit_every=50),
                             run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                       "env_params": {"delta": LONG_DELTA, "horizon": rounds}},
                             progress=True, desc=f"{name} (logged)", keep_steps=False)
        costs = np.array([s["act_s"] + s["observe_s"] for s in run_steps(db, result.run_id)])
    for row in readings.rows:
        row["step_ms"], row["step_p10_ms"] = step_ms(costs, row["t"]), step_ms(costs, row["t"], 10)
        if db is None:
            row["step_cpu_ms"], row["step_cpu_p10_ms"] = step_ms(cpu, row["t"]), step_ms(cpu, row["t"], 10)
    return {"policy": name, "rounds": rounds, "logged": db is not None, "wall_s": time.perf_counter() - readings.t0,
            "points": readings.rows}


def long_section(runs: list[dict[str, Any]], load: str, command: str) -> list[str]:
    alone, logged = runs
    name, rounds = alone["policy"], alone["rounds"]
    lines = ["", f"### One {rounds:,}-round run of {name}", "",
             f"Command: `{command}`. delta = {LONG_DELTA}, seed 0. Load while "
             f"measured ({load}): the machine is shared, so absolute times are context; the ratios within the run "
             "are the measurement. *Alone*: act -> env.step -> observe, nothing logged; *logged*: the same run "
             "through `run_episode` into SQLite (`commit_every` = 50). Step = act + observe, median of the 100 "
             "steps before t (steps 5-14 at t = 10), in wall-clock time, its 10th percentile (*p10*), and in "
             "the thread's CPU time (*CPU*: what the step costs without the time other processes on the shared "
             "cores took from it, the nearest this machine comes to an idle core; its 10th percentile, *CPU p10*, "
             "is the least touched by what a busy neighbour does to the caches and the clock); steps/s over the "
             "segment "
             "since the previous row, env and (logged) the loop and its writes included; peak RSS = the kernel's "
             "high-water mark `VmHWM` since the run started (it sees torch's CPU tensors, which tracemalloc "
             "does not).", "",
             "| t | step alone (ms) | p10 alone (ms) | CPU alone (ms) | CPU p10 alone (ms) | steps/s alone | "
             "peak RSS alone (MB) | step logged (ms) | steps/s logged | peak RSS logged (MB) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for a, b in zip(alone["points"], logged["points"], strict=True):
        lines.append(f"| {a['t']:,} | {a['step_ms']:.3f} | {a['step_p10_ms']:.3f} | {a['step_cpu_ms']:.3f} | "
                     f"{a['step_cpu_p10_ms']:.3f} | "
                     f"{a['steps_per_s']:,.0f} | "
                     f"{a['peak_rss_mb']:.1f} | "
                     f"{b['step_ms']:.3f} | {b['steps_per_s']:,.0f} | {b['peak_rss_mb']:.1f} |")
    by_t = {p["t"]: p for p in alone["points"]}
    if all(t in by_t for t in BAR_POINTS):
        early, late = (by_t[t]["step_ms"] for t in BAR_POINTS)
        p10, cpu, cpu10 = ([by_t[t][key] for t in BAR_POINTS] for key in ("step_p10_ms", "step_cpu_ms",
                                                                           "step_cpu_p10_ms"))
        lines.append(f"\nStep alone at t = {BAR_POINTS[1]:,} / t = {BAR_POINTS[0]}: {late / early:.2f}x (wall median), "
                     f"{p10[1] / p10[0]:.2f}x (p10), {cpu[1] / cpu[0]:.2f}x (CPU) (bar: <= {BAR_RATIO}x); CPU per step "
                     f"at t = {BAR_POINTS[1]:,}: {cpu[1]:.3f} ms (median), {cpu10[1]:.3f} ms (p10) (bar: <= 1 ms on an "
                     "idle core).")
    for run, label in ((alone, "alone"), (logged, "logged")):
        by = {p["t"]: p for p in run["points"]}
        if 1_000 in by and rounds in by:
            grew = by[rounds]["peak_rss_mb"] - by[1_000]["peak_rss_mb"]
            lines.append(f"Peak RSS {label} grew {grew:+.1f} MB from t = 1,000 to t = {rounds:,} "
                         f"({1024 * grew / (rounds - 1_000):.2f} KB per round); wall time {run['wall_s']:.0f} s.")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=["cmanp-wheel", "lbanp-wheel", "tnpd-wheel", "uniform",
                                                           "linucb"])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--long", type=int, default=0, metavar="N",
                        help="also one N-round run of --long-policy, alone and logged (0: none)")
    parser.add_argument("--long-policy", default="cmanp-wheel")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    rows, long_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/bench.db"
        if args.long:
            load = "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " at the start"
            for logged in (False, True):
                run = long_run(args.long_policy, args.long, db if logged else None)
                print(json.dumps(run))
                long_runs.append(run)
            load += ", " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + " at the end, on 2 cores"
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
    command = COMMAND + ("" if not args.long else f" --policies {' '.join(args.policies)} --long {args.long}")
    lines = ["## Wheel-bandit run cost", "",
             f"Command: `{command}` (CPU: {machine_line()}). One {args.steps}-step run per policy, delta = 0.9, "
             "seed 0, logged to SQLite. Per-step cost = act + observe (median over 10 steps around t).", "",
             "| policy | step at t≈10 (ms) | step at t≈2000 (ms) | ratio | run wall time (s) | steps/s | "
             "loop + logging overhead (s) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['policy']} | {r['early_ms']:.2f} | {r['late_ms']:.2f} | "
                     f"{r['late_ms'] / r['early_ms']:.2f}x | {r['wall_s']:.1f} | {args.steps / r['wall_s']:,.0f} | "
                     f"{r['overhead_s']:.2f} |")
    lines.append(f"\nSQLite write rate through `RunLogger` (commit_every = 50): {write_rate:,.0f} steps/s.")
    if long_runs:
        lines += long_section(long_runs, load, command)
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("bandit-cost", text, "bandit_cost.json", command,
                {"rows": rows, "write_rate": write_rate, "long_runs": long_runs})


if __name__ == "__main__":
    main()
