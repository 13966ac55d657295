"""A dimension-agnostic transformer NP for the ``bo`` prior (issue 49's probe), registered as
the surrogate family ``datnp`` through :func:`npbandit.surrogates.register_model`.

Every shipped ``bo`` network reads a point as one token of a fixed width ``x_dim`` (inputs
zero-padded to it), so it serves no problem wider than it was built for, and the weights that
read the columns beyond its training dimensions are never trained. This model reads one token
per *cell* (point ``n``, input dimension ``i``): an MLP of ``(x_ni, y_n, target flag)``. Each layer
alternates two attentions over the grid of cells:

- across points, within one input dimension: TNP-D's masked attention (context cells attend to
  the context cells of their column; target cells read them), so each column learns how its
  coordinate's distances matter;
- across input dimensions, within one point: every cell of a point attends to the point's other
  cells, which is how a column's attention in the next layer can weigh distance along the other
  coordinates.

The weights never see how many dimensions there are, and both attentions are equivariant to
permuting the input dimensions, the ``bo`` prior's own symmetry. A target's prediction reads
the mean of its cells after the last layer. The cost is ``d`` times a TNP-D's over ``N`` points
(per layer ``d N^2`` scores across points and ``N d^2`` across dimensions).

Zero-padded columns (the prior pads ``d < x_dim`` inputs to ``x_dim``) are dropped: a column
whose context inputs are all exactly zero in the whole batch is padding (a uniform draw is never
exactly zero). That is the probe's shortcut, not a rule for users' data.

Run (one torch thread, beside other work):
``OMP_NUM_THREADS=1 nice python experiments/probes/dimension_agnostic.py train --model datnp --out
training_runs/da/datnp --minutes 30 --warm-steps 800 --steps 9000`` and the same with ``--model tnpd``,
then ``... evaluate training_runs/da/datnp training_runs/da/tnpd``. Both train on the ``bo`` prior at
d = 1..8 in 16 columns (at most 100 context points); the evaluation scores d = 2..8 and also d = 12
and 16, which neither saw. ``... yardstick -- <bo_yardstick.py's arguments>`` runs the yardstick with
this family registered (a card whose ``use.x_dims`` lists the d to score; ``NPModel`` refuses others).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates import register_model
from npbandit.surrogates.attention import AttentionBlock
from npbandit.surrogates.base import ContextSetState, NeuralProcess, NPConfig, NPState
from npbandit.surrogates.layers import GaussianHead, mlp


@dataclass(frozen=True)
class DATNPConfig(NPConfig):
    """The shared transformer fields; ``n_layers`` counts (across points, across dimensions) pairs."""


@dataclass(frozen=True)
class _Encoding:
    """What targets read: the active columns (``None`` for an empty context), and per layer the
    context cells' keys and values ``[B * d, H, N, d_head]`` of the across-points attention."""

    columns: Tensor | None
    per_layer: tuple


class DATNP(NeuralProcess):
    """Dimension-agnostic TNP over cells (see the module docstring); ``y_dim`` must be 1."""

    config_class = DATNPConfig
    name = "datnp"

    def __init__(self, x_dim: int, y_dim: int, config: DATNPConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        if y_dim != 1:
            raise ValueError(f"y_dim must be 1 for datnp, got {y_dim}")
        c = self.config
        self.embed = mlp(3, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.across_points = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers))
        self.across_dims = nn.ModuleList(
            AttentionBlock(c.d_model, c.n_heads, c.d_ff, separate_memory_norm=False) for _ in range(c.n_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.head = GaussianHead(c.d_model, c.d_ff, y_dim, c.min_std, c.activation)

    @staticmethod
    def _columns(x: Tensor) -> Tensor | None:
        """The indices of the columns of ``x [B, N, dx]`` that are not zero padding (``None``: no
        points to tell, as for an empty context)."""
        active = (x != 0).flatten(0, 1).any(0)
        return active.nonzero().squeeze(-1) if bool(active.any()) else None

    def _cells(self, x: Tensor, y: Tensor, flag: float) -> Tensor:
        """``x [B, N, d]``, ``y [B, N, 1]`` -> cell tokens ``[B, N, d, D]``."""
        y = y.expand(*x.shape)
        return self.embed(torch.stack([x, y, torch.full_like(x, flag)], dim=-1))

    def _mix_dims(self, layer: int, h: Tensor) -> Tensor:
        b, n, d, width = h.shape
        return self.across_dims[layer](h.reshape(b * n, d, width)).view(b, n, d, width)

    def _condition(self, xc: Tensor, yc: Tensor) -> ContextSetState:
        columns = self._columns(xc)
        x = xc if columns is None else xc.index_select(-1, columns)
        h = self._cells(x, yc, 0.0)  # [B, N, d, D]
        b, n, d, width = h.shape
        per_layer = []
        for layer in range(self.config.n_layers):
            by_column = h.transpose(1, 2).reshape(b * d, n, width)
            by_column, keys, values = self.across_points[layer].attend_self(by_column)
            per_layer.append((keys, values))
            h = self._mix_dims(layer, by_column.view(b, d, n, width).transpose(1, 2))
        return ContextSetState(xc, yc, _Encoding(columns, tuple(per_layer)))

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        if not isinstance(state, ContextSetState):
            raise TypeError(f"state must be a ContextSetState, got {type(state).__name__}")
        encoding = state.encoding
        columns = encoding.columns
        if columns is None:  # an empty context: the targets' own non-padding columns
            columns = self._columns(xt)
        x = xt if columns is None else xt.index_select(-1, columns)
        h = self._cells(x, x.new_zeros(x.shape[:-1] + (1,)), 1.0)
        b, m, d, width = h.shape
        for layer, (keys, values) in enumerate(encoding.per_layer):
            by_column = h.transpose(1, 2).reshape(b * d, m, width)
            if keys.shape[2]:  # an empty context: nothing to read
                by_column = self.across_points[layer].read(by_column, keys, values)
            h = self._mix_dims(layer, by_column.view(b, d, m, width).transpose(1, 2))
        return self.head(self.norm(h.mean(2)))


register_model(DATNP, replace=True)

# --- the probe's runs ----------------------------------------------------------------------------

TRAIN_DIMS = list(range(1, 9))
EVAL_DIMS = [2, 4, 6, 8, 12, 16]
BASE = {"x_dim": 16, "max_context": 100, "irrelevant_prob": 0.2, "input_warp_prob": 0.2}
TRAIN_PRIOR = {**BASE, "dims": TRAIN_DIMS, "near_context_frac": 0.5, "context_cluster_frac": 0.5}
EVAL_PRIOR = {**BASE, "dims": EVAL_DIMS, "near_context_frac": 0.5}


def _config(model: str, out: str, steps: int, phase: str, init_from: str | None = None,
            dims: list[int] | None = None):
    from npbandit.training.trainer import TrainConfig

    warm = phase == "warm"
    dims = TRAIN_DIMS if dims is None else dims
    prior = {**TRAIN_PRIOR, "dims": dims, **({"standardize": "task"} if warm else {})}
    return TrainConfig(model=model, prior="bo", steps=steps, out=out, size="small",
                       model_config={"activation": "silu"}, prior_params=prior, name=f"{model}-{phase}",
                       batch_size=16, lr=3e-4, eval_every=1000, eval_batches=4, final_eval_batches=8,
                       checkpoint_every=250, device="cpu", init_from=init_from,
                       loss="sampled" if warm else "expected",
                       eval_prior_params={**EVAL_PRIOR, "dims": dims})


def train_run(model: str, out: str, minutes: float, warm_steps: int, steps: int, dims: list[int] | None = None,
              init_from: str | None = None) -> None:
    """The issue 49 recipe at the small size: a warm-up on whole-task standardisation with the
    sampled loss, then the expected loss from its weights, until ``minutes`` are spent; or, given
    ``init_from`` (a card of this model), the main phase alone from its weights."""
    from npbandit.training.trainer import train

    end = time.monotonic() + 60 * minutes
    warm_dir = Path(out + "-warm")
    warm_card = Path(init_from) if init_from else warm_dir / f"{model}-warm.json"
    if not warm_card.exists():
        train(_config(model, str(warm_dir), warm_steps, "warm", dims=dims), progress=False,
              stop_after_s=max(end - time.monotonic(), 1.0))
    if warm_card.exists() and end - time.monotonic() > 1:
        config = _config(model, out, steps, "main", init_from=str(warm_card), dims=dims)
        train(config, progress=False, stop_after_s=end - time.monotonic())
        train(config, progress=False, export_now=True)


def evaluate_runs(outs: list[str], n_batches: int, max_context: int = BASE["max_context"]) -> dict:
    """Held-out log-likelihood per d (train and unseen d), the N(0, 1) baseline and the exact
    GP's predictive on the same batches (contexts of up to ``max_context`` points), for each run's
    exported main-phase card (``outs``: run folders, or the cards themselves)."""
    from npbandit import load_surrogate
    from npbandit.priors import make_prior
    from npbandit.training.evaluation import baseline_log_likelihood, eval_batches, evaluate

    models = {}
    for out in outs:
        cards = [Path(out)] if out.endswith(".json") else sorted(Path(out).glob("*-main.json"))
        if not cards:
            raise SystemExit(f"{out}: no main-phase card (*-main.json); its run has not reached the main phase")
        model = load_surrogate(str(cards[-1]))
        training = model.card["training"]
        models[f"{cards[-1].stem} ({training['steps']} steps, {training['wall_clock_s'] / 60:.0f} min)"] = model
    rows: dict = {"baseline": {}, "exact GP": {}, **{label: {} for label in models}}
    for d in EVAL_DIMS:
        prior = make_prior("bo", **{**EVAL_PRIOR, "dims": [d], "max_context": max_context})
        batches = list(eval_batches(prior, n_batches, 16))
        rows["baseline"][d] = baseline_log_likelihood(batches)
        rows["exact GP"][d] = sum(
            float(Normal(b.yt_mean.double(), b.yt_var.double().sqrt()).log_prob(b.yt.double()).mean())
            for b in batches) / len(batches)
        for label, model in models.items():
            with torch.no_grad():
                rows[label][d] = evaluate(model, batches)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--model", choices=["datnp", "tnpd"], required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--minutes", type=float, default=35.0)
    t.add_argument("--warm-steps", type=int, default=1000)
    t.add_argument("--steps", type=int, default=100000, help="the main phase's schedule length")
    t.add_argument("--max-dim", type=int, default=max(TRAIN_DIMS), help="train at d = 1..this (16 columns)")
    t.add_argument("--init-from", default=None, help="a card of this model: the main phase alone from its weights")
    e = sub.add_parser("evaluate")
    e.add_argument("outs", nargs="+", help="run folders (their *-main.json card) or cards")
    e.add_argument("--batches", type=int, default=8)
    e.add_argument("--max-context", type=int, default=BASE["max_context"], help="the held-out tasks' largest context")
    y = sub.add_parser("yardstick", help="experiments/benchmarks/bo_yardstick.py with this family registered "
                                         "(its arguments after --)")
    y.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.command == "yardstick":
        import runpy

        rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
        # a probe's table is never the published yardstick: the log pages are not rewritten
        sys.argv = ["bo_yardstick.py", *rest, *([] if "--no-write" in rest else ["--no-write"])]
        runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "bo_yardstick.py"),
                       run_name="__main__")
        return
    if args.command == "train":
        train_run(args.model, args.out, args.minutes, args.warm_steps, args.steps,
                  dims=list(range(1, args.max_dim + 1)), init_from=args.init_from)
        return
    rows = evaluate_runs(args.outs, args.batches, args.max_context)
    print("| | " + " | ".join(f"d={d}" for d in EVAL_DIMS) + " |")
    print("|---|" + "---:|" * len(EVAL_DIMS))
    base, exact = rows["baseline"], rows["exact GP"]
    for name, row in rows.items():
        cells = []
        for d in EVAL_DIMS:
            gap = "" if name in ("baseline", "exact GP") else f" ({(row[d] - base[d]) / (exact[d] - base[d]):.2f})"
            cells.append(f"{row[d]:.3f}{gap}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
