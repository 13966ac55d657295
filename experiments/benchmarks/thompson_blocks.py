"""The block size of a joint NP's Thompson draw: what it costs in joint log-likelihood, what
it does to the draws' calibration, and what it saves in time (issue 18;
``npbandit.acquisition.thompson.THOMPSON_BLOCK_SIZE``).

CMANP-AND draws its targets autoregressively, ``b_Q`` at a time (the paper: 5), or all in
one block from its head's one-shot joint ("all"). A Thompson draw over thousands of
candidates is ``M / b_Q`` sequential blocks, so its time falls with ``b_Q``; the question is
what the joint loses. For each ``b_Q``:

- the held-out joint log-likelihood per target (``joint_log_likelihood(block_size=b_Q)``,
  the true values of earlier blocks folded in) on the checkpoint's evaluation suite
  (``bo``: d = 1..6, 50 targets per task, the fixed evaluation batches);
- the median time of one latent draw (``noise=`` held out, as ``BOPolicy`` draws it)
  over 2,048 Sobol candidates from an ``NPModel`` on 30 points of a 4-d function;
- the draws' calibration on the same model: the mean of ``|z|``, ``z`` a draw's distance
  from the latent marginal at each candidate in marginal standard deviations, over all
  candidates and over the last quarter drawn. A draw from the model's joint has every
  ``z ~ N(0, 1)``, so ``sqrt(2 / pi) = 0.80``; values above it mean the blocks drift (each
  is drawn given the earlier blocks' draws, folded in with ``update``, and a model whose
  spread barely narrows at the points it is given adds a fresh spread with every block).

    python experiments/benchmarks/thompson_blocks.py  # cmanp-and-bo, writes experiments/log/benchmarks.md
    python experiments/benchmarks/thompson_blocks.py --batches 2 --no-write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, median_time, publish  # noqa: E402

from npbandit import NPModel, load_surrogate  # noqa: E402
from npbandit.acquisition.thompson import THOMPSON_BLOCK_SIZE  # noqa: E402
from npbandit.training.evaluation import eval_batches, evaluation_suite  # noqa: E402

COMMAND = "python experiments/benchmarks/thompson_blocks.py"


def joint_scores(surrogate, blocks: list, n_batches: int) -> dict:
    """``{b_Q: {suite name: mean joint log-likelihood per target}}``."""
    card = surrogate.card
    suite = evaluation_suite(card["prior"]["name"])
    batches = {name: list(eval_batches(prior, n_batches, 16)) for name, prior in suite.items()}
    scores: dict = {}
    with torch.no_grad():
        for b in blocks:
            scores[b] = {name: sum(float(surrogate.joint_log_likelihood(t.xc, t.yc, t.xt, t.yt,
                                                                        block_size=_blocks_of(b, t.xt.shape[1])))
                                   for t in tasks) / len(tasks) for name, tasks in batches.items()}
            print(f"b_Q={b}: " + " ".join(f"{k} {v:.3f}" for k, v in scores[b].items()), flush=True)
    return scores


def _draw_model(surrogate, n_candidates: int) -> tuple[NPModel, torch.Tensor]:
    """An ``NPModel`` on 30 points of a 4-d function, and ``n_candidates`` Sobol candidates."""
    g = torch.Generator().manual_seed(0)
    X = torch.rand(30, 4, generator=g, dtype=torch.float64)
    Y = torch.sin(3 * X).sum(-1, keepdim=True)
    model = NPModel.from_pretrained(surrogate, X, Y)
    return model, torch.quasirandom.SobolEngine(4, scramble=True, seed=0).draw(n_candidates, dtype=torch.float64)


#: the row of one block over every target (the head's one-shot joint)
ALL = "all"


def _blocks_of(b: int | str, n: int) -> int:
    return n if b == ALL else int(b)


def draw_times(surrogate, blocks: list, n_candidates: int) -> dict:
    """``{b_Q: median seconds of one latent draw over n_candidates points}``."""
    model, candidates = _draw_model(surrogate, n_candidates)
    g = torch.Generator().manual_seed(0)
    times = {}
    with torch.no_grad():
        for b in blocks:
            size = _blocks_of(b, n_candidates)
            times[b] = median_time(lambda size=size: model.joint_sample(candidates, 1, g, block_size=size),
                                   min_reps=3, budget_s=5.0)
            print(f"b_Q={b}: {times[b]:.3f} s per draw", flush=True)
    return times


def calibration(surrogate, blocks: list, n_candidates: int, n_draws: int) -> dict:
    """``{b_Q: (mean |z| over every candidate, over the last quarter drawn)}`` over
    ``n_draws`` latent draws (see the module docstring; calibrated: 0.80)."""
    model, candidates = _draw_model(surrogate, n_candidates)
    with torch.no_grad():
        post = model.posterior(candidates.unsqueeze(-2))
        mean, std = post.mean.reshape(-1), post.variance.reshape(-1).sqrt()
        out = {}
        for b in blocks:
            draws = model.joint_sample(candidates, n_draws, torch.Generator().manual_seed(1),
                                       block_size=_blocks_of(b, n_candidates)).reshape(n_draws, -1)
            z = ((draws - mean) / std).abs()
            out[b] = (float(z.mean()), float(z[:, -(n_candidates // 4):].mean()))
            print(f"b_Q={b}: mean |z| {out[b][0]:.2f}, last quarter {out[b][1]:.2f}", flush=True)
    return out


def render(name: str, scores: dict, times: dict, calib: dict, n_batches: int, n_candidates: int) -> str:
    names = list(next(iter(scores.values())))
    lines = [
        "## The block size of a joint Thompson draw (issue 18)",
        "",
        f"Command: `{COMMAND}` ({machine_line()}; a machine shared with two training runs, so times are "
        f"ratios within this run). `{name}`: held-out joint log-likelihood per target with the targets in "
        f"autoregressive blocks of b_Q (true values of earlier blocks folded in; {n_batches} x 16 tasks of 50 "
        f"targets per d, the fixed evaluation batches), and the median time of one latent draw over "
        f"{n_candidates:,} Sobol candidates (`NPModel.joint_sample`, 30 observations, d = 4), and on the same "
        f"model the draws' mean |z| (z: a draw's distance from the latent marginal in its standard deviations; a "
        f"draw from the model's joint: 0.80) over all candidates and over the last quarter drawn. \"{ALL}\": one "
        f"block over every target, the head's one-shot joint (the log-likelihood's tasks have 50 targets). "
        f"`BOPolicy(acquisition=\"thompson\")` uses b_Q = "
        f"{ALL if THOMPSON_BLOCK_SIZE is None else THOMPSON_BLOCK_SIZE}.",
        "",
        "| b_Q | " + " | ".join(names) + " | draw (s) | x b_Q = 5 | mean abs(z) | last quarter |",
        "|---:|" + "---:|" * len(names) + "---:|---:|---:|---:|",
    ]
    ref = times.get(5)
    for b, row in scores.items():
        ratio = f"{times[b] / ref:.2f}" if ref else "-"
        lines.append(f"| {b} | " + " | ".join(f"{row[n]:.3f}" for n in names) + f" | {times[b]:.3f} | {ratio} | "
                     f"{calib[b][0]:.2f} | {calib[b][1]:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default="cmanp-and-bo")
    parser.add_argument("--blocks", type=int, nargs="+", default=[1, 5, 10, 25, 50])
    parser.add_argument("--batches", type=int, default=8, help="evaluation batches of 16 tasks per d")
    parser.add_argument("--candidates", type=int, default=2048)
    parser.add_argument("--draws", type=int, default=8, help="draws per block size for the calibration")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    surrogate = load_surrogate(args.checkpoint)
    if not surrogate.joint_predictive:
        parser.error(f"{args.checkpoint} is diagonal: its draws have no blocks")
    blocks = [*args.blocks, ALL]
    scores = joint_scores(surrogate, blocks, args.batches)
    times = draw_times(surrogate, blocks, args.candidates)
    calib = calibration(surrogate, blocks, args.candidates, args.draws)
    text = render(args.checkpoint, scores, times, calib, args.batches, args.candidates)
    print(text)
    if not args.no_write:
        publish("thompson-blocks", text, "thompson_blocks.json", COMMAND,
                {"checkpoint": args.checkpoint, "scores": scores, "times": times, "calibration": calib,
                 "batches": args.batches, "candidates": args.candidates, "draws": args.draws})


if __name__ == "__main__":
    main()
