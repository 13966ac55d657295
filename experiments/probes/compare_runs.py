"""Do two run databases hold the same runs, step for step?

The question: after a change that should not alter any number (a code move, a refactor),
does a benchmark run on the same seeds take the same actions and see the same values and
rewards? Run the benchmark before and after the change into two databases, then

    python experiments/probes/compare_runs.py before.db after.db
    python experiments/probes/compare_runs.py before.db after.db --rtol 1e-12   # not exact: to 1e-12 relative
    python experiments/probes/compare_runs.py old.db new.db --ignore-env space --steps-only  # across versions

Runs are read through the public storage API (``npbandit.storage.list_runs`` / ``run_steps``)
and paired by what defines them: kind, environment id and parameters, policy, seed (the
i-th such run of A with the i-th of B when a database holds several). For each pair the
steps are compared in order of ``t``: the action, the value (the observation of a ``bo``
run), the reward, and the derived columns (``best_value``, ``regret``,
``cumulative_regret``, ``expected_regret``, ``failed``). Timings, hosts and dates are not
compared. The run's policy parameters, recommendation, checkpoint and status are compared too.

Floats are compared exactly by default (a float column and a JSON action both round-trip
a float64 exactly in SQLite); ``--rtol`` allows a relative tolerance instead, NaN equals
NaN either way. One line per pair (``identical``, or the first differing step), then
``N of M identical``. Exit status 1 when any pair differs or any run has no partner.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from typing import Any

from npbandit.storage import RunRow, list_runs, run_steps

#: the step columns compared, in the order a difference is reported
STEP_FIELDS = ("action", "value", "reward", "best_value", "regret", "cumulative_regret", "expected_regret", "failed")
#: run attributes that must agree for a pair to count as identical (besides the pairing key)
RUN_FIELDS = ("policy_params", "recommended", "surrogate", "checkpoint_sha256", "status", "n_steps")


def run_key(run: RunRow, ignore_env: tuple[str, ...] = ()) -> tuple:
    """What pairs a run with its partner: kind, environment and its parameters (but those named
    in ``ignore_env``), policy, seed."""
    params = {k: v for k, v in run.env_params.items() if k not in ignore_env}
    return (run.kind, run.env_id, json.dumps(params, sort_keys=True), run.policy, run.seed)


def describe(key: tuple) -> str:
    kind, env_id, env_params, policy, seed = key
    return f"{kind} {env_id} {env_params} policy={policy} seed={seed}"


def equal(a: Any, b: Any, rtol: float = 0.0) -> bool:
    """``a == b`` through nested lists and dicts; floats equal (or within ``rtol`` relative), NaN equals NaN."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y, rtol) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal(a[k], b[k], rtol) for k in a)
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        if rtol == 0.0:
            return a == b
        return math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)
    return a == b


def first_difference(steps_a: list[dict], steps_b: list[dict], rtol: float = 0.0) -> str | None:
    """The first differing step as text, or None when the step lists agree."""
    for a, b in zip(steps_a, steps_b, strict=False):
        if a["t"] != b["t"]:
            return f"step t={a['t']} in A is t={b['t']} in B"
        for name in STEP_FIELDS:
            if not equal(a[name], b[name], rtol):
                return f"first differing step t={a['t']}: {name} A={a[name]!r} B={b[name]!r}"
    if len(steps_a) != len(steps_b):
        return f"A has {len(steps_a)} steps, B {len(steps_b)} (the first {min(len(steps_a), len(steps_b))} agree)"
    return None


def pair_runs(runs_a: list[RunRow], runs_b: list[RunRow],
              ignore_env: tuple[str, ...] = ()) -> tuple[list[tuple[RunRow, RunRow]], list[str]]:
    """Pairs (A run, B run) by :func:`run_key`, in id order within a key; and a line per unpaired run."""
    by_key_a: dict[tuple, list[RunRow]] = defaultdict(list)
    by_key_b: dict[tuple, list[RunRow]] = defaultdict(list)
    for run in runs_a:
        by_key_a[run_key(run, ignore_env)].append(run)
    for run in runs_b:
        by_key_b[run_key(run, ignore_env)].append(run)
    pairs, unpaired = [], []
    for key in list(by_key_a) + [k for k in by_key_b if k not in by_key_a]:
        left, right = by_key_a.get(key, []), by_key_b.get(key, [])
        pairs.extend(zip(left, right, strict=False))
        unpaired += [f"unpaired in A: run {r.id} {describe(key)}" for r in left[len(right):]]
        unpaired += [f"unpaired in B: run {r.id} {describe(key)}" for r in right[len(left):]]
    return pairs, unpaired


def compare(db_a: str, db_b: str, rtol: float = 0.0, out=None, ignore_env: tuple[str, ...] = (),
            steps_only: bool = False) -> int:
    """Print one line per pair and the summary to ``out`` (default stdout); returns the exit status
    (0: every run paired and identical). ``ignore_env``: environment parameters left out of
    the pairing (a parameter a later version records and an earlier one did not);
    ``steps_only``: compare the steps alone, not the run's recorded settings (which gain
    keys from one version to the next)."""
    out = sys.stdout if out is None else out
    pairs, unpaired = pair_runs(list_runs(db_a), list_runs(db_b), ignore_env)
    identical = 0
    for run_a, run_b in pairs:
        label = f"{describe(run_key(run_a, ignore_env))} (runs {run_a.id} / {run_b.id}, {run_a.n_steps} steps)"
        problems = [] if steps_only else [f"{name} A={getattr(run_a, name)!r} B={getattr(run_b, name)!r}"
                                          for name in RUN_FIELDS if getattr(run_a, name) != getattr(run_b, name)]
        step_diff = first_difference(run_steps(db_a, run_a.id), run_steps(db_b, run_b.id), rtol)
        if step_diff is not None:
            problems.insert(0, step_diff)
        if problems:
            print(f"DIFFERS    {label}: " + "; ".join(problems), file=out)
        else:
            identical += 1
            print(f"identical  {label}", file=out)
    for line in unpaired:
        print(line, file=out)
    how = "exactly" if rtol == 0.0 else f"to rtol={rtol:g}"
    print(f"{identical} of {len(pairs)} identical ({how}); {len(unpaired)} unpaired", file=out)
    return 0 if identical == len(pairs) and not unpaired else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db_a", help="the first run database (SQLite path or SQLAlchemy URL)")
    parser.add_argument("db_b", help="the second run database")
    parser.add_argument("--rtol", type=float, default=0.0,
                        help="relative tolerance on floats (default 0: exactly equal)")
    parser.add_argument("--ignore-env", nargs="+", default=[], metavar="KEY",
                        help="environment parameters left out of the pairing (e.g. 'space', which runs "
                             "record since the search-space change)")
    parser.add_argument("--steps-only", action="store_true",
                        help="compare the steps alone, not the runs' recorded settings")
    args = parser.parse_args(argv)
    if not args.rtol >= 0.0:
        parser.error(f"--rtol must be a non-negative number, got {args.rtol}")
    return compare(args.db_a, args.db_b, args.rtol, ignore_env=tuple(args.ignore_env), steps_only=args.steps_only)


if __name__ == "__main__":
    sys.exit(main())
