"""Wheel-bandit regret, the full NP protocol (docs/protocols.md §3).

2000 rounds, 50 seeds, δ ∈ {0.5, 0.7, 0.9, 0.95, 0.99, 0.995}; CMANP, LBANP, TNP-D
(their shipped ``*-wheel`` checkpoints, UCB with β = 1), Uniform and LinUCB on the
same reward tables (same seed -> same table). Cumulative regret is normalised by
Uniform's mean over seeds on the same δ (Uniform = 100), mean ± std over seeds;
simple regret is the mean regret over the last 500 rounds, normalised the same way.

Every run is logged through ``npbandit.storage``; the script is resumable: runs
already completed in ``--db`` are not repeated. ``--workers`` runs seeds in parallel
processes (one torch thread each), all writing the one database; ``--dask-scheduler``
runs them on a Dask cluster's workers instead (README, "More than one machine"), each run
the same as run locally with its seed.

    python experiments/benchmarks/wheel.py --workers 2                       # the full protocol
    python experiments/benchmarks/wheel.py --seeds 3 --steps 300 --no-write  # quick look
    python experiments/benchmarks/wheel.py --dask-scheduler tcp://10.0.0.5:8786 --db postgresql+psycopg://bench@10.0.0.5/runs
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    ROOT,
    add_cluster_arguments,
    is_current,
    machine_line,
    new_figure,
    prepare_db,
    publish,
    run_jobs,
    save_figure,
)

RUN_THREADS = 1  # torch threads per run (each worker process sets it)
COMMAND = "python experiments/benchmarks/wheel.py --workers 2"
CURVE_EVERY = 10  # rounds between the points of the stored regret curves
DELTAS = [0.5, 0.7, 0.9, 0.95, 0.99, 0.995]
POLICIES = ["cmanp-wheel", "lbanp-wheel", "tnpd-wheel", "uniform", "linucb"]
# docs/protocols.md §3, cumulative regret normalised to Uniform = 100 (δ = 0.7 ... 0.995)
PUBLISHED_DELTAS = [0.7, 0.9, 0.95, 0.99, 0.995]
PUBLISHED = {"TNP-D": [1.18, 1.70, 2.55, 3.57, 4.68], "LBANP (L=128)": [1.11, 1.75, 1.65, 6.13, 8.76],
             "CMANP": [0.93, 1.56, 1.87, 9.04, 13.02]}


def _one(policy_name: str, delta: float, seed: int, steps: int, db: str) -> tuple[str, float, int]:
    """One logged run (in a worker process)."""
    import torch

    torch.set_num_threads(RUN_THREADS)
    from npbandit.envs import WheelBanditEnv
    from npbandit.loop import run_episode
    from npbandit.policies import make_bandit_policy
    from npbandit.storage import RunLogger

    run_episode(WheelBanditEnv(delta=delta, horizon=steps), make_bandit_policy(policy_name), seed=seed,
                         logger=RunLogger(db, commit_every=200),
                         run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                   "env_params": {"delta": delta, "horizon": steps, "benchmark": "wheel"}})
    return policy_name, delta, seed


def run_key(name: str) -> str:
    """The name a policy's runs are stored under, without UCB's default ``-ucb``: ``cmanp-wheel``,
    ``cmanp-wheel-ucb`` and ``cmanp`` all mean ``cmanp-wheel``; a checkpoint path means its card's
    name (``training_runs/x/cmanp-and-wheel.json-thompson`` -> ``cmanp-and-wheel-thompson``)."""
    from npbandit.policies.bandit import parse_bandit_policy_name
    from npbandit.surrogates.pretrained import read_card

    parsed = parse_bandit_policy_name(name)
    if parsed is None:
        return name
    checkpoint, rule = parsed
    card_name = read_card(checkpoint)["name"]
    return card_name if rule == "ucb" else f"{card_name}-{rule}"


def checkpoints_of(policies: list[str]) -> dict[str, str]:
    """Run key -> the checkpoint (shipped name or card path) those ``policies`` use, so a run
    counts only when it was made with that checkpoint's weights (a training run's card under a
    shipped name keeps its runs apart from the shipped checkpoint's, both ways)."""
    from npbandit.policies.bandit import parse_bandit_policy_name

    out = {}
    for p in policies:
        parsed = parse_bandit_policy_name(p)
        if parsed is not None:
            out[run_key(p)] = parsed[0]
    return out


def _current(r, checkpoints: dict[str, str]) -> bool:
    return is_current(r, checkpoints.get(r.policy.removesuffix("-ucb")))


def _done(db: str, steps: int, policies: list[str]) -> set[tuple[str, float, int]]:
    from npbandit.storage import list_runs

    checkpoints = checkpoints_of(policies)
    return {(r.policy.removesuffix("-ucb"), r.env_params.get("delta"), r.seed) for r in list_runs(db, kind="bandit")
            if r.status == "completed" and r.n_steps == steps and r.env_params.get("benchmark") == "wheel"
            and _current(r, checkpoints)}


def summarise(db: str, steps: int, deltas: list[float], policies: list[str], seeds: int, first_seed: int = 0,
              versions: list[dict] | None = None) -> dict:
    """The table's cells; ``versions``, when given, receives the versions each run counted recorded."""
    from npbandit.storage import list_runs, run_steps

    finals: dict[tuple[str, float], list[float]] = {}
    tails: dict[tuple[str, float], list[float]] = {}
    curves: dict[tuple[str, float], list[list[float]]] = {}
    checkpoints = checkpoints_of(policies)
    for r in list_runs(db, kind="bandit"):
        if (r.status != "completed" or r.n_steps != steps or r.env_params.get("benchmark") != "wheel"
                or not _current(r, checkpoints)):
            continue
        if not first_seed <= r.seed < first_seed + seeds:
            continue
        rows = run_steps(db, r.id)
        key = (r.policy.removesuffix("-ucb"), r.env_params["delta"])
        if versions is not None and key[0] in policies and key[1] in deltas:
            versions.append(r.versions)
        finals.setdefault(key, []).append(rows[-1]["cumulative_regret"])
        tails.setdefault(key, []).append(statistics.fmean(s["regret"] for s in rows[-500:]))
        curves.setdefault(key, []).append([rows[t]["cumulative_regret"]
                                           for t in range(CURVE_EVERY - 1, steps, CURVE_EVERY)])
    out = {}
    for delta in deltas:
        if ("uniform", delta) not in finals:  # no normaliser yet (an interrupted first run)
            continue
        norm = statistics.fmean(finals[("uniform", delta)])
        norm_simple = statistics.fmean(tails[("uniform", delta)])
        for p in policies:
            key = (run_key(p), delta)
            if key not in finals:
                continue
            cum = [100 * v / norm for v in finals[key]]
            simple = [100 * v / norm_simple for v in tails[key]]
            out[f"{p}@{delta}"] = {"cumulative": (statistics.fmean(cum), statistics.pstdev(cum)),
                                   "simple": (statistics.fmean(simple), statistics.pstdev(simple)), "runs": len(cum),
                                   "uniform_mean": norm,
                                   "curve": [100 * statistics.fmean(c) / norm for c in zip(*curves[key])]}
    return out


def figure_name(section: str) -> str:
    """The figure of a docs section: ``wheel_regret`` for the main table, ``<section>_regret`` beside it."""
    return "wheel_regret" if section == "wheel" else f"{section.replace('-', '_')}_regret"


def plot(summary: dict, deltas: list[float], policies: list[str], name: str = "wheel_regret") -> None:
    """Mean normalised cumulative regret vs rounds, one panel per δ (experiments/log/figures/<name>.png)."""
    fig, axes = new_figure(len(deltas))
    for ax, delta in zip(axes, deltas):
        for p in policies:
            cell = summary.get(f"{p}@{delta}")
            if cell:
                ax.plot([CURVE_EVERY * (i + 1) for i in range(len(cell["curve"]))], cell["curve"], label=p)
        ax.set_yscale("log")
        ax.set_title(f"δ = {delta}")
        ax.set_xlabel("round")
        ax.set_ylabel("cumulative regret (Uniform at T = 100)")
    axes[0].legend(fontsize=8)
    save_figure(fig, name)


def render(summary: dict, deltas: list[float], policies: list[str], steps: int, seeds: int,
           section: str = "wheel", command: str = COMMAND) -> str:
    heading = ("## Wheel bandit (protocols.md §3)" if section == "wheel" else
               f"### Wheel bandit, {', '.join(policies)} (protocols.md §3; run beside the main table)")
    figure = figure_name(section)
    lines = [heading, "",
             f"Command: `{command}` (CPU: {machine_line(RUN_THREADS)}). {steps} rounds, {seeds} seeds per δ, "
             "UCB with β = 1 "
             "for the NP policies (shipped `*-wheel` checkpoints), the same reward tables for every policy. "
             "Cumulative regret normalised to Uniform = 100, mean ± std over seeds; simple regret = mean regret "
             "of the last 500 rounds, normalised the same way (std over seeds; the papers' code takes it over the "
             "500 rounds).", "", f"![Wheel-bandit cumulative regret vs rounds](figures/{figure}.png)", "",
             "| policy | " + " | ".join(f"δ={d}" for d in deltas) + " |", "|---|" + "---:|" * len(deltas)]
    for p in policies:
        cells = [summary.get(f"{p}@{d}") for d in deltas]
        lines.append(f"| {p} (ours) | " + " | ".join(
            "-" if c is None else f"{c['cumulative'][0]:.2f} ± {c['cumulative'][1]:.2f}" for c in cells) + " |")
    for name, values in PUBLISHED.items():
        by_delta = dict(zip(PUBLISHED_DELTAS, values))
        lines.append(f"| {name} (paper, 100k training steps) | "
                     + " | ".join(f"{by_delta[d]:.2f}" if d in by_delta else "-" for d in deltas) + " |")
    runs = [c["runs"] for c in summary.values()]
    if runs and min(runs) < seeds:
        lines += ["", f"**Incomplete:** {min(runs)} to {max(runs)} of the {seeds} seeds per cell so far "
                  "(the script resumes where it stopped)."]
    lines += ["", "Simple regret (last 500 rounds, Uniform = 100):", "",
              "| policy | " + " | ".join(f"δ={d}" for d in deltas) + " |", "|---|" + "---:|" * len(deltas)]
    for p in policies:
        cells = [summary.get(f"{p}@{d}") for d in deltas]
        lines.append(f"| {p} | " + " | ".join(
            "-" if c is None else f"{c['simple'][0]:.2f} ± {c['simple'][1]:.2f}" for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds first-seed .. first-seed + seeds - 1 (the protocol's are 0 .. 49; another range "
                             "gives a choosing run whose reward tables the published table never uses)")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--deltas", type=float, nargs="+", default=DELTAS)
    parser.add_argument("--policies", nargs="+", default=POLICIES)
    add_cluster_arguments(parser)
    default_db = str(ROOT / "runs" / "bench_wheel.db")
    parser.add_argument("--db", default=default_db)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true", help="only summarise the completed runs in --db")
    parser.add_argument("--section", default="wheel",
                        help="docs section (and JSON/figure name) to write; another name than 'wheel' publishes "
                             "these policies beside the main table instead of replacing it")
    args = parser.parse_args(argv)
    args.db = prepare_db(args.db)
    from npbandit.storage import display_url, open_db

    open_db(args.db)
    done = _done(args.db, args.steps, args.policies)
    # seed-major: an interrupted run leaves the first k seeds of every δ and policy
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    todo = [(p, d, s) for s in seeds for d in args.deltas for p in args.policies if (run_key(p), d, s) not in done]
    print(f"{len(done)} runs already in {display_url(args.db)}; {len(todo)} to go")
    if not args.no_run:
        run_jobs(_one, [(p, d, s, args.steps, args.db) for p, d, s in todo], args.workers, "wheel runs",
                 args.dask_scheduler)
    tabulated: list[dict] = []
    summary = summarise(args.db, args.steps, args.deltas, args.policies, args.seeds, args.first_seed, tabulated)
    command = COMMAND
    if args.section != "wheel":
        command += f" --policies {' '.join(args.policies)} --section {args.section}"
    if args.seeds != 50:
        command += f" --seeds {args.seeds}"
    if args.first_seed:
        command += f" --first-seed {args.first_seed}"
    if args.db != prepare_db(default_db):  # the runs summarised are in another database: the command names it
        command += f" --db {_relative_db(args.db)}"
    text = render(summary, args.deltas, args.policies, args.steps, args.seeds, args.section, command)
    print(text)
    if not args.no_write:
        plot(summary, args.deltas, args.policies, figure_name(args.section))
        publish(args.section, text, f"{args.section.replace('-', '_')}.json", command,
                {"steps": args.steps, "seeds": args.seeds, "summary": summary},
                pages=("benchmarks.md", "results.md"), threads=RUN_THREADS, runs=tabulated)


def _relative_db(url: str) -> str:
    """A database URL as a reader of the docs would type it: an SQLite file in this
    repository by its path from the root (this machine's absolute path means nothing
    elsewhere), anything else as shown by :func:`npbandit.storage.display_url`."""
    from npbandit.storage import display_url

    prefix = "sqlite:///"
    if url.startswith(prefix):
        path = Path(url[len(prefix):])
        if path.is_relative_to(ROOT):
            return str(path.relative_to(ROOT))
    return display_url(url)


if __name__ == "__main__":
    main()
