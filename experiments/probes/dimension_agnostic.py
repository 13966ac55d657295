"""Issue 49's probe of a dimension-agnostic NP: ``datnp`` (:mod:`npbandit.surrogates.datnp`, which
began here) against the padded ``tnpd``, trained and scored at the small size on one CPU thread.

``datnp`` trains on the ``bo`` prior with ``padding="none"`` (each batch as wide as its ``d``), the
padded ``tnpd`` on zero-padded batches of 16 columns. The evaluation draws every d's held-out tasks
at their own width and zero-pads them for a fixed-width model. (The session-42 runs in the log were
made with the probe's first version, which took all-zero context columns for padding and dropped
them; on batches without padding the two read the same columns.)

Run (one torch thread, beside other work):
``OMP_NUM_THREADS=1 nice python experiments/probes/dimension_agnostic.py train --model datnp --out
training_runs/da/datnp --minutes 30 --warm-steps 800 --steps 9000`` and the same with ``--model tnpd``,
then ``... evaluate training_runs/da/datnp training_runs/da/tnpd``. Both train on the ``bo`` prior at
d = 1..8 (at most 100 context points); the evaluation scores d = 2..8 and also d = 12 and 16, which
neither saw. ``... yardstick -- <bo_yardstick.py's arguments>`` runs the yardstick (a card whose
``use.x_dims`` lists the d to score; ``NPModel`` refuses others). ``--model dacmanp`` and ``--model
daind`` train the streamed models of ``da_cmanp.py`` and ``da_inducing.py`` (registered on import) by
the same recipe. ``--plugin`` of this file, as
``gpu_bo16.sh`` passes it, imports nothing the library lacks now.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch
from torch.distributions import Normal

# --- the probe's runs ----------------------------------------------------------------------------

TRAIN_DIMS = list(range(1, 9))
EVAL_DIMS = [2, 4, 6, 8, 12, 16]
BASE = {"x_dim": 16, "max_context": 100, "irrelevant_prob": 0.2, "input_warp_prob": 0.2}
TRAIN_PRIOR = {**BASE, "dims": TRAIN_DIMS, "near_context_frac": 0.5, "context_cluster_frac": 0.5}
EVAL_PRIOR = {**BASE, "dims": EVAL_DIMS, "near_context_frac": 0.5}


def _padding(model: str) -> dict:
    """The prior's padding for ``model``: none for a network of any width, zeros for a padded one."""
    from npbandit.surrogates import build

    return {"padding": "none" if build(model, 1, 1, size="tiny").any_x_dim else "zeros"}


def _config(model: str, out: str, steps: int, phase: str, init_from: str | None = None,
            dims: list[int] | None = None):
    from npbandit.training.trainer import TrainConfig

    warm = phase == "warm"
    dims = TRAIN_DIMS if dims is None else dims
    prior = {**TRAIN_PRIOR, "dims": dims, **_padding(model), **({"standardize": "task"} if warm else {})}
    return TrainConfig(model=model, prior="bo", steps=steps, out=out, size="small",
                       model_config={"activation": "silu"}, prior_params=prior, name=f"{model}-{phase}",
                       batch_size=16, lr=3e-4, eval_every=1000, eval_batches=4, final_eval_batches=8,
                       checkpoint_every=250, device="cpu", init_from=init_from,
                       loss="sampled" if warm else "expected",
                       eval_prior_params={**EVAL_PRIOR, "dims": dims, **_padding(model)})


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


def early_steps(model: str, dims: list[int], steps: int, lr: float, every: int = 250,
                overrides: dict | None = None) -> list[tuple[int, float]]:
    """Whether a family leaves the N(0, 1) level early: ``model`` at the small size (SiLU) trained
    from scratch for ``steps`` steps of batch 16 with the sampled loss on the ``bo`` prior at
    ``dims`` (each batch at its own width, whole-task standardisation, at most 50 context points),
    Adam at ``lr``, gradients clipped at 1; the running loss (an exponential mean, weight 0.05)
    every ``every`` steps; ``overrides``: config fields for ``build``. The N(0, 1) prediction scores
    about 1.41 here. No state is kept."""
    from npbandit.priors import make_prior
    from npbandit.surrogates import build

    torch.manual_seed(0)
    prior = make_prior("bo", dims=dims, x_dim=max(dims), max_context=50, padding="none", standardize="task")
    net = build(model, max(dims), 1, size="small", **{"activation": "silu", **(overrides or {})})
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    running, out = None, []
    for step in range(steps):
        batch = prior.batch(16, 1, step)
        loss = -net.log_likelihood(batch.xc, batch.yc, batch.xt, batch.yt)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        optimizer.step()
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        if (step + 1) % every == 0:
            out.append((step + 1, running))
    return out


def widen(card: str, out: str, max_dim: int = 16) -> Path:
    """A copy of ``card`` (its weights unchanged) whose ``use.x_dims`` lists ``1..max_dim``, named
    ``<name>-wide``, in ``out``: ``NPModel`` refuses a width its card does not list, and the yardstick
    scores a network of any width at widths it was not trained on."""
    import json
    import shutil

    src = Path(card)
    meta = json.loads(src.read_text())
    name = f"{meta['name']}-wide"
    meta["use"]["x_dims"], meta["name"], meta["weights"] = list(range(1, max_dim + 1)), name, f"{name}.safetensors"
    Path(out).mkdir(parents=True, exist_ok=True)
    shutil.copy(src.with_name(src.stem + ".safetensors"), Path(out) / meta["weights"])
    target = Path(out) / f"{name}.json"
    target.write_text(json.dumps(meta, indent=1))
    return target


def _pad(batch, width: int):
    """``batch`` with its inputs zero-padded to ``width`` columns (a fixed-width network's)."""
    from npbandit.priors.base import TaskBatch

    def pad(x):
        return torch.cat([x, x.new_zeros(*x.shape[:-1], width - x.shape[-1])], dim=-1)

    return TaskBatch(pad(batch.xc), batch.yc, pad(batch.xt), batch.yt, batch.info, batch.yt_mean, batch.yt_var,
                     batch.yt_cov_factor)


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
        prior = make_prior("bo", **{**EVAL_PRIOR, "dims": [d], "max_context": max_context, "padding": "none"})
        batches = list(eval_batches(prior, n_batches, 16))
        rows["baseline"][d] = baseline_log_likelihood(batches)
        rows["exact GP"][d] = sum(
            float(Normal(b.yt_mean.double(), b.yt_var.double().sqrt()).log_prob(b.yt.double()).mean())
            for b in batches) / len(batches)
        for label, model in models.items():
            with torch.no_grad():
                read = batches if model.any_x_dim else [_pad(b, model.x_dim) for b in batches]
                rows[label][d] = evaluate(model, read)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--model", choices=["datnp", "dacmanp", "daind", "tnpd"], required=True)
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
    q = sub.add_parser("early", help="the running loss of a from-scratch run's first steps (see early_steps)")
    q.add_argument("--model", required=True)
    q.add_argument("--dims", type=int, nargs="+", required=True)
    q.add_argument("--steps", type=int, default=1500)
    q.add_argument("--lr", type=float, default=1e-3)
    q.add_argument("--set", nargs="*", default=[], metavar="KEY=INT", help="integer config fields, e.g. n_inducing=256")
    w = sub.add_parser("widen", help="a copy of a card whose use.x_dims reach --max-dim (see widen)")
    w.add_argument("card")
    w.add_argument("out")
    w.add_argument("--max-dim", type=int, default=16)
    y = sub.add_parser("yardstick", help="experiments/benchmarks/bo_yardstick.py with this family registered "
                                         "(its arguments after --)")
    y.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    import da_cmanp  # noqa: F401 - registers the dimension-agnostic CMANP ("dacmanp") beside datnp
    import da_inducing  # noqa: F401 - registers the inducing-point NP of any width ("daind")
    if args.command == "yardstick":
        import runpy

        rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
        # a probe's table is never the published yardstick: the log pages are not rewritten
        sys.argv = ["bo_yardstick.py", *rest, *([] if "--no-write" in rest else ["--no-write"])]
        runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "bo_yardstick.py"),
                       run_name="__main__")
        return
    if args.command == "widen":
        print(widen(args.card, args.out, args.max_dim))
        return
    if args.command == "early":
        overrides = {k: int(v) for k, v in (item.split("=", 1) for item in args.set)}
        for step, loss in early_steps(args.model, args.dims, args.steps, args.lr, overrides=overrides):
            print(f"{args.model} dims {args.dims[0]}..{args.dims[-1]} step {step}: running loss {loss:.3f}", flush=True)
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
