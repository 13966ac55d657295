"""How does a multi-output NPModel do in BoTorch's multi-objective loop, against BoTorch's own GPs?

BraninCurrin (two objectives, maximised as BoTorch's ``BraninCurrin(negate=True)``, noiseless),
``--init`` Sobol points, then ``--iterations`` iterations of qLogNoisyExpectedHypervolumeImprovement
(``q = --q`` points each; BoTorch's tutorial settings: 128 Sobol MC samples, ``optimize_acqf`` with 10
restarts, 512 raw samples, ``sequential=True``, baseline pruned, the problem's reference point) on
inputs normalised to the unit square, with one of two models:

* ``gp``: a ``ModelListGP`` of one ``SingleTaskGP`` per objective with ``Standardize(m=1)``, fitted
  through ``SumMarginalLogLikelihood``, as BoTorch's multi-objective tutorial sets them up;
* ``np``: one ``NPModel`` on both columns (``shared_surrogate(--checkpoint)``; two independent NPs
  sharing the network), nothing fitted.

Printed per model and seed: the log10 hypervolume gap (the problem's largest hypervolume minus that
of the objective values at the evaluated points) after the Sobol points and at the end, and the
seconds per iteration (model
construction and fit, acquisition set-up and optimisation); then each model's median over seeds.
One torch thread.

    OMP_NUM_THREADS=1 python experiments/probes/probe_botorch_moo.py --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import warnings

import torch
from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import ModelListGP, SingleTaskGP
from botorch.models.transforms import Standardize
from botorch.optim import optimize_acqf
from botorch.sampling import SobolQMCNormalSampler
from botorch.test_functions.multi_objective import BraninCurrin
from botorch.utils.multi_objective.hypervolume import Hypervolume
from botorch.utils.multi_objective.pareto import is_non_dominated
from botorch.utils.sampling import draw_sobol_samples
from botorch.utils.transforms import unnormalize
from gpytorch.mlls import SumMarginalLogLikelihood

from npbandit import NPModel
from npbandit.models import shared_surrogate

MC_SAMPLES, NUM_RESTARTS, RAW_SAMPLES = 128, 10, 512


def build(route: str, X: torch.Tensor, Y: torch.Tensor, checkpoint: str):
    """The model of ``route`` on unit-cube inputs ``X`` and objectives ``Y``, fitted where there is anything to fit."""
    if route == "gp":
        model = ModelListGP(*[SingleTaskGP(X, Y[:, i:i + 1], outcome_transform=Standardize(m=1))
                              for i in range(Y.shape[-1])])
        fit_gpytorch_mll(SumMarginalLogLikelihood(model.likelihood, model))
        return model
    return NPModel(shared_surrogate(checkpoint), X, Y)


def hypervolume_gap(problem: BraninCurrin, Y: torch.Tensor) -> float:
    front = Y[is_non_dominated(Y)]
    return problem.max_hv - Hypervolume(problem.ref_point).compute(front)


def log10_gap(problem: BraninCurrin, Y: torch.Tensor) -> float:
    gap = hypervolume_gap(problem, Y)
    return math.log10(gap) if gap > 0 else -math.inf


def run(route: str, seed: int, init: int, iterations: int, q: int, checkpoint: str) -> tuple[float, float, float]:
    """(log10 hypervolume gap after the Sobol points, final log10 hypervolume gap, seconds per
    iteration) of one run."""
    problem = BraninCurrin(negate=True).to(dtype=torch.float64)
    unit = torch.stack([torch.zeros(problem.dim), torch.ones(problem.dim)]).to(torch.float64)
    torch.manual_seed(seed)
    X = draw_sobol_samples(bounds=unit, n=init, q=1, seed=seed).squeeze(1)
    Y = problem(unnormalize(X, problem.bounds))
    initial, seconds = log10_gap(problem, Y), 0.0
    for _ in range(iterations):
        start = time.perf_counter()
        model = build(route, X, Y, checkpoint)
        acq = qLogNoisyExpectedHypervolumeImprovement(
            model, ref_point=problem.ref_point.tolist(), X_baseline=X, prune_baseline=True,
            sampler=SobolQMCNormalSampler(torch.Size([MC_SAMPLES])))
        candidates, _ = optimize_acqf(acq, unit, q=q, num_restarts=NUM_RESTARTS, raw_samples=RAW_SAMPLES,
                                      options={"batch_limit": 5, "maxiter": 200}, sequential=True)
        seconds += time.perf_counter() - start
        X = torch.cat([X, candidates])
        Y = torch.cat([Y, problem(unnormalize(candidates, problem.bounds))])
    return initial, log10_gap(problem, Y), seconds / iterations


def warm_up() -> None:
    """Build one qLogNEHVI before the timed runs: BoTorch compiles its fused hypervolume kernel (a
    C++ extension, cached per machine) on the first one in a process, which took 16-28 s here."""
    X = torch.rand(4, 2, dtype=torch.float64)
    qLogNoisyExpectedHypervolumeImprovement(SingleTaskGP(X, torch.stack([X.sum(-1), -X.sum(-1)], -1)),
                                            ref_point=[-3.0, -3.0], X_baseline=X)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--routes", nargs="+", choices=("gp", "np"), default=["gp", "np"])
    parser.add_argument("--init", type=int, default=20, help="Sobol points before the first iteration")
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--q", type=int, default=1, help="points per iteration")
    parser.add_argument("--checkpoint", default="tnpd-bo", help="the NP route's network")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="Optimization failed", category=RuntimeWarning)
    warnings.filterwarnings("ignore", message="A not p.d., added jitter", module="linear_operator")  # the GPs' fits
    warm_up()
    results: dict[str, list[tuple[float, float, float]]] = {}
    for route in args.routes:
        for seed in args.seeds:
            initial, gap, per_iteration = run(route, seed, args.init, args.iterations, args.q, args.checkpoint)
            results.setdefault(route, []).append((initial, gap, per_iteration))
            print(f"{route:3s} seed {seed}: log10 HV gap {initial:7.3f} after the Sobol points, {gap:7.3f} at the end; "
                  f"{per_iteration:6.2f} s per iteration", flush=True)
    for route, rows in results.items():
        gap, seconds = statistics.median(r[1] for r in rows), statistics.median(r[2] for r in rows)
        print(f"{route:3s} median over {len(rows)} seeds: final log10 HV gap {gap:7.3f}, "
              f"{seconds:6.2f} s per iteration")


if __name__ == "__main__":
    main()
