"""Keep what a training run needs to survive a machine change, without its training state.

``training_runs/`` is not tracked by git: a run's optimiser state (``train_state.safetensors``,
several times the weights' size, rewritten every few hundred steps) would be downloaded by every
clone forever. What a later session needs to go on is small:

* ``train_state.json``: the run's configuration, prior, step count and evaluation log;
* its exported checkpoint cards (``<name>.json``): recipe, lineage, scores;
* with ``--weights``, the latest exported weights (``<name>.safetensors``, a few MB), from which a
  new run continues with ``npbandit train ... --init-from experiments/training/records/<run>/<name>.json``
  (a fresh optimiser and schedule: the run's Adam moments are not kept).

Usage::

    python experiments/training/record.py training_runs/cmanp-gp1d-scratch --weights
    python experiments/training/record.py training_runs/*-long          # logs and cards only
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

RECORDS = Path(__file__).resolve().parent / "records"
#: A recorded weights file above this size is refused: export weights, never optimiser state.
MAX_WEIGHTS_BYTES = 8 * 2**20


def record(run: Path, *, weights: bool, out: Path = RECORDS) -> list[Path]:
    """Copy ``run``'s log, cards and (with ``weights``) exported weights to ``out/<run name>/``.

    Returns the paths written. Raises ``FileNotFoundError`` when ``run`` holds no
    ``train_state.json`` and ``ValueError`` when a weights file is larger than
    :data:`MAX_WEIGHTS_BYTES` (a training state given by mistake).
    """
    state = run / "train_state.json"
    if not state.is_file():
        raise FileNotFoundError(f"run: {run} holds no train_state.json (not a training run directory)")
    target = out / run.name
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(run.glob("*.json")):
        shutil.copy2(path, target / path.name)
        written.append(target / path.name)
        if weights and path.name != "train_state.json":
            tensors = path.with_suffix(".safetensors")
            if tensors.is_file():
                if tensors.stat().st_size > MAX_WEIGHTS_BYTES:
                    raise ValueError(f"weights: {tensors} is {tensors.stat().st_size / 2**20:.1f} MiB, "
                                     f"over {MAX_WEIGHTS_BYTES / 2**20:.0f} MiB: export weights, not a training state")
                shutil.copy2(tensors, target / tensors.name)
                written.append(target / tensors.name)
    log = run.parent / f"{run.name}.log"
    if log.is_file():
        shutil.copy2(log, target / log.name)
        written.append(target / log.name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="training run directories (under training_runs/)")
    parser.add_argument("--weights", action="store_true", help="also keep each run's exported weights")
    parser.add_argument("--out", type=Path, default=RECORDS, help="where records go (default: %(default)s)")
    args = parser.parse_args(argv)
    for run in args.runs:
        for path in record(run, weights=args.weights, out=args.out):
            print(f"recorded {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
