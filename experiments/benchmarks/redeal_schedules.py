"""Phase schedules of ``RedealtSketch`` that the choosing suite measured and the library does not
carry: re-dealing only a stalled slice, and early phases before the first led boundary.

Both lost their choosing runs (``experiments/log/benchmarks.md``, the "High-d subspace" sections
of sessions 36-47), so the library keeps only its fixed schedule
(:class:`~npbandit.acquisition.redealt_sketch.FixedPhases`); these are injected the way any
schedule is, ``RedealtSketch(schedule=...)``, so that ``highd_subspace.py`` re-runs its logged
columns (``redealt-stalled``, ``redealt-concentrated-stalled``, ``redealt-early``) as they ran:

- :class:`StalledPhases` (``RedealtSketch(schedule=StalledPhases)``): a boundary
  ``phase_start + j phase_length`` starts the next phase only if the ``phase_length``
  observations before it left the incumbent unimproved (:func:`stalled`: unchanged, or better
  by at most :data:`STALL_TOLERANCE` of its value); otherwise the current slice is kept until a
  later boundary finds it stalled. Meant to keep a slice that still yields gains.
- :class:`EarlyPhases` (``RedealtSketch(schedule=early_phases(s, m))``): phases also begin at
  the boundaries ``s + j m`` below ``phase_start``, each dealt at random (no leaders, whatever
  the relevance) and anchored at the incumbent; the later boundaries are another schedule's
  (fixed, or stalled: early boundaries always re-deal), and the phases are numbered over all
  starts in order. Meant for the relevance fit: on one count-sketch slice the inputs sharing a
  bin are copies (or mirror images) of each other, so a fit on points of one slice can tell
  only which bins matter; a further random slice splits most such pairs, so the fit at
  ``phase_start`` sees them move apart. ``s`` should be at least the initial design's size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from npbandit.acquisition.constrained import feasible, incumbent
from npbandit.acquisition.redealt_sketch import FixedPhases, PhaseSchedule
from npbandit.validation import check_int

#: the smallest gain of the incumbent's value, relative to its size, that counts as an
#: improvement for :func:`stalled` (TuRBO's success threshold)
STALL_TOLERANCE = 1e-3


def stalled(Y: torch.Tensor, last: int, constraints: int = 0) -> bool:
    """Whether the last ``last`` rows of ``Y [n, 1 + constraints]`` (maximised, feasible at
    constraint values ``<= 0``) left the incumbent where it was: the incumbent of all ``n``
    rows is that of the first ``n - last``, or both are feasible and its value rose by at most
    ``STALL_TOLERANCE * |value before|``. With no rows before the last ``last``, not stalled."""
    Y = torch.as_tensor(Y, dtype=torch.float64)
    before = len(Y) - int(last)
    if before < 1:
        return False
    old, new = incumbent(Y[:before], constraints), incumbent(Y, constraints)
    if old == new:
        return True
    if not (feasible(Y[old:old + 1], constraints).item() and feasible(Y[new:new + 1], constraints).item()):
        return False
    old_value, new_value = float(Y[old, 0]), float(Y[new, 0])
    return new_value - old_value <= STALL_TOLERANCE * abs(old_value)


class StalledPhases(FixedPhases):
    """:class:`FixedPhases`' boundaries, each starting a phase only if the ``phase_length``
    observations before it did not improve the incumbent (:func:`stalled`)."""

    def starts(self, Y: torch.Tensor, constraints: int = 0) -> list[int]:
        Y = torch.as_tensor(Y, dtype=torch.float64)
        return [c for c in super().starts(Y, constraints) if stalled(Y[:c], self.phase_length, constraints)]

    def params(self) -> dict[str, Any]:
        return {**super().params(), "subspace_redeal": "when-stalled"}

    def __repr__(self) -> str:
        return f"StalledPhases(phase_start={self.phase_start}, phase_length={self.phase_length})"


class EarlyPhases(PhaseSchedule):
    """Early boundaries ``early_start + j early_length`` below ``phase_start``, each an unled
    phase, then ``later``'s starts (at or after ``phase_start``), led as ``later`` leads them.

    Raises:
        ValueError: ``early_start`` or ``early_length`` not a positive int, or ``early_start``
            not below ``phase_start``.
    """

    def __init__(self, later: PhaseSchedule, phase_start: int, early_start: int, early_length: int) -> None:
        self.later, self.phase_start = later, phase_start
        self.early_start = check_int("early_start", early_start, minimum=1)
        self.early_length = check_int("early_length", early_length, minimum=1)
        if self.early_start >= phase_start:
            raise ValueError(f"early_start must be below phase_start ({phase_start}), got {early_start!r}")

    def early_boundaries(self, n: int) -> list[int]:
        """The early boundaries below ``phase_start`` and at most ``n``."""
        return list(range(self.early_start, min(self.phase_start, n + 1), self.early_length))

    def starts(self, Y: torch.Tensor, constraints: int = 0) -> list[int]:
        return self.early_boundaries(len(Y)) + self.later.starts(Y, constraints)

    def led(self, start: int) -> bool:
        return start >= self.phase_start and self.later.led(start)

    def params(self) -> dict[str, Any]:
        return {**self.later.params(), "subspace_early_start": self.early_start,
                "subspace_early_length": self.early_length}

    def __repr__(self) -> str:
        return f"EarlyPhases({self.later!r}, early_start={self.early_start}, early_length={self.early_length})"


def early_phases(early_start: int, early_length: int,
                 later: Callable[[int, int], PhaseSchedule] = FixedPhases) -> Callable[[int, int], EarlyPhases]:
    """The ``schedule`` argument of ``RedealtSketch`` for early phases at ``early_start + j
    early_length`` before ``later``'s boundaries (:class:`FixedPhases`, or :class:`StalledPhases`)."""
    def schedule(phase_start: int, phase_length: int) -> EarlyPhases:
        return EarlyPhases(later(phase_start, phase_length), phase_start, early_start, early_length)

    return schedule
