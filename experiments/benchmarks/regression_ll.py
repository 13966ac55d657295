"""Meta-regression log-likelihoods of the shipped checkpoints (docs/protocols.md §1).

- Every ``*-gp1d`` checkpoint on the 1-D GP evaluation sets (RBF and Matérn-5/2;
  3000 batches x 16 tasks each by default, the papers' size), next to the
  published numbers, with training steps and model size per row.
- Every ``*-wheel`` checkpoint's target log-likelihood.

The ``*-bo`` checkpoints are scored by ``experiments/benchmarks/bo_yardstick.py`` instead: through
``NPModel`` as a user gets them, per input dimension, against the exact GP, a fitted
``SingleTaskGP`` and the prior's Bayes predictive (experiments/log/results.md, "bo-yardstick").

Evaluation sets are fixed (seeded, disjoint from training) and cached on disk
(``$NPBANDIT_CACHE`` or ``~/.cache/npbandit``). The metric is the mean target
log-likelihood (per batch: mean over tasks and targets of the log density summed
over outputs; then mean over batches); ± is the standard error over batches.

    python experiments/benchmarks/regression_ll.py                    # full sets, writes experiments/log/benchmarks.md
    python experiments/benchmarks/regression_ll.py --gp1d-batches 100 --no-write   # quick look
    python experiments/benchmarks/regression_ll.py --no-run           # re-render the table from its JSON
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
from pathlib import Path

import torch
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, machine_line, publish  # noqa: E402

from npbandit import load_surrogate  # noqa: E402
from npbandit.priors.kernels import kernel_matrix  # noqa: E402
from npbandit.priors.wheel import RewardEncoding  # noqa: E402
from npbandit.surrogates.pretrained import available_checkpoints, read_card  # noqa: E402
from npbandit.surrogates.retreever import tree_shape  # noqa: E402
from npbandit.training.evaluation import eval_batches, evaluation_suite  # noqa: E402

COMMAND = "python experiments/benchmarks/regression_ll.py"

# docs/protocols.md §1: published mean target log-likelihoods (RBF, Matérn-5/2), 100k steps on a GPU.
PUBLISHED = [
    ("TNP-D", 1.39, 0.95), ("LBANP (L=8)", 1.20, 0.75), ("LBANP (L=128)", 1.27, 0.85),
    ("CMANP (L_I=L_B=128)", 1.24, 0.80), ("CMANP-AND (b_Q=5)", 1.48, 0.96), ("ReTreever (14.9% tokens)", 1.25, 0.81),
    ("ReTreever-Full (all leaves)", 1.33, float("nan")),
]


@torch.no_grad()
def score(model, prior, n_batches: int, batch_size: int, desc: str, joint: bool = False) -> tuple[float, float, float]:
    """``(mean, standard error, median)`` of the per-batch mean target log-likelihood;
    ``joint``: of the joint target log-density per target instead (a not-diagonal model's
    autoregressive blocks with the true values folded in, the ND papers' metric; for a
    diagonal model the two are equal)."""
    metric = model.joint_log_likelihood if joint else model.log_likelihood
    values = []
    for batch in tqdm(eval_batches(prior, n_batches, batch_size, cache=True), total=n_batches, desc=desc,
                      leave=False):
        values.append(float(metric(batch.xc, batch.yc, batch.xt, batch.yt)))
    mean = statistics.fmean(values)
    sem = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")
    return mean, sem, statistics.median(values)


@torch.no_grad()
def gp_reference(prior, n_batches: int, batch_size: int, joint: bool = False) -> tuple[float, float, float]:
    """The same score for an exact GP that knows each ``gp1d`` task's kernel, lengthscales,
    signal variance and noise: the Bayes-optimal predictor. An upper reference, not a
    competitor: a trained NP never sees the hyperparameters. ``joint``: the joint
    log-density of each task's targets per target (the joint rows' metric), which is
    higher than the marginal one: the targets are correlated given the context.
    """
    values = []
    # not the disk cache: it drops ``info``, and regenerating gives the same (seeded) batches
    for batch in tqdm(eval_batches(prior, n_batches, batch_size), total=n_batches,
                      desc=f"GP reference {prior.name}", leave=False):
        info, per_task = batch.info, []
        for i in range(batch.xc.shape[0]):
            xc, xt = batch.xc[i:i + 1].double(), batch.xt[i:i + 1].double()
            yc, yt = batch.yc[i].double(), batch.yt[i].double()
            ell = info["lengthscale"][i:i + 1].double()
            signal, noise_var = info["sigma_f"][i:i + 1].double() ** 2, prior.noise_std ** 2
            kernel = info["kernel"][i]
            K = kernel_matrix(kernel, xc, xc, ell, signal)[0] + noise_var * torch.eye(xc.shape[1], dtype=torch.float64)
            L = torch.linalg.cholesky(K)
            alpha = torch.cholesky_solve(yc, L)
            Ks = kernel_matrix(kernel, xt, xc, ell, signal)[0]
            mean = Ks @ alpha
            v = torch.linalg.solve_triangular(L, Ks.T, upper=False)
            if joint:
                cov = kernel_matrix(kernel, xt, xt, ell, signal)[0] - v.T @ v
                cov = cov + noise_var * torch.eye(xt.shape[1], dtype=torch.float64)
                density = torch.distributions.MultivariateNormal(mean.squeeze(-1), covariance_matrix=cov)
                per_task.append(density.log_prob(yt.squeeze(-1)) / xt.shape[1])
                continue
            var = (signal + noise_var - v.pow(2).sum(0)).clamp_min(1e-12)
            per_task.append(torch.distributions.Normal(mean.squeeze(-1), var.sqrt()).log_prob(yt.squeeze(-1)).mean())
        values.append(float(torch.stack(per_task).mean()))
    mean = statistics.fmean(values)
    sem = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")
    return mean, sem, statistics.median(values)


def describe(card: dict) -> str:
    c = card["config"]
    latents = f", L={c['n_latents']}" if "n_latents" in c else (f", M={c['n_pseudo']}" if "n_pseudo" in c else "")
    return f"d={c['d_model']}, {c['n_layers']} layers{latents}, {card['parameters'] / 1e6:.2f}M params"


PRIORS = ("gp1d", "wheel")  # the ``*-bo`` checkpoints: experiments/benchmarks/bo_yardstick.py


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gp1d-batches", type=int, default=3000)
    parser.add_argument("--wheel-batches", type=int, default=500)
    parser.add_argument("--checkpoints", nargs="+",
                        help="default: every shipped gp1d and wheel checkpoint "
                             "(bo ones: experiments/benchmarks/bo_yardstick.py)")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true", help="re-render the table from its JSON, evaluating nothing")
    args = parser.parse_args(argv)
    out = ROOT / "experiments" / "log" / "results" / "regression_ll.json"
    batches = {"gp1d": args.gp1d_batches, "wheel": args.wheel_batches}
    if args.no_run:
        if not out.exists():
            raise SystemExit(f"--no-run: {out.relative_to(ROOT)} does not exist yet; run without --no-run first")
        previous = json.loads(out.read_text())
        rows = [identify(r) for r in previous["rows"] if r["prior"] in PRIORS]
        kept = {k: previous["batches"][k] for k in PRIORS}
        text = render(rows, kept, previous["machine"])
        print(text)
        if not args.no_write:
            publish("regression", text, out.name, previous["command"],  # "current" is the reader's, not stored
                    {"machine": previous["machine"], "packages": previous.get("packages"), "batches": kept,
                     "rows": [{k: v for k, v in r.items() if k != "current"} for r in rows]})
        return
    names = args.checkpoints or [n for n in available_checkpoints() if read_card(n)["prior"]["name"] in PRIORS]
    if not names:
        raise SystemExit("no checkpoints to evaluate (none ship yet); "
                         "train them with experiments/training/train_shipped.sh")
    for name in names:
        prior = read_card(name)["prior"]["name"]
        if prior not in PRIORS:
            raise SystemExit(f"--checkpoints: {name} was trained on the {prior!r} prior; this benchmark scores "
                             f"{' and '.join(PRIORS)} checkpoints "
                             f"(bo ones: python experiments/benchmarks/bo_yardstick.py --models {name})")
    results = []
    for name in names:
        model = load_surrogate(name)
        card = model.card
        prior = card["prior"]["name"]
        params = {k: v for k, v in card["prior"].items() if k == "kernel"} if prior == "gp1d" else {}
        if prior == "wheel":  # the encoding the checkpoint was trained with (older cards: their defaults)
            encoding = RewardEncoding.from_prior_spec(card["prior"])
            params.update(encoding.spec())
        row = {"name": name, "prior": prior, "steps": card["training"]["steps"], "model": describe(card),
               "started_from": started_from(card), **provenance(card), "scores": {}}
        for entry, p in evaluation_suite(prior, **params).items():
            row["scores"][entry] = score(model, p, batches[prior], 16, f"{name} {entry}")
        if prior == "wheel":  # and on a bandit run's histories (one played arm per row), whatever it trained on
            row["scores"]["played"] = score(model, evaluation_suite(prior, **params, history="played")["wheel"],
                                            batches[prior], 16, f"{name} played")
            row["history"] = "played" if "history" in card["prior"] else "random"
            row["encoding"] = encoding.describe()
        if model.joint_predictive and prior == "gp1d":
            row["joint_scores"] = {entry: score(model, p, batches[prior], 16, f"{name} joint {entry}", joint=True)
                                   for entry, p in evaluation_suite(prior, **params).items()}
            row["block_size"] = model.config.block_size
        if hasattr(model, "tokens_read"):  # ReTreever: what it reads, and its full-retrieval mode
            sizes = [b.xc.shape[1] for b in eval_batches(next(iter(evaluation_suite(prior, **params).values())),
                                                       batches[prior], 16, cache=True)]
            row["tokens_read"] = statistics.fmean(model.tokens_read(n) / n for n in sizes)
            model.full_retrieval = True
            row["full_retrieval"] = {entry: score(model, p, batches[prior], 16, f"{name} full {entry}")
                                     for entry, p in evaluation_suite(prior, **params).items()}
            model.full_retrieval = False
        tqdm.write(json.dumps(row))
        results.append(row)
    for prior in sorted({r["prior"] for r in results} & {"gp1d"}):
        row = {"name": "gp-reference", "prior": prior, "reference": True,
               "scores": {entry: gp_reference(p, batches[prior], 16) for entry, p in evaluation_suite(prior).items()},
               "joint_scores": {entry: gp_reference(p, batches[prior], 16, joint=True)
                                for entry, p in evaluation_suite(prior).items()}}
        tqdm.write(json.dumps(row))
        results.append(row)
    if args.checkpoints and not args.no_write and out.exists():
        # evaluating some checkpoints refreshes their rows and keeps the others' (same batch counts only)
        previous = json.loads(out.read_text())
        previous["rows"] = [r for r in previous["rows"] if r["prior"] in PRIORS]
        if all(previous.get("batches", {}).get(k) == batches[k] for k in PRIORS):
            fresh = {(r["name"], r["prior"]) for r in results}
            results = [r for r in previous["rows"] if (r["name"], r["prior"]) not in fresh] + results
    order = {name: i for i, name in enumerate(available_checkpoints())}
    results.sort(key=lambda r: (r["prior"], order.get(r["name"], len(order))))
    text = render(results, batches)
    print(text)
    if not args.no_write:
        publish("regression", text, out.name, COMMAND, {"batches": batches, "rows": results})


RAW = RewardEncoding(1.0, "identity", "noise").describe()  # rows written before the encoding was recorded
# marginal: per target; a joint row's own upper reference (the GP's joint density per target) is higher
REFERENCE_LABEL = "exact GP, true hyperparameters (upper reference for the marginal rows)"
JOINT_REFERENCE_LABEL = "exact GP, true hyperparameters, joint density per target (upper reference for the joint rows)"


def tree_token_note(branching: int = 2, n_max: int = 47) -> str:
    """How the ReTreever rows' share of tokens relates to the paper's: the tree reads
    ``(b - 1) k + P`` tokens per query (the official code's tree, ``tree_shape``), so the share
    depends on the context size alone, not on training."""
    def tokens(n: int) -> int:
        depth, leaf = tree_shape(n, branching)
        return (branching - 1) * depth + leaf

    def share(n: int) -> float:
        return tokens(n) / n
    return (f"ReTreever's share of tokens: a query reads (b − 1)k + P of the N context tokens (binary tree, "
            f"k = ⌊log₂(N − 1)⌋, P = ⌈N / 2^k⌉, as in the official code), which depends on N alone. The rows give "
            f"the mean over the protocol's contexts N ∈ [3, {n_max}); at N = {n_max - 1} it is "
            f"{100 * share(n_max - 1):.1f} %, and the paper's {100 * share(n_max):.1f} % is the share at N = {n_max} "
            f"({tokens(n_max)} of {n_max} tokens): the same tree reads the same tokens.")


def started_from(card: dict) -> dict | None:
    """The checkpoint a fine-tuned card started from (name and steps), ``None`` for a run from scratch."""
    init = card["training"].get("init_from")
    return {"name": init["name"], "steps": init["steps"]} if isinstance(init, dict) and init.get("steps") else None


@functools.lru_cache(maxsize=1)
def _exported_cards() -> dict[str, dict]:
    """The exported cards by sha256, read once: the records kept in git
    (experiments/training/records/, see experiments/training/record.py) first, then any local
    training_runs/ (where long runs export)."""
    cards = {}
    paths = [*sorted((ROOT / "experiments" / "training" / "records").glob("**/*.json")),
             *sorted((ROOT / "training_runs").glob("**/*.json"))]
    for path in paths:
        if path.name == "train_state.json":
            continue
        try:
            card = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(card, dict) and isinstance(card.get("sha256"), str):
            cards.setdefault(card["sha256"], card)
    return cards


def _card_by_sha(sha256: str) -> dict | None:
    """An exported card with this sha256 (records or training_runs/), if one is there."""
    return _exported_cards().get(sha256)


def lineage(card: dict) -> list[dict]:
    """Every checkpoint ``card`` descends from (``--init-from``), parent first: name,
    sha256, steps, and, where that checkpoint's own card is recorded, its loss
    and learning rate; a checkpoint widened from a smaller one (experiments/training/widen_cmanp.py)
    counts the steps of the one it was widened from."""
    stages, source = [], card["training"].get("init_from")
    while isinstance(source, dict):
        stage = {"name": source["name"], "sha256": source["sha256"], "steps": source.get("steps")}
        found = _card_by_sha(source["sha256"])
        if found is not None:
            training = found.get("training", {})
            stage.update(loss=training.get("loss"), lr=training.get("lr"))
            widened = training.get("widened_from")
            if stage["steps"] is None and isinstance(widened, dict):
                stage.update(steps=widened.get("steps"), loss=None, lr=None,
                             widened=f"{widened.get('n_latents')} -> {found['config'].get('n_latents')} latents")
        stages.append(stage)
        source = source.get("init_from")
    return stages


def provenance(card: dict) -> dict:
    """What a row records of the checkpoint it scored, so a later re-render can tell
    whether it is still the shipped one and how it was trained."""
    training = card["training"]
    return {"sha256": card["sha256"], "loss": training.get("loss", "sampled"), "lr": training.get("lr"),
            "lineage": lineage(card)}


def identify(row: dict) -> dict:
    """A row from the JSON, with its checkpoint's provenance: rows written before it was
    recorded take the shipped card's when their steps and start agree with it (the same
    version); ``current``: whether the row scored the checkpoint that ships now."""
    if row.get("reference") or row["name"] not in available_checkpoints():
        return {**row, "current": False} if not row.get("reference") else row
    card = read_card(row["name"])
    same = (row.get("steps") == card["training"]["steps"] and row.get("started_from") == started_from(card)
            and row.get("model") == describe(card)
            and (row["prior"] != "wheel" or row.get("history", "random") == ("played" if "history" in card["prior"]
                                                                             else "random")))
    if "sha256" not in row and same:
        row = {**row, **provenance(card)}
    return {**row, "current": row.get("sha256") == card["sha256"]}


def steps_text(row: dict) -> str:
    """A row's training steps: with a lineage, the total and each stage's (this row's
    first); else those of the checkpoint it was fine-tuned from."""
    stages = row.get("lineage")
    if stages:
        counts = [row["steps"], *(s.get("steps") for s in stages)]
        total = f"{sum(counts):,}" if None not in counts else "?"
        return f"{total} ({' + '.join('?' if c is None else f'{c:,}' for c in counts)})"
    init = row.get("started_from")
    return f"{row['steps']:,}" + (f" (+ {init['steps']:,} of {init['name']})" if init else "")


def recipe_text(row: dict) -> str:
    """A row's loss and learning rate, with those of the stages it descends from (``←``)."""
    if "loss" not in row:
        return "?"
    def one(stage: dict) -> str:
        if stage.get("widened"):
            return f"widened ({stage['widened']})"
        if stage.get("loss") is None:
            return "?"
        return f"{stage['loss']}" + (f", lr {stage['lr']:g}" if stage.get("lr") is not None else "")
    return " ← ".join(one(s) for s in [row, *row.get("lineage", [])])


def fmt(value: tuple[float, ...]) -> str:
    return f"{value[0]:.3f} ± {value[1]:.3f}"


def render(rows: list[dict], batches: dict[str, int], machine: str | None = None) -> str:
    """The section's Markdown; ``machine``: the line of the machine that made the rows (default: this one)."""
    lines = ["## Meta-regression log-likelihood (protocols.md §1)", "",
             f"Command: `{COMMAND}` (CPU: {machine or machine_line()}). Mean target log-likelihood, higher is better; "
             "± is the standard error over evaluation batches. Published rows: the papers' numbers "
             "(100k steps, batch 16, on a GPU, the sampled loss: the negative log-likelihood of one sampled target); "
             "ours were trained on a 2-core CPU machine (one torch thread per run, two runs at a time). What differs "
             "in our training, per row: the steps (a fine-tuned row: the total, then each stage's, newest first) and "
             "the recipe (loss and learning rate per stage, newest first; `expected`: the negative log-likelihood "
             "averaged over the targets' exact conditional distribution given the context, computed with each task's "
             "true hyperparameters, `npbandit train --loss expected`: the sampled loss's expectation, without its "
             "sampling noise); all ours clip gradients at norm 1 and floor the predicted std at 0.001. The "
             "`*-bo` checkpoints are scored through `NPModel`, as a user gets them, by `python "
             "experiments/benchmarks/bo_yardstick.py` (experiments/log/results.md, "
             "\"Training the `*-bo` surrogates\").", ""]
    gp = [r for r in rows if r["prior"] == "gp1d"]
    if gp:
        lines += [f"### 1-D GP ({batches['gp1d']} batches x 16 tasks per kernel)", "",
                  "| model | source | training steps | recipe | size | RBF | Matérn 5/2 |",
                  "|---|---|---:|---|---|---:|---:|"]
        for r in (r for r in gp if not r.get("reference")):
            name = r["name"] + ("" if r.get("current", True) else
                                f" (an earlier version{', sha ' + r['sha256'][:8] if r.get('sha256') else ''}; "
                                "not the one shipped)")
            label = name + (f" ({100 * r['tokens_read']:.1f}% of tokens)" if "tokens_read" in r else "")
            common = f"ours | {steps_text(r)} | {recipe_text(r)} | {r['model']}"
            lines.append(f"| {label} | {common} | {fmt(r['scores']['rbf'])} | {fmt(r['scores']['matern52'])} |")
            if "joint_scores" in r:
                lines.append(f"| {name}, joint (b_Q = {r['block_size']}, autoregressive; the ND papers' "
                             f"metric) | {common} | {fmt(r['joint_scores']['rbf'])} | "
                             f"{fmt(r['joint_scores']['matern52'])} |")
            if "full_retrieval" in r:
                lines.append(f"| {name}, full retrieval (all tokens) | {common} | "
                             f"{fmt(r['full_retrieval']['rbf'])} | {fmt(r['full_retrieval']['matern52'])} |")
        for label, rbf, mat in PUBLISHED:
            mat_text = "-" if mat != mat else f"{mat:.2f}"
            lines.append(f"| {label} | paper | 100,000 | sampled | d=64, 6 layers | {rbf:.2f} | {mat_text} |")
        for r in (r for r in gp if r.get("reference")):
            lines.append(f"| {REFERENCE_LABEL} | ours | - | - | - | {fmt(r['scores']['rbf'])} | "
                             f"{fmt(r['scores']['matern52'])} |")
            if "joint_scores" in r:
                lines.append(f"| {JOINT_REFERENCE_LABEL} | ours | - | - | - | {fmt(r['joint_scores']['rbf'])} | "
                             f"{fmt(r['joint_scores']['matern52'])} |")
        if any("tokens_read" in r for r in gp):
            lines += ["", tree_token_note()]
    wheel = [r for r in rows if r["prior"] == "wheel"]
    if wheel:
        lines += ["", f"### Wheel-bandit tasks ({batches['wheel']} batches x 16 tasks; 512 context, 50 targets, "
                  "5 outputs, log-likelihood summed over outputs, in the units of the checkpoint's reward encoding, "
                  "so rows with different encodings are not comparable)", "",
                  "Two kinds of context: each reward dropped with p = 0.5 (the papers' training tasks), and one "
                  "played arm per row (`WheelPrior(history=\"played\")`, what a bandit run's history looks like). "
                  "Trained on: the kind the checkpoint saw in training.", "",
                  "| checkpoint | steps | size | reward encoding | trained on | random drops: mean ± s.e. | median "
                  "| played arm: mean ± s.e. | median |",
                  "|---|---:|---|---|---|---:|---:|---:|---:|"]
        for r in wheel:
            played = r["scores"].get("played")
            name = r["name"] + ("" if r.get("current", True) else " (an earlier version; not the one shipped)")
            lines.append(f"| {name} | {steps_text(r)} | {r['model']} | {r.get('encoding', RAW)} | "
                         f"{r.get('history', 'random')} | {fmt(r['scores']['wheel'])} | "
                         f"{r['scores']['wheel'][2]:.3f} | "
                         + ("- | - |" if played is None else f"{fmt(played)} | {played[2]:.3f} |"))
        if any(r.get("encoding", RAW).startswith("identity(y / 1)") for r in wheel):
            lines.append("\nFor raw-reward checkpoints (`identity(y / 1)`) the mean is dominated by rare batches in "
                         "which a model is confidently wrong near the δ boundary (the 50-reward arm has noise std "
                         "0.01, so a confident miss costs thousands of nats); the median shows the typical batch.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
