"""How far below ``optimize_acqf`` does the default's ``CandidateSearch`` stop on the same acquisition?

Runs ``npbandit.optimize`` on Hartmann-6 (6 inputs, budget 100, the default ``tnpd`` surrogate
with its card's ``CandidateSearch``) through an injected acquisition optimiser that, at every
fifth proposal from the 20th on, also maximises the very acquisition the default is maximising
with ``GradientRestarts()`` (BoTorch's ``optimize_acqf``, 10 restarts, 512 raw samples) and with a
longer ``CandidateSearch(rounds=24, samples=64)``, then hands the default's own points back, so
the run is the default's run. Prints, per audited proposal, the best acquisition value (LogEI)
each found, as a difference from the default's, and their seconds; then medians over all.

A diagnosis for issue 45's one miss (the lead that ``optimize_acqf`` reaches lower regret at
budget 100, ``probe_hartmann6_settings.py``): if the default already finds the acquisition's
maximum, an optimiser change cannot move the run by finding better maxima, only by landing on
other points of (nearly) equal value. Nothing is chosen by it:

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_acq_maximum_gap.py --seeds 0 1 2 3 4
"""

import argparse
import math
import statistics
import time
import warnings

import numpy as np
import torch
from botorch.test_functions.synthetic import Hartmann

import npbandit
from npbandit.acquisition.optimizers import CandidateSearch, GradientRestarts

warnings.simplefilter("ignore")
H = Hartmann(dim=6)
OPT = float(H.optimal_value)
OTHERS = {"gradient-restarts": GradientRestarts(), "candidate-search-long": CandidateSearch(rounds=24, samples=64)}


def f(x):
    return float(H(torch.as_tensor(np.asarray(x), dtype=torch.float64)[None])[0])


class Audit:
    """The default ``CandidateSearch``, its result returned; at audited calls the other
    optimisers maximise the same acquisition and their best values are kept beside it."""

    def __init__(self, first: int, every: int):
        self.default, self.first, self.every = CandidateSearch(), first, every
        self.calls, self.rows = 0, []

    def maximise(self, acq, bounds, seed):
        self.calls += 1
        start = time.perf_counter()
        points, values = self.default.maximise(acq, bounds, seed)
        row = {"call": self.calls, "default": float(values.max()), "s default": time.perf_counter() - start}
        if self.calls >= self.first and self.calls % self.every == 0:
            for name, optimiser in OTHERS.items():
                start = time.perf_counter()
                _, other = optimiser.maximise(acq, bounds, seed)
                row[f"s {name}"] = time.perf_counter() - start
                row[name] = float(other.max())
            self.rows.append(row)
        return points, values

    def params(self):
        return {"name": "audit"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--first", type=int, default=20, help="first audited proposal")
    parser.add_argument("--every", type=int, default=5, help="audit every k-th proposal")
    args = parser.parse_args()
    gaps = {name: [] for name in OTHERS}
    seconds = {name: [] for name in ["default", *OTHERS]}
    for seed in args.seeds:
        audit = Audit(args.first, args.every)
        result = npbandit.optimize(f, [[0.0] * 6, [1.0] * 6], budget=100, seed=seed, db=None, progress=False,
                                   surrogate="tnpd", acq_optimizer=audit)
        best = np.minimum.accumulate([h["value"] for h in result.history])
        print(f"seed {seed}: final log10 regret {math.log10(best[-1] - OPT):.2f}", flush=True)
        for row in audit.rows:
            line = f"  proposal {row['call']:3d}: default LogEI {row['default']:8.4f}"
            for name in OTHERS:
                gaps[name].append(row[name] - row["default"])
                line += f"  {name} {row[name] - row['default']:+.4f}"
            for name in seconds:
                seconds[name].append(row[f"s {name}"])
            print(line, flush=True)
    print("over all audited proposals (other optimiser's best LogEI minus the default's):")
    for name, values in gaps.items():
        print(f"  {name}: median {statistics.median(values):+.4f}, largest {max(values):+.4f}, "
              f"smallest {min(values):+.4f}, {sum(v > 0.01 for v in values)} of {len(values)} above +0.01")
    print("median seconds per maximisation: " + ", ".join(f"{k} {statistics.median(v):.3f}"
                                                         for k, v in seconds.items()))


if __name__ == "__main__":
    main()
