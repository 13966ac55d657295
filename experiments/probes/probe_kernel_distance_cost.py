"""What the bo prior's draws save by taking a plain square root for the kernel distance where no
gradient is taken (``npbandit.priors.kernels._scaled_distance``), against the gradient-safe root that
models differentiated in ``x`` need (the same values; written out here as the reference).

CPU process seconds, one torch thread, on tensors of the size of one batch of issue 49's prior (128
tasks of 350 points at d = 16, as a batch with 300 context and 50 target points draws them): the
library's distance (no gradient asked for: the plain root) against the gradient-safe reference, in
alternating rounds, and one whole ``prior.batch`` for scale. The values are the same (checked here);
the batches the prior draws are bit-identical either way (tests/priors/test_priors.py).

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_kernel_distance_cost.py
"""

from __future__ import annotations

import argparse
import time

import torch

import npbandit.priors.kernels as kernels
from npbandit.priors import make_prior

BO16 = {"dims": list(range(1, 17)), "x_dim": 16, "max_context": 300, "irrelevant_prob": 0.2,
        "input_warp_prob": 0.2, "near_context_frac": 0.5, "context_cluster_frac": 0.5}


def gradient_safe_distance(x1: torch.Tensor, x2: torch.Tensor, lengthscale: torch.Tensor) -> torch.Tensor:
    """``||(x1 - x2) / l||`` with the root taken only where the square is positive (the path a
    model differentiated in ``x`` takes)."""
    a, b = x1 / lengthscale[:, None, :], x2 / lengthscale[:, None, :]
    sq = (a.pow(2).sum(-1)[:, :, None] + b.pow(2).sum(-1)[:, None, :] - 2 * a @ b.transpose(-2, -1)).clamp_min(0)
    positive = sq > 0
    return torch.where(positive, torch.where(positive, sq, torch.ones_like(sq)).sqrt(), torch.zeros_like(sq))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    x = torch.rand(128, 350, 16, generator=g, dtype=torch.float64)
    lengthscale = 4 * torch.rand(128, 16, generator=g, dtype=torch.float64) + 0.2
    assert torch.equal(kernels._scaled_distance(x, x, lengthscale), gradient_safe_distance(x, x, lengthscale))
    seconds: dict[str, list[float]] = {"gradient-safe root": [], "plain root (library)": []}
    for _ in range(args.rounds):
        for name, distance in zip(seconds, (gradient_safe_distance, kernels._scaled_distance)):
            start = time.process_time()
            distance(x, x, lengthscale)
            seconds[name].append(time.process_time() - start)
    prior = make_prior("bo", **BO16)
    batch_s = []
    for i in range(3):
        start = time.process_time()
        prior.batch(128, 0, i)
        batch_s.append(time.process_time() - start)
    # the second-lowest round: the least disturbed by other processes on a shared machine, bar one
    safe, plain = (sorted(v)[min(1, len(v) - 1)] for v in seconds.values())
    print("| | CPU s (second-lowest of the rounds) |\n|---|---:|")
    print(f"| distance, gradient-safe root | {safe:.3f} |\n| distance, plain root (library) | {plain:.3f} |")
    print(f"| one prior.batch(128) (median of 3, 16-d prior: d drawn per batch) | {sorted(batch_s)[1]:.3f} |")
    print(f"\nplain / gradient-safe: {plain / safe:.2f}; saved per 350-point, 16-d batch: {safe - plain:.3f} s")


if __name__ == "__main__":
    main()
