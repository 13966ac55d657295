"""The choosing runs of NPSampler's defaults for studies of several objectives (session 53): NPSampler with its
defaults on the two choosing problems of the multi-objective benchmark (Branin-Currin; DTLZ2 with d = 4 and two
objectives), 40 trials (10 start-up), seeds 0-9, through the public API; printed per run: the final log10
hypervolume gap (BoTorch's reference point and maximum hypervolume) and the run's seconds; written to a JSON file as
``{"<problem>/<seed>": [gap, seconds per NP trial]}``.

Each column of the log's choosing tables is this script run on the tree that had that default
(experiments/log/benchmarks.md, "Several objectives in NPSampler" and "... in closed form"): no warp and the Monte
Carlo estimate at f205dc4, the warp with the estimate at 469df0c and 62ddcea, the warp with the closed form at 6f99ad0
and after.

    OMP_NUM_THREADS=1 python experiments/probes/probe_mo_choosing.py runs/mo_choosing.json
"""

from __future__ import annotations

import argparse
import json
import math
import time


def main(argv: list[str] | None = None) -> None:
    import optuna
    import torch
    from botorch.test_functions.multi_objective import DTLZ2, BraninCurrin
    from botorch.utils.multi_objective.box_decompositions.dominated import DominatedPartitioning

    from npbandit.integrations.optuna import NPSampler

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the JSON file to write")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    problems = {"branincurrin": BraninCurrin().to(torch.float64),
                "dtlz2-d4": DTLZ2(dim=4, num_objectives=2).to(torch.float64)}
    out = {}
    for name, f in problems.items():
        for seed in range(args.seeds):
            def objective(trial, f=f):
                x = torch.tensor([[trial.suggest_float(f"x{i}", 0, 1) for i in range(f.dim)]], dtype=torch.float64)
                return f(x)[0].tolist()

            study = optuna.create_study(directions=["minimize"] * f.num_objectives, sampler=NPSampler(seed=seed))
            start = time.time()
            study.optimize(objective, n_trials=args.trials)
            seconds = time.time() - start
            Y = -torch.tensor([t.values for t in study.trials], dtype=torch.float64)
            hv = DominatedPartitioning(ref_point=-f.ref_point, Y=Y).compute_hypervolume().item()
            gap = math.log10(max(f.max_hv - hv, 1e-12))
            out[f"{name}/{seed}"] = [gap, seconds / (args.trials - 10)]
            print(name, seed, round(gap, 3), round(seconds, 1), flush=True)
    with open(args.out, "w") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
