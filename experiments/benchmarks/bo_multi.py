"""Multi-objective BO: NPSampler against what an Optuna or BoTorch user would pick instead.

Problems: BoTorch's multi-objective test functions (``botorch.test_functions.multi_objective``),
every objective minimised (an Optuna study with ``directions=["minimize"] * m``), each with the
function's own reference point and the maximum hypervolume BoTorch states for it (for GMM with
four objectives, which has none, a grid's). Two groups: ``mo-choosing`` (Branin-Currin, DTLZ2
d = 4 with 2 objectives; GMM with 4 objectives, DTLZ4 d = 6 with 4), where defaults are chosen and
which is never reported as the result, and ``mo-report`` (ZDT1 and ZDT2 at d = 6, DTLZ2 d = 6
with 3 objectives, VehicleSafety, Penicillin, CarSideImpact, DH1 at d = 5). Methods
(bo_multi_methods.py), same seed per (problem, seed) pair: Optuna's RandomSampler,
TPESampler(multivariate=True), NSGAIISampler and GPSampler, a BoTorch loop with
qLogNoisyExpectedHypervolumeImprovement, and npbandit's ``NPSampler`` with its defaults.

Reported per problem and method: the final log10 hypervolume gap (the maximum hypervolume minus
the hypervolume the trials so far dominate within the reference point, floored at
:data:`GAP_FLOOR`), median [25 %, 75 %] over seeds; seconds per trial spent in the method; on
how many seeds NPSampler ended with a lower gap than each peer. Each run is stored through
``npbandit.storage`` when it completes (with each trial's point, objectives and hypervolume so
far); completed runs are not repeated, so an interrupted benchmark resumes with the same command.

    python experiments/benchmarks/bo_multi.py --workers 2                      # mo-report, 10 seeds
    python experiments/benchmarks/bo_multi.py --problems mo-choosing --seeds 5
    python experiments/benchmarks/bo_multi.py --problems zdt1-d6 --methods random nsga2 --trials 12 --no-write
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bo_multi_methods import METHODS, N_STARTUP, NP_METHOD  # noqa: E402
from bo_wide import (  # noqa: E402
    incomplete_note,
    paired_table,
    plot_curves,
    run_and_log,
    summarise,
    timing_table,
)
from bo_wide_problems import Param, _box  # noqa: E402
from common import (  # noqa: E402
    ROOT,
    add_cluster_arguments,
    is_current,
    machine_line,
    prepare_db,
    publish,
    run_jobs,
    source_revision,
)

RUN_THREADS = 1
KIND = "bo_multi"  # the runs' kind in the database
SECTION = "bo-multi"
CHOOSING_GROUP, REPORT_GROUP = "mo-choosing", "mo-report"
DEFAULT_TRIALS = 50
#: the smallest gap the log shows (a run that reaches BoTorch's stated maximum, or passes it)
GAP_FLOOR = 1e-12
#: where BoTorch's stated maximum hypervolume comes from when it is not exact (its source says so);
#: ZDT1, ZDT2, DTLZ2 and DH1 have theirs from the known Pareto front
APPROXIMATE_MAX_HV = {"BraninCurrin": "a front NSGA-II found",
                      "GMM": "BoTorch states none for four objectives: the front of a 1600 x 1600 grid of its unit "
                             "square, a lower bound",
                      "VehicleSafety": "Tanabe and Ishibuchi's approximate front",
                      "CarSideImpact": "Tanabe and Ishibuchi's approximate front",
                      "Penicillin": "BoTorch names no origin; its reference point came from an NSGA-II front"}


def hypervolume(points: Sequence[Sequence[float]], ref_point: Sequence[float]) -> float:
    """The volume of the region that the minimised ``points`` (``n`` rows of ``m`` objectives)
    dominate and that lies below ``ref_point`` in every objective; a point not below the
    reference point in every objective adds nothing. BoTorch's ``Hypervolume`` (exact, for
    maximisation) on the negated values."""
    import torch
    from botorch.utils.multi_objective.hypervolume import Hypervolume
    from botorch.utils.multi_objective.pareto import is_non_dominated

    ref = torch.as_tensor(ref_point, dtype=torch.float64)
    if ref.ndim != 1 or len(ref) < 2 or not torch.isfinite(ref).all():
        raise ValueError(f"ref_point must be a finite vector of at least 2 objectives, got {list(ref_point)!r}")
    Y = torch.as_tensor(points, dtype=torch.float64)
    if Y.numel() == 0:
        return 0.0
    if Y.ndim != 2 or Y.shape[1] != len(ref):
        raise ValueError(f"points must be rows of {len(ref)} objectives (as ref_point), got shape {tuple(Y.shape)}")
    if not torch.isfinite(Y).all():
        raise ValueError("points must be finite")
    inside = -Y[(Y < ref).all(dim=-1)]
    if not len(inside):
        return 0.0
    return float(Hypervolume(-ref).compute(inside[is_non_dominated(inside)]))


@functools.cache
def _function(name: str, kwargs: tuple):
    from botorch.test_functions import multi_objective

    return getattr(multi_objective, name)(**dict(kwargs))


@dataclass(frozen=True)
class MOProblem:
    """BoTorch's multi-objective test function ``function`` (made with ``kwargs``), minimised on
    its own box; ``ref_point`` and ``max_hv`` are BoTorch's, or ``max_hv`` is ``stated_max_hv``
    where BoTorch states none."""

    label: str
    group: str
    function: str
    kwargs: tuple = ()
    stated_max_hv: float | None = None

    @property
    def fn(self):
        return _function(self.function, self.kwargs)

    @property
    def space(self) -> tuple[Param, ...]:
        return _box(self.fn.bounds.T.tolist())

    @property
    def dim(self) -> int:
        return self.fn.dim

    @property
    def num_objectives(self) -> int:
        return self.fn.num_objectives

    @property
    def ref_point(self) -> list[float]:
        return self.fn.ref_point.tolist()

    @property
    def max_hv(self) -> float:
        return float(self.fn.max_hv) if self.stated_max_hv is None else self.stated_max_hv

    version = 1

    def __call__(self, params: dict) -> list[float]:
        import torch

        x = torch.tensor([[params[f"x{i}"] for i in range(self.dim)]], dtype=torch.float64)
        return [float(v) for v in self.fn.evaluate_true(x)[0]]


@functools.cache
def all_problems() -> dict[str, MOProblem]:
    """Every problem by label, in table order: the reporting group, then the choosing group."""
    report = [MOProblem("zdt1-d6", REPORT_GROUP, "ZDT1", (("dim", 6),)),
              MOProblem("zdt2-d6", REPORT_GROUP, "ZDT2", (("dim", 6),)),
              MOProblem("dtlz2-d6m3", REPORT_GROUP, "DTLZ2", (("dim", 6), ("num_objectives", 3))),
              MOProblem("vehicle-safety", REPORT_GROUP, "VehicleSafety"),
              MOProblem("penicillin", REPORT_GROUP, "Penicillin"),
              MOProblem("car-side-impact", REPORT_GROUP, "CarSideImpact"),
              MOProblem("dh1-d5", REPORT_GROUP, "DH1", (("dim", 5),))]
    choosing = [MOProblem("branin-currin", CHOOSING_GROUP, "BraninCurrin"),
                MOProblem("dtlz2-d4m2", CHOOSING_GROUP, "DTLZ2", (("dim", 4), ("num_objectives", 2))),
                # four objectives: the front's box decomposition (session 55); GMM's maximum is the
                # hypervolume of the non-dominated points of a 1600 x 1600 grid of its unit square
                MOProblem("gmm-m4", CHOOSING_GROUP, "GMM", (("num_objectives", 4),), stated_max_hv=0.0381206359268381),
                # BoTorch's DTLZ4 (0.18.1) sets alpha = 100 but evaluates DTLZ2's objectives, without the power
                # (experiments/probes/probe_dtlz4_mo.py --check-dtlz4): this problem is DTLZ2, d = 6, four objectives
                MOProblem("dtlz4-d6m4", CHOOSING_GROUP, "DTLZ4", (("dim", 6), ("num_objectives", 4)))]
    return {p.label: p for p in report + choosing}


def expand(names: list[str]) -> list[str]:
    """Problem labels and group names as labels, in table order."""
    groups = {g: [lab for lab, p in all_problems().items() if p.group == g] for g in (REPORT_GROUP, CHOOSING_GROUP)}
    wanted = {lab for n in names for lab in groups.get(n, [n])}
    unknown = wanted - set(all_problems())
    if unknown:
        raise ValueError(f"--problems: unknown {sorted(unknown)}; expected labels {list(all_problems())} or groups "
                         f"{list(groups)}")
    return [lab for lab in all_problems() if lab in wanted]


class Recorder:
    """The objective as every method calls it: evaluates the problem and records each call's
    point and objectives, the hypervolume of every point so far (``best_value``) and its gap to
    the maximum (``regret``), the seconds the method spent since the previous call returned
    (``act_s``) and the evaluation's own (``env_s``); the hypervolume's arithmetic counts in
    neither."""

    def __init__(self, prob: MOProblem, trials: int) -> None:
        self.problem, self.trials, self.rows, self.points = prob, trials, [], []
        self.hv = 0.0
        self.last = time.perf_counter()

    def __call__(self, params: dict) -> list[float]:
        start = time.perf_counter()
        if len(self.rows) >= self.trials:
            raise RuntimeError(f"the method asked for trial {len(self.rows) + 1} of a budget of {self.trials}")
        values = self.problem(params)
        env_s = time.perf_counter() - start
        self.points.append(values)
        ref = self.problem.ref_point
        # a point that is not below the reference point, or that a point before it weakly dominates, adds nothing
        if all(v < r for v, r in zip(values, ref)) and not any(
                all(a <= b for a, b in zip(p, values)) for p in self.points[:-1]):
            self.hv = hypervolume(self.points, ref)
        self.rows.append({"t": len(self.rows), "action": {"params": {k: float(v) for k, v in params.items()},
                                                          "objectives": values},
                          "best_value": self.hv, "regret": self.problem.max_hv - self.hv,
                          "act_s": start - self.last, "env_s": env_s})
        self.last = time.perf_counter()
        return values


def _one(label: str, method: str, seed: int, trials: int, db: str) -> None:
    import torch
    from bo_multi_methods import run

    torch.set_num_threads(RUN_THREADS)
    prob = all_problems()[label]
    env_params = {"benchmark": KIND, "problem": label, "group": prob.group, "dim": prob.dim,
                  "objectives": prob.num_objectives, "budget": trials, "ref_point": prob.ref_point,
                  "max_hv": prob.max_hv, "problems_version": prob.version}
    checkpoint = None
    if method in (NP_METHOD, "np-optimize"):
        from bo_wide_methods import checkpoint_of

        checkpoint = checkpoint_of("npsampler" if method == NP_METHOD else "optimize-tnpd")
    # the code that ran: npbandit's version names no commit
    run_and_log(db, KIND, method, label, seed, trials, lambda record: run(method, prob, seed, trials, record),
                Recorder(prob, trials), env_params, checkpoint, extra={"source": source_revision()})


def collect(db: str, trials: int) -> tuple[dict, dict, set]:
    """The completed runs, ``{(problem, method): [run]}`` (each with its log10 gap ``curve``),
    the newest unsupported note per cell without a run, and the cells of which a run passed
    the stated maximum hypervolume; only runs of the current problem definitions, ``trials``
    and checkpoint."""
    from npbandit.storage import list_runs, run_steps

    runs: dict[tuple[str, str], list[dict]] = {}
    notes: dict[tuple[str, str], str] = {}
    above: set[tuple[str, str]] = set()
    problems = all_problems()
    for r in list_runs(db, kind=KIND):
        ep, key = r.env_params, (r.env_params.get("problem"), r.policy)
        if (ep.get("benchmark") != KIND or key[0] not in problems or ep.get("budget") != trials
                or ep.get("problems_version") != problems[key[0]].version or not is_current(r)):
            continue
        if r.status == "failed" and (r.error or "").startswith("unsupported"):
            notes[key] = r.error
            continue
        if r.status != "completed":
            continue
        steps = run_steps(db, r.id)
        max_hv = problems[key[0]].max_hv
        above.update([key] if any(s["best_value"] > max_hv for s in steps) else [])
        runs.setdefault(key, []).append(
            {"seed": r.seed, "curve": [math.log10(max(max_hv - s["best_value"], GAP_FLOOR)) for s in steps],
             "act_s": statistics.fmean(s["act_s"] for s in steps), "env_s": statistics.fmean(s["env_s"] for s in steps),
             "wall_s": r.policy_params.get("wall_s"), "independent_draws": r.policy_params.get("independent_draws", 0),
             "versions": r.versions})
    for key in runs:
        notes.pop(key, None)
    return runs, notes, above


def _cell(summary: dict, notes: dict, label: str, method: str) -> str:
    cell = summary.get(f"{label}/{method}")
    if cell is None:
        return "n/a" if (label, method) in notes else "-"
    q1, med, q3 = cell["final"]
    return f"{med:.2f} [{q1:.2f}, {q3:.2f}]" + (" †" if cell["partly_random"] else "")


def report(summary: dict, notes: dict, above: set, labels: list[str], methods: list[str], args, command: str) -> str:
    problems = all_problems()
    choosing = all(problems[lab].group == CHOOSING_GROUP for lab in labels)
    title = ("## Multi-objective BO, choosing suite: defaults are chosen here, not reported" if choosing
             else "## Multi-objective BO: NPSampler against Optuna's samplers and BoTorch")
    lines = [title, "",
             f"Command: `{command}` (CPU: {machine_line(RUN_THREADS)}). {args.seeds} seeds, {args.trials} trials per "
             "run; Optuna studies with `directions=[\"minimize\"] * m` over `suggest_float`. Final log10 hypervolume "
             "gap (BoTorch's stated maximum hypervolume minus the hypervolume the trials dominate within the "
             f"function's own reference point; floored at {GAP_FLOOR:g}): median [25 %, 75 %]. `n/a`: the method "
             "refuses the study (recorded, retried on the next run); `-`: not run; †: NPSampler drew some "
             f"parameters at random (outside its model). {N_STARTUP} random start-up trials for Optuna's samplers "
             f"and NPSampler (NSGA-II: population_size={N_STARTUP}), 2 (d + 1) Sobol points for the BoTorch loop. "
             "Methods: experiments/benchmarks/bo_multi_methods.py; problems: bo_multi.py.", ""]
    for group in (REPORT_GROUP, CHOOSING_GROUP):
        rows = [lab for lab in labels if problems[lab].group == group]
        if not rows:
            continue
        lines += [f"**{group}**" + (" (chooses defaults; not a result)" if group == CHOOSING_GROUP else ""), "",
                  "| problem | d | m | max HV | " + " | ".join(methods) + " |",
                  "|---|---:|---:|---:|" + "---:|" * len(methods)]
        lines += [f"| {lab} | {problems[lab].dim} | {problems[lab].num_objectives} | {problems[lab].max_hv:.4g} | "
                  + " | ".join(_cell(summary, notes, lab, m) for m in methods) + " |" for lab in rows]
        lines.append("")
    approximate = [f"{lab} ({APPROXIMATE_MAX_HV[problems[lab].function]})" for lab in labels
                   if problems[lab].function in APPROXIMATE_MAX_HV]
    if approximate:
        lines += ["Maximum hypervolume: BoTorch's, exact from the known Pareto front except on "
                  + "; ".join(approximate) + ", where it is an estimate.", ""]
    cells = {lab: [summary[f"{lab}/{m}"] for m in methods if f"{lab}/{m}" in summary] for lab in labels}
    untouched = [lab for lab, cs in cells.items()
                 if cs and all(c["final"][0] >= math.log10(problems[lab].max_hv) for c in cs)]
    if untouched:
        lines += [f"No trial of any method run dominated the reference point on {', '.join(untouched)}: every run "
                  "ended with the whole maximum hypervolume as its gap.", ""]
    lines += incomplete_note(summary, args.seeds)
    lines += timing_table(summary, labels, methods)
    for method in [m for m in args.paired if m in methods]:
        lines += ["", f"Paired: {method}'s median gap minus the peer's (log10), and on how many seeds {method} ended "
                  "with the lower gap.", "", *paired_table(summary, labels, method, methods)]
    passed = sorted(f"{m} on {lab}" for lab, m in above if lab in labels and m in methods)
    if passed:
        lines += ["", "Passed BoTorch's stated maximum hypervolume (the gap floored): " + "; ".join(passed)]
    unsupported = [f"{m} on {lab}: {e.removeprefix('unsupported: ')}" for (lab, m), e in sorted(notes.items())
                   if lab in labels and m in methods]
    if unsupported:
        lines += ["", "Refused so far: " + "; ".join(unsupported)]
    figure = args.section.replace("-", "_")
    lines += ["", f"![log10 hypervolume gap vs trials: median and quartiles](figures/{figure}.png)"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    from npbandit.exceptions import StorageError
    from npbandit.storage import display_url

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=[REPORT_GROUP],
                        help=f"problem labels or groups ({REPORT_GROUP}, {CHOOSING_GROUP}); default: {REPORT_GROUP}")
    parser.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=DEFAULT_TRIALS, help="trials per run")
    add_cluster_arguments(parser)
    parser.add_argument("--db", default=str(ROOT / "runs" / "bench_bo_multi.db"))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--section", default=None,
                        help=f"log section (and JSON / figure name); default {SECTION}, or {SECTION}-choosing when "
                             f"only {CHOOSING_GROUP} problems are named")
    parser.add_argument("--no-run", action="store_true", help="only summarise the completed runs in --db")
    parser.add_argument("--paired", nargs="+", default=[NP_METHOD],
                        help="methods compared seed by seed with every other method run")
    args = parser.parse_args(argv)
    try:
        labels = expand(args.problems)
    except ValueError as err:
        parser.error(str(err))
    if args.trials < 1 or args.seeds < 1:
        parser.error(f"--trials and --seeds must be positive, got {args.trials} and {args.seeds}")
    if args.section is None:
        only_choosing = all(all_problems()[lab].group == CHOOSING_GROUP for lab in labels)
        args.section = SECTION + "-choosing" if only_choosing else SECTION
    args.db = prepare_db(args.db)
    try:
        runs, notes, above = collect(args.db, args.trials)
    except StorageError:  # no database yet
        runs, notes, above = {}, {}, set()
    done = {(lab, m, r["seed"]) for (lab, m), rs in runs.items() for r in rs}
    # seed-major: an interrupted run leaves the first k seeds of every cell
    todo = [(lab, m, s) for s in range(args.seeds) for lab in labels for m in args.methods if (lab, m, s) not in done]
    print(f"{len(done)} runs already in {display_url(args.db)}; {len(todo)} to go")
    if not args.no_run and todo:
        run_jobs(_one, [(lab, m, s, args.trials, args.db) for lab, m, s in todo], args.workers, "bo_multi runs",
                 args.dask_scheduler)
    runs, notes, above = collect(args.db, args.trials)
    summary = summarise(runs, labels, args.methods, args.seeds)
    command = "python experiments/benchmarks/bo_multi.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(summary, notes, above, labels, args.methods, args, command.strip())
    print(text)
    if not args.no_write:
        plot_curves(summary, labels, args.methods, args.section.replace("-", "_"), lambda lab: "log10 HV gap",
                    lambda lab: False)
        tabulated = [r["versions"] for lab in labels for m in args.methods for r in runs.get((lab, m), [])
                     if r["seed"] < args.seeds]
        publish(args.section, text, f"{args.section.replace('-', '_')}.json", command,
                {"summary": summary, "unsupported": {f"{lab}/{m}": e for (lab, m), e in notes.items()},
                 "max_hv": {lab: all_problems()[lab].max_hv for lab in labels}},
                threads=RUN_THREADS, packages=("optuna", "greenlet"), runs=tabulated)


if __name__ == "__main__":
    main()
