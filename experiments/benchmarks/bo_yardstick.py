"""The per-dimension yardstick for ``*-bo`` surrogates, measured as a user gets it.

Held-out tasks of the default ``bo`` prior (fixed seed, disjoint from training),
d = 1..6 by default (any d with --dims), 3-100 observations (--max-context) and 50
held-out points each (--near-context-frac of them near an observation). Every method
sees the observations in *user units* (the prior's draw times 3 plus 10) and is scored by the
log-likelihood of the held-out noisy observations, reported in the units of the
context's standardisation (the same offset for every method, so differences and
fractions do not depend on it):

- ``baseline``: N(mean, std of the observations) -- knowing nothing;
- ``exact_gp``: the GP that knows the task's kernel, lengthscales and noise (upper reference);
- ``bayes_gp``: what a predictor can reach from what ``NPModel`` is given -- the prior's own
  Bayes predictive, the hyperparameters (and the outputs' unknown offset and scale)
  integrated out by importance sampling over ``--bayes-samples`` draws from the prior
  (``BOPrior.bayes_posterior``); with few effective samples it falls short of the Bayes
  optimum, so the room it shows between a model and the exact GP is attainable;
- ``singletaskgp``: BoTorch ``SingleTaskGP`` with its default priors and outcome
  standardisation, fitted by marginal likelihood (``fit_gpytorch_mll``), predicting
  with ``observation_noise=True`` -- what a GP user gets;
- each NP through ``NPModel`` (its own context-only standardisation, zero padding),
  ``posterior(X, observation_noise=True)``, once per ``--views`` value: with 1 the
  network as it is; with ``K`` the mixture over ``K`` symmetric views of the box
  (``n_views``; ``from_pretrained`` uses what the card recommends: 4 for cmanp-bo).

Per method and d: mean log-likelihood over tasks and the fraction of the gap it closes,
(method - baseline) / (exact_gp - baseline).

    python experiments/benchmarks/bo_yardstick.py  # the shipped *-bo, 64 tasks per d
    python experiments/benchmarks/bo_yardstick.py --models tnpd training_runs/cmanp-bo-long --no-gp --no-write
    python experiments/benchmarks/bo_yardstick.py --dims 8 12 16 --max-context 300 --near-context-frac 0.5 \\
        --bayes-samples 0 --models <a checkpoint trained on d = 8..16>

A model is scored only at the d its card's prior trained it on (``checkpoint_use(card)["x_dims"]``,
what ``NPModel`` checks a checkpoint's width against); elsewhere its cells say n/a.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import warnings
from pathlib import Path

import torch
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import distinct_labels, machine_line, publish  # noqa: E402

from npbandit.priors import BOPrior  # noqa: E402
from npbandit.training.evaluation import EVAL_SEED  # noqa: E402

COMMAND = "python experiments/benchmarks/bo_yardstick.py"
SCALE, SHIFT = 3.0, 10.0  # user units: what NPModel / SingleTaskGP are given


def load_model(spec: str):
    """A shipped name, a short name of ``optimize``'s (``npbandit.api.SURROGATES``: ``tnpd``
    for ``tnpd-bo``) or a card path (``load_surrogate``), or a training run directory (its
    latest resumable state, with a card naming its prior's spec)."""
    from npbandit import load_surrogate
    from npbandit.api import SURROGATES

    path = Path(spec)
    if (path / "train_state.json").exists():
        from safetensors.torch import load_file

        from npbandit.surrogates import build

        meta = json.loads((path / "train_state.json").read_text())
        config = meta["config"]
        x_dim = config.get("prior_params", {}).get("x_dim", 6)
        model = build(config["model"], x_dim, 1, size=config["size"], **config["model_config"])
        tensors = load_file(str(path / "train_state.safetensors"))
        model.load_state_dict({k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")})
        model.eval()
        prior = BOPrior(**config.get("prior_params", {})).spec()  # the dims it trains on, as a card records them
        model.card = {"name": f"{path.name}@{meta['step']}", "x_dim": x_dim, "y_dim": 1, "prior": prior}
        return model
    checkpoint = SURROGATES.get(spec, spec)
    if checkpoint in ("gp", "random"):
        raise SystemExit(f"--models {spec!r}: not a network; the GP rows are the yardstick's own (--no-gp drops them)")
    return load_surrogate(checkpoint)


def trained_dims(model) -> list[int]:
    """The input dimensions ``model``'s card says its prior trained it on (``checkpoint_use``)."""
    from npbandit.surrogates.pretrained import checkpoint_use

    return checkpoint_use(model.card)["x_dims"]


def held_out_prior(d: int, max_context: int = 100, near_context_frac: float = 0.0) -> BOPrior:
    """The default ``bo`` prior at input dimension ``d`` alone (padded to at least the
    shipped width 6, which changes no draw) with contexts of 3..``max_context`` points and
    a share ``near_context_frac`` of the targets near the context (``BOPrior``'s)."""
    return BOPrior(dims=(d,), x_dim=max(6, d), max_context=max_context, near_context_frac=near_context_frac)


def tasks(d: int, n_tasks: int, batch_size: int = 16, max_context: int = 100, near_context_frac: float = 0.0):
    """``(xc [Nc, d], yc_user [Nc, 1], xt, yt_user, exact-GP log-likelihood [Nt], context std)`` per task."""
    prior = held_out_prior(d, max_context, near_context_frac)
    for i in range(math.ceil(n_tasks / batch_size)):
        b = prior.batch(batch_size, EVAL_SEED, i)
        exact = torch.distributions.Normal(b.yt_mean, b.yt_var.sqrt()).log_prob(b.yt)[..., 0]
        for k in range(min(batch_size, n_tasks - i * batch_size)):
            yield (b.xc[k, :, :d].double(), SCALE * b.yc[k].double() + SHIFT, b.xt[k, :, :d].double(),
                   SCALE * b.yt[k].double() + SHIFT, exact[k].double())


def gaussian_ll(mean: torch.Tensor, var: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-point log N(y; mean, var) in the context-standardised units (user-unit density + log SCALE)."""
    return torch.distributions.Normal(mean, var.sqrt()).log_prob(y).reshape(-1) + math.log(SCALE)


def misfit(model, xc, yc) -> float:
    """Median |posterior mean - observation| at the observed points, context-standardised
    units: how closely a model follows the data it was given (a GP on a nearly noise-free
    task interpolates; a model that cannot re-proposes points it has already seen)."""
    with torch.no_grad():
        return float(((model.posterior(xc).mean - yc).abs() / SCALE).median())


def singletaskgp_ll(xc, yc, xt, yt) -> tuple[torch.Tensor, float]:
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    gp = SingleTaskGP(xc, yc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        except Exception:  # noqa: BLE001 - a failed fit leaves the prior's hyperparameters, as a user would get
            pass
    with torch.no_grad():
        post = gp.posterior(xt, observation_noise=True)
    return gaussian_ll(post.mean, post.variance, yt), misfit(gp, xc, yc)


def bayes_ll(prior, xc, yc, xt, yt, num_samples: int, seed: int) -> tuple[torch.Tensor, float]:
    """The prior's Bayes predictive (``BOPrior.bayes_posterior``) given the task in user units
    (it is affine invariant), scored in the context-standardised units of :func:`gaussian_ll`;
    and the effective sample size of its importance weights."""
    posterior = prior.bayes_posterior(xc, yc, num_samples=num_samples, generator=torch.Generator().manual_seed(seed))
    return posterior.log_prob(xt, yt) + math.log(SCALE), posterior.ess


def np_ll(surrogate, xc, yc, xt, yt, views: int = 1) -> tuple[torch.Tensor, float]:
    """An NP through ``NPModel`` with ``views`` symmetric views (at most the box's
    symmetries: 2 at d = 1), as ``from_pretrained`` builds it."""
    from npbandit.models import NPModel
    from npbandit.surrogates.views import symmetry_count

    model = NPModel(surrogate, xc, yc, n_views=min(views, symmetry_count(xc.shape[-1])))
    with torch.no_grad():
        post = model.posterior(xt, observation_noise=True)
    return gaussian_ll(post.mean, post.variance, yt), misfit(model, xc, yc)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*", default=["cmanp-bo", "tnpd-bo", "retreever-bo", "te-pt-tnp-bo"],
                        help="shipped names, optimize's short names (tnpd, cmanp), card paths or training run "
                             "directories")
    parser.add_argument("--tasks", type=int, default=64, help="tasks per d")
    parser.add_argument("--dims", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6],
                        help="input dimensions; a model not trained at d (its card's prior dims) is shown as n/a")
    parser.add_argument("--max-context", type=int, default=100,
                        help="held-out tasks have 3..this many observations (the shipped checkpoints trained to 100)")
    parser.add_argument("--near-context-frac", type=float, default=0.0,
                        help="share of the held-out points placed near an observation (BOPrior's near_context_frac): "
                             "at d >= 8 uniform held-out points are mostly far from every observation, where every "
                             "model predicts the prior and the gap to the exact GP is small")
    parser.add_argument("--no-gp", action="store_true", help="skip the SingleTaskGP row (the slow part)")
    parser.add_argument("--bayes-samples", type=int, default=4096,
                        help="hyperparameter draws of the bayes_gp row (0: skip the row)")
    parser.add_argument("--views", type=int, nargs="+", default=[1, 4],
                        help="score every model with each of these numbers of symmetric views (NPModel's n_views; "
                             "from_pretrained uses the number the card recommends: 4 for cmanp-bo, 1 for the "
                             "other shipped checkpoints)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    models = {spec: load_model(spec) for spec in args.models}
    dims_of = {spec: trained_dims(model) for spec, model in models.items()}
    names = distinct_labels({spec: m.card.get("name", spec) for spec, m in models.items()})
    labels = {(spec, k): names[spec] + ("" if k == 1 else f" ({k} views)") for spec in args.models for k in args.views
              if k == 1 or not models[spec].joint_predictive}  # a joint model takes no views (NPModel refuses)
    bayes = ["bayes_gp"] if args.bayes_samples > 0 else []
    rows = ["baseline", "exact_gp"] + bayes + ([] if args.no_gp else ["singletaskgp"]) + list(labels.values())
    fitted = [r for r in rows if r not in ("baseline", "exact_gp", "bayes_gp")]  # rows with a posterior mean
    per_d: dict[str, dict[str, float]] = {}
    misfit_per_d: dict[str, dict[str, float]] = {}
    ess_per_d: dict[str, float] = {}
    for d in args.dims:
        sums = {r: [] for r in rows}
        misfits = {r: [] for r in fitted}
        ess = []
        fits = [(spec, k) for spec, k in labels if d in dims_of[spec]]
        for i, (xc, yc, xt, yt, exact) in enumerate(tqdm(list(tasks(d, args.tasks, max_context=args.max_context,
                                                                near_context_frac=args.near_context_frac)),
                                                          desc=f"d={d}", leave=False)):
            sums["baseline"].append(float(gaussian_ll(yc.mean().expand_as(yt), yc.var().expand_as(yt), yt).mean()))
            sums["exact_gp"].append(float(exact.mean()))
            if bayes:
                prior = held_out_prior(d, args.max_context, args.near_context_frac)
                ll, n_eff = bayes_ll(prior, xc, yc, xt, yt, args.bayes_samples, seed=i)
                sums["bayes_gp"].append(float(ll.mean()))
                ess.append(n_eff)
            scored = [] if args.no_gp else [("singletaskgp", singletaskgp_ll(xc, yc, xt, yt))]
            scored += [(labels[spec, k], np_ll(models[spec], xc, yc, xt, yt, k)) for spec, k in fits]
            for row, (ll, fit) in scored:
                sums[row].append(float(ll.detach().mean()))
                misfits[row].append(fit)
        per_d[f"d={d}"] = {r: sum(v) / len(v) if v else None for r, v in sums.items()}
        misfit_per_d[f"d={d}"] = {r: statistics.median(v) if v else None for r, v in misfits.items()}
        if ess:
            ess_per_d[f"d={d}"] = statistics.median(ess)
        print(f"d={d}: " + ", ".join(f"{r} {v:.3f}" for r, v in per_d[f"d={d}"].items() if v is not None), flush=True)
    dims = list(per_d)
    lines = ["Mean held-out log-likelihood per input dimension (fraction of the gap from the baseline to the exact "
             "GP closed in brackets), context-standardised units, "
             f"{args.tasks} tasks per d, 3..{args.max_context} observations each, {args.near_context_frac:g} of "
             "the held-out points near an observation. n/a: the checkpoint was not trained at d (its card's prior "
             "dims). "
             f"`{COMMAND}`; {machine_line(args.threads)}."]
    if bayes:
        lines += ["", f"bayes_gp: the prior's Bayes predictive from what NPModel is given (the context, outputs up to "
                      f"an affine map), hyperparameters integrated out over {args.bayes_samples} draws from the prior "
                      "(importance sampling; median effective sample size per d: "
                      + ", ".join(f"{v:.1f}" for v in ess_per_d.values()) + "). With few effective samples it "
                      "scores below the Bayes optimum, so what it reaches is attainable."]
    lines += ["",
             "| method | " + " | ".join(dims) + " |", "|---|" + "---:|" * len(dims)]
    for r in rows:
        cells = []
        for d in dims:
            v, base, top = per_d[d][r], per_d[d]["baseline"], per_d[d]["exact_gp"]
            if v is None:
                cells.append("n/a")
                continue
            cells.append(f"{v:.3f}" + ("" if r in ("baseline", "exact_gp") else f" ({(v - base) / (top - base):.2f})"))
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    lines += ["", "Median distance of the posterior mean from the observations at the observed points "
              "(context-standardised units; median over tasks of the per-task median): how closely each model "
              "follows the data it was given.", "",
              "| method | " + " | ".join(dims) + " |", "|---|" + "---:|" * len(dims)]
    lines += [f"| {r} | " + " | ".join("n/a" if misfit_per_d[d][r] is None else f"{misfit_per_d[d][r]:.3f}"
                                       for d in dims) + " |" for r in fitted]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        publish("bo-yardstick", text, "bo_yardstick.json", COMMAND,
                {"tasks_per_d": args.tasks, "max_context": args.max_context,
                 "near_context_frac": args.near_context_frac, "per_d": per_d, "misfit_per_d": misfit_per_d,
                 "bayes_samples": args.bayes_samples, "bayes_ess_per_d": ess_per_d},
                pages=("benchmarks.md", "results.md"), threads=args.threads)


if __name__ == "__main__":
    main()
