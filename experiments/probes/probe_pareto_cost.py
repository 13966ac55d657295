"""Seconds of one NP proposal for a study of several objectives, against the size of the Pareto front and the box
decomposition of the region it does not dominate.

The acquisition's cost grows with the cells of the front's box decomposition; the NP itself sees at most its
context size of trials. Every row here is on the front (unit vectors of random directions), the worst case for a
given number of trials; inputs are 4 uniform columns, the model the shipped ``tnpd-bo``, the optimiser its card's
``CandidateSearch()``. Per case and per partitioning (``--alphas``, each given to ``box_decomposition``: 0 is
BoTorch's exact ``FastNondominatedPartitioning``, a positive value its approximate ``NondominatedPartitioning``),
printed: the cells, the seconds to build the partitioning, and the seconds of a whole proposal with it (the
partitioning, ``AnalyticLogEHVI`` on it, and the optimiser's search). ``--library`` adds a row for what
``propose`` itself does. A case whose exact partitioning took longer than ``--give-up`` seconds skips the exact
partitioning of the larger fronts of as many objectives.

``--optimize BUDGET`` instead times a whole run of ``npbandit.optimize`` with its defaults on BoTorch's DTLZ2 with
four objectives at d = 6 (every objective minimised, seed 0): the seconds of each proposal (from one evaluation's
return to the next evaluation), printed with the front's size at evaluations 60, 150 and 300 (those within the
budget), each the mean of the 10 proposals up to it. Run on an idle core:

    OMP_NUM_THREADS=1 python experiments/probes/probe_pareto_cost.py
    OMP_NUM_THREADS=1 python experiments/probes/probe_pareto_cost.py --cases 5:25 5:50 6:25 --alphas 0 1e-3 1e-2
    OMP_NUM_THREADS=1 python experiments/probes/probe_pareto_cost.py --optimize 300
"""

from __future__ import annotations

import argparse
import time

import torch

from npbandit.acquisition.multi_objective import AnalyticLogEHVI, box_decomposition, pareto_front, reference_point
from npbandit.acquisition.optimizers import CandidateSearch
from npbandit.acquisition.proposal import propose
from npbandit.models import NPModel, shared_surrogate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["3:25", "3:50", "3:100", "3:200", "4:25", "4:50", "4:100",
                                                       "4:200", "5:25", "5:50", "5:100", "6:25", "6:50", "6:100"],
                        help="objectives:trials pairs (every trial on the front)")
    parser.add_argument("--alphas", nargs="+", type=float, default=[0.0, 1e-3, 1e-2],
                        help="partitionings: 0 exact, > 0 BoTorch's approximate one at that alpha")
    parser.add_argument("--library", action="store_true", help="also time propose itself (the library's choice)")
    parser.add_argument("--give-up", type=float, default=120.0,
                        help="seconds of an exact partitioning past which larger fronts skip it")
    parser.add_argument("--optimize", type=int, metavar="BUDGET",
                        help="time a run of npbandit.optimize of this budget instead (DTLZ2, d = 6, 4 objectives)")
    args = parser.parse_args(argv)
    if args.optimize:
        return long_run(args.optimize)
    surrogate = shared_surrogate("tnpd-bo")
    generator = torch.Generator().manual_seed(0)
    print("objectives  front  partitioning  cells  build s  proposal s", flush=True)
    too_slow: dict[int, int] = {}  # objectives -> the front size whose exact partitioning took too long
    for case in args.cases:
        m, n = (int(v) for v in case.split(":"))
        X = torch.rand(n, 4, dtype=torch.float64, generator=generator)
        W = torch.rand(n, m, dtype=torch.float64, generator=generator)
        Y = W / W.norm(dim=-1, keepdim=True)
        model = NPModel.from_pretrained(surrogate, X, Y)
        front, ref = pareto_front(Y, m), reference_point(Y, m)
        bounds = torch.stack([torch.zeros(4), torch.ones(4)]).to(torch.float64)
        for alpha in args.alphas:
            label = "exact" if alpha == 0 else f"alpha={alpha:g}"
            if alpha == 0 and m in too_slow and n > too_slow[m]:
                print(f"{m:10d}  {len(front):5d}  {label:>12}  skipped (exact took over {args.give_up:g} s at "
                      f"{too_slow[m]})", flush=True)
                continue
            start = time.perf_counter()
            cells = box_decomposition(ref, front, alpha)
            built = time.perf_counter() - start
            CandidateSearch().maximise(AnalyticLogEHVI(model, cells, m), bounds, 0)
            total = time.perf_counter() - start
            if alpha == 0 and built > args.give_up:
                too_slow[m] = n
            count = cells.get_hypercell_bounds().shape[-2]
            print(f"{m:10d}  {len(front):5d}  {label:>12}  {count:5d}  {built:7.2f}  {total:10.2f}", flush=True)
        if args.library:
            start = time.perf_counter()
            propose(model, "logei", dim=4, best_f=None, seed=0, outputs=Y, observed=X, objectives=m,
                    acq_optimizer=CandidateSearch())
            print(f"{m:10d}  {len(front):5d}  {'propose':>12}  {'':5}  {'':7}  {time.perf_counter() - start:10.2f}",
                  flush=True)


def long_run(budget: int) -> None:
    """``--optimize``: the seconds per proposal of one run of ``optimize`` as its front grows."""
    import numpy as np
    from botorch.test_functions.multi_objective import DTLZ2

    import npbandit

    problem = DTLZ2(dim=6, num_objectives=4)
    exits: list[float] = []
    entries: list[float] = []

    def objective(x):
        entries.append(time.perf_counter())
        values = problem.evaluate_true(torch.as_tensor(x, dtype=torch.float64)[None])[0].tolist()
        exits.append(time.perf_counter())
        return values

    result = npbandit.optimize(objective, np.array([[0.0] * 6, [1.0] * 6]), budget=budget, minimize=[True] * 4,
                               db=None, progress=False, seed=0)
    print("evaluation  front  seconds per proposal (mean of the 10 up to it)")
    for at in (60, 150, 300):
        if at <= budget:
            seconds = [entries[i] - exits[i - 1] for i in range(at - 10, at)]
            front = len(pareto_front(-torch.tensor([h["values"] for h in result.history[:at]],
                                                   dtype=torch.float64), 4))
            print(f"{at:10d}  {front:5d}  {sum(seconds) / len(seconds):10.2f}", flush=True)


if __name__ == "__main__":
    main()
