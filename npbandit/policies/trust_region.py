"""A trust region for BO on the unit cube (TuRBO-1's rules, Eriksson et al., NeurIPS 2019).

The region is a box of side ``length`` centred on the best point so far, cut to the unit
cube. It doubles after ``success_tolerance`` improvements in a row and halves after
``failure_tolerance`` proposals in a row that did not improve; below ``length_min`` it
starts again at ``length_init`` — unless the search is told how many evaluations it has
left and they are too few for a restarted region to shrink back to ``length_min``
(:attr:`TrustRegion.restart_evaluations`); then the side stays at ``length_min`` and the
search goes on refining the incumbent (see :meth:`TrustRegion.observe`). TuRBO's rules and
constants (``failure_tolerance = max(4, d)`` for one point per proposal) except the first box: ``length_init`` is
``length_max = 1.6`` (TuRBO: 0.8), so the search starts (nearly) global and zooms in only
after proposals stop improving: a multimodal objective is first searched (nearly)
globally, and a region closes in only on a basin its proposals could not improve on.

How :class:`npbandit.policies.bo.BOPolicy` uses it differs from TuRBO in one respect,
which is why it matters for a pretrained NP: TuRBO fits a global GP and only restricts
where the acquisition looks, whereas here the surrogate sees a box around the incumbent
*as its whole domain* — the observations inside it, mapped onto the unit cube, their outputs
standardised among themselves (:meth:`TrustRegion.to_unit`). A network trained on
functions that vary over the unit cube then models the neighbourhood of the incumbent
at the scale it was trained on, instead of a nearly flat patch of the global fit that
it cannot resolve (``cmanp-bo`` on Branin otherwise stalls about 0.1 above the minimum).

The box the surrogate sees is ``context_factor`` (2) times the side of the box searched,
both centred on the incumbent: the searched box is the middle of the model's unit cube.
When the model saw only the searched box, the acquisition's maximiser lay on a corner of
it in many proposals (the corners are as far from the data as a model in the box can be,
where its spread is widest), which rarely improved, so the box halved again and again;
with observations around the searched box in view, its corners are inside the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np
import torch

from npbandit.validation import is_real

__all__ = ["MARGIN_SCALES", "TrustRegion", "TrustRegionSettings"]


#: what a success margin is a fraction of (:meth:`TrustRegion.improves`)
MARGIN_SCALES = ("best", "range")


def _check_settings(length_init: float, length_min: float, length_max: float, success_tolerance: int,
                    failure_tolerance: int | None, context_factor: float, success_margin: float = 1e-3,
                    margin_scale: str = "best") -> None:
    """Raise ``ValueError`` naming the first setting out of range (``failure_tolerance``:
    ``None`` or a positive int); a number may be a NumPy one, never a bool or a str."""
    if not is_real(success_margin) or not 0 <= success_margin < math.inf:
        raise ValueError(f"success_margin must be a finite number >= 0, got {success_margin!r}")
    if margin_scale not in MARGIN_SCALES:
        raise ValueError(f"margin_scale must be one of {MARGIN_SCALES}, got {margin_scale!r}")
    for name, value in (("length_init", length_init), ("length_min", length_min), ("length_max", length_max)):
        if not is_real(value):  # compared below, a str would raise a TypeError naming none, a bool pass as 0 / 1
            raise ValueError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    if not 0 < length_min < length_init <= length_max:
        raise ValueError("need 0 < length_min < length_init <= length_max, got "
                         f"{length_min}, {length_init}, {length_max}")
    if not is_real(context_factor) or not context_factor >= 1:
        raise ValueError(f"context_factor must be a number >= 1, got {context_factor!r}")
    for name, value in (("success_tolerance", success_tolerance), ("failure_tolerance", failure_tolerance)):
        if value is None and name == "failure_tolerance":
            continue
        if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")


@dataclass(frozen=True)
class TrustRegionSettings:
    """The settings of a :class:`TrustRegion`, without its dimension: what
    ``BOPolicy(trust_region=...)`` takes to search a region other than the default one, and
    what it logs with the run.

    Args:
        length_init, length_min, length_max: side of the box at the start, the
            restart threshold and the cap (1.6, 0.5 ** 7, 1.6; TuRBO starts at 0.8).
        success_tolerance: improvements in a row that double the side (3).
        failure_tolerance: non-improving proposals in a row that halve it
            (``None``, the default: ``max(4, d)`` for a region of dimension ``d``).
        context_factor: side of the box whose observations the surrogate sees, over
            the side of the box searched (2; 1: it sees only the searched box).
        success_margin, margin_scale: a proposal improves when its value beats the best
            before it by more than ``success_margin`` (``1e-3``) times ``|best|``
            (``margin_scale="best"``, TuRBO's) or times the range of the values observed
            before it (``"range"``, which a constant added to the objective does not move);
            see :meth:`TrustRegion.improves`.

    Raises:
        ValueError: a length, tolerance or factor out of range (as :class:`TrustRegion`).
    """

    length_init: float = 1.6
    length_min: float = 0.5**7
    length_max: float = 1.6
    success_tolerance: int = 3
    failure_tolerance: int | None = None
    context_factor: float = 2.0
    success_margin: float = 1e-3
    margin_scale: str = "best"

    def __post_init__(self) -> None:
        _check_settings(self.length_init, self.length_min, self.length_max, self.success_tolerance,
                        self.failure_tolerance, self.context_factor, self.success_margin, self.margin_scale)
        for name in ("success_tolerance", "failure_tolerance"):  # a NumPy integer as an int, as the run logs it
            if isinstance(getattr(self, name), np.integer):
                object.__setattr__(self, name, int(getattr(self, name)))

    def region(self, dim: int) -> TrustRegion:
        """A fresh :class:`TrustRegion` of dimension ``dim`` with these settings."""
        return TrustRegion.from_settings(dim, self)

    def changed(self) -> dict[str, float | int | None]:
        """The settings that differ from the defaults, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != f.default}


@dataclass
class TrustRegion:
    """Side length and success/failure counters of a TuRBO-1 trust region.

    Args:
        dim: input dimension ``d``.
        length_init, length_min, length_max: side of the box at the start, the
            restart threshold and the cap (1.6, 0.5 ** 7, 1.6; TuRBO starts at 0.8).
        success_tolerance: improvements in a row that double the side (3).
        failure_tolerance: non-improving proposals in a row that halve it
            (default ``max(4, d)``).
        context_factor: side of the box whose observations the surrogate sees, over
            the side of the box searched (2; 1: it sees only the searched box).
        success_margin, margin_scale: what counts as an improvement (:meth:`improves`).

    The defaults are :class:`TrustRegionSettings`'s; :meth:`from_settings` builds a region
    from a settings object.
    """

    dim: int
    length_init: float = TrustRegionSettings.length_init
    length_min: float = TrustRegionSettings.length_min
    length_max: float = TrustRegionSettings.length_max
    success_tolerance: int = TrustRegionSettings.success_tolerance
    failure_tolerance: int | None = TrustRegionSettings.failure_tolerance
    context_factor: float = TrustRegionSettings.context_factor
    success_margin: float = TrustRegionSettings.success_margin
    margin_scale: str = TrustRegionSettings.margin_scale

    def __post_init__(self) -> None:
        if not isinstance(self.dim, int) or isinstance(self.dim, bool) or self.dim < 1:
            raise ValueError(f"dim must be a positive int, got {self.dim!r}")
        _check_settings(self.length_init, self.length_min, self.length_max, self.success_tolerance,
                        self.failure_tolerance, self.context_factor, self.success_margin, self.margin_scale)
        if self.failure_tolerance is None:
            self.failure_tolerance = max(4, self.dim)
        self.length = self.length_init
        self.successes = self.failures = self.restarts = self.holds = 0

    @classmethod
    def from_settings(cls, dim: int, settings: TrustRegionSettings) -> TrustRegion:
        """A fresh region of dimension ``dim`` with ``settings``."""
        if not isinstance(settings, TrustRegionSettings):
            raise TypeError(f"settings must be a TrustRegionSettings, got {type(settings).__name__}")
        return cls(dim, **asdict(settings))

    @property
    def restart_evaluations(self) -> int:
        """Non-improving proposals a restarted region takes to shrink from ``length_init``
        back below ``length_min`` (``failure_tolerance`` per halving): 32 for ``d <= 4`` with
        the defaults, ``8 d`` above. A restart with fewer evaluations left ends coarser than
        the scale at which the incumbent was being refined."""
        return self.failure_tolerance * math.ceil(math.log2(self.length_init / self.length_min))

    def box(self, center: torch.Tensor, scale: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        """Lower and upper corners ``[d]`` of the region around ``center`` ``[d]``, its side
        ``scale`` times ``length`` (in the unit cube; the box is cut to it, so near a face
        it is smaller)."""
        center = torch.as_tensor(center, dtype=torch.float64)
        if center.shape != (self.dim,):
            raise ValueError(f"center must have shape [{self.dim}], got {tuple(center.shape)}")
        half = scale * self.length / 2
        return (center - half).clamp(0.0, 1.0), (center + half).clamp(0.0, 1.0)

    def to_unit(self, X: torch.Tensor, lower: torch.Tensor, upper: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The rows of ``X`` ``[n, d]`` inside the box, mapped onto the unit cube, and the
        boolean mask ``[n]`` of those rows."""
        inside = ((X >= lower) & (X <= upper)).all(dim=-1)
        return (X[inside] - lower) / (upper - lower), inside

    def observe(self, improved: bool, remaining: int | None = None) -> None:
        """Count one proposal's outcome and resize: ``improved`` when its value beat the
        best before it by more than TuRBO's margin (see :func:`improves`).

        ``remaining``: evaluations still to come after this one (``None``: unknown, TuRBO's
        rule). When the side falls below ``length_min`` with fewer than
        :attr:`restart_evaluations` left, it stays at ``length_min`` (counted in ``holds``)
        instead of restarting: TuRBO restarts to find another basin over thousands of
        evaluations, and with a budget of tens a restarted search spends the rest of it
        exploring at coarse scales instead of refining the best point found."""
        if remaining is not None and (not isinstance(remaining, int) or isinstance(remaining, bool)
                                      or remaining < 0):
            raise ValueError(f"remaining must be None or an int >= 0, got {remaining!r}")
        if improved:
            self.successes, self.failures = self.successes + 1, 0
        else:
            self.successes, self.failures = 0, self.failures + 1
        if self.successes >= self.success_tolerance:
            self.length, self.successes = min(2.0 * self.length, self.length_max), 0
        elif self.failures >= self.failure_tolerance:
            self.length, self.failures = self.length / 2.0, 0
        if self.length < self.length_min:
            if remaining is not None and remaining < self.restart_evaluations:
                self.length, self.holds = self.length_min, self.holds + 1
            else:
                self.length, self.restarts = self.length_init, self.restarts + 1

    @classmethod
    def replay(cls, dim: int, values: Sequence[float], n_design: int, failure_tolerance: int | None = None,
               settings: TrustRegionSettings | None = None) -> TrustRegion:
        """The region a search ends with whose maximised values were ``values``, in order,
        the first ``n_design`` of them its initial design (which moves no counter): what
        :meth:`observe` would have made of them one by one. For a sampler that keeps no
        state between proposals (Optuna's). ``failure_tolerance``: as the constructor's
        (``None``: ``max(4, dim)``, or ``settings``'); ``settings``: the region's other settings
        (``None``: the defaults). ``-inf`` values (infeasible) are no best and no part of the
        range a margin may be measured in."""
        given = {} if settings is None else asdict(settings)
        if failure_tolerance is not None:
            given["failure_tolerance"] = failure_tolerance
        region = cls(dim, **given)
        low = high = None
        for i, value in enumerate(float(v) for v in values):
            if i >= max(n_design, 1):
                best = float(max(values[:i]))
                region.observe(region.improves(value, best, 0.0 if low is None else high - low))
            if not math.isinf(value):
                low, high = (value, value) if low is None else (min(low, value), max(high, value))
        return region

    def improves(self, value: float, best: float, spread: float = 0.0) -> bool:
        """Whether ``value`` beats ``best`` (both maximised) by more than the success margin:
        ``success_margin`` times ``|best|`` (``margin_scale="best"``, TuRBO's: creeping by
        rounding error does not count as progress) or times ``spread``, the range of the values
        observed before ``value`` (``"range"``: the same whatever constant is added to the
        objective, where ``|best|`` grows with the constant until no proposal counts). Any
        finite value beats ``best = -inf`` (no feasible value yet, with outcome constraints)."""
        if math.isinf(best):
            return value > best
        scale = abs(best) if self.margin_scale == "best" else spread
        return value > best + self.success_margin * scale
