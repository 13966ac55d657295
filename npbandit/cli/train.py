"""``npbandit train``: meta-train a surrogate on a prior (resumable)."""

from __future__ import annotations

import argparse
import signal
import sys

from npbandit.cli.options import non_negative_int, parse_assignments, positive_float, positive_int

__all__ = ["COMMAND", "HELP", "add_arguments", "run"]

COMMAND = "train"
HELP = "meta-train a surrogate on a prior (resumable)"
USES_DB = False
DEFAULT_THREADS = "torch"  # training keeps torch's own count unless --threads says otherwise
TAKES_PLUGINS = True  # --model and --prior may name a family or a prior a --plugin module registers


def add_arguments(train: argparse.ArgumentParser) -> None:
    """``npbandit train``'s options; their defaults are :class:`~npbandit.training.TrainConfig`'s
    and :func:`~npbandit.training.train`'s."""
    from npbandit.priors import PRIORS
    from npbandit.surrogates import SIZES, available_models

    train.add_argument("--model", required=True,
                       help="a registered model: " + " | ".join(available_models()) + ", or one a --plugin registers")
    train.add_argument("--prior", required=True,
                       help="a registered prior: " + " | ".join(PRIORS) + ", or one a --plugin registers")
    train.add_argument("--steps", type=positive_int, required=True,
                       help="optimiser steps (the schedule spans them)")
    train.add_argument("--out", required=True, help="run directory (resumes if it holds the same run)")
    train.add_argument("--name", help="checkpoint name (default: <model>-<prior>)")
    train.add_argument("--size", choices=list(SIZES), default="paper", help="model size preset")
    train.add_argument("--set", dest="model_config", action="append", default=[], metavar="FIELD=VALUE",
                       help="override a model config field, e.g. --set n_latents=32 (repeatable; default: the "
                            "size preset's)")
    train.add_argument("--prior-set", dest="prior_params", action="append", default=[], metavar="PARAM=VALUE",
                       help="set a prior parameter, e.g. --prior-set kernel=matern52 (repeatable; default: the "
                            "prior's own)")
    train.add_argument("--batch-size", type=positive_int, default=16, help="tasks per optimiser step")
    train.add_argument("--lr", type=positive_float, default=5e-4,
                       help="Adam learning rate at step 0 (a cosine schedule over --steps)")
    train.add_argument("--grad-clip", type=positive_float, default=1.0, help="gradient-norm clip")
    train.add_argument("--seed", type=non_negative_int, default=0, help="seeds the weights and the prior's draws")
    train.add_argument("--eval-every", type=positive_int, default=1000, help="steps between periodic evaluations")
    train.add_argument("--checkpoint-every", type=positive_int, default=500, help="steps between saved states")
    train.add_argument("--eval-batches", type=positive_int, default=32, help="batches of 16 held-out tasks per suite "
                       "entry in periodic evaluations (16 whatever --batch-size is)")
    train.add_argument("--final-eval-batches", type=positive_int, default=256,
                       help="batches of 16 held-out tasks per suite entry in the checkpoint card's evaluation")
    train.add_argument("--device", default="auto", help="auto (CUDA when present) | cpu | cuda | cuda:N")
    train.add_argument("--stop-at", type=positive_int, help="save and stop after this step (resume later; default: "
                       "train to --steps)")
    train.add_argument("--init-from", help="fine-tune: start from this checkpoint's weights (same model and config; "
                       "a cmanp-and run may start from a cmanp with its encoder config; default: fresh weights)")
    train.add_argument("--loss", choices=["sampled", "expected"], default="sampled",
                       help="sampled: NLL of the sampled targets (the papers' objective); expected: NLL averaged "
                       "over the targets' exact predictive distribution (the bo prior; joint models use its joint "
                       "covariance)")
    train.add_argument("--eval-prior-set", dest="eval_prior_params", action="append", default=None,
                       metavar="PARAM=VALUE", help="evaluate on the prior with these parameters instead of "
                       "--prior-set's (repeatable; default: --prior-set's)")
    train.add_argument("--max-minutes", type=positive_float,
                       help="save and stop after this many minutes (resume later; default: no limit)")
    train.add_argument("--loader-workers", type=non_negative_int, default=0,
                       help="CPU processes drawing the prior's batches ahead of the optimiser (same batches; 0: drawn "
                       "in the training process, on its device, where a GPU runs the bo and gp1d priors' GP draws)")
    train.add_argument("--export-now", action="store_true",
                       help="train no further: export the run's saved state as a checkpoint (a run in progress)")


def run(args: argparse.Namespace) -> int:
    """Train (or resume, or export); says where the run stopped and how to go on."""
    from npbandit.training import TrainConfig, train

    config = TrainConfig(model=args.model, prior=args.prior, steps=args.steps, out=args.out, name=args.name,
                         size=args.size, model_config=parse_assignments(args.model_config, "--set"),
                         prior_params=parse_assignments(args.prior_params, "--prior-set"),
                         batch_size=args.batch_size, lr=args.lr, grad_clip=args.grad_clip, seed=args.seed,
                         eval_every=args.eval_every, eval_batches=args.eval_batches,
                         checkpoint_every=args.checkpoint_every,
                         final_eval_batches=args.final_eval_batches, device=args.device,
                         init_from=args.init_from, loss=args.loss,
                         eval_prior_params=(None if args.eval_prior_params is None else
                                            parse_assignments(args.eval_prior_params, "--eval-prior-set")))
    result = train(config, stop_at=args.stop_at,
                   stop_after_s=None if args.max_minutes is None else 60 * args.max_minutes,
                   export_now=args.export_now, loader_workers=args.loader_workers)
    if result.stopped_by is not None:  # a scheduler must tell a pre-empted run from a finished --stop-at
        # stopped during the card's evaluation (a finished run, or --export-now): nothing left but the export
        go_on = ("stopped before its checkpoint was exported; run the same command to export it"
                 if result.step == config.steps or args.export_now else "run the same command to resume")
        print(f"npbandit train: {signal.Signals(result.stopped_by).name}: saved {config.name} at step "
              f"{result.step} of {config.steps}; {go_on}", file=sys.stderr)
        return 128 + result.stopped_by
    if result.card is None:
        print(f"stopped {config.name} at step {result.step} of {config.steps}; run the same command to resume")
    elif result.step < config.steps:
        print(f"exported {config.name} at step {result.step} of {config.steps}; checkpoint card: {result.card}")
    else:
        print(f"trained {config.name} for {result.step} steps; checkpoint card: {result.card}")
    return 0
