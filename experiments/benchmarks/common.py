"""Helpers shared by the scripts in experiments/benchmarks/: timing, peak memory, results pages (with the
versions of the packages the numbers depend on), paired comparisons' cells, the main of a resumable JSON-lines
study, BoTorch's test functions by name, Branin on its own bounds, a cProfile's own time by package and its top
functions."""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import importlib.metadata
import io
import json
import platform
import pstats
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def median_time(fn: Callable[[], object], *, min_reps: int = 3, max_reps: int = 200, budget_s: float = 2.0,
                warmup: int = 1) -> float:
    """Median wall-clock seconds of ``fn()`` over as many repetitions as fit the budget."""
    for _ in range(warmup):
        fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < max_reps and (len(times) < min_reps or time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def run_jobs(fn: Callable[..., object], jobs: list[tuple], workers: int, desc: str,
             dask_scheduler: str | None = None) -> None:
    """Run ``fn(*job)`` for every job in ``workers`` local processes, or on the workers of the
    Dask scheduler at ``dask_scheduler`` (:func:`npbandit.cluster.dask_executor`), with a
    progress bar; the first failure is raised.

    The local processes are :func:`npbandit.cluster.process_pool`'s: spawned (``fn`` is
    pickled by name: a function of a module, or of the script run as ``__main__``), and ended
    with this process however it ends (SIGKILL included). SIGINT or SIGTERM (to this process
    alone, as ``kill PID``, or to its whole group) stops the sweep at once, raised here as
    :class:`npbandit.stopping.RunInterrupted`, as a job's failure does (raised as itself):
    the jobs not started are cancelled and the running ones abandoned, their local workers
    killed, not waited for. A script that takes a whole run to stop tends to be killed
    outright, and a worker left to finish alone would store its run while a rerun of the
    command did it again. An abandoned run is never recorded as completed (the scripts write
    a run's status last; a row it left stays ``running``, shown as interrupted once its
    process is gone), and the scripts resume from their completed runs, so the same command
    picks up where the sweep stopped. (A Dask worker cannot be stopped: its running jobs
    end on their own.)"""
    from npbandit.cluster import dask_executor, process_pool
    from npbandit.cluster import run_jobs as run_all
    from npbandit.stopping import stop_on_signals

    pool = process_pool(workers) if dask_scheduler is None else dask_executor(dask_scheduler)
    with stop_on_signals(), pool as executor:
        for _ in run_all(fn, jobs, executor, desc=desc):
            pass


class RunRecord:
    """Per-run results kept in one JSON file (``{key: result}``), written after every new run,
    so a script stopped part-way resumes where it stopped."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.runs: dict[str, Any] = json.loads(self.path.read_text()) if self.path.exists() else {}

    def get(self, key: str, run: Callable[[], Any], redo: Callable[[Any], bool] = lambda _: False) -> Any:
        """The result under ``key``; ``run()`` makes it (and it is saved) when it is missing or
        ``redo(result)`` says the kept one is outdated."""
        if key not in self.runs or redo(self.runs[key]):
            self.runs[key] = run()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.runs, indent=1))
            print(key, self.runs[key], flush=True)
        return self.runs[key]


def add_cluster_arguments(parser) -> None:
    """``--workers N`` (local processes) and ``--dask-scheduler ADDRESS`` (a Dask cluster instead)."""
    parser.add_argument("--workers", type=int, default=1, help="local worker processes")
    parser.add_argument("--dask-scheduler", metavar="ADDRESS",
                        help="run on the workers of this Dask scheduler (e.g. tcp://10.0.0.5:8786) instead of "
                             "--workers local processes; give --db a database every worker reaches (PostgreSQL "
                             "URL, or an SQLite file on this machine for workers on this machine)")


def prepare_db(db: str) -> str:
    """``--db`` as every worker process sees it (:func:`npbandit.storage.shared_url`),
    the directory of an SQLite file created."""
    from sqlalchemy import make_url

    from npbandit.storage import shared_url

    url = shared_url(db)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    return url


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not found in /proc/self/status")


def peak_memory_mb(fn: Callable[[], object]) -> float:
    """Peak resident memory ``fn()`` adds above what the process held before, in MB.

    Resets the kernel's high-water mark (``/proc/self/clear_refs``, Linux >= 4.0)
    so the reading covers ``fn`` alone. CPU tensors are invisible to tracemalloc,
    which is why we read RSS. Run it in a fresh process: an allocator that kept
    freed pages from earlier work would hide part of the peak.
    """
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kb("VmRSS")
    result = fn()
    peak = _status_kb("VmHWM")
    del result
    return (peak - before) / 1024


def is_current(run, checkpoint: str | None = None) -> bool:
    """Whether a logged run used the checkpoint it would use now (runs without one always do).

    ``checkpoint``: the shipped name or card path the run's column names (a card of a
    training run, compared with the checkpoint it holds now); default: the shipped
    checkpoint of the run's surrogate name. Resumable benchmarks skip and summarise only
    these, so a retrained checkpoint's results never mix with its predecessor's."""
    if run.surrogate is None:
        return True
    sha = _current_sha256(checkpoint) if checkpoint is not None else None
    if sha is None:  # the column names no checkpoint of its own (an Optuna sampler): its surrogate's
        sha = _current_sha256(run.surrogate)
    return sha == run.checkpoint_sha256


@functools.cache
def _current_sha256(spec: str) -> str | None:
    """The sha256 of the checkpoint ``spec`` names now (a shipped name or a card path), or
    ``None`` where it names none (``gp``, an Optuna sampler's column)."""
    from npbandit.surrogates.pretrained import available_checkpoints, read_card

    if spec in available_checkpoints() or spec.endswith(".json"):
        return read_card(spec)["sha256"]
    return None


def distinct_labels(names: dict[str, str]) -> dict[str, str]:
    """Row labels for models given as ``{spec: card name}``: the card's name, with the spec
    beside it where several models share a name (a run's exports next to the shipped
    checkpoint), so no two rows -- and no two models' scores -- are pooled under one label."""
    counts = {n: list(names.values()).count(n) for n in names.values()}
    return {spec: name if counts[name] == 1 or name == spec else f"{name} ({spec})" for spec, name in names.items()}


def machine_line(threads: int | None = None) -> str:
    """The machine, torch and Python; ``threads``: what the measured runs used (default: this process's)."""
    import torch

    threads = torch.get_num_threads() if threads is None else threads
    return (f"{platform.processor() or platform.machine()}, {threads} torch threads, "
            f"torch {torch.__version__}, Python {platform.python_version()}")


#: The installed distributions whose releases can change a benchmark's numbers (their arithmetic, their
#: defaults, which code path runs), by their names on the package index. :func:`publish` records the version
#: of each in every results JSON, an absent one as absent: without ``greenlet`` Optuna's GPSampler optimises its
#: acquisition point by point instead of in batches, other arithmetic and another column.
#: experiments/benchmarks/bench_constraints.py pins them, and what each requires directly, in
#: experiments/constraints-bench.txt (what ``make bench-env`` installs).
BENCH_PACKAGES = ("torch", "numpy", "scipy", "botorch", "gpytorch", "linear_operator", "optuna", "greenlet",
                  "scikit-learn", "ax-platform", "vowpalwabbit", "dask", "distributed", "sqlalchemy", "psycopg")
#: the packages every section's line names (torch is on its machine line): what nearly every row computes with
CORE_PACKAGES = ("numpy", "scipy", "botorch", "gpytorch")


def _distribution_names(names, argument: str) -> tuple[str, ...]:
    if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
        raise TypeError(f"{argument}: expected a sequence of distribution names (non-empty strings, e.g. "
                        f"(\"optuna\", \"greenlet\")), got {names!r}")
    return tuple(names)


def package_versions(names=BENCH_PACKAGES) -> dict[str, str | None]:
    """``{name: version}`` for each distribution ``names`` lists (names as on the package index), ``None``
    where it is not installed. Read from the installed metadata (``importlib.metadata``), not by importing:
    importing Optuna or Ax only to read a version takes seconds, and may fail where the package itself is
    broken or half-installed."""
    versions = {}
    for name in _distribution_names(names, "names"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def packages_line(versions: dict[str, str | None] | None, names, where: str = "", note: str = "") -> str:
    """The line a section shows of ``versions`` (:func:`package_versions`' record): each of ``names`` once, with
    its version, ``absent`` where it was not installed, ``not recorded`` where the record lacks it;
    ``versions=None``: numbers measured before results recorded versions, which the line says. ``where``: the
    file holding the full record; ``note``: where the versions come from, when not from this process."""
    names = _distribution_names(names, "names")
    if versions is not None and not isinstance(versions, dict):
        raise TypeError(f"versions: expected {{name: version or None}} or None, got {versions!r}")
    if versions is None:
        return "Packages: not recorded with these numbers (measured before the results recorded versions)."
    shown = ", ".join(f"{n} {versions[n]}" if versions.get(n) else f"{n} absent" if n in versions
                      else f"{n} not recorded" for n in dict.fromkeys(names))
    said = [part for part in (note, f"every recorded version: {where}" if where else "") if part]
    return f"Packages: {shown}" + (f" ({'; '.join(said)})." if said else ".")


def runs_versions(runs: list[dict]) -> dict[str, str | None]:
    """The versions of :data:`~npbandit.storage.logger.RECORDED_PACKAGES` that stored runs were made with
    (``runs``: each run's :attr:`RunRow.versions <npbandit.storage.RunRow.versions>`), for a section
    tabulated from a database, whose runs may come from several sessions: ``{name: version}`` where every run
    recorded one version; each version with its count of runs where they differ (``"0.15.1 (12 runs) /
    0.16.0 (228 runs)"``), runs from before the versions were recorded counted as ``not recorded``; ``None``
    where no run recorded it."""
    from collections import Counter

    from npbandit.storage.logger import RECORDED_PACKAGES

    runs = list(runs)
    out: dict[str, str | None] = {}
    for name in RECORDED_PACKAGES:
        counts = Counter((run or {}).get(name) or "not recorded" for run in runs)
        if not counts or set(counts) == {"not recorded"}:
            out[name] = None
        elif len(counts) == 1:
            out[name] = next(iter(counts))
        else:
            out[name] = " / ".join(f"{v} ({n} run{'s' if n > 1 else ''})" for v, n in sorted(counts.items()))
    return out


def source_revision(root: Path | None = None) -> dict[str, Any] | None:
    """The code a benchmark ran: ``{"commit": <HEAD's sha>, "modified": [paths]}`` for the git checkout at
    ``root`` (default :data:`ROOT`), ``modified`` the tracked files under ``npbandit/`` and ``experiments/``
    that differ from that commit (a number measured with uncommitted code names no commit that reproduces
    it); ``None`` outside a git checkout or without git. The package versions alone do not say it: every
    commit of the project reports the same ``npbandit`` version."""
    root = ROOT if root is None else root

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout if done.returncode == 0 else None

    # a folder inside another repository is not this project's checkout
    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top.strip()).resolve() != Path(root).resolve():
        return None
    commit = git("rev-parse", "HEAD")
    changed = git("status", "--porcelain", "--untracked-files=no", "--", "npbandit", "experiments")
    if commit is None or changed is None:
        return None
    return {"commit": commit.strip(), "modified": sorted(line[3:] for line in changed.splitlines() if line)}


def with_packages_line(text: str, line: str) -> str:
    """``text`` with ``line`` as a paragraph of its own after its first paragraph that is not a heading (the one
    that gives the command and the machine), or at its end where every paragraph is a heading."""
    paragraphs = text.rstrip().split("\n\n")
    at = next((i + 1 for i, p in enumerate(paragraphs) if not p.lstrip().startswith("#")), len(paragraphs))
    return "\n\n".join(paragraphs[:at] + [line] + paragraphs[at:]) + "\n"


def publish(section: str, text: str, json_name: str, command: str, payload: dict,
            pages: tuple[str, ...] = ("benchmarks.md",), threads: int | None = None,
            packages: tuple[str, ...] = (), runs: list[dict] | None = None) -> None:
    """Write ``text`` as section ``section`` of each page in experiments/log/ (``benchmarks.md``:
    every measurement; ``results.md``: the headline comparisons with published numbers)
    and the raw numbers (with the command, the machine, the versions of :data:`BENCH_PACKAGES`
    under ``"packages"`` and the code's commit under ``"source"``, :func:`source_revision`) to
    experiments/log/results/<json_name>.

    The section gets a line naming the versions of :data:`CORE_PACKAGES` and of ``packages``, those the
    section's own rows use beyond them (``("optuna", "greenlet")`` for Optuna's samplers), after its first
    paragraph. A ``payload`` that holds ``"packages"`` (a saved record published again without measuring)
    keeps it: the versions of the run that measured the numbers, not this process's; ``None`` there: not
    recorded, which the line says. ``runs``: the versions recorded by each stored run a database-backed
    section tabulates (:attr:`RunRow.versions <npbandit.storage.RunRow.versions>`); those
    (:func:`runs_versions`) replace this process's for the packages runs record, go into the JSON as
    ``"run_packages"``, and the line says so."""
    extra = _distribution_names(packages, "packages")
    versions = payload["packages"] if "packages" in payload else package_versions(
        BENCH_PACKAGES + tuple(n for n in extra if n not in BENCH_PACKAGES))
    where = f"experiments/log/results/{json_name}"
    note = ""
    if runs is not None:
        runs = list(runs)
        recorded = runs_versions(runs)
        payload = {**payload, "run_packages": recorded}
        versions = {**(versions or {}), **{n: v for n, v in recorded.items() if v is not None}}
        shown = list(dict.fromkeys(CORE_PACKAGES + extra))
        theirs = [n for n in shown if recorded.get(n) is not None]
        ours = [n for n in shown if recorded.get(n) is None]
        note = "; ".join(part for part in (
            f"{', '.join(theirs)}: as the {len(runs)} runs recorded them" if theirs else "",
            f"{', '.join(ours)}: installed when published" if ours else "") if part)
    text = with_packages_line(text, packages_line(versions, CORE_PACKAGES + extra, where, note))
    for page in pages:
        write_section(section, text, page)
    out = ROOT / where
    out.parent.mkdir(parents=True, exist_ok=True)
    # a saved record published again (its "packages" kept) keeps the code it was measured with, None where it
    # predates the record of it: not this process's checkout
    source = payload.get("source") if "packages" in payload else source_revision()
    record = {"command": command, "machine": machine_line(threads), "packages": versions, **payload,
              "source": source}
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote the {section!r} section of {', '.join('experiments/log/' + p for p in pages)} and {where}")


def figure_path(name: str) -> Path:
    """Where a benchmark's PNG goes (experiments/log/figures/<name>.png); pages link it as figures/<name>.png."""
    path = ROOT / "experiments" / "log" / "figures" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def new_figure(n_panels: int, width: float = 4.0, height: float = 3.2):
    """A row-major grid of ``n_panels`` axes (at most 3 per row), rendered without a display."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(3, n_panels)
    rows = -(-n_panels // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n_panels])


def save_figure(fig, name: str) -> Path:
    import matplotlib.pyplot as plt

    path = figure_path(name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path.relative_to(ROOT)}")
    return path


#: a column's last suffix when it maximises LogEI / UCB by another acquisition optimiser than its
#: model's default (``BOPolicy(acq_optimizer=...)``; an NP checkpoint's default is what its card
#: recommends, ``CandidateSearch()`` for tnpd-bo, ``GradientRestarts()`` elsewhere and for the GP):
#: ``tnpd-bo-tr-gr`` is tnpd-bo-tr with ``optimize_acqf`` (bo.py; bo_wide.py's NP rows likewise)
OPTIMIZER_SUFFIXES = {"-cs": "candidate-search", "-gr": "gradient-restarts"}


def split_optimizer(method: str) -> tuple[str, str | None]:
    """A column less its optimiser suffix, and the optimiser it names (``None``: the model's
    default): ``tnpd-bo-tr-gr`` -> ``("tnpd-bo-tr", "gradient-restarts")``."""
    for suffix, name in OPTIMIZER_SUFFIXES.items():
        if method.endswith(suffix):
            return method[:-len(suffix)], name
    return method, None


def optimizer_suffix(name: str) -> str:
    """The suffix of :data:`OPTIMIZER_SUFFIXES` that names the optimiser ``name``."""
    return {v: k for k, v in OPTIMIZER_SUFFIXES.items()}[name]


def write_section(name: str, body: str, page: str = "benchmarks.md") -> Path:
    """Replace (or append) the section ``name`` of docs/<page>, between markers, so each
    benchmark script owns its part of a page and hand-written text around it stays."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    path = ROOT / "experiments" / "log" / page
    text = path.read_text() if path.exists() else f"# npbandit {Path(page).stem}\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def quartile_text(values: list[float], fmt: str = ".2f") -> str:
    """``"median [25 %, 75 %]"`` of ``values``, each formatted by ``fmt`` (default two decimals; the
    value alone for one)."""
    import statistics

    if len(values) < 2:
        return f"{values[0]:{fmt}}"
    q1, med, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{med:{fmt}} [{q1:{fmt}}, {q3:{fmt}}]"


def paired_cell(mine: dict | None, theirs: dict | None) -> str:
    """One cell of a paired comparison of two columns' summaries on one problem (each holding
    ``final``, the quartiles of the final values, and ``final_by_seed``): ``mine``'s median
    minus ``theirs``' (negative: ``mine`` ends lower) and on how many of the seeds both ran
    ``mine`` ended lower, ``"-0.50 (2/3)"``; ``"-"`` where either has no runs."""
    if not mine or not theirs:
        return "-"
    seeds = mine["final_by_seed"].keys() & theirs["final_by_seed"].keys()
    lower = sum(mine["final_by_seed"][s] < theirs["final_by_seed"][s] for s in seeds)
    return f"{mine['final'][1] - theirs['final'][1]:+.2f} ({lower}/{len(seeds)})"


def jsonl_rows(path) -> list[dict]:
    """The JSON objects of a results file written one per line (none if it does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append_missing_rows(out: Path, header: str, keys: tuple[str, ...], cells, run: Callable[[dict], dict],
                        describe: Callable[[dict], str]) -> None:
    """Run every cell (a dict holding at least ``keys``) whose ``keys`` no row of the JSON-lines file ``out``
    has yet, appending each result row as it comes (a stopped study resumes where it stopped) and printing
    ``describe(row)``; ``header`` (the command line) and the machine are printed first."""
    done = {tuple(row[k] for k in keys) for row in jsonl_rows(out)}
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"# {header}\n# {machine_line(1)}", flush=True)
    for cell in cells:
        if tuple(cell[k] for k in keys) in done:
            continue
        row = run(cell)
        with out.open("a") as file:
            file.write(json.dumps(row) + "\n")
        print(describe(row), flush=True)


def jsonl_study(parser: argparse.ArgumentParser, argv: list[str] | None, *, command: str, default_out: Path,
                keys: tuple[str, ...], cells: Callable[[argparse.Namespace], list[dict]],
                run: Callable[[argparse.Namespace, dict], dict], describe: Callable[[dict], str],
                summarise: Callable[[Path], str]) -> None:
    """The main of a resumable study whose rows go to a JSON-lines file. ``parser`` (holding the script's
    own arguments) gets ``--out`` (default ``default_out``) and ``--summarise``, and parses ``argv``
    (``None``: the command line). With ``--summarise PATH``: prints ``summarise(PATH)`` and stops. Otherwise,
    on one torch thread, runs each of ``cells(args)`` that ``--out`` lacks as ``run(args, cell)``
    (:func:`append_missing_rows`, headed by ``command`` and the arguments given), then prints
    ``summarise(--out)``."""
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--summarise", type=Path, default=None, help="print the table of a results file and stop")
    args = parser.parse_args(argv)
    if args.summarise is not None:
        print(summarise(args.summarise))
        return
    import torch

    torch.set_num_threads(1)
    append_missing_rows(args.out, f"{command} {' '.join(argv if argv is not None else sys.argv[1:])}", keys,
                        cells(args), lambda cell: run(args, cell), describe)
    print(summarise(args.out))


def botorch_test_function(name: str, dim: int | None):
    """BoTorch's test function ``name`` (a class of ``botorch.test_functions``), of dimension
    ``dim`` (``None``: the function's own); minimised, as BoTorch defines it."""
    import botorch.test_functions as tf

    return getattr(tf, name)(**({} if dim is None else {"dim": dim}))


#: Branin's own bounds as ``optimize`` takes them: ``x1`` in [-5, 10], ``x2`` in [0, 15]
BRANIN_BOUNDS = [[-5.0, 0.0], [10.0, 15.0]]


def branin(x1: float, x2: float) -> float:
    """Branin on :data:`BRANIN_BOUNDS`: the suite's function (``npbandit.envs.problem_objective``), as the
    cost benchmarks' routes (``optimize``, Ax, Optuna) evaluate it."""
    return _branin()(np.array([x1, x2]))


@functools.cache
def _branin():
    from npbandit.envs.blackbox import make_test_function, problem_objective

    return problem_objective(make_test_function("branin"), "branin")


def own_seconds_by_package(stats: pstats.Stats, packages: tuple[tuple[str, str], ...],
                           per: int) -> dict[str, float]:
    """A profile's own seconds (``tottime``) per ``per`` (a trial) summed by package, largest first: each
    function counts for the label of the first ``(fragment, label)`` of ``packages`` whose fragment is in its
    file name or function name (a C function has only the latter), else ``"other (Python, numpy, ...)"``."""
    by_package: dict[str, float] = {}
    for (filename, _, function), (_, _, tottime, _, _) in stats.stats.items():
        where = f"{filename} {function}"
        label = next((name for key, name in packages if key in where), "other (Python, numpy, ...)")
        by_package[label] = by_package.get(label, 0.0) + tottime / per
    return dict(sorted(by_package.items(), key=lambda kv: -kv[1]))


def top_functions(profiler: cProfile.Profile, top: int) -> list[str]:
    """pstats' table of the ``top`` functions by own time, its header line first, the paths of the virtual
    environment and of the repository shortened to ``<venv>`` and ``<repo>``."""
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    rows = [line.replace(str(Path(sys.prefix)), "<venv>").replace(str(ROOT), "<repo>")
            for line in out.getvalue().splitlines() if line.strip()]
    start = next(i for i, line in enumerate(rows) if line.lstrip().startswith("ncalls"))
    return rows[start:start + top + 1]
