"""Which inputs lead the bins of the default wide-box search at each phase boundary, against
the problem's active inputs (issue 45's one high-d miss is a problem with six active inputs).

``RedealtSketch(relevance=concentrated_ard)`` deals the inputs an ARD GP singles out each to a
bin of its own at 40, 60 and 80 observations. This probe runs that search (``BOPolicy``,
``tnpd-bo``, budget 100) on problems of ``highd_subspace.py``'s choosing suite, whose active
inputs are known, and prints per boundary how many of the leaders (and of the raw ARD
scores' top k) are active. Choosing-suite problems only: nothing here reads a reporting one.

    python experiments/probes/probe_sketch_leaders.py --problems rastrigin6-in-48-shifted hartmann3-in-24 --seeds 5
    python experiments/probes/probe_sketch_leaders.py --early 13 9   # with early phases at 13, 22 and 31
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

#: problem -> (D, the seed of its active-input draw in highd_subspace.make_problem, active count)
ACTIVE = {"hartmann3-in-24": (24, 0, 3), "styblinski-tang-4-in-16": (16, 2, 4), "rastrigin6-in-48-shifted": (48, 3, 6),
          "bumps6-in-60": (60, 7, 6)}


def main(argv: list[str] | None = None) -> None:
    import highd_subspace as hs
    import torch
    from redeal_schedules import early_phases

    from npbandit.acquisition.redealt_sketch import RedealtSketch
    from npbandit.acquisition.relevance import ard_relevance, concentrated_ard
    from npbandit.policies.bo import BOPolicy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=list(ACTIVE), choices=list(ACTIVE))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--early", type=int, nargs=2, metavar=("START", "LENGTH"),
                        help="early phases: RedealtSketch(schedule=early_phases(START, LENGTH)), the lab's "
                             "schedule of benchmarks/redeal_schedules.py")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    early = {} if args.early is None else {"schedule": early_phases(*args.early)}
    for problem in args.problems:
        D, draw, k = ACTIVE[problem]
        active = set(np.random.default_rng(draw).permutation(D)[:k].tolist())
        for seed in range(args.seeds):
            log: list[tuple[int, int, int, int]] = []

            def relevance(X, Y, log=log, active=active, k=k):
                scores = concentrated_ard(X, Y)
                raw = ard_relevance(X, Y)
                leaders = [int(i) for i in torch.argsort(scores, descending=True)[:6] if scores[i] > 0]
                top = [int(i) for i in torch.argsort(raw, descending=True)[:k]]
                log.append((X.shape[0], sum(i in active for i in leaders), len(leaders), sum(i in active for i in top)))
                return scores

            dim, f, optimum = hs.make_problem(problem)
            policy = BOPolicy(dim, model=hs.CHECKPOINT, subspace=RedealtSketch(relevance=relevance, **early),
                              budget=100, threads=1)
            policy.reset(seed)
            best = math.inf
            for _ in range(100):
                x = policy.act(None)
                value = f(x)
                policy.observe(None, x, -value, {})
                best = min(best, value)
            cells = "; ".join(f"n={n}: leaders {a}/{t} active, ARD top {k}: {r} active" for n, a, t, r in log)
            print(f"{problem} seed {seed}: final log10 regret {math.log10(max(best - optimum, 1e-12)):.2f}; {cells}",
                  flush=True)


if __name__ == "__main__":
    main()
