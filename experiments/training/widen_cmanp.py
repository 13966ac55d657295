#!/usr/bin/env python
"""Start a CMANP with more latents from a trained one (function-preserving, CMANP.widened).

    python experiments/training/widen_cmanp.py training_runs/cmanp-bo-long/cmanp-bo.json \\
        --latents 128 --block-latents 128 --out training_runs/init/cmanp128

writes ``<out>/<name>.json`` (card) and its weights, for ``npbandit train --init-from``
with ``--set n_latents=… --set n_block_latents=…``. The card records where it came from.
"""

from __future__ import annotations

import argparse

import torch

from npbandit.surrogates.cmanp import CMANP
from npbandit.surrogates.pretrained import load_surrogate, save_pretrained


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="a CMANP checkpoint (shipped name or card path)")
    parser.add_argument("--latents", type=int, required=True, help="new n_latents (a multiple of the source's)")
    parser.add_argument("--block-latents", type=int, required=True, help="new n_block_latents (likewise)")
    parser.add_argument("--noise", type=float, default=0.05,
                        help="noise on the copies, as a fraction of the source latents' std (default 0.05)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="directory for the new card and weights")
    parser.add_argument("--name", default=None, help="checkpoint name (default: the source's)")
    args = parser.parse_args(argv)
    source = load_surrogate(args.source)
    if not isinstance(source, CMANP):
        parser.error(f"{args.source} is a {source.name} checkpoint, not a CMANP")
    scale = float(torch.cat([source.initial_latents.detach().flatten()]
                          + [b.block_latents.detach().flatten() for b in source.blocks]).std())
    wide = source.widened(args.latents, args.block_latents, noise_std=args.noise * scale,
                          generator=torch.Generator().manual_seed(args.seed))
    card = source.card
    training = {"widened_from": {"name": card["name"], "sha256": card["sha256"],
                                 "steps": card.get("training", {}).get("steps"),
                                 "n_latents": source.config.n_latents,
                                 "n_block_latents": source.config.n_block_latents},
                "noise_std": args.noise * scale, "seed": args.seed}
    path = save_pretrained(wide, args.out, args.name or card["name"], prior=card["prior"], training=training,
                           evaluation=card.get("evaluation", {}))
    print(path)


if __name__ == "__main__":
    main()
