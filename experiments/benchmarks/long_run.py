"""Runs past the training range: ``optimize`` for 1,000 evaluations at d = 6.

The shipped ``bo`` checkpoints were trained with at most 100 context points. In the trust
region (``optimize``'s default) the model sees the observations in a box around the
incumbent, which late in a long run, and after every restart, can hold hundreds. This
measures what the model should then be shown, through the public API:

- ``nearest-100``: ``optimize``'s default, ``BOPolicy(max_context="checkpoint")``: at most
  the 100 observations in the box nearest the incumbent;
- ``all``: every observation in the box (``max_context=None``; the behaviour before the
  limit), the same policy otherwise.

Each variant runs ``--budget`` (1,000) evaluations and, with the same seed, ``--short``
(100) evaluations of the default. Reported per seed: seconds of the proposal step (the
policy's ``act``, read from the run's stored steps) around evaluation 100 and around
evaluation ``--budget`` (medians over a window of 20 proposals) and their ratio, and log10
simple regret at evaluations 50, 100, 200, 500 and 1,000. The function is Hartmann-6 on its
unit cube (not a function any default was chosen on for long runs: none was). One torch
thread; on a loaded machine the seconds are noisy: the two windows are a minute apart, and
the load on a shared machine changes in between.

Replayed (the ``--budget`` runs): the same policy rebuilt twice from the run's stored
evaluations, once from the first ``--short`` - 1 and once from the first ``--budget`` - 1
(observed in order, which gives the trust region and the model's data the run had; the
proposal seeds differ), then ``REPLAYS`` proposals of each, taken in turn, so both states
are timed under the same load: the median seconds of each and their ratio.

    python experiments/benchmarks/long_run.py --seeds 2
    python experiments/benchmarks/long_run.py --seeds 1 --budget 150 --short 40 --no-write   # quick look
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import publish  # noqa: E402

SECTION = "long-run"
FUNCTION, DIM, OPTIMUM = "hartmann", 6, -3.32237
VARIANTS = ("nearest-100", "all")
WINDOW = 20  # proposals per timing window
REPLAYS = 10  # proposals per replayed state, alternating between the two states
CHECKPOINTS = (50, 100, 200, 500, 1000)


def run(variant: str, budget: int, seed: int, db: str) -> dict:
    """One run; its per-step proposal seconds and best-so-far regret curve."""
    import numpy as np

    from npbandit import optimize
    from npbandit.envs.blackbox import BlackBoxEnv, make_test_function, problem_objective
    from npbandit.loop import run_episode
    from npbandit.policies import BOPolicy
    from npbandit.storage import RunLogger, run_steps

    objective = problem_objective(make_test_function(FUNCTION, DIM))
    bounds = [[0.0] * DIM, [1.0] * DIM]
    start = time.perf_counter()
    if variant == "nearest-100":  # exactly what a user gets
        result = optimize(objective, bounds, budget=budget, seed=seed, db=db, progress=False, threads=1,
                          optimal_value=OPTIMUM)
        run_id = result.run_id
    else:
        env = BlackBoxEnv(objective=objective, bounds=bounds, budget=budget, optimal_value=OPTIMUM)
        policy = BOPolicy(DIM, model="tnpd-bo", budget=budget, threads=1, max_context=None)
        info = {"kind": "bo", "env_id": "npbandit/BlackBox-v0", "env_params": {"objective": FUNCTION, "dim": DIM}}
        run_id = run_episode(env, policy, seed=seed, logger=RunLogger(db), run_info=info).run_id
    seconds = time.perf_counter() - start
    steps = run_steps(db, run_id)
    act = [s["act_s"] for s in steps]
    best = np.minimum.accumulate([s["value"] for s in steps])
    regret = [math.log10(max(float(b) - OPTIMUM, 1e-12)) for b in best]
    return {"variant": variant, "budget": budget, "seed": seed, "act_s": act, "log10_regret": regret,
            "wall_s": seconds, "steps": steps}


def replayed(variant: str, steps: list[dict], budget: int, seed: int, ends: tuple[int, ...]) -> dict[int, float]:
    """Median seconds of ``REPLAYS`` proposals of the policy rebuilt from the first ``end - 1``
    evaluations of ``steps`` for each ``end`` in ``ends``, the states' proposals taken in turn."""
    import numpy as np

    from npbandit.policies import BOPolicy

    policies = {}
    for end in ends:
        policy = BOPolicy(DIM, model="tnpd-bo", budget=budget, threads=1,
                          max_context="checkpoint" if variant == "nearest-100" else None)
        policy.reset(seed)
        for step in steps[:end - 1]:
            policy.observe(None, np.asarray(step["action"], dtype=np.float64), step["reward"], {})
        policies[end] = policy
    seconds: dict[int, list[float]] = {end: [] for end in ends}
    for _ in range(REPLAYS):
        for end, policy in policies.items():
            start = time.perf_counter()
            policy.act(None)
            seconds[end].append(time.perf_counter() - start)
    return {end: statistics.median(values) for end, values in seconds.items()}


def window(act: list[float], end: int) -> float:
    """Median proposal seconds over the ``WINDOW`` evaluations up to ``end`` (1-based)."""
    return statistics.median(act[max(end - WINDOW, 0):end])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--short", type=int, default=100)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{tmp}/long_run.db"
        for seed in range(args.seeds):
            rows.append(run("nearest-100", args.short, seed, db))
            print(f"seed {seed}: {args.short} evaluations in {rows[-1]['wall_s']:.0f} s; log10 regret "
                  f"{[round(r, 2) for r in rows[-1]['log10_regret'][9::10]]}", flush=True)
            for variant in args.variants:
                rows.append(run(variant, args.budget, seed, db))
                row = rows[-1]
                row["replayed_s"] = replayed(variant, row["steps"], args.budget, seed, (args.short, args.budget))
                print(f"seed {seed}: {variant}, {args.budget} evaluations in {row['wall_s']:.0f} s; proposal s "
                      f"{window(row['act_s'], args.short):.3f} @{args.short}, {window(row['act_s'], args.budget):.3f} "
                      f"@{args.budget} (replayed {row['replayed_s'][args.short]:.3f}, "
                      f"{row['replayed_s'][args.budget]:.3f}); log10 regret "
                      f"{[round(r, 2) for r in row['log10_regret'][9::10]]}", flush=True)
    for row in rows:
        del row["steps"]  # in the run's database; the JSON keeps what the table shows
    marks = [c for c in CHECKPOINTS if c <= args.budget]
    command = "python experiments/benchmarks/long_run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = ["## Runs past the training range: 1,000 evaluations at d = 6 (issue 45 item 3)", "",
             f"Command: `{command.strip()}` (one torch thread). Hartmann-6, `optimize`'s default (`tnpd-bo`, LogEI, "
             f"trust region, its acquisition optimiser), {args.budget} evaluations and, with the same seed, "
             f"{args.short}; seeds 0..{args.seeds - 1}; variants as the script's docstring says. Proposal seconds: "
             f"median over {WINDOW} proposals up to evaluation {args.short} and {args.budget}; replayed: the policy "
             f"rebuilt from the run's evaluations before {args.short} and before {args.budget}, {REPLAYS} proposals "
             "of each taken in turn (the same load for both), medians; log10 simple regret of the best value so "
             "far.", "",
             "| variant | budget | seed | s/proposal @" + str(args.short) + " | @" + str(args.budget)
             + " | ratio | replayed @" + str(args.short) + " | @" + str(args.budget) + " | ratio | "
             + " | ".join(f"log10 regret @{c}" for c in marks) + " | run s |",
             "|---|---|---|---|---|---|---|---|---|" + "---|" * len(marks) + "---|"]
    for row in rows:
        n = row["budget"]
        early = window(row["act_s"], min(args.short, n))
        late = window(row["act_s"], n)
        regrets = " | ".join(f"{row['log10_regret'][c - 1]:.2f}" if c <= n else "" for c in marks)
        replay = row.get("replayed_s")
        again = (" |  |  |  | " if replay is None else f" | {replay[args.short]:.3f} | {replay[n]:.3f} | "
                 f"{replay[n] / replay[args.short]:.2f} | ")
        lines.append(f"| {row['variant']} | {n} | {row['seed']} | {early:.3f} | "
                     f"{late:.3f} | {late / early:.2f}{again}{regrets} | {row['wall_s']:.0f} |")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        publish(SECTION, text, "long_run.json", command.strip(), {"rows": rows}, threads=1)


if __name__ == "__main__":
    main()
