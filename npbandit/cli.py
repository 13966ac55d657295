"""The ``npbandit`` console script."""

from __future__ import annotations

import argparse
import json
import sys


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="npbandit", description="Bayesian optimisation and contextual bandits "
                                     "with pretrained neural-process surrogates.")
    from npbandit import __version__

    parser.add_argument("--version", action="version", version=f"npbandit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="show CMANP's exact constant-cost streaming updates")
    demo.add_argument("--n-initial", type=_positive_int, default=2000, help="points to condition on first")
    demo.add_argument("--n-updates", type=_positive_int, default=500, help="points then streamed one at a time")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--size", choices=["paper", "small", "tiny"], default="paper", help="model size")
    train = commands.add_parser("train", help="meta-train a surrogate on a prior (resumable)")
    train.add_argument("--model", required=True, help="cmanp | lbanp | tnpd")
    train.add_argument("--prior", required=True, help="gp1d | bo | wheel")
    train.add_argument("--steps", type=_positive_int, required=True)
    train.add_argument("--out", required=True, help="run directory (resumes if it holds the same run)")
    train.add_argument("--name", help="checkpoint name (default <model>-<prior>)")
    train.add_argument("--size", choices=["paper", "small", "tiny"], default="paper")
    train.add_argument("--set", dest="model_config", action="append", default=[], metavar="FIELD=VALUE",
                       help="override a model config field, e.g. --set n_latents=32 (repeatable)")
    train.add_argument("--prior-set", dest="prior_params", action="append", default=[], metavar="PARAM=VALUE",
                       help="set a prior parameter, e.g. --prior-set kernel=matern52 (repeatable)")
    train.add_argument("--batch-size", type=_positive_int, default=16)
    train.add_argument("--lr", type=float, default=5e-4)
    train.add_argument("--grad-clip", type=float, default=1.0)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--eval-every", type=_positive_int, default=1000)
    train.add_argument("--checkpoint-every", type=_positive_int, default=500)
    train.add_argument("--final-eval-batches", type=_positive_int, default=256)
    train.add_argument("--device", default="auto", help="auto (CUDA when present) | cpu | cuda | cuda:N")
    train.add_argument("--threads", type=_positive_int, help="torch CPU threads (default: torch's choice)")
    train.add_argument("--stop-at", type=_positive_int, help="save and stop after this step (resume later)")

    commands.add_parser("models", help="list the pretrained checkpoints that ship with npbandit")
    return parser


def _parse_assignments(items: list[str], flag: str) -> dict[str, object]:
    """``["a=1", "b=0.5", "c=rbf", "d=[1,2]"]`` -> typed dict (JSON values, else strings)."""
    values: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"npbandit: {flag} expects FIELD=VALUE, got {item!r}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def _list_models() -> None:
    from npbandit.surrogates.pretrained import available_checkpoints, read_card

    names = available_checkpoints()
    if not names:
        print("no pretrained checkpoints ship with this version")
        return
    print(f"{'name':<18}{'model':<8}{'dims':<8}{'params':>9}{'steps':>8}  evaluation (mean target log-likelihood)")
    for name in names:
        card = read_card(name)
        ll = card.get("evaluation", {}).get("log_likelihood", {})
        print(f"{name:<18}{card['model']:<8}{str(card['x_dim']) + '->' + str(card['y_dim']):<8}"
              f"{card.get('parameters', 0):>9,}{card.get('training', {}).get('steps', 0):>8,}  "
              + ", ".join(f"{k} {v:.3f}" for k, v in ll.items()))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from npbandit.demo import run_demo

        if args.n_updates < 20:
            print("npbandit demo: --n-updates must be at least 20", file=sys.stderr)
            return 2
        run_demo(args.n_initial, args.n_updates, args.seed, args.size)
    elif args.command == "train":
        import torch

        from npbandit.training import TrainConfig, train

        if args.threads:
            torch.set_num_threads(args.threads)
        try:
            config = TrainConfig(model=args.model, prior=args.prior, steps=args.steps, out=args.out, name=args.name,
                                 size=args.size, model_config=_parse_assignments(args.model_config, "--set"),
                                 prior_params=_parse_assignments(args.prior_params, "--prior-set"),
                                 batch_size=args.batch_size, lr=args.lr, grad_clip=args.grad_clip, seed=args.seed,
                                 eval_every=args.eval_every, checkpoint_every=args.checkpoint_every,
                                 final_eval_batches=args.final_eval_batches, device=args.device)
            result = train(config, stop_at=args.stop_at)
        except (TypeError, ValueError) as err:
            print(f"npbandit train: {err}", file=sys.stderr)
            return 2
        if result.card is None:
            print(f"stopped {config.name} at step {result.step} of {config.steps}; run the same command to resume")
        else:
            print(f"trained {config.name} for {result.step} steps; checkpoint card: {result.card}")
    elif args.command == "models":
        _list_models()
    return 0


if __name__ == "__main__":
    sys.exit(main())
