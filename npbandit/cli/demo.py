"""``npbandit demo``: the tour (a short BO run and a wheel-bandit run, logged, then the
report) or, with ``--streaming``, CMANP's constant-cost updates (:mod:`npbandit.demo`)."""

from __future__ import annotations

import argparse
import sys

from npbandit.cli.options import non_negative_int, positive_int, progress

__all__ = ["COMMAND", "HELP", "add_arguments", "help_text", "run"]

COMMAND = "demo"
USES_DB = True
#: the one-line help where the command's options are not built (``npbandit --help``); its own
#: ``--help`` gives :func:`help_text`, which names the problem and policies and loads the library
HELP = ("short BO run and wheel-bandit run, logged, then the report; --streaming: CMANP's exact constant-cost "
        "updates instead")


def help_text() -> str:
    """The command's one-line help, naming what :func:`~npbandit.demo.run_tour` runs."""
    from npbandit.demo import tour_summary

    blackbox, bandit = tour_summary()
    return (f"short BO run ({blackbox}) and wheel-bandit run ({bandit}), logged, then the report; "
            "--streaming: CMANP's exact constant-cost updates instead")


def add_arguments(demo: argparse.ArgumentParser) -> None:
    """``npbandit demo``'s options; their defaults are :func:`~npbandit.demo.run_tour`'s and
    :func:`~npbandit.demo.run_demo`'s."""
    from npbandit.demo import tour_summary
    from npbandit.surrogates import SIZES

    blackbox, _ = tour_summary()
    demo.add_argument("--budget", type=positive_int, default=20, help=f"BO evaluations ({blackbox})")
    demo.add_argument("--steps", type=positive_int, default=300, help="wheel-bandit rounds per policy")
    demo.add_argument("--seed", type=non_negative_int, default=0,
                      help="seeds both runs (--streaming: the data and the weights)")
    demo.add_argument("--rerun", action="store_true",
                      help="make the tour's runs again where --db holds them completed (a tour run again "
                           "otherwise shows the runs it made before)")
    demo.add_argument("--streaming", action="store_true",
                      help="instead: CMANP's exact constant-cost updates, with random weights")
    demo.add_argument("--n-initial", type=positive_int, default=2000, help="--streaming: points conditioned first")
    demo.add_argument("--n-updates", type=positive_int, default=500,
                      help="--streaming: points streamed one by one (at least 20)")
    demo.add_argument("--size", choices=list(SIZES), default="paper", help="--streaming: model size")


def run(args: argparse.Namespace) -> int:
    """Run the tour, or with ``--streaming`` the streaming demo."""
    if args.streaming:
        from npbandit.demo import run_demo

        if args.n_updates < 20:
            print("npbandit demo: --n-updates must be at least 20", file=sys.stderr)
            return 2
        run_demo(args.n_initial, args.n_updates, args.seed, args.size)
        return 0
    from npbandit.demo import run_tour

    run_tour(args.db, args.budget, args.steps, args.seed, progress=progress(), rerun=args.rerun)
    return 0
