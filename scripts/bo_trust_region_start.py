#!/usr/bin/env python
"""The BO suite with the trust region's first box set to another side than the default.

The ablation behind ``TrustRegion.length_init`` (docs/results.md, "Trust region"): TuRBO
starts at 0.8, npbandit at 1.6 (the whole cube). Every ``-tr`` column of
``benchmarks/bo.py`` runs with the given start; keep its runs in their own database:

    python scripts/bo_trust_region_start.py 0.8 --seeds 10 --workers 1 --methods tnpd-bo-tr \\
        --db sqlite:///runs/tr08_tnpd.db --no-write
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import npbandit.policies.trust_region as trust_region  # noqa: E402


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit(__doc__)
    length = float(argv[0])
    default = trust_region.TrustRegion.__init__

    def init(self, dim, length_init=length, *args, **kwargs):
        default(self, dim, length_init, *args, **kwargs)

    # the suite's worker processes are forked from this one and inherit the start
    trust_region.TrustRegion.__init__ = init
    import bo

    bo.main(argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
