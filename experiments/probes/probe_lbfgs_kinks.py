"""Where BoTorch's L-BFGS-B spends its evaluations on an NP's LogEI: restarts that end on a kink.

One LogEI proposal's start points (``gen_batch_initial_conditions``: 10 restarts from 512 raw
samples, seeded) on ``N`` uniform points of Hartmann-6, each restart then run alone through
scipy's L-BFGS-B with BoTorch's settings (``factr`` 1e7, ``pgtol`` 1e-5, at most 200
iterations). Per restart: evaluations, iterations, why it stopped and where it ended. At the
end point of the restart that took the most evaluations: the one-sided difference quotients
of ``-LogEI`` along each input (a smooth minimum has both near 0; a kink has them of opposite
sign and far from 0), and the gradient autograd reports there.

    python experiments/probes/probe_lbfgs_kinks.py --checkpoint tnpd-bo --n 50 --seed 0
    python experiments/probes/probe_lbfgs_kinks.py --softplus 200   # every ReLU replaced by Softplus(200)
"""

from __future__ import annotations

import argparse
import warnings


def main(argv: list[str] | None = None) -> None:
    import numpy as np
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim.initializers import gen_batch_initial_conditions
    from botorch.test_functions import Hartmann
    from scipy.optimize import fmin_l_bfgs_b

    from npbandit.models import NPModel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="tnpd-bo")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--step", type=float, default=1e-4, help="the difference quotients' step")
    parser.add_argument("--softplus", type=float, default=None, metavar="BETA",
                        help="replace every ReLU of the network by Softplus(BETA) (a smooth function of the same "
                             "weights; not a shipped model)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    problem = Hartmann(dim=6, negate=True)
    X = torch.rand(args.n, 6, generator=torch.Generator().manual_seed(args.seed), dtype=torch.float64)
    Y = problem(X).unsqueeze(-1)
    bounds = problem.bounds.to(torch.float64)
    model = NPModel.from_pretrained(args.checkpoint, X, Y, bounds=bounds)
    if args.softplus is not None:
        for module in list(model.surrogate.modules()):
            for name, child in list(module.named_children()):
                if isinstance(child, torch.nn.ReLU):
                    setattr(module, name, torch.nn.Softplus(beta=args.softplus))
        model = NPModel(model.surrogate, X, Y, bounds=bounds)  # conditioned afresh through the swapped layers
    acq = LogExpectedImprovement(model, best_f=Y.max())
    torch.manual_seed(args.seed)
    starts = gen_batch_initial_conditions(acq, bounds, q=1, num_restarts=10, raw_samples=512)

    def value_and_grad(x):
        z = torch.tensor(x).view(1, 1, 6).requires_grad_(True)
        v = -acq(z).sum()
        v.backward()
        return v.item(), z.grad.view(-1).numpy().astype(np.float64)

    smooth = "" if args.softplus is None else f", ReLU -> Softplus({args.softplus:g})"
    print(f"{args.checkpoint}{smooth}, N = {args.n}, seed {args.seed}: -LogEI per restart")
    print("| restart | evaluations | iterations | stopped | start | end |")
    print("|---:|---:|---:|---|---:|---:|")
    ends = []
    for r in range(len(starts)):
        x0 = starts[r, 0].numpy()
        x, f, info = fmin_l_bfgs_b(value_and_grad, x0, bounds=[(0.0, 1.0)] * 6, factr=1e7, pgtol=1e-5, maxiter=200)
        ends.append((info["funcalls"], x, f))
        print(f"| {r} | {info['funcalls']} | {info['nit']} | {info['task'][:40].lower()} | "
              f"{value_and_grad(x0)[0]:.4f} | {f:.6f} |")
    _, x, f = max(ends, key=lambda e: e[0])
    at = torch.tensor(x)

    def value(point):
        with torch.no_grad():
            return -acq(point.view(1, 1, 6)).item()

    h = args.step
    forward = [(value(at + h * e) - f) / h for e in torch.eye(6, dtype=torch.float64)]
    backward = [(f - value(at - h * e)) / h for e in torch.eye(6, dtype=torch.float64)]
    inside = ((x > 1e-6) & (x < 1 - 1e-6)).tolist()
    print(f"\nAt the end of the longest restart (inside the box per input: {inside}), step {h:g}:")
    print("| input | forward | backward | autograd |")
    print("|---:|---:|---:|---:|")
    grad = value_and_grad(x)[1]
    for i in range(6):
        print(f"| {i} | {forward[i]:+.3f} | {backward[i]:+.3f} | {grad[i]:+.3f} |")


if __name__ == "__main__":
    main()
