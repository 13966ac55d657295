"""Linear constraints on the inputs: ``optimize(..., parameter_constraints=["x0 + 2*x1 <= 3"])``.

A constraint is a string as Ax's ``parameter_constraints`` reads it: a sum of terms on either
side of ``<=`` or ``>=``, each term a number, a parameter's name, or a number times a name
(``2*x1``, ``x1*2``, ``-0.5 * lr``); an order constraint is ``"x0 <= x1"``. Names are the
space's (``x0 .. x{d-1}`` for a plain box). :class:`LinearConstraints` parses them against a
:class:`~npbandit.space.SearchSpace` into ``A x <= b`` in the user's units, and the unit
cube's :class:`Polytope` follows from it.

Only floats on a linear scale without a step may appear in a constraint: on them the cube is
affine in the value (``x = low + u (high - low)``), so ``A x <= b`` is linear in the cube and
an acquisition optimiser can keep to it. A log-scale parameter would make it non-linear in the
cube; an int or a stepped float is rounded after the search, and a rounded point can leave the
region (not supported yet); a choice has no numeric value; a conditional parameter is absent
from some points. Each is refused, naming why.

The search keeps to a polytope tightened by a margin of ``MARGIN`` times the constraint's
scale (``|b|`` plus each term's largest magnitude over the box), so that a point mapped from
the cube to the user's units and back by floating-point arithmetic still satisfies ``A x <= b``
exactly as written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from npbandit.space.parameters import Float, Int
from npbandit.space.search_space import SearchSpace

if TYPE_CHECKING:  # torch loads where the polytope is searched, not with the space
    import torch

__all__ = ["LinearConstraints", "Polytope", "as_linear_constraints", "MARGIN"]

#: the search polytope's margin inside ``A x <= b``, relative to each constraint's scale: about
#: 4,500 float64 roundings of the scale, far more than the map to the user's units and the sum
#: of the terms lose, yet small enough that a range narrow beside its values (``Float(1e6,
#: 1e6 + 1e-3)``) keeps nearly all of its width
MARGIN = 1e-12
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_OPERATORS = ("<=", ">=", "**", "==", "+", "-", "*", "/", "<", ">", "=", "(", ")")


def _tokens(text: str, names: list[str], where: str) -> list[tuple[str, Any]]:
    """``text`` as ``(kind, value)`` tokens: ``("num", float)``, ``("name", str)``, ``("op", str)``;
    a space's names matched longest first (a name may hold spaces or operators' characters)."""
    out: list[tuple[str, Any]] = []
    by_length = sorted(names, key=len, reverse=True)
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        name = next((n for n in by_length if text.startswith(n, i)), None)
        number = _NUMBER.match(text, i)
        word = _WORD.match(text, i)
        if word is not None and word.group() not in names and (name is None or len(word.group()) > len(name)):
            raise ValueError(f"{where}: unknown parameter {word.group()!r}; the space's parameters are {names}")
        if name is not None and (number is None or len(name) >= number.end() - i):
            out.append(("name", name))
            i += len(name)
        elif number is not None:
            if not math.isfinite(float(number.group())):
                raise ValueError(f"{where}: the number {number.group()!r} is not finite in float64 (expected numbers "
                                 "within about 1e308)")
            out.append(("num", float(number.group())))
            i = number.end()
        elif (op := next((o for o in _OPERATORS if text.startswith(o, i)), None)) is not None:
            out.append(("op", op))
            i += len(op)
        else:
            raise ValueError(f"{where}: cannot read {text[i:]!r} (expected numbers, parameter names, '+', '-', '*' "
                             f"and one '<=' or '>=')")
    return out


def _side(tokens: list[tuple[str, Any]], where: str) -> tuple[dict[str, float], float]:
    """One side of a constraint, a sum of terms: ``({name: coefficient}, constant)``."""
    coefficients: dict[str, float] = {}
    constant = 0.0
    i, sign = 0, 1.0
    expect_term = True
    while i < len(tokens):
        kind, value = tokens[i]
        if expect_term:
            if kind == "op" and value in "+-":
                sign = sign * (-1.0 if value == "-" else 1.0)
                i += 1
                continue
            factors, i = [tokens[i]], i + 1
            while i < len(tokens) and tokens[i] == ("op", "*"):
                if i + 1 >= len(tokens):
                    raise ValueError(f"{where}: '*' needs a factor after it")
                factors.append(tokens[i + 1])
                i += 2
            bad = [v for k, v in factors if k == "op"]
            if bad:
                raise ValueError(f"{where}: unexpected {bad[0]!r}; a linear constraint is a sum of terms, each a "
                                 "number, a parameter or a number times a parameter (no '/', '**', brackets or "
                                 "'<', '>', '==': only '<=' or '>=')")
            names = [v for k, v in factors if k == "name"]
            if len(names) > 1:
                raise ValueError(f"{where}: the term {'*'.join(names)} is not linear (a product of parameters); each "
                                 "term must be a number times at most one parameter")
            coefficient = sign * math.prod(v for k, v in factors if k == "num")
            if names:
                coefficients[names[0]] = coefficients.get(names[0], 0.0) + coefficient
            else:
                constant += coefficient
            expect_term, sign = False, 1.0
        else:
            if kind != "op" or value not in "+-":
                shown = value if kind != "num" else repr(value)
                raise ValueError(f"{where}: expected '+', '-' or the end after a term, got {shown!r} (a product is "
                                 "written with '*'; only '<=' and '>=' compare)")
            expect_term = True
    if expect_term:
        raise ValueError(f"{where}: a side ends without a term")
    return coefficients, constant


def parse_constraint(text: str, names: list[str], where: str) -> tuple[dict[str, float], float]:
    """``text`` (``"x0 + 2*x1 <= 3"``) as ``({name: a}, b)`` with ``sum a * name <= b``.

    Raises:
        ValueError: naming ``where``: not one ``<=`` / ``>=``, a term that is not linear, an
            unknown name, no parameter left after collecting terms."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where} must be a non-empty string such as 'x0 + 2*x1 <= 3', got {text!r}")
    tokens = _tokens(text, names, where)
    split = [i for i, (kind, value) in enumerate(tokens) if kind == "op" and value in ("<=", ">=")]
    if len(split) != 1:
        others = [v for k, v in tokens if k == "op" and v in ("<", ">", "==", "=")]
        hint = f" ({others[0]!r} is not supported: strict and equality constraints are not)" if others else ""
        raise ValueError(f"{where} must hold exactly one '<=' or '>=', got {text!r}{hint}")
    at = split[0]
    left, left_constant = _side(tokens[:at], where)
    right, right_constant = _side(tokens[at + 1:], where)
    sign = 1.0 if tokens[at][1] == "<=" else -1.0
    coefficients = {n: sign * (left.get(n, 0.0) - right.get(n, 0.0)) for n in names if n in left or n in right}
    coefficients = {n: a for n, a in coefficients.items() if a != 0.0}
    if not coefficients:
        raise ValueError(f"{where}: {text!r} constrains no parameter (its terms cancel, or it names none)")
    return coefficients, sign * (right_constant - left_constant)


class LinearConstraints:
    """Linear inequality constraints ``A x <= b`` on a search space's float parameters.

    Args:
        constraints: strings such as ``"x0 + 2*x1 <= 3"`` and ``"lr <= 2*momentum"`` (the
            module docstring), at least one.
        space: the :class:`SearchSpace` whose parameters they name.
        name: how errors name the argument (``parameter_constraints``).

    Attributes:
        texts: the constraints as given (what a run records, :meth:`describe`).
        rows: per constraint, ``({name: a}, b)``: ``sum a * x[name] <= b`` in the user's units.
        polytope: the same constraints on the space's unit cube (:class:`Polytope`).

    Raises:
        TypeError / ValueError: naming ``name[i]``: a string that does not parse, a parameter
            that may not appear (a choice, an int, a stepped or log-scale float, a conditional
            one: the module docstring says why), or constraints that no point of the space's
            box satisfies in a set of positive volume (scipy's ``linprog``).
    """

    def __init__(self, constraints: Sequence[str], space: SearchSpace, name: str = "parameter_constraints") -> None:
        if isinstance(constraints, str) or not isinstance(constraints, Sequence):
            raise TypeError(f"{name} must be a list of strings such as ['x0 + 2*x1 <= 3'], got "
                            f"{type(constraints).__name__}")
        if not constraints:
            raise ValueError(f"{name} must hold at least one constraint (give None for none)")
        self.space = space
        self.texts = tuple(constraints)
        self.rows = [parse_constraint(text, space.names, f"{name}[{i}]") for i, text in enumerate(constraints)]
        for i, (coefficients, _) in enumerate(self.rows):
            for parameter in coefficients:
                why = _unsupported(space, parameter)
                if why:
                    raise ValueError(f"{name}[{i}] ({self.texts[i]!r}) names {parameter!r}, {why}")
        self.polytope = self._polytope()
        if self.polytope.interior() is None:
            raise ValueError(f"{name}: no point of the space's box satisfies {list(self.texts)} (checked with "
                             "scipy.optimize.linprog; equality constraints, two opposite '<=' with equal bounds, "
                             "are not supported either)")

    def _polytope(self) -> Polytope:
        """The rows on the unit cube: ``x = low + u (high - low)`` per constrained column; a fixed
        parameter (``low == high``) has no column, its term ``a * low`` moves into ``b``."""
        A = np.zeros((len(self.rows), self.space.dim))
        b = np.zeros(len(self.rows))
        scale = np.zeros(len(self.rows))
        for r, (coefficients, bound) in enumerate(self.rows):
            b[r], scale[r] = bound, abs(bound)
            for parameter, a in coefficients.items():
                p = self.space[parameter]
                if p.high > p.low:  # a fixed parameter (low == high) has no column: its term is a constant
                    A[r, self.space.columns(parameter).start] = a * (p.high - p.low)
                b[r] -= a * p.low
                scale[r] += abs(a) * max(abs(p.low), abs(p.high))
        return Polytope(A, b, MARGIN * np.maximum(scale, 1e-300))

    def describe(self) -> list[str]:
        """The constraints as given, what a run records (:func:`as_linear_constraints` reads them back)."""
        return list(self.texts)

    def same_as(self, texts: Any) -> bool:
        """Whether ``texts`` (a run's record of its constraints, or ``None``) state the same
        constraints as these, however written (``"x0+x1<=1"``, ``"-x0 - x1 >= -1"``, in any order,
        repeated): the same set of rows ``sum a x <= b`` once parsed against this space."""
        try:
            other = LinearConstraints(texts, self.space) if texts else None
        except (TypeError, ValueError):
            return False
        return other is not None and _row_set(other.rows) == _row_set(self.rows)

    def violated(self, params: Mapping[str, Any]) -> list[str]:
        """The constraints a point ``params`` (``{name: value}``) violates by more than rounding
        (:data:`MARGIN` of the constraint's scale), as given."""
        out = []
        for text, (coefficients, bound) in zip(self.texts, self.rows):
            total = sum(a * float(params[n]) for n, a in coefficients.items())
            scale = abs(bound) + sum(abs(a * float(params[n])) for n, a in coefficients.items())
            if total - bound > MARGIN * max(scale, 1e-300):
                out.append(text)
        return out

    def __repr__(self) -> str:
        return f"LinearConstraints({list(self.texts)!r})"


def _row_set(rows: Sequence[tuple[Mapping[str, float], float]]) -> set[tuple[tuple[tuple[str, float], ...], float]]:
    """Parsed rows as a set, each row's coefficients (nonzero, as parsed) sorted by name."""
    return {(tuple(sorted((n, float(a)) for n, a in coefficients.items())), float(bound))
            for coefficients, bound in rows}


def _unsupported(space: SearchSpace, name: str) -> str | None:
    """Why parameter ``name`` may not appear in a linear constraint, or ``None``."""
    parameter = space[name]
    if space.depends_on(name) is not None:
        return "a conditional parameter (absent from some points); linear constraints take unconditional floats"
    if isinstance(parameter, (Float, Int)) and parameter.low == parameter.high:
        return None  # fixed: a constant in every point, nothing to round or warp
    if not isinstance(parameter, Float):
        kind = "a choice (categorical: no numeric value)" if parameter.__class__.__name__ == "Choice" else (
            "an int (a point rounded onto the integers can leave the constraints' region: not supported yet)")
        return f"{kind}; linear constraints take floats on a linear scale"
    if parameter.log:
        return ("a log-scale float: the constraint is linear in your units, so it would be non-linear in the log "
                "scale the model searches; give it log=False, or constrain its logarithm as a parameter of its own")
    if parameter.step is not None:
        return ("a stepped float (a point rounded onto its grid can leave the constraints' region: not supported "
                "yet); give it step=None")
    return None


def as_linear_constraints(value: Any, space: SearchSpace,
                          name: str = "parameter_constraints") -> LinearConstraints | None:
    """``value`` (``None``, a list of strings or a :class:`LinearConstraints` of ``space``) checked
    against ``space``: ``None`` for ``None``."""
    if value is None:
        return None
    if isinstance(value, LinearConstraints):
        if value.space != space:
            return LinearConstraints(value.texts, space, name)
        return value
    return LinearConstraints(value, space, name)


class Polytope:
    """``A u <= b`` on the unit cube ``[0, 1]^D`` (numpy arrays ``A [m, D]``, ``b [m]``), and
    ``margin [m]``: the search keeps ``A u <= b - margin`` (:meth:`feasible`), every point handed
    out must satisfy ``A u <= b - margin / 2`` (:meth:`holds`), which absorbs the rounding of maps
    between boxes and to the user's units."""

    def __init__(self, A: np.ndarray, b: np.ndarray, margin: np.ndarray) -> None:
        self.A, self.b, self.margin = np.asarray(A, float), np.asarray(b, float), np.asarray(margin, float)

    @property
    def dim(self) -> int:
        return self.A.shape[1]

    def _sides(self, points: torch.Tensor, slack: float) -> torch.Tensor:
        import torch

        A = torch.as_tensor(self.A, dtype=points.dtype, device=points.device)
        bound = torch.as_tensor(self.b - slack * self.margin, dtype=points.dtype, device=points.device)
        return ((points @ A.T) <= bound).all(dim=-1)

    def feasible(self, points: torch.Tensor) -> torch.Tensor:
        """``[...]`` bool: which points ``[..., D]`` lie in the search polytope ``A u <= b - margin``."""
        return self._sides(points, 1.0)

    def holds(self, points: torch.Tensor) -> torch.Tensor:
        """``[...]`` bool: which points ``[..., D]`` satisfy ``A u <= b - margin / 2`` (a point handed out must)."""
        return self._sides(points, 0.5)

    def in_frame(self, lower: torch.Tensor, span: torch.Tensor) -> Polytope:
        """The polytope in the frame ``z`` of a box, ``u = lower + z * span`` (``[D]`` each)."""
        lower, span = np.asarray(lower.detach().cpu(), float), np.asarray(span.detach().cpu(), float)
        return Polytope(self.A * span, self.b - self.A @ lower, self.margin)

    def interior(self, bounds: torch.Tensor | None = None) -> np.ndarray | None:
        """A point ``[D]`` deep inside the search polytope cut to the box ``bounds`` ``[2, D]``
        (default the cube): the centre of the largest ball inside it (Chebyshev's centre, by
        ``linprog``), ``None`` when the two do not meet in a set of positive volume."""
        from scipy.optimize import linprog

        lower, upper = (np.zeros(self.dim), np.ones(self.dim)) if bounds is None else (
            np.asarray(bounds[0].detach().cpu(), float), np.asarray(bounds[1].detach().cpu(), float))
        free = upper > lower  # a held column (lower == upper) stays where it is
        b = self.b - self.margin - self.A[:, ~free] @ lower[~free]
        A = self.A[:, free]
        n = int(free.sum())
        # maximise r subject to A u + |A_r| r <= b and lower + r <= u <= upper - r
        rows = [np.hstack([A, np.linalg.norm(A, axis=1, keepdims=True)]),
                np.hstack([-np.eye(n), np.ones((n, 1))]), np.hstack([np.eye(n), np.ones((n, 1))])]
        rhs = np.concatenate([b, -lower[free], upper[free]])
        cost = np.zeros(n + 1)
        cost[-1] = -1.0
        result = linprog(cost, A_ub=np.vstack(rows), b_ub=rhs, bounds=[(None, None)] * n + [(0, None)],
                         method="highs")
        if result.status != 0 or result.x[-1] <= 1e-12:
            return None
        point = lower.copy()
        point[free] = np.clip(result.x[:n], lower[free], upper[free])
        return point

    def repair(self, points: torch.Tensor, bounds: torch.Tensor) -> torch.Tensor:
        """``points`` ``[k, D]`` in the box ``bounds``, each outside the search polytope moved along
        the segment towards :meth:`interior` to where it enters it (an optimiser's end points that
        overstep a face by its tolerance): inside both box and polytope, since both are convex."""
        import torch

        bad = ~self.feasible(points)
        if not bad.any():
            return points
        centre = self.interior(bounds)
        if centre is None:
            raise ValueError("the box searched does not meet the constraints' polytope")
        c = torch.as_tensor(centre, dtype=points.dtype, device=points.device)
        A = torch.as_tensor(self.A, dtype=points.dtype, device=points.device)
        room = torch.as_tensor(self.b - self.margin, dtype=points.dtype, device=points.device) - A @ c  # > 0
        step = (points[bad] - c) @ A.T  # [j, m]
        t = torch.where(step > 0, room / step.clamp_min(1e-300), torch.ones_like(step)).amin(dim=-1).clamp(0, 1)
        out = points.clone()
        out[bad] = c + (t * (1 - 1e-9))[:, None] * (points[bad] - c)
        return out

    def inequality_constraints(self, dtype: Any = None) -> list[tuple[torch.Tensor, torch.Tensor, float]]:
        """The search polytope in BoTorch's form (``optimize_acqf``'s ``inequality_constraints``):
        ``(indices, coefficients, rhs)`` with ``sum coefficients * u[indices] >= rhs``."""
        import torch

        out = []
        for row, bound, margin in zip(self.A, self.b, self.margin):
            columns = np.nonzero(row)[0]
            if not len(columns):  # a constant row (only fixed parameters), satisfied if the polytope is not empty
                continue
            out.append((torch.as_tensor(columns, dtype=torch.long),
                        torch.as_tensor(-row[columns], dtype=dtype or torch.float64), float(-(bound - margin))))
        return out

    def sample(self, n: int, bounds: torch.Tensor, seed: int) -> torch.Tensor:
        """Up to ``n`` points ``[k, D]`` of the box ``bounds`` ``[2, D]`` inside the search polytope:
        scrambled Sobol points kept when feasible (at most ``16 n`` drawn), made up to ``n`` by
        BoTorch's hit-and-run sampler (``get_polytope_samples``) where fewer are; none when the
        two do not meet."""
        import torch

        d = bounds.shape[-1]
        draws = bounds[0] + (bounds[1] - bounds[0]) * torch.quasirandom.SobolEngine(d, scramble=True, seed=seed).draw(
            16 * n, dtype=bounds.dtype).to(bounds.device)
        kept = draws[self.feasible(draws)][:n]
        if len(kept) >= n:
            return kept
        start = self.interior(bounds)
        if start is None:
            return kept
        from botorch.utils.sampling import get_polytope_samples

        held = bounds[0] == bounds[1]
        free_bounds = bounds.clone()
        free_bounds[1] = torch.where(held, bounds[0] + 1e-12, bounds[1])  # the sampler wants a positive side
        extra = get_polytope_samples(n - len(kept), free_bounds, self.inequality_constraints(bounds.dtype),
                                     seed=seed, n_burnin=200, n_thinning=4)
        extra = torch.where(held, bounds[0], extra).to(bounds)
        # the chain's start (the polytope's centre) last: there whatever the chain gave, taken only when it fell short
        extra = torch.cat([extra, torch.as_tensor(start, dtype=bounds.dtype, device=bounds.device)[None]])
        extra = extra[self.feasible(extra)]
        return torch.cat([kept, extra])[:n]
