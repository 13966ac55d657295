"""Does a ``*-bo`` surrogate follow its own observations? (what LogEI needs to exploit)

Held-out tasks of the ``bo`` prior with nearly noise-free observations (noise std 1e-3 of
the output scale), ``n`` observations each, seen through ``NPModel`` as a user gets it.
Per model, d and n (context-standardised units, mean over tasks):

- ``std@obs``: the posterior standard deviation (latent, ``NPModel``'s noise estimate held
  out) at the observed points themselves; an exact GP says about 0.001 there;
- ``std@new``: the same at 50 held-out points of the task;
- ``ratio``: ``std@obs / std@new``: how much an observation shrinks the model's spread
  where it was made (GP: about 0);
- ``err@obs``: ``|posterior mean - observation|`` at the observed points (GP: about 0.001).

A model whose ``ratio`` is near 1 looks as uncertain next to its data as far from it, so
expected improvement cannot tell the incumbent's neighbourhood from the rest of the box.

    python experiments/benchmarks/bo_interpolation.py                                   # shipped *-bo
    python experiments/benchmarks/bo_interpolation.py --models cmanp-bo training_runs/cmanp128-bo-long --no-write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bo_yardstick import load_model  # noqa: E402
from common import distinct_labels, machine_line, publish  # noqa: E402

from npbandit.priors import BOPrior  # noqa: E402
from npbandit.training.evaluation import EVAL_SEED  # noqa: E402

COMMAND = "python experiments/benchmarks/bo_interpolation.py"
NOISE_STD = 1e-3


def tasks(d: int, n: int, n_tasks: int):
    """The held-out batch of one cell: ``n_tasks`` nearly noise-free tasks with ``n`` observations."""
    prior = BOPrior(dims=(d,), noise_std_range=(NOISE_STD, NOISE_STD), min_context=n, max_context=n)
    return prior.batch(n_tasks, EVAL_SEED, d * 1000 + n)


def measure(surrogate, d: int, n: int, n_tasks: int) -> dict[str, float]:
    """The four numbers of the module docstring for one model, d and n."""
    from npbandit.models import NPModel

    batch = tasks(d, n, n_tasks)
    rows = {"std@obs": [], "std@new": [], "err@obs": []}
    for k in range(n_tasks):
        xc, yc, xt = batch.xc[k, :, :d].double(), batch.yc[k].double(), batch.xt[k, :, :d].double()
        model = NPModel(surrogate, xc, yc)
        scale = float(yc.std())  # NPModel's standardisation, so every number is in its units
        with torch.no_grad():
            at_obs, at_new = model.posterior(xc), model.posterior(xt)
        rows["std@obs"].append(float(at_obs.variance.sqrt().mean()) / scale)
        rows["std@new"].append(float(at_new.variance.sqrt().mean()) / scale)
        rows["err@obs"].append(float((at_obs.mean - yc).abs().mean()) / scale)
    out = {key: sum(v) / len(v) for key, v in rows.items()}
    out["ratio"] = out["std@obs"] / out["std@new"]
    return out


def exact_gp_spread(d: int, n: int, n_tasks: int) -> float:
    """The exact GP's latent posterior std at the held-out points of :func:`measure`'s tasks
    (the prior's ``yt_var`` less the noise), in the same units."""
    batch = tasks(d, n, n_tasks)
    per_task = []
    for k in range(n_tasks):
        noise_var = (NOISE_STD / float(batch.info["context_std"][k])) ** 2
        latent = (batch.yt_var[k].double() - noise_var).clamp_min(0).sqrt()
        per_task.append(float(latent.mean()) / float(batch.yc[k].double().std()))
    return sum(per_task) / len(per_task)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["cmanp-bo", "tnpd-bo", "retreever-bo", "te-pt-tnp-bo"],
                        help="shipped names, card paths or training run directories")
    parser.add_argument("--dims", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--n", type=int, nargs="+", default=[10, 30, 100], help="observations per task")
    parser.add_argument("--tasks", type=int, default=16, help="tasks per (d, n)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    results: dict[str, dict[str, dict[str, float]]] = {}
    models = {spec: load_model(spec) for spec in args.models}
    labels = distinct_labels({spec: m.card.get("name", spec) for spec, m in models.items()})
    for spec, model in models.items():
        name = labels[spec]
        results[name] = {f"d={d}, n={n}": measure(model, d, n, args.tasks) for d in args.dims for n in args.n}
        print(name, {k: round(v["ratio"], 2) for k, v in results[name].items()}, flush=True)
    cells = [f"d={d}, n={n}" for d in args.dims for n in args.n]
    lines = [f"Nearly noise-free tasks of the `bo` prior (noise std {NOISE_STD:g}), {args.tasks} per cell, through "
             f"`NPModel` (latent posterior, its noise estimate held out), context-standardised units. `{COMMAND}`; "
             f"{machine_line(args.threads)}. Each cell: std at the observed points / std at 50 held-out points "
             "(their ratio), then |mean - observation| at the observed points. An exact GP: about 0.001 / "
             "(its held-out spread) (ratio about 0), 0.001.", "",
             "| model | " + " | ".join(cells) + " |", "|---|" + "---:|" * len(cells)]
    gp = {cell: exact_gp_spread(d, n, args.tasks) for cell, (d, n) in zip(cells, [(d, n) for d in args.dims
                                                                                  for n in args.n])}
    lines.append("| exact GP (knows the kernel) | " + " | ".join(f"about 0.001 / {gp[cell]:.3f}, about 0.001"
                                                              for cell in cells) + " |")
    for name, per_cell in results.items():
        lines.append(f"| {name} | " + " | ".join(
            f"{c['std@obs']:.3f} / {c['std@new']:.3f} ({c['ratio']:.2f}), {c['err@obs']:.3f}"
            for c in (per_cell[cell] for cell in cells)) + " |")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        publish("bo-interpolation", text, "bo_interpolation.json", COMMAND,
                {"noise_std": NOISE_STD, "tasks": args.tasks, "results": results, "exact_gp_std_new": gp},
                threads=args.threads)


if __name__ == "__main__":
    main()
