"""Seconds of one NP proposal for a study of several objectives, against the size of the Pareto front.

The acquisition's cost grows with the cells of the front's box decomposition; the NP itself sees at most its
context size of trials. Every row here is on the front (unit vectors of random directions), the worst case for a
given number of trials; inputs are 4 uniform columns, the model the shipped ``tnpd-bo``, the optimiser its card's
``CandidateSearch()``. Run on an idle core:

    OMP_NUM_THREADS=1 python experiments/probes/probe_pareto_cost.py
"""

from __future__ import annotations

import argparse
import time

import torch

from npbandit.acquisition.multi_objective import pareto_front
from npbandit.acquisition.optimizers import CandidateSearch
from npbandit.acquisition.proposal import propose
from npbandit.models import NPModel, shared_surrogate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["2:200", "3:100", "4:25", "4:50"],
                        help="objectives:trials pairs (every trial on the front)")
    args = parser.parse_args(argv)
    surrogate = shared_surrogate("tnpd-bo")
    generator = torch.Generator().manual_seed(0)
    print("objectives  trials on the front  seconds per proposal")
    for case in args.cases:
        m, n = (int(v) for v in case.split(":"))
        X = torch.rand(n, 4, dtype=torch.float64, generator=generator)
        W = torch.rand(n, m, dtype=torch.float64, generator=generator)
        Y = W / W.norm(dim=-1, keepdim=True)
        model = NPModel.from_pretrained(surrogate, X, Y)
        start = time.perf_counter()
        propose(model, "logei", dim=4, best_f=None, seed=0, outputs=Y, observed=X, objectives=m,
                acq_optimizer=CandidateSearch())
        print(f"{m:10d}  {len(pareto_front(Y, m)):19d}  {time.perf_counter() - start:20.2f}")


if __name__ == "__main__":
    main()
