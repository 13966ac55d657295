#!/usr/bin/env python
"""The BO suite's trust-region columns with the trust region's settings changed from their defaults.

The ablations behind ``TrustRegionSettings``' defaults (experiments/log/results.md, "Trust region"):
``--length-init`` is the first box's side (TuRBO starts at 0.8, npbandit at 1.6, the whole
cube); ``--context-factor`` how many times the searched box's side the box the model sees
is (1: the model sees only the searched box). Every ``-tr`` column of ``experiments/benchmarks/bo.py``
given in ``--methods`` runs as that script builds it, with ``BOPolicy(trust_region=TrustRegionSettings(...))``
injected; each run logs the settings it ran with (``trust_region_length_init``, ...), and
the table printed at the end counts only the runs with these settings. The suite's own
options may follow a ``--`` as before (``--no-write`` is accepted and ignored: nothing is
published). Keep the runs in their own database:

    python experiments/probes/bo_trust_region_ablation.py --length-init 0.8 -- --seeds 10 --workers 1 \\
        --methods tnpd-bo-tr --db sqlite:///runs/tr08_tnpd.db --no-write
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "benchmarks"))

import bo  # noqa: E402  (experiments/benchmarks/bo.py: the suite's functions and columns)
from common import add_cluster_arguments, prepare_db, run_jobs  # noqa: E402

from npbandit.policies.trust_region import TrustRegionSettings  # noqa: E402


def check_method(method: str) -> tuple[str, str | None, str]:
    """``(model, warp, acquisition)`` of a ``-tr`` column of ``BOPolicy``; a ``ValueError`` for any other column."""
    model, acquisition = bo.split_method(method)
    model, trust_region = bo.split_trust_region(model)
    if not trust_region or model == bo.BAYES_MODEL or method in bo.OPTUNA_SAMPLERS:
        raise ValueError(f"{method!r} is not a trust-region column of BOPolicy (<model>[-yeo-johnson]-tr[-<acq>])")
    model, warp = bo.split_warp(model)
    return model, warp, acquisition


def make_policy(method: str, env, settings: TrustRegionSettings):
    """``bo.make_policy``'s policy for a ``-tr`` column, its trust region built with ``settings``."""
    from npbandit.policies import BOPolicy

    model, warp, acquisition = check_method(method)
    return BOPolicy(env.dim, model=model, acquisition=acquisition, output_warp=warp, trust_region=settings,
                    budget=env.budget, **(bo.GP_OPTIONS if model == "gp" else {}))


def _one(method: str, label: str, seed: int, budget: int, db: str, settings: dict) -> None:
    import torch

    torch.set_num_threads(bo.RUN_THREADS)
    from npbandit.envs import BlackBoxEnv
    from npbandit.loop import run_episode
    from npbandit.storage import RunLogger

    name, dim = bo._problem(label)
    env = BlackBoxEnv(function=name, dim=dim, budget=budget)
    policy = make_policy(method, env, TrustRegionSettings(**settings))
    run_episode(env, policy, seed=seed, logger=RunLogger(db, commit_every=budget),
                run_info={"kind": "bo", "env_id": "npbandit/BlackBox-v0",
                          "env_params": {"objective": label, "budget": budget, "benchmark": "bo",
                                         "optimal_value": env.optimal_value}})


def ran_with(params: dict, settings: TrustRegionSettings) -> bool:
    """Whether a run's logged policy parameters are those of a region with ``settings``."""
    logged = {"trust_region_length_init": settings.length_init,
              "trust_region_context_factor": settings.context_factor,
              **{f"trust_region_{k}": v for k, v in settings.changed().items()}}
    return params.get("trust_region") is True and all(params.get(k) == v for k, v in logged.items())


def collect(db: str, budget: int, settings: TrustRegionSettings) -> dict[tuple[str, str], dict[int, float]]:
    """Final log10 regret by (function, column) and seed of the completed runs with ``settings``."""
    from npbandit.storage import list_runs, run_steps

    params = bo._policy_params(db)
    out: dict[tuple[str, str], dict[int, float]] = {}
    for r in list_runs(db, kind="bo"):
        if (r.status != "completed" or r.env_params.get("benchmark") != "bo" or r.env_params.get("budget") != budget
                or not ran_with(params.get(r.id, {}), settings)):
            continue
        steps = run_steps(db, r.id)
        final = math.log10(max(steps[-1]["best_value"] - r.env_params["optimal_value"], 1e-12))
        out.setdefault((r.env_params["objective"], bo._method_of(r.policy)), {})[r.seed] = final
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length-init", type=float, help="side of the first box (default: TrustRegionSettings')")
    parser.add_argument("--context-factor", type=float, help="side of the box the model sees over the searched "
                        "box's (default: TrustRegionSettings')")
    parser.add_argument("--methods", nargs="+", default=["cmanp-bo-tr", "tnpd-bo-tr"], help="-tr columns of bo.py")
    parser.add_argument("--functions", nargs="+", default=list(bo.FUNCTIONS), choices=list(bo.FUNCTIONS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=60)
    add_cluster_arguments(parser)
    parser.add_argument("--db", required=True, help="a database of its own for these runs")
    parser.add_argument("--no-write", action="store_true", help=argparse.SUPPRESS)  # bo.py's; nothing is published
    args = parser.parse_args([a for a in argv if a != "--"])
    changed = {name: value for name, value in (("length_init", args.length_init),
                                               ("context_factor", args.context_factor)) if value is not None}
    if not changed:
        parser.error("give --length-init and/or --context-factor")
    try:
        settings = TrustRegionSettings(**changed)
        for method in args.methods:
            check_method(method)
    except ValueError as err:
        parser.error(str(err))
    args.db = prepare_db(args.db)
    have = collect(args.db, args.budget, settings)
    todo = [(m, f, s) for s in range(args.seeds) for f in args.functions for m in args.methods
            if s not in have.get((f, m), {})]
    print(f"{sum(map(len, have.values()))} runs with {changed} already in the database; {len(todo)} to go")
    run_jobs(_one, [(m, f, s, args.budget, args.db, asdict(settings)) for m, f, s in todo], args.workers,
             "bo trust-region ablation runs", args.dask_scheduler)
    runs = collect(args.db, args.budget, settings)
    print(f"\nlog10 final regret, median [25 %, 75 %] over seeds < {args.seeds}, trust region {changed}:")
    print("| function | " + " | ".join(args.methods) + " |")
    print("|---|" + "---:|" * len(args.methods))
    for f in args.functions:
        cells = []
        for m in args.methods:
            values = [v for s, v in runs.get((f, m), {}).items() if s < args.seeds]
            if not values:
                cells.append("-")
                continue
            q1, med, q3 = bo.quartiles(values)
            cells.append(f"{med:.2f} [{q1:.2f}, {q3:.2f}]")
        print(f"| {f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
