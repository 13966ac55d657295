"""Does optimize's recommended_value stay within what was observed on a deterministic objective?

``npbandit.optimize`` on Branin (minimised; global minimum 0.397887) with its defaults,
``budget=30``, ``db=None``, per seed: the best observed value, the true value at
``recommended_x`` and ``recommended_value`` (the model's de-noised posterior mean there). A
value below 0.397887 is one no point of Branin has.

    python experiments/probes/probe_recommended_value.py --seeds 0 1 2 3
"""

from __future__ import annotations

import argparse

import torch

import npbandit

BRANIN_MIN = 0.397887


def main(argv: list[str] | None = None) -> None:
    from botorch.test_functions import Branin

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--budget", type=int, default=30)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    f = Branin()

    def branin(x) -> float:
        return float(f(torch.as_tensor(x, dtype=torch.float64).unsqueeze(0)))

    print(f"Branin, budget {args.budget}; global minimum {BRANIN_MIN}")
    print("| seed | best_value | true value at recommended_x | recommended_value |")
    print("|---:|---:|---:|---:|")
    for seed in args.seeds:
        r = npbandit.optimize(branin, [[-5.0, 0.0], [10.0, 15.0]], budget=args.budget, seed=seed, db=None,
                              progress=False)
        print(f"| {seed} | {r.best_value:.3f} | {branin(r.recommended_x):.3f} | {r.recommended_value:.3f} |",
              flush=True)


if __name__ == "__main__":
    main()
