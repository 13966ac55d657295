"""An Optuna study on Branin whose sampler is a pretrained NP (``NPSampler``, ``tnpd-bo`` by default).

The study lives in an SQLite file, so several worker processes can share it, as
Optuna's own parallel studies do; the only npbandit line is the sampler:

    study = optuna.create_study(storage=url, sampler=NPSampler(seed=0))

Needs the ``optuna`` extra (``pip install -e ".[optuna]"``).

Run:  .venv/bin/python examples/optuna_study.py [--trials 30] [--workers 2] [--seed 0] [--storage sqlite:///b.db]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import tempfile
import time
from pathlib import Path

import optuna

from npbandit.integrations.optuna import NPSampler

BRANIN_MIN = 0.397887  # the global minimum value of Branin


def branin(trial: optuna.Trial) -> float:
    x1 = trial.suggest_float("x1", -5.0, 10.0)
    x2 = trial.suggest_float("x2", 0.0, 15.0)
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def work(url: str, name: str, trials: int, seed: int) -> None:
    """One worker: its own sampler, the shared study."""
    import torch

    torch.set_num_threads(1)  # workers share the machine's cores
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=name, storage=url, sampler=NPSampler(seed=seed))
    study.optimize(branin, n_trials=trials)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30, help="trials in all, shared among the workers")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (1: reproducible per seed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--storage", help="an SQLAlchemy URL (default: a new SQLite file in a temporary folder)")
    args = parser.parse_args()
    if args.trials < 1 or args.workers < 1:
        parser.error("--trials and --workers must be positive")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = args.storage or f"sqlite:///{Path(tempfile.mkdtemp()) / 'optuna_branin.db'}"
    name = f"branin-np-seed{args.seed}-{time.strftime('%Y%m%d-%H%M%S')}"
    optuna.create_study(study_name=name, storage=url)  # minimise (Optuna's default)
    shares = [args.trials // args.workers + (i < args.trials % args.workers) for i in range(args.workers)]
    start = time.perf_counter()
    if args.workers == 1:
        work(url, name, args.trials, args.seed)
    else:
        # spawn, not fork: each worker starts torch afresh instead of inheriting its threads
        ctx = multiprocessing.get_context("spawn")
        procs = [ctx.Process(target=work, args=(url, name, n, args.seed)) for n in shares]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        if any(p.exitcode != 0 for p in procs):
            raise SystemExit(f"a worker failed (exit codes {[p.exitcode for p in procs]})")
    seconds = time.perf_counter() - start
    study = optuna.load_study(study_name=name, storage=url)
    done = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    print(f"study {name!r} in {url}: {len(done)} completed trials, {args.workers} worker(s), "
          f"{seconds:.1f} s wall ({seconds / len(done):.2f} s per trial)")
    print(f"best value {study.best_value:.4f} (regret {study.best_value - BRANIN_MIN:.4f}) at "
          + ", ".join(f"{k} = {v:.4f}" for k, v in study.best_params.items()))


if __name__ == "__main__":
    main()
