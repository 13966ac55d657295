"""The ``npbandit`` console script."""

from __future__ import annotations

import argparse
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from npbandit.demo import run_demo

        if args.n_updates < 20:
            print("npbandit demo: --n-updates must be at least 20", file=sys.stderr)
            return 2
        run_demo(args.n_initial, args.n_updates, args.seed, args.size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
