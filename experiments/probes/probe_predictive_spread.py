"""How confident two ``bo`` checkpoints are at and near the data on a suite function.

For N uniform points of Branin or Hartmann-3 (seeds 0..S-1), each checkpoint through
``NPModel.from_pretrained(checkpoint, X, Y, bounds=...)``: the median posterior standard
deviation at the observed points, and at 64 points within 1 % of the box's side of the best
observation (where a converging search refines), in units of the observations' standard
deviation; medians over seeds. Asked by the tnpd-bo weights comparison of session 45: a network that
fits the prior better converged less closely on Branin.

    python experiments/probes/probe_predictive_spread.py --checkpoints tnpd-bo \
        experiments/training/records/gelu45/tnpd-bo-gelu2.json
"""

from __future__ import annotations

import argparse
import statistics
import warnings


def main(argv: list[str] | None = None) -> None:
    import torch
    from botorch.test_functions import Branin, Hartmann

    from npbandit.models import NPModel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", nargs="+", default=["tnpd-bo"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[20, 40])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    print("| function | N | checkpoint | sd at observations | sd near the best |")
    print("|---|---:|---|---:|---:|")
    for name, f, d in (("branin", Branin(negate=True), 2), ("hartmann3", Hartmann(dim=3, negate=True), 3)):
        bounds = f.bounds.double()
        for n in args.sizes:
            cells: dict[str, list[tuple[float, float]]] = {c: [] for c in args.checkpoints}
            for seed in range(args.seeds):
                gen = torch.Generator().manual_seed(seed)
                X = bounds[0] + torch.rand(n, d, generator=gen, dtype=torch.float64) * (bounds[1] - bounds[0])
                Y = f(X).unsqueeze(-1)
                step = 0.01 * (bounds[1] - bounds[0]) * torch.randn(64, d, generator=gen, dtype=torch.float64)
                near = (X[Y.argmax()] + step).clamp(bounds[0], bounds[1])
                for checkpoint in args.checkpoints:
                    model = NPModel.from_pretrained(checkpoint, X, Y, bounds=bounds)
                    with torch.no_grad():
                        at, by = (model.posterior(Z).variance.sqrt().median().item() / Y.std().item()
                                  for Z in (X, near))
                    cells[checkpoint].append((at, by))
            for checkpoint, values in cells.items():
                at = statistics.median(v[0] for v in values)
                by = statistics.median(v[1] for v in values)
                print(f"| {name} | {n} | {checkpoint} | {at:.4f} | {by:.4f} |")


if __name__ == "__main__":
    main()
