"""Seconds of one q-batch ``optimize_acqf`` with NPModel's q-batch covariance, diagonal against conditioned.

N uniform points of Branin (unit cube, float64; one draw per ``--data-seeds`` entry), an
acquisition per ``--acqfs`` entry (``qlognei``: ``qLogNoisyExpectedImprovement(model,
X_baseline=X, prune_baseline=True)``; ``qucb``: ``qUpperConfidenceBound(model, beta=0.2)``)
and ``optimize_acqf(q, num_restarts, raw_samples)`` with
BoTorch's defaults otherwise; for each checkpoint ``NPModel.from_pretrained(checkpoint, X, Y,
covariance=c)`` for ``c`` in ``diagonal`` / ``conditioning``, and ``SingleTaskGP`` (fit
included) for scale. One torch thread; each cell the median of ``--reps`` calls (the first
call of each model is a warm-up), the rows of one q back to back. Printed: seconds, ratio to
the diagonal posterior, and the least distance between the batch's points.

    python experiments/probes/probe_covariance_cost.py
    python experiments/probes/probe_covariance_cost.py --n 30 --qs 1 4 --reps 3
    python experiments/probes/probe_covariance_cost.py --qs 4 --checkpoints tnpd-bo --acqfs qlognei qucb \
        --data-seeds 0 1 2 --reps 1
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from botorch_batch import build  # noqa: E402  (the same models as the batch benchmark)
from common import machine_line  # noqa: E402


def acquisition(name: str, model, X: torch.Tensor):
    """The acquisition ``--acqfs`` names, on ``model`` observed at ``X``."""
    from botorch.acquisition import qLogNoisyExpectedImprovement, qUpperConfidenceBound

    if name == "qlognei":
        return qLogNoisyExpectedImprovement(model, X_baseline=X, prune_baseline=True)
    return qUpperConfidenceBound(model, beta=0.2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--qs", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--checkpoints", nargs="+", default=["tnpd-bo", "cmanp-bo"])
    parser.add_argument("--restarts", type=int, default=10)
    parser.add_argument("--raw-samples", type=int, default=512)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--acqfs", nargs="+", choices=["qlognei", "qucb"], default=["qlognei"])
    parser.add_argument("--data-seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    from botorch.optim import optimize_acqf
    from botorch.test_functions import Branin

    f = Branin(negate=True)
    unit = torch.stack([torch.zeros(2), torch.ones(2)]).double()

    print(f"# {machine_line(1)}; N = {args.n}, {args.restarts} restarts, {args.raw_samples} raw samples")
    print("| data seed | acquisition | q | method | s per optimize_acqf (median) | / diagonal "
          "| least distance in the batch |")
    print("|---:|---|---:|---|---:|---:|---:|")
    for data_seed, acqf, q in itertools.product(args.data_seeds, args.acqfs, args.qs):
        g = torch.Generator().manual_seed(data_seed)
        X = torch.rand(args.n, 2, generator=g, dtype=torch.float64)
        Y = f(f.bounds[0] + X * (f.bounds[1] - f.bounds[0])).unsqueeze(-1)
        for checkpoint in args.checkpoints:
            base = None
            for method in (f"{checkpoint}:diagonal", f"{checkpoint}:conditioning", "gp"):
                if method == "gp" and checkpoint != args.checkpoints[-1]:
                    continue
                times, least = [], float("nan")
                for rep in range(args.reps + 1):
                    torch.manual_seed(rep)
                    start = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = build(method, X, Y)
                        acq = acquisition(acqf, model, X)
                        batch, _ = optimize_acqf(acq, unit, q=q, num_restarts=args.restarts,
                                                 raw_samples=args.raw_samples)
                    if rep:  # the first call warms up
                        times.append(time.perf_counter() - start)
                    if q > 1:
                        least = float(torch.pdist(batch.detach()).min())
                seconds = statistics.median(times)
                base = seconds if method.endswith(":diagonal") else base
                ratio = "-" if method == "gp" else f"{seconds / base:.2f}x"
                print(f"| {data_seed} | {acqf} | {q} | {method} | {seconds:.2f} | {ratio} | {least:.3f} |", flush=True)


if __name__ == "__main__":
    main()
