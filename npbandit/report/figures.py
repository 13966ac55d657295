"""Regret figures for ``npbandit report --plot``, sized and lettered for a paper.

One figure per quantity (:data:`~npbandit.report.curves.QUANTITIES`): bandit
cumulative regret, black-box simple regret, the best value found on problems with no
recorded optimum, and the hypervolume of the feasible front on problems of several
objectives are never mixed in one figure, so each figure has one y label and one x
label. In a figure, one panel per setting (a bandit setting -- the wheel's ``delta``, a
classification data set... --, a problem), one line per row of
the report's tables: the median over runs (seeds), a band between the 25th and 75th
percentiles, each row in one colour and dash across all panels -- except in a figure where
some panel holds runs of several lengths (a wheel delta run for 300 rounds and for 2000,
two budgets on one problem): there a row keeps its colour and each length has a dash of its
own in every panel, the legend naming the rows and the lengths apart. Dotted vertical lines
mark where initial (Sobol) designs end, one per distinct design size in a panel. A
line of runs that continued another (``--initial-from``) counts its evaluations from the
points they were given and starts, with a round marker, at their best. A regret
axis is logarithmic in every panel of the figure when the figure's values span a decade
or more (symmetric-log when some are <= 0). All text is at least :data:`MIN_FONT_SIZE` pt.

matplotlib is imported inside the functions only: importing :mod:`npbandit.report` does
not load it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from npbandit.report.curves import QUANTITIES, Panel, figure_title, length_text, panels
from npbandit.report.labels import RowKey, check_label_overrides
from npbandit.storage import DEFAULT_URL, list_runs

__all__ = ["regret_figures", "regret_figure", "plot_regret", "figure_paths", "check_figure_path", "FIGURE_FORMATS",
           "LINESTYLES", "COLOURS", "MIN_FONT_SIZE"]

#: the formats :func:`plot_regret` writes, by file suffix
FIGURE_FORMATS = ("png", "pdf", "svg")
#: the smallest font, in points, of any text in the figures
MIN_FONT_SIZE = 10
#: one dash per row, cycled; dotted is the initial design's line
LINESTYLES = ("-", "--", "-.", (0, (5, 1, 1, 1, 1, 1)))
#: the legend's name for the marker where a continued run's curve starts
GIVEN_LABEL = "best of the given points"
_GIVEN_MARKER = "o"
#: Okabe and Ito's colour-blind-safe palette, yellow (faint on white) last
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
_TITLE_SIZE = 11
#: inches per panel, at the sizes above a two-column paper's full text width for three panels
_PANEL_SIZE = (3.6, 2.9)
_COLUMNS = 3
#: inches: a one-panel figure is this wide, to leave its legend and title room
_MIN_WIDTH = 5.6


def _given_start(line: Any) -> bool:
    """Whether a line starts at its runs' given points' best (runs that continued another,
    the best known; :attr:`~npbandit.report.curves.Line.given`)."""
    return line.given > 0 and bool(np.isfinite(line.curves[:, line.given - 1]).any())


def _axis_scale(values: np.ndarray) -> tuple[str, float | None]:
    """One y scale for all panels of a figure, from all its values: ``("log", None)`` when
    the positive values span a decade or more and none is <= 0 (a linear axis would
    flatten every curve but the worst against zero); ``("symlog", threshold)``, linear
    below the power of ten under the smallest positive value, when they span a decade
    and some are <= 0 (a cumulative regret starts at 0 when the first rounds pick the
    best arm); else ``("linear", None)``."""
    values = values[np.isfinite(values)]
    positive = values[values > 0]
    if positive.size == 0 or positive.max() / positive.min() < 10:
        return "linear", None
    if positive.size == values.size:
        return "log", None
    return "symlog", 10.0 ** math.floor(math.log10(positive.min()))


def _two_five(value: float, _position: Any) -> str:
    mantissa = value / 10.0 ** math.floor(math.log10(abs(value))) if value else 0.0
    return f"{value:g}" if round(mantissa, 6) in (2.0, 5.0) else ""


def _apply_scale(ax: Any, scale: tuple[str, float | None], values: np.ndarray) -> None:
    from matplotlib.ticker import FuncFormatter

    kind, threshold = scale
    if kind == "linear":
        return
    if kind == "log":
        ax.set_yscale("log")
    else:
        ax.set_yscale("symlog", linthresh=threshold)
    # plain numbers (0.01, 300) read faster than 10^-2 or 3 x 10^2
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    values = values[np.isfinite(values) & (values > 0)]
    if values.size and values.max() / values.min() < 100:  # few powers of ten show: label 2s and 5s too
        ax.yaxis.set_minor_formatter(FuncFormatter(_two_five))


def _styles(keys: list[RowKey]) -> dict[RowKey, tuple[str, Any]]:
    """A colour and a dash per row of a figure, in the rows' table order: one row is one
    colour in every panel of the figure."""
    ordered = sorted(set(keys), key=lambda k: (k.text(), k.kind))
    return {k: (COLOURS[i % len(COLOURS)], LINESTYLES[i % len(LINESTYLES)]) for i, k in enumerate(ordered)}


def _length_dashes(group: list[Panel]) -> dict[int, Any]:
    """A dash per run length (:attr:`~npbandit.report.curves.Line.length`), shortest first,
    for a figure where some panel holds lines of several lengths (a row's lines there differ
    by length alone); ``{}`` where every panel's lines are of one length (each panel's title
    names it), and rows keep a dash each."""
    if all(len({line.length for line in panel.lines}) == 1 for panel in group):
        return {}
    lengths = sorted({line.length for panel in group for line in panel.lines})
    return {n: LINESTYLES[i % len(LINESTYLES)] for i, n in enumerate(lengths)}


def _legend_names(keys: list[RowKey], labels: Mapping[str, str]) -> dict[RowKey, str]:
    """Each row's legend name (:meth:`RowKey.legend`); rows whose names coincide (two
    checkpoints with one file name, one name given to two policies) also show their ids."""
    names = {key: key.legend(labels) for key in keys}
    count: dict[str, int] = {}
    for name in names.values():
        count[name] = count.get(name, 0) + 1
    return {key: name if count[name] == 1 else f"{name} [{key.text()}]" for key, name in names.items()}


def _legend_columns(labels: list[str], width: float) -> int:
    """How many legend entries fit side by side across ``width`` inches (at
    :data:`MIN_FONT_SIZE`, about 0.08 inch a character, plus the line sample)."""
    entry = max(len(label) for label in labels) * 0.08 + 0.9
    return max(1, min(len(labels), int(width // entry)))


def _draw(quantity: str, group: list[Panel], labels: Mapping[str, str]) -> Any:
    """One figure: the panels of one quantity, a shared legend under them."""
    import textwrap

    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    spec = QUANTITIES[quantity]
    keys = [line.key for panel in group for line in panel.lines]
    styles, names = _styles(keys), _legend_names(sorted(set(keys)), labels)
    dashes = _length_dashes(group)

    def style(line: Any) -> tuple[str, Any]:
        colour, dash = styles[line.key]
        return colour, dashes.get(line.length, dash)

    ncols = min(_COLUMNS, len(group))
    nrows = math.ceil(len(group) / ncols)
    entries: dict[str, Line2D] = {}  # legend label -> handle, in order of appearance
    for panel in group:
        for line in panel.lines:
            colour, dash = styles[line.key]
            # with a dash per length, a row's sample is its colour alone, and each length's its dash alone
            entries.setdefault(names[line.key], Line2D([], [], color=colour, ls="-" if dashes else dash, lw=1.8))
    for length, dash in dashes.items():
        entries[length_text(quantity, length)] = Line2D([], [], color="0.35", ls=dash, lw=1.8)
    if any(panel.design_ends() for panel in group):
        entries["end of initial design"] = Line2D([], [], color="0.45", ls=":", lw=1.4)
    if any(_given_start(line) for panel in group for line in panel.lines):
        entries[GIVEN_LABEL] = Line2D([], [], color="0.35", ls="none", marker=_GIVEN_MARKER, markersize=6)
    width = max(_PANEL_SIZE[0] * ncols, _MIN_WIDTH)
    legend_cols = _legend_columns(list(entries), width)
    legend_rows = math.ceil(len(entries) / legend_cols)
    fig = Figure(figsize=(width, _PANEL_SIZE[1] * nrows + 0.8 + 0.22 * legend_rows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax in axes.flat[len(group):]:
        ax.set_visible(False)
    values = np.concatenate([line.curves.ravel() for panel in group for line in panel.lines])
    scale = _axis_scale(values) if spec.regret else ("linear", None)
    for i, (ax, panel) in enumerate(zip(axes.flat, group)):
        plotted = []
        for line in panel.lines:
            colour, dash = style(line)
            x = np.arange(1, line.curves.shape[1] + 1)
            q1, median, q3 = np.percentile(line.curves, [25, 50, 75], axis=0)
            ax.plot(x, median, lw=1.8, ls=dash, color=colour, label=names[line.key] + line.suffix)
            if line.runs > 1:
                ax.fill_between(x, q1, q3, color=colour, alpha=0.18, lw=0)
            plotted += [q1, median, q3]
            if _given_start(line):  # a continued run: where its given points left the best value
                ax.plot([line.given], [median[line.given - 1]], ls="none", marker=_GIVEN_MARKER, markersize=6,
                        color=colour, label="_nolegend_")
        ends = panel.design_ends()
        for end in ends:
            ax.axvline(end, color="0.45", ls=":", lw=1.4, zorder=0, label="_nolegend_")
            if len(ends) > 1:  # which line is which design size
                ax.annotate(f"{end}", xy=(end, 1.0), xycoords=("data", "axes fraction"), xytext=(2, -2),
                            textcoords="offset points", ha="left", va="top", fontsize=MIN_FONT_SIZE, color="0.35")
        _apply_scale(ax, scale, np.concatenate(plotted))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
        ax.set_title(panel.title, fontsize=MIN_FONT_SIZE)
        ax.grid(True, which="major", alpha=0.3)
        ax.tick_params(which="both", labelsize=MIN_FONT_SIZE)
        if i + ncols >= len(group):  # the lowest panel of its column: the x label once per column
            ax.set_xlabel(spec.xlabel, fontsize=_TITLE_SIZE)
    note = {"log": " (log scale)",
            "symlog": f"\n(symmetric log scale, linear below {scale[1]:g})" if scale[1] else ""}.get(scale[0], "")
    fig.supylabel(spec.ylabel + note, fontsize=_TITLE_SIZE)
    chars = int(width * 12)  # about 12 characters an inch at _TITLE_SIZE
    fig.suptitle("\n".join(textwrap.wrap(figure_title(quantity, group), chars) + textwrap.wrap(
        "lines: median over runs (seeds); bands: 25th to 75th percentile", chars)), fontsize=_TITLE_SIZE)
    fig.legend(list(entries.values()), list(entries), loc="outside lower center", ncols=legend_cols,
               fontsize=MIN_FONT_SIZE, frameon=False)
    return fig


def regret_figures(db: str = DEFAULT_URL, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The figures of the completed runs in ``db``, one per quantity they hold, by
    quantity id (``"bandit"``, ``"bo-regret"``, ``"bo-value"``, ``"bo-hypervolume"``; see the
    module docstring),
    in that order. Each is a :class:`matplotlib.figure.Figure` not registered with pyplot.

    Args:
        db: the database (SQLAlchemy URL or SQLite path).
        labels: policy id -> the name its legend entries show (default: the name
            :func:`~npbandit.report.labels.policy_label` reads off the id).

    Raises:
        ValueError: ``db`` holds no completed run with a curve to draw (a bandit run whose
            environment gave no regret has none), or ``labels`` names a policy no plotted
            run used.
    """
    found = panels(db)
    if not found:
        completed = {kind: any(r.status == "completed" for r in list_runs(db, kind=kind)) for kind in ("bandit", "bo")}
        raise ValueError(f"no completed runs in {db} to plot" + (
            " (its completed bandit runs recorded no regret: their environment's step gave no info[\"regret\"])"
            if completed["bandit"] else
            " (its completed optimisation runs have no successful evaluation: an ask-and-tell run closed before "
            "any was told, or one whose every evaluation failed)" if completed["bo"] else ""))
    labels = check_label_overrides(labels, {line.key.policy for panel in found for line in panel.lines})
    return {quantity: _draw(quantity, group, labels)
            for quantity in QUANTITIES if (group := [p for p in found if p.quantity == quantity])}


def regret_figure(db: str = DEFAULT_URL, quantity: str | None = None,
                  labels: Mapping[str, str] | None = None) -> Any:
    """The figure of one quantity (see :func:`regret_figures`); ``quantity=None`` when
    ``db`` holds runs for one figure only.

    Raises:
        ValueError: ``db`` holds no completed run; ``quantity`` is not one of the
            figures ``db`` has runs for; or ``quantity`` is ``None`` and ``db`` has runs
            for several (the message names them).
    """
    if quantity is not None and quantity not in QUANTITIES:
        raise ValueError(f"quantity must be None or one of {list(QUANTITIES)}, got {quantity!r}")
    figures = regret_figures(db, labels)
    if quantity is None:
        if len(figures) > 1:
            raise ValueError(f"{db} has runs for {len(figures)} figures ({', '.join(figures)}): pass quantity=one "
                             "of them, or use regret_figures")
        return next(iter(figures.values()))
    if quantity not in figures:
        raise ValueError(f"quantity={quantity!r}: {db} has no completed runs for that figure; it has "
                         f"{', '.join(figures)}")
    return figures[quantity]


def check_figure_path(path: str | os.PathLike, name: str = "path") -> Path:
    """``path`` as a :class:`~pathlib.Path`, checked to name a figure format by its suffix
    (one of :data:`FIGURE_FORMATS`, any case) in a directory that exists; ``name`` is what
    errors call it.

    Raises:
        TypeError: ``path`` is not a str or path.
        ValueError: its suffix is not one of :data:`FIGURE_FORMATS`, or its directory does not exist.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or path, got {type(path).__name__}")
    path = Path(path)
    if path.suffix.lower().lstrip(".") not in FIGURE_FORMATS:
        raise ValueError(f"{name} must end in {', '.join('.' + f for f in FIGURE_FORMATS)} (the figure's format), "
                         f"got {str(path)!r}")
    if not path.parent.is_dir():
        raise ValueError(f"{name} {str(path)!r}: directory {str(path.parent)!r} does not exist")
    return path


def figure_paths(path: str | os.PathLike, quantities: list[str]) -> dict[str, Path]:
    """Where :func:`plot_regret` writes each figure: ``path`` itself for a single figure;
    for several, ``<stem>-<part><suffix>`` next to it, the part the quantity's
    (:data:`~npbandit.report.curves.QUANTITIES`): ``regret.png`` -> ``regret-bandit.png``,
    ``regret-bo.png`` (simple regret), ``regret-bo-value.png``, ``regret-bo-hypervolume.png``.

    Raises:
        TypeError, ValueError: as :func:`check_figure_path`.
    """
    path = check_figure_path(path)
    if len(quantities) == 1:
        return {quantities[0]: path}
    return {q: path.with_name(f"{path.stem}-{QUANTITIES[q].file_part}{path.suffix}") for q in quantities}


def plot_regret(db: str, path: str | os.PathLike, labels: Mapping[str, str] | None = None) -> list[Path]:
    """Write :func:`regret_figures` to ``path``, in the format its suffix names (``.png``,
    200 dpi; ``.pdf``; ``.svg``). One quantity: one file, ``path``. Several (bandit and
    black-box runs in one database, say): one file each, named by
    :func:`figure_paths` (``regret.png`` -> ``regret-bandit.png``, ``regret-bo.png``).
    Returns the paths written, in :data:`~npbandit.report.curves.QUANTITIES` order.

    Raises:
        TypeError: as :func:`check_figure_path`.
        ValueError: as :func:`regret_figures` and :func:`check_figure_path`.
    """
    check_figure_path(path)  # a bad suffix fails before the database is read
    figures = regret_figures(db, labels)
    paths = figure_paths(path, list(figures))
    for quantity, fig in figures.items():
        target = paths[quantity]
        fig.savefig(target, format=target.suffix.lower().lstrip("."), dpi=200)
    return list(paths.values())
