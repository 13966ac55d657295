"""Where one BO proposal's time goes: network, autograd, optimiser, acquisition, Python.

One proposal = one LogEI maximisation (10 restarts, 512 raw samples: ``BOPolicy``'s
defaults) on a model that holds N observations of a smooth test function on the unit
cube, on one torch thread (``npbandit.threads.torch_threads(1)``), through two routes:

* ``act``: ``BOPolicy(d, model, trust_region=False, n_init=2).act`` after N observations
  (trust region off, so the model sees all N points; n_init 2, so every act is a model
  proposal; the model is built by an untimed first ``act``, then one ``act`` is timed and
  one more is profiled);
* ``botorch``: ``NPModel.from_pretrained`` + ``LogExpectedImprovement`` + BoTorch's
  ``optimize_acqf`` (untimed warm-up, one timed call, one profiled call).

The profiled call runs under cProfile. Each function's own time (``tottime``) goes to a
category by the file it lives in; the time of a C function (a torch op, a tensor method)
goes to the category of the Python function that called it. Categories: network
(``npbandit.surrogates``, ``torch.nn`` layers and ``torch.nn.functional``), autograd
backward (the C engine's ``run_backward``, all of the backward pass), optimiser
(``scipy``, ``botorch.optim``, ``botorch.generation``), acquisition and posterior
(``npbandit.models``, ``botorch.acquisition``, ``botorch.posteriors``, ``botorch.sampling``,
``gpytorch``), transforms (``npbandit.transforms``, ``botorch.models.transforms``) and
the rest (``nn.Module.__call__``, ``torch._tensor``, ``botorch.utils``, the proposal step,
numpy, the interpreter). cProfile adds a fixed cost per Python call, so it inflates the
Python-heavy categories: the shares are of the profiled time, the seconds of the
unprofiled call. Acquisition evaluations are counted with a global module forward
pre-hook (every call of a BoTorch ``AcquisitionFunction``).

``--before ROWS.json`` adds the ms/eval of an earlier run (``--rows-json`` writes a run's
rows; run the script with another tree on ``PYTHONPATH`` to measure that tree) and the ratio.

``--acq-optimizer candidate-search`` maximises LogEI with npbandit's ``CandidateSearch``
instead (route ``act``: ``BOPolicy(..., acq_optimizer=CandidateSearch())``; route
``botorch``: ``CandidateSearch().maximise(acq, bounds, seed)``: 2,560 values in 9 batched
forward passes, no gradient); ``gradient-restarts`` names ``optimize_acqf`` for both routes
(without the option, route ``act`` runs the policy's default for the checkpoint).
``--section`` writes another section of the log than the default one.

    python experiments/benchmarks/proposal_profile.py
    python experiments/benchmarks/proposal_profile.py --sizes 10 100 --models cmanp-bo --dims 2 --no-write
    PYTHONPATH=<old tree> python experiments/benchmarks/proposal_profile.py --no-write --rows-json before.json
    python experiments/benchmarks/proposal_profile.py --before before.json
    python experiments/benchmarks/proposal_profile.py --dims 6 --acq-optimizer candidate-search --no-write
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine_line, publish  # noqa: E402

COMMAND = "python experiments/benchmarks/proposal_profile.py"
ROUTES = ("act", "botorch")
CATEGORIES = ("network", "backward", "optimiser", "acquisition", "transforms", "rest")
LABELS = {"network": "network", "backward": "autograd backward", "optimiser": "optimiser (scipy, botorch.optim)",
          "acquisition": "acquisition + posterior", "transforms": "transforms", "rest": "rest (Python)"}
# (path fragment, category), first match wins; paths normalised to "/"
_FILE_RULES = (
    ("npbandit/surrogates/", "network"),
    ("torch/nn/modules/module.py", "rest"),
    ("torch/nn/", "network"),
    ("npbandit/transforms/", "transforms"),
    ("botorch/models/transforms/", "transforms"),
    ("npbandit/models/", "acquisition"),
    ("botorch/acquisition/", "acquisition"),
    ("botorch/posteriors/", "acquisition"),
    ("botorch/sampling/", "acquisition"),
    ("gpytorch/", "acquisition"),
    ("scipy/", "optimiser"),
    ("botorch/optim/", "optimiser"),
    ("botorch/generation/", "optimiser"),
)


def objective(X):
    """A smooth test function on ``[0, 1]^d`` (maximised): ``X [n, d] -> [n]``."""
    import torch

    return -(X - 0.35).pow(2).sum(-1) + 0.2 * torch.sin(4.0 * X).mean(-1)


def data(n: int, d: int, seed: int = 0):
    import torch

    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    return X, objective(X).unsqueeze(-1)


def _file_category(filename: str) -> str:
    path = filename.replace("\\", "/")
    for fragment, category in _FILE_RULES:
        if fragment in path:
            return category
    return "rest"


def categorise(stats: pstats.Stats) -> tuple[dict[str, float], float, float, dict[str, float]]:
    """Seconds per category, the total, the network's inclusive time (every call from
    ``npbandit.models`` into ``npbandit.surrogates``, C calls and ``torch.nn`` included) and
    the ten files whose functions (with the C calls they make) take most of "rest"."""
    out = dict.fromkeys(CATEGORIES, 0.0)
    rest: dict[str, float] = {}
    network_inclusive = 0.0
    total = 0.0
    for (filename, _line, name), (_cc, _nc, tt, _ct, callers) in stats.stats.items():
        total += tt
        if filename == "~":  # a C function: to its caller's category (the backward engine: its own)
            if "run_backward" in name:
                out["backward"] += tt
                continue
            for (caller_file, _l, _n), edge in callers.items():
                category = "rest" if caller_file == "~" else _file_category(caller_file)
                out[category] += edge[2]
                if category == "rest":
                    rest[caller_file] = rest.get(caller_file, 0.0) + edge[2]
            continue
        out[_file_category(filename)] += tt
        if _file_category(filename) == "rest":
            rest[filename] = rest.get(filename, 0.0) + tt
        if "npbandit/surrogates/" in filename.replace("\\", "/"):
            network_inclusive += sum(edge[3] for (caller_file, _l, _n), edge in callers.items()
                                     if "npbandit/models/" in caller_file.replace("\\", "/"))
    top = dict(sorted(rest.items(), key=lambda kv: -kv[1])[:10])
    return out, total, network_inclusive, {_short(k): v / total for k, v in top.items()}


def _short(filename: str) -> str:
    path = filename.replace("\\", "/")
    return path.split("site-packages/")[-1] if "site-packages/" in path else path.removeprefix(str(ROOT) + "/")


class EvaluationCounter:
    """Counts calls of BoTorch acquisition functions (any ``AcquisitionFunction`` module)
    while it is entered, and the points they evaluated."""

    def __enter__(self):
        from botorch.acquisition import AcquisitionFunction
        from torch.nn.modules.module import register_module_forward_pre_hook

        self.calls, self.points = 0, 0

        def hook(module, args):
            if isinstance(module, AcquisitionFunction):
                self.calls += 1
                if args and hasattr(args[0], "shape"):
                    self.points += int(args[0].shape[:-2].numel()) if args[0].ndim > 2 else 1

        self.handle = register_module_forward_pre_hook(hook)
        return self

    def __exit__(self, *exc):
        self.handle.remove()


def _measure(propose) -> dict:
    """One unprofiled and one profiled call of ``propose()``."""
    with EvaluationCounter() as counter:
        t0 = time.perf_counter()
        propose()
        seconds = time.perf_counter() - t0
    timed_evals = counter.calls
    profiler = cProfile.Profile()
    with EvaluationCounter() as counter:
        t0 = time.perf_counter()
        profiler.enable()
        propose()
        profiler.disable()
        profiled_s = time.perf_counter() - t0
    parts, total, network_inclusive, rest_files = categorise(pstats.Stats(profiler))
    return {"s": seconds, "evals": timed_evals, "s_per_eval": seconds / max(timed_evals, 1),
            "profiled_s": profiled_s, "profiled_evals": counter.calls, "profiled_points": counter.points,
            "share": {k: v / total for k, v in parts.items()}, "seconds": parts,
            "network_inclusive_share": network_inclusive / total, "rest_files_share": rest_files}


def cell(route: str, model: str, n: int, d: int, seed: int = 0, acq_optimizer: str | None = None) -> dict:
    import numpy as np
    import torch

    from npbandit.acquisition.optimizers import OPTIMIZERS
    from npbandit.threads import torch_threads

    X, Y = data(n, d, seed)
    with warnings.catch_warnings(), torch_threads(1):
        warnings.simplefilter("ignore")
        if route == "act":
            from npbandit.policies.bo import BOPolicy

            optimizer = None if acq_optimizer is None else OPTIMIZERS[acq_optimizer]()
            # N >= 2: a model proposal
            policy = BOPolicy(d, model=model, trust_region=False, n_init=2, threads=1, acq_optimizer=optimizer)
            policy.reset(seed=seed)
            for x, y in zip(X.numpy(), Y.squeeze(-1).tolist()):
                policy.observe(None, x, y, {})
            obs = np.zeros(d)
            t0 = time.perf_counter()
            policy.act(obs)  # builds the model on the N points (NP: once; later ones are streamed)
            first_s = time.perf_counter() - t0

            def propose():
                return policy.act(obs)
        else:
            from botorch.acquisition import LogExpectedImprovement
            from botorch.optim import optimize_acqf

            from npbandit.models import NPModel

            t0 = time.perf_counter()
            npmodel = NPModel.from_pretrained(model, X, Y)
            bounds = torch.stack([torch.zeros(d), torch.ones(d)]).to(torch.float64)
            calls = iter(range(seed, seed + 100))

            def propose():
                call_seed = next(calls)
                # the seed option covers the raw samples, not the choice among them (torch.multinomial
                # on the global generator): seeded too, so each call is reproducible (as propose does)
                torch.manual_seed(call_seed)
                acq = LogExpectedImprovement(npmodel, best_f=Y.max())
                if acq_optimizer == "candidate-search":
                    return OPTIMIZERS[acq_optimizer]().maximise(acq, bounds, call_seed)
                return optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512,
                                     options={"seed": call_seed})

            propose()  # warm-up: lazy state of the model, first-call costs
            first_s = time.perf_counter() - t0
        result = _measure(propose)
    return {"route": route, "model": model, "n": n, "d": d, "acq_optimizer": acq_optimizer, "first_s": first_s,
            **result}


def _key(row: dict) -> tuple:
    return row["route"], row["model"], row["d"], row["n"]


def table(rows: list[dict], before: list[dict] | None = None) -> list[str]:
    """The table; with ``before`` (an earlier run's rows), its evaluations and ms/eval per cell and
    the ratio of the two ms/eval."""
    old = {_key(r): r for r in before or []}
    extra = " evaluations before | ms/eval before | ms/eval / before |" if before is not None else ""
    lines = ["| route | model | d | N | s/proposal | evaluations | ms/eval |" + extra + " "
             + " | ".join(LABELS[c] for c in CATEGORIES) + " | network incl. |",
             "|---|---|---:|---:|---:|---:|---:|" + ("---:|" * 3 if before is not None else "")
             + "---:|" * (len(CATEGORIES) + 1)]
    for r in rows:
        shares = " | ".join(f"{100 * r['share'][c]:.0f}%" for c in CATEGORIES)
        cells = ""
        if before is not None:
            b = old.get(_key(r))
            cells = (" - | - | - |" if b is None else f" {b['evals']} | {1e3 * b['s_per_eval']:.2f} "
                     f"| {r['s_per_eval'] / b['s_per_eval']:.2f} |")
        lines.append(f"| {r['route']} | {r['model']} | {r['d']} | {r['n']:,} | {r['s']:.2f} | {r['evals']} "
                     f"| {1e3 * r['s_per_eval']:.2f} |{cells} {shares} | {100 * r['network_inclusive_share']:.0f}% |")
    return lines


def summary(rows: list[dict]) -> list[str]:
    """What the table's "rest" holds and what profiling costs, over all rows."""
    if not rows:
        return []
    dispatch = [r["rest_files_share"].get("torch/nn/modules/module.py", 0.0) for r in rows]
    slowdown = sorted((r["profiled_s"] / max(r["profiled_evals"], 1)) / r["s_per_eval"] for r in rows)
    return [f"Of the rest, `nn.Module.__call__` (`torch/nn/modules/module.py`: module dispatch, mostly the "
            f"surrogate's layers) takes {100 * min(dispatch):.0f}-{100 * max(dispatch):.0f}% of the profiled "
            "time; the JSON's `rest_files_share` lists the ten largest files of the rest per row. Profiled "
            f"seconds per evaluation / unprofiled: median {slowdown[len(slowdown) // 2]:.2f}x (range "
            f"{slowdown[0]:.2f}-{slowdown[-1]:.2f}x)."]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--models", nargs="+", default=["tnpd-bo", "cmanp-bo"])
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 6])
    parser.add_argument("--routes", nargs="+", choices=ROUTES, default=list(ROUTES))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--rows-json", type=Path, help="also write this run's rows to this JSON file")
    parser.add_argument("--before", type=Path, help="rows of an earlier run (--rows-json) to compare ms/eval with")
    parser.add_argument("--acq-optimizer", choices=("gradient-restarts", "candidate-search"),
                        help="how LogEI is maximised (default: optimize_acqf; route act: the policy's default)")
    parser.add_argument("--section", default="proposal-profile", help="the section of the log to write")
    args = parser.parse_args(argv)
    if any(n < 2 for n in args.sizes):
        parser.error("--sizes must be at least 2 (BOPolicy(n_init=2) proposes from two observations on)")
    if any(d < 1 for d in args.dims):
        parser.error("--dims must be positive")
    import torch

    torch.set_num_threads(1)
    rows = []
    start = time.perf_counter()
    for model in args.models:
        for d in args.dims:
            for n in args.sizes:
                for route in args.routes:
                    row = cell(route, model, n, d, acq_optimizer=args.acq_optimizer)
                    print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()
                           if k not in ("share", "seconds", "rest_files_share")},
                          {k: round(v, 3) for k, v in row["share"].items()}, flush=True)
                    rows.append(row)
    wall = time.perf_counter() - start
    if args.rows_json is not None:
        args.rows_json.write_text(json.dumps({"rows": rows, "wall_s": wall}) + "\n")
    before = None if args.before is None else json.loads(args.before.read_text())["rows"]
    argv = sys.argv[1:] if argv is None else argv
    command = " ".join([COMMAND, *argv])
    if args.acq_optimizer == "candidate-search":
        how = ("by `CandidateSearch` (512 raw samples, then 8 rounds of 8 walkers x 32 samples: 2,560 values "
               "in 9 batched forward passes, no gradient)")
        routes = ("Route `act`: `BOPolicy(d, model, trust_region=False, n_init=2, "
                  "acq_optimizer=CandidateSearch()).act` (the model already built by an earlier `act`); route "
                  "`botorch`: `NPModel.from_pretrained` + `LogExpectedImprovement` + "
                  "`CandidateSearch().maximise` (after a warm-up call).")
    else:
        how = "(10 restarts, 512 raw samples)"
        optimizer = "" if args.acq_optimizer is None else ", acq_optimizer=GradientRestarts()"
        routes = (f"Route `act`: `BOPolicy(d, model, trust_region=False, n_init=2{optimizer}).act` (the model "
                  "already built by an earlier `act`); route `botorch`: `NPModel.from_pretrained` + "
                  "`LogExpectedImprovement` + `optimize_acqf` (after a warm-up call).")
    lines = ["## Where one BO proposal's time goes", "",
             f"Command: `{command}` (CPU: {machine_line(1)}; whole run {wall / 60:.1f} min). One LogEI proposal "
             f"{how} on a model holding N observations of a smooth function on "
             f"[0, 1]^d, one torch thread. {routes} s/proposal and evaluations: one "
             "unprofiled call (evaluations: calls of the acquisition function, the raw-sample screen included); "
             "ms/eval = s/proposal / evaluations. The shares are of a second, cProfile-profiled call: each "
             "function's own time by the file it lives in, a C function's (torch op's) time to its caller's "
             "category. network: `npbandit.surrogates` and `torch.nn` layers; autograd backward: torch's "
             "backward engine (all of the backward pass); optimiser: scipy, `botorch.optim` / "
             "`botorch.generation`; acquisition + posterior: `npbandit.models`, `botorch.acquisition` / "
             "`posteriors` / `sampling`, gpytorch; transforms: `npbandit.transforms`, "
             "`botorch.models.transforms`; rest: `nn.Module.__call__`, `torch._tensor`, `botorch.utils`, "
             "the proposal step, numpy, the interpreter, the evaluation-counting hook. cProfile's cost per "
             "Python call inflates the Python-heavy categories. Last column: the network's inclusive share "
             "(every call from `npbandit.models` into the surrogate). One repetition per cell: the number of "
             "evaluations L-BFGS-B makes varies from one proposal to the next, so compare ms/eval and the shares.", "",
             *([] if before is None else [
                 "", "Before / after: `ms/eval before` is the same cell measured with an earlier tree (`--before`, "
                 "a run of this script with `--rows-json` and that tree on `PYTHONPATH`); the changes it compares "
                 "are named below the table. Where the evaluations agree the two runs optimised alike, and "
                 "`ms/eval / before` is the cost per evaluation after / before."]),
             "", *table(rows, before), "", *summary(rows)]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish(args.section, text, args.section.replace("-", "_") + ".json", command,
                {"rows": rows, "wall_s": wall, "before": before}, threads=1)


if __name__ == "__main__":
    main()
