"""How well a wheel checkpoint decides, without running the bandit: UCB on held-out histories.

For each δ: 16 tasks, each with a history of ``--history`` rounds in which a uniformly
random arm was played (its reward observed, the other arms filled as the checkpoint's
prior fills them, as at decision time: the checkpoint's outcome transform does it), then UCB decisions
(β = 1, on the network's Gaussian, i.e. its encoded predictive) at
500 fresh contexts. Reported: expected regret per decision as a percentage of
Uniform's (the wheel protocol's normalisation, but per decision rather than cumulative),
and the fraction of correct arms outside (‖x‖ ≥ δ: the 50-reward arm) and inside the
wheel (arm 0). A minute per checkpoint; used to choose the wheel reward encoding.

    python experiments/benchmarks/wheel_decisions.py                                   # shipped *-wheel
    python experiments/benchmarks/wheel_decisions.py --checkpoints runs/x/cmanp-wheel.json --no-write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, publish  # noqa: E402

COMMAND = "python experiments/benchmarks/wheel_decisions.py"
DELTAS = [0.5, 0.7, 0.9, 0.95, 0.99]


def decision_quality(model, delta: float, history: int, generator: torch.Generator) -> dict[str, float]:
    from npbandit.priors.wheel import (
        LARGE_REWARD_STD,
        N_ARMS,
        SMALL_REWARD_STD,
        RewardFill,
        sample_unit_disc,
        wheel_mean_rewards,
    )

    tasks = 16
    x = sample_unit_disc(generator, tasks, history)
    means, large = wheel_mean_rewards(x, torch.tensor(delta))
    played = torch.randint(0, N_ARMS, (tasks, history), generator=generator)
    std = torch.where(large.gather(-1, played[..., None]), LARGE_REWARD_STD, SMALL_REWARD_STD)
    reward = means.gather(-1, played[..., None]) + std * torch.randn(tasks, history, 1, generator=generator)
    observed = torch.zeros(tasks, history, N_ARMS, dtype=torch.bool).scatter_(-1, played[..., None], True)
    y = torch.zeros(tasks, history, N_ARMS).scatter_(-1, played[..., None], reward)  # raw rewards
    # filled as its prior did; the fill's noise comes from this generator
    y = RewardFill(model.outcome_transform.fill).apply(y, observed, generator)
    with torch.no_grad():
        state = model.condition(x, y)
    xt = sample_unit_disc(generator, tasks, 500)
    mt, _ = wheel_mean_rewards(xt, torch.tensor(delta))
    with torch.no_grad():
        dist = model.predict(state, xt).encoded  # the monotone encoding keeps the UCB order
    action = (dist.loc + dist.scale).argmax(-1)
    best = mt.max(-1).values
    regret = best - mt.gather(-1, action[..., None]).squeeze(-1)
    uniform = best - mt.mean(-1)
    outside = best > 10
    correct = action == mt.argmax(-1)
    return {"regret_pct_uniform": float(100 * regret.mean() / uniform.mean()),
            "outside_correct": float(correct[outside].float().mean()) if outside.any() else float("nan"),
            "inside_correct": float(correct[~outside].float().mean()) if (~outside).any() else float("nan")}


def main(argv: list[str] | None = None) -> None:
    from npbandit.surrogates.pretrained import available_checkpoints, load_surrogate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", nargs="+",
                        default=[n for n in available_checkpoints() if n.endswith("-wheel")])
    parser.add_argument("--deltas", type=float, nargs="+", default=DELTAS)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=123)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    for name in args.checkpoints:
        model = load_surrogate(name)
        g = torch.Generator().manual_seed(args.seed)
        row = {"checkpoint": str(name), "steps": model.card["training"]["steps"],
               "encoding": model.outcome_transform.describe(),
               "by_delta": {str(d): decision_quality(model, d, args.history, g) for d in args.deltas}}
        print(row)
        rows.append(row)
    lines = ["## Wheel checkpoints: UCB decisions on held-out histories", "",
             f"Command: `{COMMAND}` (CPU: {machine_line()}). Per δ: 16 tasks with {args.history} past rounds of "
             "a random arm (the others filled as the checkpoint's prior fills them), UCB (β = 1) at 500 fresh "
             "contexts. Cells: expected "
             "regret per decision in % of Uniform's / fraction correct outside the wheel / inside.", "",
             "| checkpoint | steps | reward encoding | " + " | ".join(f"δ={d}" for d in args.deltas) + " |",
             "|---|---:|---|" + "---:|" * len(args.deltas)]
    for r in rows:
        cells = [r["by_delta"][str(d)] for d in args.deltas]
        lines.append(f"| {r['checkpoint']} | {r['steps']:,} | {r['encoding']} | " + " | ".join(
            f"{c['regret_pct_uniform']:.2f} / {c['outside_correct']:.2f} / {c['inside_correct']:.2f}"
            for c in cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("wheel-decisions", text, "wheel_decisions.json", COMMAND, {"history": args.history, "rows": rows})


if __name__ == "__main__":
    main()
