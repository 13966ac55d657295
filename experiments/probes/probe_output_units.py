"""Whether ``optimize`` searches one objective the same way in any units: Hartmann-3 times a factor
from 1 down to 1e-9, and plus a constant from 0 to 1e9, through the public API (default surrogate,
trust region on and off, and the GP), seed 0, 25 evaluations; printed: each run's best value, the
constant taken off and divided by the factor (the best in the objective's own units; Hartmann-3's
minimum is -3.8628), and its best point.

Before the tiny-range scaling of ``npbandit.transforms.standardize.output_scale`` the default
surrogate's runs at factors of 1e-5 and below ended at -2.71 (against -3.86 unscaled): in those
units the model's predictive variance met gpytorch's absolute floor (1e-10 in float64).
A constant added changes the default's run (the trust region counts an improvement only past
``1e-3 |best|``, TuRBO's margin, which a large constant makes unreachable) and not the run without
a trust region.

    OMP_NUM_THREADS=1 python experiments/probes/probe_output_units.py
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from botorch.test_functions import Hartmann

import npbandit

FACTORS = (1.0, 1e-3, 1e-4, 1e-5, 1e-7, 1e-9)
SHIFTS = (1e2, 1e3, 1e6, 1e9)


def run(factor: float, budget: int, shift: float = 0.0, **options) -> tuple[float, np.ndarray]:
    """The best value of one run of ``shift + factor * hartmann``, in Hartmann's units, and its point."""
    hartmann = Hartmann(dim=3)

    def objective(x):
        return shift + factor * float(hartmann(torch.tensor(np.asarray(x), dtype=torch.float64)[None]))

    result = npbandit.optimize(objective, bounds=[[0.0] * 3, [1.0] * 3], budget=budget, seed=0, progress=False,
                               db=None, **options)
    return (result.best_value - shift) / factor, result.best_x


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=int, default=25)
    parser.add_argument("--factors", type=float, nargs="+", default=list(FACTORS))
    parser.add_argument("--shifts", type=float, nargs="*", default=list(SHIFTS))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for label, options in (("default", {}), ("no trust region", {"trust_region": False}), ("gp", {"surrogate": "gp"})):
        for factor in args.factors:
            best, x = run(factor, args.budget, **options)
            print(f"{label:<16} factor {factor:<8g} best / factor {best:.6f} at {np.round(x, 6).tolist()}", flush=True)
        for shift in args.shifts:
            best, x = run(1.0, args.budget, shift=shift, **options)
            print(f"{label:<16} plus {shift:<10g} best - shift {best:.6f} at {np.round(x, 6).tolist()}", flush=True)


if __name__ == "__main__":
    main()
