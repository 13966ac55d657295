"""Are a joint NP's draws coherent functions? Issue 49's CMANP-AND bar, measured.

The bar: from 10 context points of a smooth 1-D function, draws at two inputs 0.02 apart far
from the data correlate above 0.9, and draws at inputs 1.9 apart below 0.3 (in the units of the
1-D GP protocol's box, ``[-2, 2]``; on another box the same fractions of its width: 0.005 and
0.475).

Protocol, per checkpoint and context seed: 10 inputs uniform in the left 45 % of the box, the
values ``sin(6 u)`` (``u``: the input's position in the box, 0 to 1; about one period over the
box), no noise. ``NPModel.from_pretrained`` (network in float64) draws ``--draws`` joint
samples of the latent function at a grid of ``--grid`` inputs over the whole box
(``NPModel.joint_sample``): in one block (the head's one-shot joint, what ``BOPolicy``'s
Thompson draw uses) and in the card's autoregressive blocks (``block_size`` points each,
every block conditioned on the draw's earlier ones), where a near pair may straddle two
blocks. Near pairs: grid points 0.005 of the width apart, both in the right 40 % of the box
(at least 0.15 of the width from every context input). Far pairs: 0.475 of the width apart,
the first in the middle of the box (0.50-0.525 of the width), both away from the data.
Reported per checkpoint and draw: the mean and the minimum of the near pairs' sample
correlations, the mean and the largest magnitude of the far pairs', over all seeds; the bar
is read as met when every near pair is above 0.9 and every far pair within +-0.3.
Sample correlations of ``--draws`` draws have a standard error of about
``(1 - rho^2) / sqrt(draws)``.

    OMP_NUM_THREADS=1 python experiments/probes/probe_joint_coherence.py
    OMP_NUM_THREADS=1 python experiments/probes/probe_joint_coherence.py --checkpoints cmanp-and-gp1d \
        --seeds 1 --draws 50 --grid 40
"""

from __future__ import annotations

import argparse
import statistics
import warnings

CHECKPOINTS = ("cmanp-and-gp1d", "cmanp-and-bo")
NEAR, FAR = 0.005, 0.475  # pair distances as fractions of the box's width (0.02 and 1.9 on [-2, 2])


def pair_correlations(draws, x, lo: float, width: float) -> tuple[list[float], list[float]]:
    """The near and far pairs' sample correlations of ``draws [S, M]`` at the grid ``x [M]``."""
    import torch

    corr = torch.corrcoef(draws.T)
    step = float(x[1] - x[0])
    near_k, far_k = round(NEAR * width / step), round(FAR * width / step)
    m = len(x)
    slack = step / 2  # grid points that land on a limit count as inside it, whatever the rounding
    near = [float(corr[i, i + near_k]) for i in range(m - near_k) if x[i] >= lo + 0.6 * width - slack]
    far = [float(corr[i, i + far_k]) for i in range(m - far_k)
           if lo + 0.5 * width - slack <= x[i] <= lo + 0.525 * width + slack]
    return near, far


def measure(surrogate, seed: int, draws: int, grid: int, block: int | None):
    """One context seed's near and far correlations for a loaded ``surrogate`` (``block``:
    points per autoregressive block, ``None`` for one block over the grid)."""
    import torch

    from npbandit.models import NPModel

    lo, hi = surrogate.card["use"]["input_domain"]
    width = hi - lo
    g = torch.Generator().manual_seed(seed)
    X = lo + 0.45 * width * torch.rand(10, 1, generator=g, dtype=torch.float64)
    Y = torch.sin(6.0 * (X - lo) / width)
    model = NPModel.from_pretrained(surrogate, X, Y)
    x = torch.linspace(lo, hi, grid + 1, dtype=torch.float64)[:grid]
    with torch.no_grad():
        sample = model.joint_sample(x[:, None], draws, torch.Generator().manual_seed(seed + 1),
                                    block_size=grid if block is None else block)
    return pair_correlations(sample[..., 0], x, lo, width)


def main(argv: list[str] | None = None) -> list[dict]:
    import torch

    from npbandit.surrogates.pretrained import load_surrogate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", nargs="+", default=list(CHECKPOINTS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--grid", type=int, default=200)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message=".*outside the box.*")
    rows = []
    print("| checkpoint | draw | near pairs: mean corr | min | far pairs: mean corr | max abs | bar met |")
    print("|---|---|---:|---:|---:|---:|---|")
    for checkpoint in args.checkpoints:
        surrogate = load_surrogate(checkpoint, dtype=torch.float64)  # loaded once, every model built on it
        card_block = surrogate.card["config"]["block_size"]
        for label, block in (("one block", None), (f"blocks of {card_block}", card_block)):
            near, far = [], []
            for seed in range(args.seeds):
                n, f = measure(surrogate, seed, args.draws, args.grid, block)
                near += n
                far += f
            row = {"checkpoint": checkpoint, "draw": label, "near_mean": statistics.fmean(near), "near_min": min(near),
                   "far_mean": statistics.fmean(far), "far_max_abs": max(abs(v) for v in far)}
            row["met"] = row["near_min"] > 0.9 and row["far_max_abs"] < 0.3  # every pair, not the average
            rows.append(row)
            cells = [f"{row[k]:.3f}" for k in ("near_mean", "near_min", "far_mean", "far_max_abs")]
            print(f"| {checkpoint} | {label} | {' | '.join(cells)} | {'yes' if row['met'] else 'no'} |", flush=True)
    return rows


if __name__ == "__main__":
    main()
