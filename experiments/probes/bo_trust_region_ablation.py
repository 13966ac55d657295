#!/usr/bin/env python
"""The BO suite with the trust region's settings changed from their defaults.

The ablations behind ``TrustRegion``'s defaults (experiments/log/results.md, "Trust region"):
``--length-init`` is the first box's side (TuRBO starts at 0.8, npbandit at 1.6, the whole
cube); ``--context-factor`` how many times the searched box's side the box the model sees
is (1: the model sees only the searched box). Every ``-tr`` column of ``experiments/benchmarks/bo.py``
runs with them; the arguments after ``--`` go to ``bo.py``. Keep the runs in their own
database:

    python experiments/probes/bo_trust_region_ablation.py --length-init 0.8 -- --seeds 10 --workers 1 \\
        --methods tnpd-bo-tr --db sqlite:///runs/tr08_tnpd.db --no-write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "benchmarks"))

import npbandit.policies.trust_region as trust_region  # noqa: E402


def main(argv: list[str]) -> None:
    ours, _, theirs = (argv[:argv.index("--")], None, argv[argv.index("--") + 1:]) if "--" in argv else (argv, None, [])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length-init", type=float, help="side of the first box (default: TrustRegion's)")
    parser.add_argument("--context-factor", type=float, help="side of the box the model sees over the searched "
                        "box's (default: TrustRegion's)")
    args = parser.parse_args(ours)
    changed = {name: value for name, value in (("length_init", args.length_init),
                                               ("context_factor", args.context_factor)) if value is not None}
    if not changed:
        parser.error("give --length-init and/or --context-factor")
    default = trust_region.TrustRegion.__init__

    def init(self, dim, *args, **kwargs):
        default(self, dim, *args, **{**changed, **kwargs})

    # the suite's worker processes are forked from this one and inherit the settings
    trust_region.TrustRegion.__init__ = init
    import bo

    bo.main(theirs)


if __name__ == "__main__":
    main(sys.argv[1:])
