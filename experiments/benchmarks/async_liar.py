"""What should points still being evaluated be believed at? Asynchronous BO replayed on a virtual clock (issue 17).

``optimize(..., batch_size=q, executor=...)`` proposes each new point while up to q - 1 others
are still being evaluated, believing those at one constant (a constant liar,
``BOPolicy(liar=...)``: the worst, the mean or the best output the model sees) or at none, its
LogEI damped around them (``liar="penalty"``, local penalisation). This script
compares the rules on the functions of ``experiments/benchmarks/batch_bo.py`` (Branin, Hartmann-6) without
waiting for anything: the asynchronous loop of ``npbandit.loop`` is replayed on a virtual clock
on which every evaluation takes ``--eval-s`` (1 s, as batch_bo.py's objective sleeps) and every
proposal after the initial design ``--propose-s`` (a constant, so the order in which evaluations
finish, and with it the run, depends on the seed and the rule alone, not on how loaded the
machine is). As in the real loop, the driver fills the free slots one proposal after another,
then takes every evaluation finished by then, in the order they finished.

The policy is the one ``optimize(surrogate=...)`` runs (``--surrogate``: tnpd, its default, or
cmanp; LogEI, a 2d + 1-point Sobol design, the trust region), q = 1 for reference. Reported:
median final log10 simple regret over seeds with quartiles, the difference from q = 1, paired
seeds on which a rule ends lower than q = 1, the virtual wall time of a run (its ratio to q =
1 is what the loop's ordering alone gives at this proposal cost; batch_bo.py measures the real
one), and the median log10 regret of q = 1 stopped after fewer evaluations (each run records
its trace): the price of proposing with results outstanding. A 10-seed median moves by
several tenths between seeds sets and machines; 30 seeds are the published setting.

    python experiments/benchmarks/async_liar.py                                   # tnpd-bo, 30 seeds, q = 4 (3-4 CPU h)
    python experiments/benchmarks/async_liar.py --surrogate cmanp                 # cmanp-bo
    python experiments/benchmarks/async_liar.py --seeds 2 --budget 24 --no-write  # a quick look
"""

from __future__ import annotations

import argparse
import heapq
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_bo import FUNCTIONS, _problem  # noqa: E402
from common import ROOT, RunRecord, machine_line, publish  # noqa: E402

COMMAND = "python experiments/benchmarks/async_liar.py"
# not optimize()'s: a yardstick for what batching costs a model that converges as far as a GP can,
# the main BO table's GP (Matern-5/2, told the function is noise-free) inside the same trust region
REFERENCES = {"gp-tr": {"model": "gp", "noise_free": True, "gp_kernel": "matern52", "trust_region": True}}


def replay(label: str, q: int, liar: str, seed: int, budget: int, eval_s: float, propose_s: float,
           surrogate: str) -> dict:
    """One run of the asynchronous loop on the virtual clock: final log10 regret and wall time."""
    import torch

    from npbandit.api import SURROGATES
    from npbandit.envs.blackbox import BlackBoxEnv
    from npbandit.envs.evaluation import Outcome, OutcomeRelay
    from npbandit.policies.bo import BOPolicy

    torch.set_num_threads(1)
    problem, f, optimum = _problem(label)
    relay = OutcomeRelay()  # each value is computed at submission and recorded when its virtual clock says
    env = BlackBoxEnv(objective=f, bounds=problem.bounds.numpy(), minimize=True, budget=budget,
                      optimal_value=optimum, evaluator=relay)
    if surrogate in REFERENCES:
        policy = BOPolicy(env.dim, liar=liar, budget=budget, **REFERENCES[surrogate])
    else:
        policy = BOPolicy(env.dim, model=SURROGATES[surrogate], liar=liar, budget=budget)  # as optimize() builds it
    obs, _ = env.reset(seed=seed)
    policy.reset(seed)
    clock, submitted, order = 0.0, 0, 0
    inflight: list[tuple[float, int, np.ndarray, float]] = []  # (finish time, order, action, value): a heap
    best, cpu, trace = np.inf, 0.0, []
    while submitted < budget or inflight:
        while submitted < budget and len(inflight) < q:
            pending = np.array([job[2] for job in inflight]).reshape(len(inflight), env.dim)
            designed = len(policy.Y) < policy.n_init  # a Sobol design point: no model, no proposal cost
            t0 = time.process_time()
            action = np.asarray(policy.act(obs, pending=pending) if inflight else policy.act(obs), dtype=np.float64)
            cpu += time.process_time() - t0
            clock += 0.0 if designed else propose_s
            value = float(f(env.to_bounds(action)))
            heapq.heappush(inflight, (clock + eval_s, order, action, value))
            submitted, order = submitted + 1, order + 1
        clock = max(clock, inflight[0][0])
        while inflight and inflight[0][0] <= clock:  # every evaluation finished by now, in order
            _, _, action, value = heapq.heappop(inflight)
            relay.hand_over(Outcome(True, value))
            obs, reward, _, _, info = env.step(action)
            policy.observe(obs, action, reward, info)
            best = min(best, value)
            trace.append(round(float(np.log10(max(best - optimum, 1e-12))), 4))
    return {"log10_regret": float(np.log10(max(best - optimum, 1e-12))), "wall_s": clock, "cpu_s": cpu,
            "trace": trace}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=list(FUNCTIONS))
    parser.add_argument("--surrogate", default="tnpd",
                        help="optimize's surrogate name (default: its default), or gp-tr: the main BO table's GP "
                             "(Matern-5/2, noise-free) in the trust region, as a yardstick")
    parser.add_argument("--q", type=int, default=4)
    parser.add_argument("--liars", nargs="+", default=["mean", "penalty"], help="q > 1 rules (npbandit's LIARS)")
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--budget", type=int, default=64)
    parser.add_argument("--eval-s", type=float, default=1.0)
    parser.add_argument("--propose-s", type=float, default=0.5,
                        help="virtual seconds per proposal (cmanp-bo on Hartmann-6 took 0.45-0.65 s in batch_bo.py)")
    parser.add_argument("--out", default=str(ROOT / "runs" / "async_liar.json"),
                        help="per-run results, reused on the next call (a resumable record)")
    parser.add_argument("--section", default=None,
                        help="the docs section (and docs/results JSON) to write; default async-liar-<surrogate>")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    runs = RunRecord(args.out)
    cells = [(label, 1, "worst") for label in args.functions] + [
        (label, args.q, liar) for label in args.functions for liar in args.liars]
    # the policy's version: v1 counted the initial design by observations (with q in flight, q - 1
    # Sobol points more); v2 counts the points it hands out; v3 also judges a proposal's outcome (the
    # trust region's success or failure) against the best value its proposal knew, not the best at
    # its observation. q = 1 runs are the same in all three.
    settings = f"{args.surrogate}-budget{args.budget}-eval{args.eval_s:g}-propose{args.propose_s:g}-v3"
    for seed in range(args.seeds):
        for label, q, liar in cells:
            # runs recorded before runs kept a trace (log10 regret after each evaluation) run again
            runs.get(f"{label}|q{q}|{liar}|{seed}|{settings}",
                     lambda label=label, q=q, liar=liar, seed=seed: replay(
                         label, q, liar, seed, args.budget, args.eval_s, args.propose_s, args.surrogate),
                     redo=lambda kept: "trace" not in kept)
    record = runs.runs
    lines = render(record, args, cells, settings)
    print("\n".join(lines))
    if not args.no_write:
        section = args.section or f"async-liar-{args.surrogate}"
        publish(section, "\n".join(lines), f"{section.replace('-', '_')}.json", command_line(args),
                {"settings": settings, "runs": {k: v for k, v in record.items() if k.endswith(settings)}}, threads=1)


def command_line(args) -> str:
    return (f"{COMMAND} --surrogate {args.surrogate} --seeds {args.seeds} --q {args.q} "
            f"--liars {' '.join(args.liars)} --propose-s {args.propose_s:g}"
            + (f" --section {args.section}" if args.section else ""))


def render(record: dict, args, cells, settings: str) -> list[str]:
    def runs(label, q, liar):
        return [record[f"{label}|q{q}|{liar}|{s}|{settings}"] for s in range(args.seeds)]

    rules = [(1, "worst")] + [(args.q, liar) for liar in args.liars]  # q = 1 first, the reference

    lines = ["## Points in flight: liars for asynchronous BO, replayed on a virtual clock (issue 17)", "",
             f"Command: `{command_line(args)}` (CPU: {machine_line(1)}). "
             + ("BoTorch's SingleTaskGP with a Matern-5/2 kernel told the function is noise-free (the main BO "
                "table's gp) in the trust region as the NPs use it (LogEI, 2d + 1 Sobol points)"
                if args.surrogate == "gp-tr" else
                f"The model of `optimize(surrogate=\"{args.surrogate}\")` as it runs it (LogEI, 2d + 1 "
                "Sobol points, the trust region)")
             + f"; {args.budget} evaluations of {args.eval_s:g} virtual seconds each, "
             f"proposals {args.propose_s:g} virtual seconds each; q = {args.q} evaluations in flight, the pending "
             "ones believed at the worst, mean or best output in the model's box, (believer) each at the model's "
             "own mean there, or (penalty) at no value, LogEI damped around them (local penalisation). Final log10 "
             "simple regret: "
             "median [25 %, 75 %] over seeds; paired: seeds on which the rule ends lower than q = 1; "
             "virtual wall time of a run (median) and its ratio to q = 1.", ""]
    for label in args.functions:
        base = runs(label, 1, "worst")
        base_med = statistics.median(r["log10_regret"] for r in base)
        base_wall = statistics.median(r["wall_s"] for r in base)
        lines += [f"**{label}**", "", "| run | final log10 regret | − q=1 | lower than q=1 (paired) | wall (s) "
                  "| wall / q=1 |", "|---|---:|---:|---:|---:|---:|"]
        for q, liar in rules:
            rs = runs(label, q, liar)
            vals = sorted(r["log10_regret"] for r in rs)
            quart = statistics.quantiles(vals, n=4) if len(vals) > 1 else [vals[0]] * 3
            med = statistics.median(vals)
            wall = statistics.median(r["wall_s"] for r in rs)
            wins = "-" if q == 1 else (
                f"{sum(a['log10_regret'] < b['log10_regret'] for a, b in zip(rs, base))} / {len(rs)}")
            name = "q=1" if q == 1 else f"q={q}, {liar} liar"
            lines.append(f"| {name} | {med:.2f} [{quart[0]:.2f}, {quart[2]:.2f}] | {med - base_med:+.2f} | {wins} "
                         f"| {wall:.1f} | {wall / base_wall:.2f} |")
        # what q = 1 reaches with fewer evaluations: the price of proposing each point with q - 1
        # results outstanding, were the liar perfect, lies between its first two rows
        stops = [n for n in (args.budget - args.q + 1, args.budget - 2 * args.q, args.budget - 4 * args.q) if n > 0]
        if all("trace" in r for r in base) and stops:
            lines += ["", "q = 1 stopped early (median log10 regret after n evaluations): " + ", ".join(
                f"n = {n}: {statistics.median(r['trace'][n - 1] for r in base):.2f}" for n in stops) + "."]
        # the price in evaluations, which a final regret hides once a model has converged to its floor
        if all("trace" in r for cell in rules for r in runs(label, *cell)):
            lines += ["", "Evaluations to reach a log10 regret (median over seeds; > budget: most seeds never did): "
                      + "; ".join(f"{'q=1' if q == 1 else f'q={q}, {liar}'}: " + ", ".join(
                          f"{thr} in {_to_reach(runs(label, q, liar), thr, args.budget)}" for thr in THRESHOLDS)
                          for q, liar in rules) + "."]
        lines.append("")
    return lines


THRESHOLDS = (-2, -3, -4, -5)


def _to_reach(rs: list[dict], threshold: float, budget: int) -> str:
    """Median evaluations until a run's log10 regret is at most ``threshold`` ("> budget" if
    most runs never get there)."""
    firsts = [next((i + 1 for i, v in enumerate(r["trace"]) if v <= threshold), budget + 1) for r in rs]
    med = statistics.median(firsts)
    return f"> {budget}" if med > budget else f"{med:g}"


if __name__ == "__main__":
    main()
