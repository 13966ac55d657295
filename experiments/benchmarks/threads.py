"""Seconds per proposal and per wheel step under three thread settings, with the cores busy.

Each setting runs in a fresh process (torch fixes its thread pool per process):

- ``default``: npbandit's default, no thread variable set (the library's inference in
  ``torch_threads()`` blocks: one thread; torch's own count elsewhere);
- ``one``: ``OMP_NUM_THREADS=1`` (the whole process on one thread);
- ``torch``: ``NPBANDIT_THREADS=torch`` (torch's own count, one thread per core: what
  npbandit did before the blocks).

It measures the median seconds of one ``BOPolicy`` proposal (``act``: the model conditioned
on all ``N`` observations, then LogEI maximised with ``optimize``'s settings; no trust
region, which would show the model only the points in its box) of ``tnpd-bo`` and
``cmanp-bo`` on ``N`` observations of a 2-d function (Branin on the unit square), and of
one ``cmanp-wheel`` UCB step (``act`` + ``observe``) of a wheel-bandit run. ``--load K``
runs ``K`` busy-loop processes beside the measured one (a shared machine); they end with
the script, or after ``--load-limit`` seconds at the latest. A setting that runs past
``--timeout`` seconds is stopped and its missing cells are reported as longer than the
time it had run.

``--check-histories`` instead runs ``optimize`` on Branin (12 evaluations, seed 0,
``tnpd`` and ``cmanp``) in a fresh process with no thread variable and in one with
``OMP_NUM_THREADS=1``, and says whether the histories are identical.

    python experiments/benchmarks/threads.py --load 2
    python experiments/benchmarks/threads.py --check-histories
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, publish  # noqa: E402

SETTINGS = {"default": {}, "one": {"OMP_NUM_THREADS": "1"}, "torch": {"NPBANDIT_THREADS": "torch"}}
THREAD_VARIABLES = ("NPBANDIT_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
CHECKPOINTS = ("tnpd-bo", "cmanp-bo")
SECTION = "threads"


def branin01(x):
    """Branin on the unit square (inputs mapped onto [-5, 10] x [0, 15]); minimum 0.397887."""
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    x1, x2 = 15.0 * x[..., 0] - 5.0, 15.0 * x[..., 1]
    b, c, t = 5.1 / (4 * np.pi ** 2), 5.0 / np.pi, 1.0 / (8 * np.pi)
    return (x2 - b * x1 ** 2 + c * x1 - 6.0) ** 2 + 10.0 * (1 - t) * np.cos(x1) + 10.0


# -- the measured process -------------------------------------------------------------------------------------------


def proposal_seconds(checkpoint: str, n: int, seed: int) -> float:
    """Seconds of one BOPolicy proposal after ``n`` observations drawn with ``seed``."""
    import numpy as np

    from npbandit.policies.bo import BOPolicy

    policy = BOPolicy(2, model=checkpoint, budget=n + 10, trust_region=False)  # the model sees all n points
    policy.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for x in rng.random((n, 2)):
        policy.observe(None, x, -float(branin01(x)), {})
    start = time.perf_counter()
    policy.act(None)
    return time.perf_counter() - start


def wheel_step_seconds(steps: int, warm: int = 20, seed: int = 0) -> list[float]:
    """Seconds of each of ``steps`` ``cmanp-wheel`` UCB steps (act + observe) after ``warm`` steps."""
    from npbandit.envs import WheelBanditEnv
    from npbandit.policies import make_bandit_policy

    env, policy = WheelBanditEnv(delta=0.5, horizon=warm + steps), make_bandit_policy("cmanp-wheel")
    obs, _ = env.reset(seed=seed)
    policy.reset(seed=seed)
    times = []
    for t in range(warm + steps):
        start = time.perf_counter()
        action = policy.act(obs)
        elapsed = time.perf_counter() - start
        next_obs, reward, _, _, info = env.step(action)
        start = time.perf_counter()
        policy.observe(obs, action, reward, info)
        elapsed += time.perf_counter() - start
        if t >= warm:
            times.append(elapsed)
        obs = next_obs
    return times


def worker(sizes: list[int], seed: int, wheel_steps: int) -> None:
    """Print one JSON line per measurement (the driver reads them as they come)."""
    import torch

    from npbandit.models import NPModel

    print(json.dumps({"torch_threads": torch.get_num_threads()}), flush=True)
    X = torch.rand(8, 2, dtype=torch.float64)
    for checkpoint in CHECKPOINTS:  # untimed: imports, checkpoint loads, first network calls
        NPModel.from_pretrained(checkpoint, X, X.sum(-1, keepdim=True)).posterior(X)
    times = wheel_step_seconds(wheel_steps, seed=seed)
    print(json.dumps({"cell": "cmanp-wheel step", "s": statistics.median(times)}), flush=True)
    for n in sizes:
        for checkpoint in CHECKPOINTS:
            print(json.dumps({"cell": f"{checkpoint} proposal, N = {n}", "s": proposal_seconds(checkpoint, n, seed)}),
                  flush=True)


# -- the driver -----------------------------------------------------------------------------------------------------


def child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**env, **extra}


def start_load(k: int, limit_s: float) -> list[subprocess.Popen]:
    """``k`` busy-loop processes, each ending by itself after ``limit_s`` seconds."""
    code = f"import time\nend = time.monotonic() + {limit_s}\nwhile time.monotonic() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(k)]


def run_worker(name: str, seed: int, args: argparse.Namespace) -> dict:
    """One fresh process of setting ``name``: ``{"cells": {cell: seconds}, "torch_threads", "seconds",
    "stopped"}``, the cells it measured before ``--timeout``."""
    import selectors

    command = [sys.executable, __file__, "--worker", "--sizes", *map(str, args.sizes), "--seed", str(seed),
               "--wheel-steps", str(args.wheel_steps)]
    start = time.monotonic()
    proc = subprocess.Popen(command, env=child_env(SETTINGS[name]), stdout=subprocess.PIPE)
    cells, threads, stopped = {}, None, False
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        buffer = ""
        while True:
            left = args.timeout - (time.monotonic() - start)
            if left <= 0 or not sel.select(timeout=left):
                stopped = True
                break
            chunk = os.read(proc.stdout.fileno(), 65536).decode()
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split("\n")
            for line in lines:
                record = json.loads(line)
                if "torch_threads" in record:
                    threads = record["torch_threads"]
                else:
                    cells[record["cell"]] = record["s"]
                    print(f"  {name}: {record['cell']}: {record['s']:.3f} s", flush=True)
    finally:
        proc.kill()
        proc.wait()
    return {"cells": cells, "torch_threads": threads, "seconds": time.monotonic() - start, "stopped": stopped}


def cell_names(sizes: list[int]) -> list[str]:
    return ["cmanp-wheel step"] + [f"{c} proposal, N = {n}" for n in sizes for c in CHECKPOINTS]


def summary(runs: list[dict], cell: str) -> str:
    """``median [min, max]`` over the rounds; a stopped round counts as at least its run time."""
    values = [(run["cells"][cell], "") if cell in run["cells"] else (run["seconds"], ">") for run in runs]
    values.sort()
    median = values[len(values) // 2]
    text = f"{median[1]}{median[0]:.3f}"
    if len(values) > 1:
        text += f" [{values[0][1]}{values[0][0]:.3f}, {values[-1][1]}{values[-1][0]:.3f}]"
    return text


def table(results: dict, sizes: list[int]) -> str:
    labels = {"default": "default (blocks: 1 thread, process: {})", "one": "OMP_NUM_THREADS=1 ({})",
              "torch": "NPBANDIT_THREADS=torch ({})"}
    threads = {name: next((r["torch_threads"] for r in runs if r["torch_threads"] is not None), "?")
               for name, runs in results.items()}
    head = "| | " + " | ".join(labels[name].format(threads[name]) for name in results) + " |"
    lines = [head, "|" + "---|" * (len(results) + 1)]
    for cell in cell_names(sizes):
        lines.append(f"| {cell} | " + " | ".join(summary(runs, cell) for runs in results.values()) + " |")
    return "\n".join(lines)


def histories(surrogate: str) -> list:
    import numpy as np

    from npbandit.api import optimize

    result = optimize(branin01, np.array([[0.0, 0.0], [1.0, 1.0]]), surrogate=surrogate, budget=12, seed=0,
                      db=None, progress=False)
    return [[np.asarray(h["x"]).tolist(), h["value"]] for h in result.history]


def check_histories() -> bool:
    here = str(Path(__file__).parent)
    code = (f"import json, sys; sys.path.insert(0, {here!r}); import threads; "
            "print(json.dumps({s: threads.histories(s) for s in ('tnpd', 'cmanp')}))")
    out = {}
    for name, extra in (("default", {}), ("OMP_NUM_THREADS=1", {"OMP_NUM_THREADS": "1"})):
        done = subprocess.run([sys.executable, "-c", code], env=child_env(extra), capture_output=True, text=True,
                              check=True)
        out[name] = json.loads(done.stdout.strip().splitlines()[-1])
    same = out["default"] == out["OMP_NUM_THREADS=1"]
    for surrogate in ("tnpd", "cmanp"):
        print(f"{surrogate}: best {min(v for _, v in out['default'][surrogate]):.6f}; histories identical: "
              f"{out['default'][surrogate] == out['OMP_NUM_THREADS=1'][surrogate]}")
    return same


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, default=0, help="busy-loop processes beside the measured one")
    parser.add_argument("--load-limit", type=float, default=900.0, help="seconds after which a busy loop ends itself")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 100], help="observations before a proposal")
    parser.add_argument("--rounds", type=int, default=3,
                        help="fresh processes per setting, interleaved (one proposal per cell each; median)")
    parser.add_argument("--wheel-steps", type=int, default=20, help="wheel steps timed per process (median)")
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds one process may run")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS))
    parser.add_argument("--check-histories", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.sizes, args.seed, args.wheel_steps)
        return
    if args.check_histories:
        sys.exit(0 if check_histories() else 1)
    import torch

    load = start_load(args.load, args.load_limit)
    results: dict[str, list[dict]] = {name: [] for name in args.settings}
    try:
        for round_ in range(args.rounds):
            # each round runs every setting once, in a rotated order: the machine's other load drifts
            order = args.settings[round_ % len(args.settings):] + args.settings[:round_ % len(args.settings)]
            for name in order:
                load_average = os.getloadavg()[0]
                print(f"round {round_}: {name} ({SETTINGS[name] or 'no thread variable'}), {args.load} busy "
                      f"processes beside it, load average {load_average:.1f}", flush=True)
                results[name].append({**run_worker(name, round_, args), "load_average_at_start": load_average})
    finally:
        for proc in load:
            proc.kill()
            proc.wait()
    text = table(results, args.sizes)
    loads = [run["load_average_at_start"] for runs in results.values() for run in runs]
    text += (f"\n\nLoad average (1 min) when each process started: {min(loads):.1f} to {max(loads):.1f} "
             f"(the busy loops and whatever else the machine ran).")
    print(text)
    if args.no_write:
        return
    command = "python experiments/benchmarks/threads.py " + " ".join(argv if argv is not None else sys.argv[1:])
    body = (f"## Thread settings: seconds per proposal and per wheel step, {args.load} busy processes beside\n\n"
            f"Command: `{command}` ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch "
            f"{torch.__version__}, Python {platform.python_version()}). Seconds of a `BOPolicy` proposal (the model "
            f"conditioned on all N observations of Branin on the unit square, no trust region; LogEI with "
            f"`optimize`'s settings; one per process) and of a `cmanp-wheel` UCB step (act + observe; median of "
            f"{args.wheel_steps} steps after 20 per process): median [min, max] over {args.rounds} rounds, each "
            f"round one fresh process per setting, in rotated order. `default`: no thread variable (npbandit's "
            f"inference in `torch_threads()` blocks, one thread); `OMP_NUM_THREADS=1`: the whole process on one "
            f"thread; `NPBANDIT_THREADS=torch`: torch's own count, as before the blocks. A process stopped after "
            f"--timeout {args.timeout:.0f} s counts as `> T`, T its run time.\n\n{text}\n")
    publish(SECTION, body, "threads.json", command,
            {"load": args.load, "sizes": args.sizes, "rounds": args.rounds, "wheel_steps": args.wheel_steps,
             "cpu_count": os.cpu_count(), "settings": {k: SETTINGS[k] for k in results}, "results": results},
            threads=next((r["torch_threads"] for r in results.get("torch", []) if r["torch_threads"]), None))


if __name__ == "__main__":
    main()
