"""What ``npbandit.optimize``'s default search reaches on Hartmann-6 (6 inputs, budget 100, seeds
0-9) with one setting changed: no trust region, ``optimize_acqf`` (``GradientRestarts``) instead of
the card's ``CandidateSearch``, the ``cmanp`` surrogate, BoTorch's ``SingleTaskGP``
(which ``BOPolicy`` runs without a trust region by default, so that row has none). Prints the
median log10 simple regret at 60 and 100 evaluations and each seed's final. A diagnosis for issue
45's one miss; nothing is chosen by it (Hartmann-6 is in the choosing suite, at budget 60):

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_hartmann6_settings.py [VARIANT ...] [--seeds 0 10]

``--seeds FIRST STOP``: the seeds ``range(FIRST, STOP)`` (default 0-9).
"""

import argparse
import math
import statistics
import warnings

import numpy as np
import torch
from botorch.test_functions.synthetic import Hartmann

import npbandit
from npbandit.acquisition.optimizers import OPTIMIZERS

warnings.simplefilter("ignore")
H = Hartmann(dim=6)
OPT = float(H.optimal_value)


def f(x):
    return float(H(torch.as_tensor(np.asarray(x), dtype=torch.float64)[None])[0])

VARIANTS = {
    "default": {},
    "no-tr": {"trust_region": False},
    "gradient-restarts": {"acq_optimizer": OPTIMIZERS["gradient-restarts"]()},
    "cmanp": {"surrogate": "cmanp"},
    "gp": {"surrogate": "gp"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", metavar="VARIANT", help=f"some of {', '.join(VARIANTS)} (default: all)")
    parser.add_argument("--seeds", type=int, nargs=2, default=[0, 10], metavar=("FIRST", "STOP"))
    args = parser.parse_args()
    unknown = [name for name in args.variants if name not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    for name in args.variants or list(VARIANTS):
        finals = []
        at60 = []
        for seed in range(*args.seeds):
            kw = {"surrogate": "tnpd", **VARIANTS[name]}
            r = npbandit.optimize(f, [[0.0] * 6, [1.0] * 6], budget=100, seed=seed, db=None, progress=False, **kw)
            best = np.minimum.accumulate([h["value"] for h in r.history])
            finals.append(math.log10(max(best[-1] - OPT, 1e-12)))
            at60.append(math.log10(max(best[59] - OPT, 1e-12)))
        print(f"{name}: median log10 regret at 60 {statistics.median(at60):.2f}, at 100 "
              f"{statistics.median(finals):.2f}; finals {[round(v, 2) for v in finals]}", flush=True)


if __name__ == "__main__":
    main()
