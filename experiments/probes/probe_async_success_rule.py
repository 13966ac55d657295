"""With evaluations in flight, when is a returned point a success of the trust region?
(experiments/log/benchmarks.md, "What batching costs a GP"; issue 17)

``BOPolicy`` judges a proposal's outcome against the best value its proposal knew, so with q
points in flight several near-optimal points can each count as a success although only the
first improved on the incumbent (TuRBO counts one success per batch). The rule probed here, not
adopted: a point that beats the best its proposal knew but not the best at its return counts as
neither success nor failure. Both rules are replayed on ``experiments/benchmarks/async_liar.py``'s virtual
clock (q = 4, the believer), paired by seed; per-run results are kept in ``--out`` and reused.

    python experiments/probes/probe_async_success_rule.py --functions branin --seeds 30
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "benchmarks"))
import async_liar  # noqa: E402
from common import RunRecord  # noqa: E402

from npbandit.policies.bo import BOPolicy  # noqa: E402

RULES = ("today", "neutral")


def _with_rule(rule: str):
    """``BOPolicy.observe`` under ``rule`` (the class's own method for "today")."""
    observe = BOPolicy.observe
    if rule == "today":
        return observe

    def neutral(self, obs, action, reward, info):
        best_then = (self.hand_outs.handed.get(np.asarray(action, dtype=np.float64).tobytes()) or [None])[0]
        stale = (self.region is not None and best_then is not None and self.Y
                 and self.region.improves(float(reward), best_then)
                 and not self.region.improves(float(reward), max(self.Y)))
        if not stale:
            return observe(self, obs, action, reward, info)
        self.region.observe = lambda improved, remaining=None: None  # this outcome moves no counter
        try:
            return observe(self, obs, action, reward, info)
        finally:
            del self.region.observe

    return neutral


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", nargs="+", default=["branin"], choices=list(async_liar.FUNCTIONS))
    parser.add_argument("--surrogate", default="tnpd")
    parser.add_argument("--q", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--budget", type=int, default=64)
    parser.add_argument("--out", default=str(ROOT / "runs" / "probe_async_success_rule.json"))
    args = parser.parse_args(argv)
    runs = RunRecord(args.out)
    real = BOPolicy.observe

    def replay(label: str, rule: str, seed: int) -> float:
        BOPolicy.observe = _with_rule(rule)
        try:
            return async_liar.replay(label, args.q, "believer", seed, args.budget, 1.0, 0.5,
                                     args.surrogate)["log10_regret"]
        finally:
            BOPolicy.observe = real

    for label in args.functions:
        for seed in range(args.seeds):
            for rule in RULES:
                runs.get(f"{label}|{args.surrogate}|q{args.q}|{args.budget}|{rule}|{seed}",
                         lambda label=label, rule=rule, seed=seed: replay(label, rule, seed))
    record = runs.runs
    for label in args.functions:
        vals = {rule: [record[f"{label}|{args.surrogate}|q{args.q}|{args.budget}|{rule}|{s}"]
                       for s in range(args.seeds)] for rule in RULES}
        diff = [b - a for a, b in zip(vals["today"], vals["neutral"])]
        cells = ", ".join(f"{rule} {statistics.median(v):.2f} [{statistics.quantiles(v, n=4)[0]:.2f}, "
                          f"{statistics.quantiles(v, n=4)[2]:.2f}]" for rule, v in vals.items())
        print(f"{label}, {args.surrogate}, q = {args.q}, believer, {args.seeds} seeds: final log10 regret {cells}; "
              f"neutral lower on {sum(d < 0 for d in diff)}, higher on {sum(d > 0 for d in diff)}, level on "
              f"{sum(d == 0 for d in diff)}; mean difference {statistics.fmean(diff):+.2f}")


if __name__ == "__main__":
    main()
