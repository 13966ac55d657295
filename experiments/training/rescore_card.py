"""Score a checkpoint card's held-out log-likelihood again on another evaluation set.

A card's ``evaluation`` block is the mean target log-likelihood on a fixed set of the
prior's tasks (``batches_per_entry`` batches of ``batch_size`` tasks from
``npbandit.training.evaluation.EVAL_SEED``) with the N(0, 1) baseline on the same tasks.
Cards written when the trainer's evaluation batch size was another one are scored on other
tasks, so ``npbandit models`` cannot put them in one column. This script recomputes the
block with the library's own evaluation (``card_evaluation``, as the trainer writes it) at the
batch size asked for, keeping the card's evaluation prior parameters; the weights and their
sha256 are untouched.

    python experiments/training/rescore_card.py npbandit/surrogates/weights/cmanp-wheel.json --batch-size 8
    python experiments/training/rescore_card.py CARD --batch-size 8 --write
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def rescore(card_path: Path, batch_size: int, batches: int | None = None) -> dict:
    """The card's ``evaluation`` block recomputed at ``batch_size`` tasks per batch (and
    ``batches`` batches; default: the card's own count), as the trainer writes it
    (:func:`npbandit.training.evaluation.card_evaluation`), with the card's evaluation prior
    parameters."""
    import torch

    from npbandit.surrogates.pretrained import load_surrogate, read_card
    from npbandit.training.evaluation import card_evaluation

    torch.set_num_threads(1)
    card = read_card(card_path)
    old = card["evaluation"]
    return card_evaluation(load_surrogate(card_path), card["use"]["prior"], batches or old["batches_per_entry"],
                           batch_size, prior_params=old.get("prior_params"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("card", type=Path)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--batches", type=int, help="default: the card's batches_per_entry")
    parser.add_argument("--write", action="store_true", help="write the new block into the card")
    args = parser.parse_args(argv)
    new = rescore(args.card, args.batch_size, args.batches)
    print(json.dumps(new, indent=2))
    if args.write:
        card = json.loads(args.card.read_text())
        card["evaluation"] = new
        args.card.write_text(json.dumps(card, indent=2) + "\n")
        print(f"wrote {args.card}")


if __name__ == "__main__":
    main()
