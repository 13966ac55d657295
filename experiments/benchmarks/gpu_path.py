"""Issue 47's device path: proposals and wheel steps on a device, and the host round-trips in their hot loops.

- **Proposals.** For each checkpoint and ``N``: the surrogate moved to ``--device``
  (``load_surrogate(...).to(device)``), ``NPModel`` on ``N`` uniform points of Hartmann-6 held
  on the device (the conditioning timed), then ``--proposals`` LogEI proposals through
  ``optimize_acqf`` (10 restarts, 512 raw samples) after one untimed warm-up: proposals per
  second (median) and acquisition evaluations per proposal. On CUDA, the host round-trips of
  one acquisition evaluation (value and input gradient at 10 points) are counted with
  ``torch.cuda.set_sync_debug_mode("warn")`` (one warning per synchronising call).
- **Wheel steps.** ``NPBanditPolicy`` on ``cmanp-wheel`` (UCB) on the device, acting and
  observing on ``WheelBanditEnv(delta=0.9)`` for ``--wheel-rounds`` rounds: steps per second
  over each stretch up to rounds 10, 1e3, 1e4, 1e5, 1e6 (those reached) and the peak device
  memory (CUDA) at each.

A cell that runs out of memory is recorded as ``oom`` and the next one runs. Times are
synchronised with the device before they are read.

    python experiments/benchmarks/gpu_path.py --device cuda                          # a lent GPU
    python experiments/benchmarks/gpu_path.py --device cpu --sizes 10 100 --wheel-rounds 300 --proposals 1 \\
        --out /tmp/gpu_path.json                                                     # a CPU smoke
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line  # noqa: E402

COMMAND = "python experiments/benchmarks/gpu_path.py"
MARKS = (10, 1_000, 10_000, 100_000, 1_000_000)


def synchronise(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def host_round_trips(acq, device: torch.device) -> int | None:
    """Synchronising calls in one acquisition evaluation with its input gradient (CUDA only)."""
    if device.type != "cuda":
        return None
    z = torch.rand(10, 1, 6, dtype=torch.float64, device=device, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            acq(z).sum().backward()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught)


def proposals(checkpoint: str, n: int, device: torch.device, repeats: int) -> dict:
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim import optimize_acqf
    from botorch.test_functions import Hartmann

    from npbandit.models import NPModel
    from npbandit.surrogates.pretrained import load_surrogate

    problem = Hartmann(dim=6, negate=True).to(device)
    X = torch.rand(n, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64).to(device)
    Y = problem(X).unsqueeze(-1)
    bounds = torch.tensor([[0.0] * 6, [1.0] * 6], dtype=torch.float64, device=device)
    surrogate = load_surrogate(checkpoint).to(device)
    synchronise(device)
    start = time.perf_counter()
    model = NPModel(surrogate, X, Y, bounds=bounds)
    model.posterior(X[:1].unsqueeze(0))  # the conditioning happens on first use
    synchronise(device)
    condition_s = time.perf_counter() - start
    acq = LogExpectedImprovement(model, best_f=Y.max())
    calls = [0]
    forward = acq.forward

    def counted(x):
        calls[0] += 1
        return forward(x)

    acq.forward = counted  # this benchmark's own acquisition object
    seconds, evaluations = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(repeats + 1):
            torch.manual_seed(i)
            calls[0] = 0
            synchronise(device)
            start = time.perf_counter()
            optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512)
            synchronise(device)
            if i:  # the first is a warm-up
                seconds.append(time.perf_counter() - start)
                evaluations.append(calls[0])
    return {"checkpoint": checkpoint, "n": n, "condition_s": condition_s,
            "proposals_per_s": 1 / statistics.median(seconds), "evaluations": statistics.median(evaluations),
            "round_trips_per_eval": host_round_trips(acq, device)}


def wheel(device: torch.device, rounds: int) -> list[dict]:
    from npbandit.envs import WheelBanditEnv
    from npbandit.policies.bandit import NPBanditPolicy
    from npbandit.surrogates.pretrained import load_surrogate

    env = WheelBanditEnv(delta=0.9, horizon=rounds)
    policy = NPBanditPolicy(load_surrogate("cmanp-wheel").to(device), rule="ucb")
    obs, _ = env.reset(seed=0)
    policy.reset(0)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    rows, last_t, last_time = [], 0, time.perf_counter()
    for t in range(1, rounds + 1):
        action = policy.act(obs)
        next_obs, reward, _, _, info = env.step(action)
        policy.observe(obs, action, reward, info)
        obs = next_obs
        if t in MARKS or t == rounds:
            synchronise(device)
            now = time.perf_counter()
            peak = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
            rows.append({"round": t, "steps_per_s": (t - last_t) / (now - last_time), "peak_mib": peak})
            last_t, last_time = t, now
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--checkpoints", nargs="+", default=["tnpd-bo", "cmanp-bo"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--proposals", type=int, default=3, help="timed proposals per cell (after one warm-up)")
    parser.add_argument("--wheel-rounds", type=int, default=100_000)
    parser.add_argument("--out", default="experiments/log/results/gpu_path.json")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    torch.set_num_threads(1)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else machine_line(1)
    print(f"`{COMMAND} --device {args.device}` on {name}\n")
    print("| checkpoint | N | conditioning s | proposals / s | evaluations | host round-trips / evaluation |")
    print("|---|---:|---:|---:|---:|---:|")
    cells = []
    for checkpoint in args.checkpoints:
        for n in args.sizes:
            try:
                cell = proposals(checkpoint, n, device, args.proposals)
            except torch.OutOfMemoryError:
                cell = {"checkpoint": checkpoint, "n": n, "oom": True}
                torch.cuda.empty_cache()
            cells.append(cell)
            if cell.get("oom"):
                print(f"| {checkpoint} | {n:,} | oom | | | |", flush=True)
            else:
                trips = cell["round_trips_per_eval"]
                print(f"| {checkpoint} | {n:,} | {cell['condition_s']:.3f} | {cell['proposals_per_s']:.2f} | "
                      f"{cell['evaluations']:.0f} | {'-' if trips is None else trips} |", flush=True)
    print("\n| cmanp-wheel round | steps / s (since the row before) | peak device MiB |\n|---:|---:|---:|")
    steps = wheel(device, args.wheel_rounds) if args.wheel_rounds else []
    for row in steps:
        peak = "-" if row["peak_mib"] is None else f"{row['peak_mib']:.1f}"
        print(f"| {row['round']:,} | {row['steps_per_s']:.0f} | {peak} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"command": f"{COMMAND} {' '.join(argv or sys.argv[1:])}", "device": name,
                                          "proposals": cells, "wheel": steps}, indent=1))


if __name__ == "__main__":
    main()
