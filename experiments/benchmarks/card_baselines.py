"""Add the N(0, 1) baseline to checkpoint cards written before the trainer recorded it.

A card's ``evaluation.log_likelihood`` is a mean target log-likelihood on its prior's
evaluation suite; ``npbandit models`` prints it beside ``baseline_log_likelihood``, the
score of ``N(0, 1)`` predictions on the same tasks (:func:`baseline_log_likelihood`).
Cards from before that field get it here, on the evaluation set rebuilt from the card's
prior spec, and only after checking that the rebuilt set *is* the card's: the
checkpoint, scored on it, must give the card's own log-likelihoods (to their 4 printed
decimals, up to float32 summation order). A card whose set cannot be rebuilt is left
as it is and reported.

    python experiments/benchmarks/card_baselines.py                 # every shipped card lacking it
    python experiments/benchmarks/card_baselines.py --check-only    # rebuild and compare, write nothing
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

from npbandit.priors import make_prior
from npbandit.surrogates.pretrained import available_checkpoints, load_surrogate, read_card
from npbandit.training.evaluation import BASELINE, baseline_log_likelihood, eval_batches, evaluate, evaluation_suite

#: card log-likelihoods are rounded to 4 decimals; float32 sums in another order move them a little more
TOLERANCE = 2e-3


def prior_params(spec: dict[str, Any]) -> dict[str, Any]:
    """Constructor arguments of the prior a card's ``prior`` spec describes (without the
    ``kernel`` / ``dims`` that the evaluation suite sets per entry)."""
    name = spec["name"]
    if name == "gp1d":
        return {"max_points": spec["max_points"], "lengthscale_range": tuple(spec["lengthscale"][1:]),
                "outputscale_range": tuple(spec["sigma_f"][1:]), "noise_std": spec["noise_std"],
                "x_range": tuple(spec["x"][1:])}
    if name == "bo":
        params: dict[str, Any] = {"dims": tuple(spec["dims"]), "x_dim": spec["x_dim"],
                                  "min_context": spec["n_context"][1], "max_context": spec["n_context"][2] - 1,
                                  "n_target": spec["n_target"], "noise_std_range": tuple(spec["noise_std"][1:]),
                                  "kernels": tuple(spec["kernels"]),
                                  # "context" standardisation says so; older wordings all mean the whole task
                                  "standardize": "context" if "context" in spec["y"] else "task"}
        if spec["lengthscale"][0] == "lognormal":
            params["lengthscale_prior"] = "botorch"
        else:
            params["lengthscale_range"] = tuple(spec["lengthscale"][1:])
        if "irrelevant" in spec:
            params["irrelevant_prob"] = spec["irrelevant"]["prob"]
            params["irrelevant_range"] = tuple(spec["irrelevant"]["lengthscale"][1:])
        return params
    if name == "wheel":
        from npbandit.priors.wheel import RewardEncoding

        encoding = RewardEncoding.from_prior_spec(spec)
        params = {"n_target": spec["n_target"], "delta_range": tuple(spec["delta"][1:]),
                  "small_reward_std": spec["small_reward_std"],
                  "reward_scale": encoding.scale, "reward_transform": encoding.transform, "reward_fill": encoding.fill}
        if "history" in spec:  # decision-time histories (one played arm per row)
            params["history"] = "played"
        else:
            params["drop_prob"] = spec["drop_prob"]
        n_context = spec["n_context"]
        if isinstance(n_context, dict):
            params.update(n_context=n_context["full"], full_context_prob=n_context["full_prob"],
                          min_context=n_context["else"][1])
        elif isinstance(n_context, list):
            params.update(n_context=n_context[2] - 1, min_context=n_context[1])
        else:
            params["n_context"] = n_context
        return params
    raise ValueError(f"prior {name!r}: no rule to rebuild it from a card")


def backfill(name: str, write: bool) -> str:
    card = read_card(name)
    path = Path(card.pop("_path"))
    evaluation = card["evaluation"]
    if "baseline_log_likelihood" in evaluation:
        return f"{name}: has its baseline"
    spec = card["prior"]
    params = evaluation.get("prior_params") or prior_params(spec)
    n_batches, batch_size = evaluation["batches_per_entry"], evaluation["batch_size"]
    rebuilt = make_prior(spec["name"], **params).spec()
    # fields a card predates (an old wheel card has no reward_fill) are the rebuild's
    # reading of it; the model's own scores below check that reading
    differ = sorted(k for k in spec if k != "y" and rebuilt.get(k) != spec[k])
    if differ:
        return f"{name}: NOT written: the rebuilt prior's spec differs in {differ}"
    model = load_surrogate(name)
    baseline, worst = {}, 0.0
    for entry, prior in evaluation_suite(spec["name"], **params).items():
        batches = list(eval_batches(prior, n_batches, batch_size))
        with torch.no_grad():
            score = evaluate(model, batches)
        worst = max(worst, abs(score - evaluation["log_likelihood"][entry]))
        if abs(score - evaluation["log_likelihood"][entry]) > TOLERANCE:
            return (f"{name}: NOT written: on the rebuilt {entry!r} set the model scores {score:.4f}, the card says "
                    f"{evaluation['log_likelihood'][entry]:.4f}; the set is not the card's")
        baseline[entry] = round(baseline_log_likelihood(batches), 4)
    if write:
        evaluation["baseline"] = BASELINE
        evaluation["baseline_log_likelihood"] = baseline
        path.write_text(json.dumps(card, indent=2) + "\n")
    return f"{name}: {'wrote' if write else 'would write'} {baseline} (model reproduces the card within {worst:.1e})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="checkpoints (default: every shipped one)")
    parser.add_argument("--check-only", action="store_true", help="rebuild and compare; write nothing")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    failed = False
    for name in args.names or available_checkpoints():
        started = time.perf_counter()
        line = backfill(name, write=not args.check_only)
        failed |= "NOT written" in line
        print(f"{line}  [{time.perf_counter() - started:.0f} s]", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
