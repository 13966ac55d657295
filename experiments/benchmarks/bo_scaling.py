"""Time per BO iteration vs the number of observations N: CMANP vs an exact GP.

One iteration = fold one new observation into the model + one LogEI ``optimize_acqf``
(10 restarts, 512 raw samples) on Hartmann-6 (float64). CMANP: ``NPModel`` built once
on N points (untimed), then ``condition_on_observations`` and the streamed model's noise
estimate (both constant cost) + the acquisition optimisation. GP: ``SingleTaskGP`` refit
on N + 1 points (``fit_gpytorch_mll``) + the same optimisation; run in a subprocess and
stopped after ``--gp-timeout`` seconds.

The optimisation's length is set by L-BFGS-B, not by the model: the number of
acquisition evaluations varies several-fold from one data set to the next at the same
N. So each CMANP cell is the median of ``--repeats`` iterations on different data
(seeds), and the table also gives the median number of evaluations and the seconds
per evaluation -- the model's own cost, which is what should not grow with N.

``--bar`` runs issue 47's bar instead (section ``bo-bar``), every cell in one process on one
torch thread, NP and GP cells of one seed back to back so that the machine's load falls on
both: one proposal = ``NPModel.from_pretrained`` on N points + LogEI ``optimize_acqf`` (10
restarts, 512 raw samples) vs ``SingleTaskGP`` as BoTorch's documentation sets it up
(``input_transform=Normalize(d)``, ``outcome_transform=Standardize(m=1)``, ``fit_gpytorch_mll``
on its ``ExactMarginalLogLikelihood``) + the same ``optimize_acqf``, at ``--bar-sizes``; and
``npbandit.optimize``'s seconds per proposal with its defaults (``db=None``), warm-started
from N evaluations (``initial``, ``n_init=2``: every proposal the model's) for
``--bar-proposals`` more, at ``--optimize-sizes``.

    python experiments/benchmarks/bo_scaling.py
    python experiments/benchmarks/bo_scaling.py --sizes 1000 10000 100000 --no-gp --no-write --threads 1
    python experiments/benchmarks/bo_scaling.py --bar
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_line, new_figure, publish, save_figure  # noqa: E402

COMMAND = "python experiments/benchmarks/bo_scaling.py"
# docs/protocols.md §4: SingleTaskGP fit + LogEI on Hartmann-6, 2-core CPU, BoTorch 0.18 (s/iter)
PUBLISHED_GP = {200: "0.7", 1000: "5-12", 2000: "40-122", 4000: "~780 (fit alone)"}


def iteration(kind: str, n: int, seed: int = 0) -> dict:
    """One timed iteration: ``{"s": total, "update_s": model update, "evals": acquisition evaluations}``."""
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim import optimize_acqf
    from botorch.test_functions import Hartmann

    problem = Hartmann(dim=6, negate=True)
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n + 1, 6, generator=g, dtype=torch.float64)
    Y = problem(X).unsqueeze(-1)
    bounds = problem.bounds.to(torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "cmanp":
            from npbandit import NPModel

            model = NPModel.from_pretrained("cmanp-bo", X[:n], Y[:n])
            t0 = time.perf_counter()
            model = model.condition_on_observations(X[n:], Y[n:])
            model.noise_variance()  # re-estimated for every streamed model, from at most 256 points
        else:
            from botorch.fit import fit_gpytorch_mll
            from botorch.models import SingleTaskGP
            from gpytorch.mlls import ExactMarginalLogLikelihood

            t0 = time.perf_counter()
            model = SingleTaskGP(X, Y)
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        t1 = time.perf_counter()
        acq = LogExpectedImprovement(model, best_f=Y.max())
        evals = []
        acq.register_forward_hook(lambda *_: evals.append(1))
        torch.manual_seed(seed)  # the raw samples: each cell is reproducible whatever ran before it
        optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512)
        t2 = time.perf_counter()
    return {"s": t2 - t0, "update_s": t1 - t0, "evals": len(evals)}


#: the NP rows of the bar: each checkpoint with ``optimize_acqf`` as the bar states it, and ``-cs``:
#: the same model and LogEI maximised by npbandit's ``CandidateSearch().maximise`` instead
BAR_MODELS = ("tnpd-bo", "cmanp-bo", "tnpd-bo-cs", "cmanp-bo-cs")
#: issue 47's bars on NP / GP seconds per proposal (NPModel route) and optimize's seconds per proposal
BAR_RATIO = {50: 0.25, 1000: 0.02}
BAR_OPTIMIZE_S = 0.1


def hartmann(n: int, seed: int):
    """``n`` uniform points of Hartmann-6 on its unit cube (maximised) and its bounds, float64."""
    import torch
    from botorch.test_functions import Hartmann

    problem = Hartmann(dim=6, negate=True)
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 6, generator=g, dtype=torch.float64)
    return X, problem(X).unsqueeze(-1), problem.bounds.to(torch.float64)


def proposal(kind: str, n: int, seed: int) -> dict:
    """One proposal from scratch on ``n`` points: build (NP: ``from_pretrained``; GP: construct
    and fit) + LogEI ``optimize_acqf`` (``<checkpoint>-cs``: ``CandidateSearch().maximise``).
    ``{"s", "build_s", "evals"}``."""
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim import optimize_acqf

    X, Y, bounds = hartmann(n, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        if kind == "gp":
            from botorch.fit import fit_gpytorch_mll
            from botorch.models import SingleTaskGP
            from botorch.models.transforms import Normalize, Standardize
            from gpytorch.mlls import ExactMarginalLogLikelihood

            model = SingleTaskGP(X, Y, input_transform=Normalize(d=X.shape[-1]), outcome_transform=Standardize(m=1))
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        else:
            from npbandit import NPModel

            model = NPModel.from_pretrained(kind.removesuffix("-cs"), X, Y, bounds=bounds)
        t1 = time.perf_counter()
        acq = LogExpectedImprovement(model, best_f=Y.max())
        evals = []
        acq.register_forward_hook(lambda *_: evals.append(1))
        torch.manual_seed(seed)
        if kind.endswith("-cs"):
            from npbandit.acquisition import CandidateSearch

            CandidateSearch().maximise(acq, bounds, seed)
        else:
            optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512)
        t2 = time.perf_counter()
    return {"s": t2 - t0, "build_s": t1 - t0, "evals": len(evals)}


def optimize_proposals(surrogate: str, n: int, proposals: int, seed: int, gradient: bool = False) -> dict:
    """``npbandit.optimize`` (defaults, no database) warm-started from ``n`` evaluations of
    Hartmann-6, for ``proposals`` more; the seconds between consecutive objective calls are
    the seconds per proposal (the first: the model built on the ``n`` points as well).
    ``acq_optimizer=CandidateSearch()``, or ``GradientRestarts()`` (``optimize_acqf``) with
    ``gradient``, whichever the surrogate's default is."""
    import numpy as np

    import npbandit

    X, Y, bounds = hartmann(n, seed)
    f = hartmann_numpy()
    stamps: list[float] = []

    def objective(x):
        stamps.append(time.perf_counter())
        return f(x)

    initial = [(x, float(-y)) for x, y in zip(X.numpy(), Y.squeeze(-1).tolist())]
    from npbandit.acquisition import CandidateSearch, GradientRestarts

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        npbandit.optimize(objective, bounds.numpy(), surrogate=surrogate, budget=proposals, seed=seed, db=None,
                          progress=False, initial=initial, n_init=min(n, 2),
                          acq_optimizer=GradientRestarts() if gradient else CandidateSearch())
    gaps = np.diff([start, *stamps])
    return {"first_s": float(gaps[0]), "s": float(np.median(gaps[1:])) if len(gaps) > 1 else float(gaps[0]),
            "max_s": float(gaps.max()), "proposals": len(stamps)}


def default_optimizer(surrogate: str) -> str:
    """The acquisition optimiser ``optimize(surrogate=...)`` runs by default (its card's)."""
    from npbandit.acquisition.optimizers import resolve_acq_optimizer
    from npbandit.api import SURROGATES
    from npbandit.surrogates.pretrained import checkpoint_use, read_card

    recommended = checkpoint_use(read_card(SURROGATES[surrogate])).get("acq_optimizer")
    return resolve_acq_optimizer(None, recommended).params()["name"]


def hartmann_numpy():
    """Hartmann-6 (minimised, as ``optimize`` minimises by default) on numpy points."""
    import torch
    from botorch.test_functions import Hartmann

    problem = Hartmann(dim=6)
    return lambda x: float(problem(torch.as_tensor(x, dtype=torch.float64).unsqueeze(0)))


def bar(args: argparse.Namespace) -> None:
    """Issue 47's bar in one run: see the module docstring."""
    import torch

    torch.set_num_threads(1)
    for kind in dict.fromkeys([*(m.removesuffix("-cs") for m in args.bar_models), "gp"]):
        proposal(kind, 20, 0)  # untimed warm-up: imports, lazy initialisation, checkpoint loading
    rows = []
    for n in args.bar_sizes:
        for seed in range(args.repeats):
            gp = proposal("gp", n, seed)
            for model in args.bar_models:
                np_row = proposal(model, n, seed)
                row = {"n": n, "seed": seed, "model": model, "np": np_row, "gp": gp, "ratio": np_row["s"] / gp["s"]}
                print(json.dumps(row), flush=True)
                rows.append(row)
    opt_rows = []
    for n in args.optimize_sizes:
        for surrogate in ("tnpd", "cmanp"):
            row = {"n": n, "surrogate": surrogate, **optimize_proposals(surrogate, n, args.bar_proposals, 0),
                   "gradient": optimize_proposals(surrogate, n, args.bar_proposals, 0, gradient=True)}
            print(json.dumps(row), flush=True)
            opt_rows.append(row)
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    lines = ["## Issue 47's bar: one proposal, NPModel vs SingleTaskGP, and optimize's seconds per proposal", "",
             f"Command: `{COMMAND} --bar` (CPU: {machine_line(1)}; load average {' / '.join(load)} (1 / 5 / 15 min) "
             "at the end of the run). Every cell in one process, one torch thread; the GP and NP proposals of one "
             "seed back to back. Hartmann-6 on its unit cube, N uniform points (seeds 0.."
             f"{args.repeats - 1}). One proposal: NPModel: `NPModel.from_pretrained(checkpoint, X, Y, bounds=...)` + "
             "`LogExpectedImprovement` + `optimize_acqf(q=1, num_restarts=10, raw_samples=512)`; SingleTaskGP: "
             "`SingleTaskGP(X, Y, input_transform=Normalize(d=6), outcome_transform=Standardize(m=1))` + "
             "`fit_gpytorch_mll(ExactMarginalLogLikelihood(...))` + the same `optimize_acqf`. NP / GP: the ratio of "
             "the two proposals' seconds on the same data, median over seeds [min, max]; bar: issue 47. `-cs` rows: "
             "the same NPModel and LogEI maximised by npbandit's `CandidateSearch().maximise(acq, bounds, seed)` "
             "(2,560 acquisition values in 9 batched forward passes, no gradients; evaluations: those forward "
             "passes) instead of `optimize_acqf`: not the optimiser the bar names, shown beside it.", "",
             "| N | checkpoint | NP s/proposal | NP evaluations | GP s/proposal (fit) | GP evaluations | NP / GP "
             "| bar |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for n in args.bar_sizes:
        for model in args.bar_models:
            cells = [r for r in rows if r["n"] == n and r["model"] == model]
            ratios = sorted(r["ratio"] for r in cells)
            med = statistics.median
            bar_text = f"<= {BAR_RATIO[n]}x" if n in BAR_RATIO and not model.endswith("-cs") else "-"
            lines.append(f"| {n:,} | {model} | {med(r['np']['s'] for r in cells):.3f} "
                         f"| {med(r['np']['evals'] for r in cells):.0f} | {med(r['gp']['s'] for r in cells):.3f} "
                         f"({med(r['gp']['build_s'] for r in cells):.3f}) | {med(r['gp']['evals'] for r in cells):.0f} "
                         f"| {med(ratios):.3f}x [{ratios[0]:.3f}, {ratios[-1]:.3f}] "
                         f"| {bar_text} |")
    lines += ["", f"`npbandit.optimize(f, bounds, surrogate=..., budget={args.bar_proposals}, "
              "initial=<N evaluations>, n_init=2, db=None, progress=False)` on Hartmann-6 (every proposal the "
              "model's; defaults otherwise: trust region, one thread), seed 0: seconds between consecutive objective "
              "calls (each: the policy taking in the last value and proposing the next point); median of the "
              f"{args.bar_proposals - 1} after the first, the first (the model built on the N points as well) and "
              f"the largest. Bar: <= {BAR_OPTIMIZE_S} s per proposal at N <= 1,000. First with "
              "`acq_optimizer=CandidateSearch()`, then the same run with `GradientRestarts()` (`optimize_acqf`, 10 "
              "restarts, 512 raw samples) right after it, and the ratio of the medians; `default`: the one the "
              "surrogate runs without `acq_optimizer` (its card's recommendation).", "",
              "| N | surrogate | CandidateSearch s/proposal (median) | first | max | GradientRestarts s/proposal "
              "(median) | CandidateSearch / GradientRestarts | default |", "|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in opt_rows:
        default = default_optimizer(r["surrogate"])
        lines.append(f"| {r['n']:,} | {r['surrogate']} | {r['s']:.3f} | {r['first_s']:.3f} | {r['max_s']:.3f} "
                     f"| {r['gradient']['s']:.3f} | {r['s'] / r['gradient']['s']:.2f}x | {default} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("bo-bar", text, "bo_bar.json", COMMAND + " --bar", {"rows": rows, "optimize": opt_rows,
                                                                  "load": load}, threads=1)


def cell(runs: list[dict]) -> dict:
    """Median over iterations on different data; ``s_per_eval``: optimisation seconds per evaluation."""
    return {"s": statistics.median(r["s"] for r in runs), "s_min": min(r["s"] for r in runs),
            "s_max": max(r["s"] for r in runs), "update_s": statistics.median(r["update_s"] for r in runs),
            "evals": statistics.median(r["evals"] for r in runs),
            "s_per_eval": statistics.median((r["s"] - r["update_s"]) / r["evals"] for r in runs),
            "repeats": len(runs)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 1000, 2000, 10000, 100000])
    parser.add_argument("--bar", action="store_true", help="run issue 47's bar instead (see the module docstring)")
    parser.add_argument("--bar-sizes", type=int, nargs="+", default=[50, 1000])
    parser.add_argument("--bar-models", nargs="+", default=list(BAR_MODELS),
                        help="the bar's NP rows: checkpoints (names or card paths), '-cs' appended for CandidateSearch")
    parser.add_argument("--optimize-sizes", type=int, nargs="*", default=[10, 100, 1000])
    parser.add_argument("--bar-proposals", type=int, default=6)
    parser.add_argument("--gp-timeout", type=float, default=300.0)
    parser.add_argument("--repeats", type=int, default=3,
                        help="CMANP iterations per size, on data from seeds 0..repeats-1; the median is reported "
                             "(the GP: one iteration per size, seed 0)")
    parser.add_argument("--no-gp", action="store_true", help="CMANP rows only")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads for both methods (default: torch's choice); 1 when other jobs share "
                             "the machine, since oversubscribed threads slow both sides unevenly")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.one:
        print(json.dumps(iteration(args.one[0], int(args.one[1]))))
        return
    if args.bar:
        if args.bar_proposals < 2:
            parser.error("--bar-proposals must be at least 2")
        bar(args)
        return
    iteration("cmanp", 20)  # untimed warm-up: the first call pays for imports and lazy initialisation
    rows = []
    gp_gave_up = args.no_gp
    for n in args.sizes:
        cmanp = cell([iteration("cmanp", n, seed) for seed in range(args.repeats)])
        row = {"n": n, "cmanp_s": cmanp["s"], "cmanp": cmanp, "gp_s": None, "gp": None}
        if not gp_gave_up:
            try:
                threads = [] if args.threads is None else ["--threads", str(args.threads)]
                out = subprocess.run([sys.executable, __file__, "--one", "gp", str(n), *threads], capture_output=True,
                                     text=True, timeout=args.gp_timeout, check=True)
                row["gp"] = json.loads(out.stdout.strip().splitlines()[-1])
                row["gp_s"] = row["gp"]["s"]
            except subprocess.TimeoutExpired:
                gp_gave_up = True
        print(json.dumps(row))
        rows.append(row)
    if rows:
        first, last = rows[0], rows[-1]
        print(f"CMANP s/iter N={last['n']:,} / N={first['n']:,}: {last['cmanp_s'] / first['cmanp_s']:.2f}x; "
              f"s/evaluation: {last['cmanp']['s_per_eval'] / first['cmanp']['s_per_eval']:.2f}x")
    if not args.no_write:
        fig, (ax,) = new_figure(1, width=5.0, height=3.8)
        ax.plot([r["n"] for r in rows], [r["cmanp_s"] for r in rows], "o-", label="CMANP (NPModel, cmanp-bo)")
        gp = [r for r in rows if r["gp_s"] is not None]
        ax.plot([r["n"] for r in gp], [r["gp_s"] for r in gp], "s-", label="SingleTaskGP (refit)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("observations N")
        ax.set_ylabel("seconds per BO iteration")
        ax.set_title("Hartmann-6, LogEI")
        ax.legend(fontsize=8)
        save_figure(fig, "bo_scaling")
    command = COMMAND + ("" if args.threads is None else f" --threads {args.threads}")
    lines = ["## BO iteration time vs N (CMANP vs SingleTaskGP)", "",
             f"Command: `{command}` (CPU: {machine_line()}). Hartmann-6, one iteration = add one observation "
             "(CMANP: `condition_on_observations` and the streamed model's noise estimate; GP: refit with "
             "`fit_gpytorch_mll`) + LogEI `optimize_acqf` (10 restarts, 512 raw samples). CMANP: median of "
             f"{args.repeats} iterations on different data (range in brackets); the optimiser's number of "
             "acquisition evaluations varies several-fold between data sets at the same N, so the model's own "
             "cost is the update and the seconds per evaluation. GP: one iteration per cell, stopped after "
             f"{args.gp_timeout:.0f} s; from there on the GP column says `stopped`. Last column: the GP times "
             "quoted in protocols.md §4 (another 2-core CPU machine, BoTorch 0.18). ",
             "", "| N | CMANP (s/iter) | CMANP update (ms) | evaluations | CMANP ms/eval | SingleTaskGP (s/iter) "
             "| GP / CMANP | GP, protocols.md (s/iter) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        c = r["cmanp"]
        gp = ("not run" if args.no_gp else "stopped") if r["gp_s"] is None else f"{r['gp_s']:.2f}"
        ratio = "-" if r["gp_s"] is None else f"{r['gp_s'] / r['cmanp_s']:.1f}x"
        lines.append(f"| {r['n']:,} | {c['s']:.2f} ({c['s_min']:.2f}-{c['s_max']:.2f}) | {1e3 * c['update_s']:.1f} "
                     f"| {c['evals']:.0f} | {1e3 * c['s_per_eval']:.1f} | {gp} | {ratio} "
                     f"| {PUBLISHED_GP.get(r['n'], '-')} |")
    lines += ["", "![Seconds per BO iteration vs N, log axes](figures/bo_scaling.png)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("bo-scaling", text, "bo_scaling.json", COMMAND, {"rows": rows}, pages=("benchmarks.md", "results.md"))


if __name__ == "__main__":
    main()
