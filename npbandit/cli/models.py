"""``npbandit models [CHECKPOINT ...]``: pretrained checkpoints in tables of their evaluation
scores next to an N(0, 1) baseline on the same tasks -- the ones that ship with npbandit, or
the checkpoints named (shipped names or one's own cards, as ``load_surrogate`` takes them; a
shipped name among them puts it beside one's own)."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

__all__ = ["COMMAND", "HELP", "MODELS_NOTE", "add_arguments", "models_text", "run"]

COMMAND = "models"
HELP = "list the pretrained checkpoints that ship with npbandit, or the checkpoints named"
USES_DB = False
TAKES_PLUGINS = True  # a checkpoint of a prior a --plugin module registers is scored on that prior's suite


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``npbandit models`` takes the checkpoints to list, none for the shipped ones."""
    parser.add_argument("checkpoints", nargs="*", metavar="CHECKPOINT",
                        help="a checkpoint to list: a shipped name, or the path of a card (.json), of its weights "
                             "(.safetensors) or <dir>/<name>, as load_surrogate takes them (npbandit train --out "
                             "writes <dir>/<name>.json); name shipped ones too to see them beside it (default: every "
                             "shipped checkpoint)")


def run(args: argparse.Namespace) -> int:
    """Print the tables (:func:`models_text`) of the checkpoints named, else of the shipped ones.

    A named checkpoint is read as :func:`~npbandit.surrogates.load_surrogate` reads it (its
    card, and its weights file there), and fails as it does: an unknown name or path, a card
    that is not one, a weights file missing. One named outside the shipped ones is listed
    under its path without the suffix (what ``load_surrogate`` takes), not its card's name,
    which may be a shipped one's."""
    from npbandit.surrogates.pretrained import WEIGHTS_DIR, available_checkpoints, read_card, weights_file

    names = list(args.checkpoints) or available_checkpoints()
    if not names:
        print("no pretrained checkpoints ship with this version")
        return 0
    cards, seen = [], set()
    for name in names:
        card = read_card(name)
        weights_file(card)  # a card without its weights is no checkpoint to list, as it is none to load
        path = Path(card["_path"])
        if path.resolve() in seen:
            continue
        seen.add(path.resolve())
        if path.resolve().parent != WEIGHTS_DIR:
            card["name"] = str(path.with_suffix(""))
        cards.append(card)
    print(models_text(cards))
    return 0


#: shown above the checkpoint tables of ``npbandit models``
MODELS_NOTE = ("Scores: mean target log-likelihood on the prior's held-out evaluation tasks (log-density per target "
               "point, summed over its outputs; higher is better). Under each checkpoint, 'N(0, 1)' is the baseline "
               "on the same tasks: a predictor that ignores the context and says N(0, 1) for every output. A score "
               "means something only next to its baseline, which depends on the prior and on how its outputs are "
               "encoded; so there is one table per prior, output encoding and set of evaluation tasks. 'joint': a "
               "joint model's joint log-density per target on the same tasks (the papers' metric for it). "
               "'S of N' steps: exported S steps into an N-step schedule (a run still in progress).")


def _output_units(card: dict) -> str:
    """How a checkpoint's target outputs were encoded (what its log-likelihoods are densities of)."""
    from npbandit.surrogates.pretrained import outcome_transform

    transform = outcome_transform(card)  # what the card declares (older wheel cards: read from their prior)
    if transform is not None:
        return transform.describe()
    spec = card.get("prior") or {}
    if spec.get("name") == "bo":
        return "standardised by the context" if "context" in str(spec.get("y")) else "standardised by the task"
    return "as sampled"


def _steps_text(training: dict) -> str:
    """A card's training steps; for a checkpoint started from another (``init_from``, recorded
    with each ancestor's steps) the earlier stages' total in brackets: ``10,000 (+100,000)``."""
    own, earlier, source = int(training.get("steps", 0)), 0, training.get("init_from")
    while isinstance(source, dict):
        earlier += int(source.get("steps") or 0)
        source = source.get("init_from")
    schedule = training.get("schedule_steps")
    return f"{own:,}" + (f" of {int(schedule):,}" if schedule else "") + (f" (+{earlier:,})" if earlier else "")


def _evaluated_on(card: dict) -> tuple[str, str]:
    """``(key, text)``: what a card's scores were measured on -- the evaluation suite's
    priors, in full, and the batch size (the tasks are drawn batch by batch) -- and, for
    a table title, the evaluation parameters (``""`` for the prior's defaults)."""
    from npbandit.surrogates.pretrained import checkpoint_use
    from npbandit.training.evaluation import evaluation_suite

    prior = str(checkpoint_use(card)["prior"])
    evaluation = card.get("evaluation", {})
    params = evaluation.get("prior_params")

    def specs(given: dict) -> Any:
        suite = evaluation_suite(prior, **given)
        out = {name: p.spec() for name, p in suite.items()}
        return next(iter(out.values())) if len(out) == 1 else out

    try:
        default = specs({})
    except ValueError:  # a prior this process has not registered (--plugin): its suite is not known here
        return json.dumps([card.get("prior"), params, evaluation.get("batch_size")], sort_keys=True, default=str), (
            "its prior's suite" + (f" with {', '.join(f'{k}={v}' for k, v in params.items())}" if params else "")
            + ", a prior this process has not registered (--plugin MODULE)")
    if params is None:  # cards before the evaluation parameters were recorded: scored on their training prior
        used, text = card.get("prior"), "the training prior"
    else:
        try:
            used = specs(params)
        except (TypeError, ValueError):
            used = params
        text = ", ".join(f"{k}={v}" for k, v in params.items())
    key = json.dumps([used, evaluation.get("batch_size")], sort_keys=True, default=str)
    same_as_default = used == default
    return key, "" if same_as_default else text


def models_text(cards: list[dict]) -> str:
    """``npbandit models``: one table per prior and output encoding (log-likelihoods are
    densities of the outputs as encoded, so tables differ in scale: a 5-output wheel
    score sums five densities, a reward divided by 50 has a far higher density than its
    symlog), one column per evaluation entry, and under each checkpoint its N(0, 1)
    baseline on the same tasks (``-`` where the card does not record it)."""
    from npbandit.surrogates.pretrained import TASKS, checkpoint_use

    tables: dict[tuple[str, str, str], list[dict]] = {}
    titles: dict[tuple[str, str, str], str] = {}
    for card in cards:
        key, text = _evaluated_on(card)
        table = (str(checkpoint_use(card)["prior"]), _output_units(card), key)
        tables.setdefault(table, []).append(card)
        titles[table] = text
    lines = textwrap.wrap(MODELS_NOTE, 110)
    for (prior, units, key), group in tables.items():
        entries: list[str] = []
        for card in group:
            entries += [k for k in card.get("evaluation", {}).get("log_likelihood", {}) if k not in entries]
        rows = []
        for card in group:
            use = checkpoint_use(card)
            dims = use["x_dims"]
            evaluation = card.get("evaluation", {})
            model, baseline = evaluation.get("log_likelihood", {}), evaluation.get("baseline_log_likelihood", {})
            rows.append([card["name"], card["model"],
                         (str(dims[0]) if len(dims) == 1 else f"{dims[0]}..{dims[-1]}") + f"->{card['y_dim']}",
                         f"{card.get('parameters', 0):,}", _steps_text(card.get("training", {}))]
                        + [f"{model[k]:.3f}" if k in model else "-" for k in entries])
            joint = evaluation.get("joint_log_likelihood")
            if joint:
                rows.append(["  joint", "", "", "", ""] + [f"{joint[k]:.3f}" if k in joint else "-" for k in entries])
            rows.append(["  N(0, 1)", "", "", "", ""] + [f"{baseline[k]:.3f}" if k in baseline else "-"
                                                          for k in entries])
        header = ["name", "model", "dims", "params", "steps", *entries]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        left = {0, 1, 2}  # text columns; numbers are right-aligned

        def fmt(row: list[str], widths: list[int] = widths, left: set[int] = left) -> str:
            return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

        task = TASKS.get(prior, f"tasks of the {prior!r} prior")
        tasks = f"; evaluated on {titles[(prior, units, key)]}" if titles[(prior, units, key)] else ""
        lines += ["", f"prior {prior}: {task}; outputs {units}{tasks}", fmt(header)]
        lines += [fmt(r).rstrip() for r in rows]
    if any("baseline_log_likelihood" not in c.get("evaluation", {}) for c in cards):
        lines += ["", "N(0, 1) '-': the card predates the baseline (python experiments/benchmarks/card_baselines.py "
                  "adds it)"]
    return "\n".join(lines)
