"""Why BoTorch's L-BFGS-B makes so many evaluations on an NP's LogEI: the ReLU input embedding?

Hypothesis: every ``bo`` surrogate embeds its inputs with a ReLU MLP
(``npbandit.surrogates.layers.mlp``), so the network's mean and std are piecewise smooth in ``x``
with kinks where a unit switches, and L-BFGS-B's curvature pairs and line searches stall at them.
Probe: the same pretrained weights (``--checkpoint``, default ``tnpd-bo``) with every ``nn.ReLU``
replaced by ``nn.Softplus(beta)`` (a smooth function within ``log(2) / beta`` of ReLU per unit),
and the evaluations ``optimize_acqf`` makes for one LogEI proposal (10 restarts, 512 raw samples,
seeded) on ``N`` uniform points of Hartmann-6, with the best LogEI value each reaches. Nothing
here changes a shipped checkpoint; a smooth activation would have to be trained in.

    python experiments/probes/probe_smooth_embedding.py --seeds 4 --n 50
    python experiments/probes/probe_smooth_embedding.py --checkpoint cmanp-bo --views 1
    python experiments/probes/probe_smooth_embedding.py --checkpoint tnpd-bo <a card trained with GELU> --betas
"""

from __future__ import annotations

import argparse
import time
import warnings


def evaluations(surrogate, n: int, seed: int, views: int | None = None) -> tuple[int, float, float]:
    """``(acquisition calls, seconds, best LogEI)`` of one ``optimize_acqf`` proposal."""
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim import optimize_acqf
    from botorch.test_functions import Hartmann

    from npbandit.models import NPModel

    X = torch.rand(n, 6, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    Y = -Hartmann(dim=6)(X).unsqueeze(-1)
    options = {} if views is None else {"n_views": views}
    acq = LogExpectedImprovement(NPModel.from_pretrained(surrogate, X, Y, **options), best_f=Y.max())
    calls = [0]
    forward = acq.forward

    def counted(x):
        calls[0] += 1
        return forward(x)

    acq.forward = counted  # a probe's own acquisition object, counted per call
    bounds = torch.tensor([[0.0] * 6, [1.0] * 6], dtype=torch.float64)
    torch.manual_seed(seed)  # optimize_acqf picks its start points with the global generator
    start = time.perf_counter()
    _, value = optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512, options={"seed": seed})
    return calls[0], time.perf_counter() - start, float(value)


def smoothed(beta: float | None, checkpoint: str = "tnpd-bo"):
    """``checkpoint`` with its ReLUs replaced by ``Softplus(beta)`` (``None``: as shipped)."""
    import torch

    from npbandit.surrogates.pretrained import load_surrogate

    surrogate = load_surrogate(checkpoint)
    if beta is not None:
        for module in list(surrogate.modules()):
            for name, child in list(module.named_children()):
                if isinstance(child, torch.nn.ReLU):
                    setattr(module, name, torch.nn.Softplus(beta=beta))
    return surrogate


def main(argv: list[str] | None = None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--betas", type=float, nargs="*", default=[50.0, 200.0],
                        help="Softplus betas to swap in for ReLU (none: the checkpoints as they are)")
    parser.add_argument("--checkpoint", nargs="+", default=["tnpd-bo"], help="one or more checkpoints, in turn")
    parser.add_argument("--views", type=int, default=None, help="NPModel's n_views (default: the card's)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    print(f"| activation | evaluations per seed (0..{args.seeds - 1}) | seconds | best LogEI |")
    print("|---|---|---|---|")
    for checkpoint, beta in [(c, b) for c in args.checkpoint for b in [None, *args.betas]]:
        surrogate = smoothed(beta, checkpoint)
        rows = [evaluations(surrogate, args.n, seed, args.views) for seed in range(args.seeds)]
        own = f"{surrogate.card['name']}, {surrogate.config.activation}"
        name = own if beta is None else f"{own} -> Softplus(beta={beta:g})"
        print(f"| {name} | {', '.join(str(r[0]) for r in rows)} | {', '.join(f'{r[1]:.2f}' for r in rows)} "
              f"| {', '.join(f'{r[2]:.3f}' for r in rows)} |", flush=True)


if __name__ == "__main__":
    main()
