"""``npbandit report``: the tables of a database's runs, and its regret figures."""

from __future__ import annotations

import argparse

from npbandit.cli.options import positive_int

__all__ = ["COMMAND", "HELP", "add_arguments", "parse_labels", "run"]

COMMAND = "report"
HELP = ("tables of runs and regret from a database (black-box runs grouped by problem: objective, dimension, bounds, "
        "direction; bandit runs by setting, the wheel's delta or the data set, and run length)")
USES_DB = True


def add_arguments(report: argparse.ArgumentParser) -> None:
    """``npbandit report``'s options; ``--limit``'s default is :func:`~npbandit.report.report_text`'s."""
    report.add_argument("--limit", type=positive_int, default=20, help="latest runs listed")
    report.add_argument("--plot", metavar="PATH",
                        help="also write regret figures, in the format PATH's suffix names (.png, .pdf or .svg): "
                             "one figure per quantity -- bandit cumulative regret, black-box simple regret, "
                             "the best value found where no optimum was recorded -- one panel per bandit setting or "
                             "problem, median "
                             "and 25-75 %% band over seeds; a run that continued another (--initial-from) counts its "
                             "evaluations from its given points, its line starting at their best (a round marker). "
                             "One figure is written to PATH; several to "
                             "STEM-bandit.SUFFIX, STEM-bo.SUFFIX (simple regret), STEM-bo-value.SUFFIX, "
                             "STEM-bo-hypervolume.SUFFIX next to it "
                             "(default: no figure)")
    report.add_argument("--label", action="append", default=[], metavar="POLICY=TEXT",
                        help="the name a figure's legend shows for a policy id, e.g. --label "
                             "'tnpd-bo-tr-logei=TNP-D (ours)' (repeatable; default: the name read off the id, "
                             "tnpd-bo-tr-logei is 'TNP-D (trust region, LogEI)')")


def parse_labels(items: list[str]) -> dict[str, str]:
    """``--label`` values (``POLICY=TEXT``) -> ``{policy: text}``.

    Raises:
        ValueError: an item has no ``=``, or an empty policy or text (the message names ``--label``).
    """
    labels = {}
    for item in items:
        policy, sep, text = item.partition("=")
        if not sep or not policy.strip() or not text.strip():
            raise ValueError(f"--label expects POLICY=TEXT (e.g. tnpd-bo-tr-logei=TNP-D), got {item!r}")
        labels[policy.strip()] = text.strip()
    return labels


def run(args: argparse.Namespace) -> int:
    """Print the report of ``--db``; with ``--plot``, write its figures and say where."""
    from npbandit.report import check_figure_path, plot_regret, report_text

    labels = parse_labels(args.label)
    if labels and not args.plot:
        raise ValueError("--label names the policies in a figure's legend: it needs --plot")
    if args.plot:
        check_figure_path(args.plot, "--plot")  # before the report is printed
    print(report_text(args.db, limit=args.limit))
    if args.plot:
        for path in plot_regret(args.db, args.plot, labels=labels):
            print(f"wrote {path}")
    return 0
