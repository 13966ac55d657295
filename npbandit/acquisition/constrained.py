"""Outcome constraints: which observations are feasible, the incumbent, and the acquisition.

A constrained problem's outputs ``Y`` are ``[n, 1 + k]``: column 0 the objective
(maximised, as every output here), columns ``1 .. k`` the constraint values, an
observation feasible when every one of them is ``<= 0`` (Optuna's ``constraints_func``
convention, and BoTorch's for its constraint callables; :func:`npbandit.feasibility.is_feasible`
judges one observation, :func:`feasible` every row at once). The model (an
:class:`~npbandit.models.NPModel` on ``1 + k`` columns: an NP per output, or a
multi-output GP) predicts all of them, independently.

The acquisition is expected improvement weighted by the probability of feasibility
(Gardner et al. 2014; Gelbart et al. 2014), in log space as BoTorch's
``LogConstrainedExpectedImprovement``: ``log EI(x) + sum_i log P(c_i(x) <= 0)``, the
improvement over the best *feasible* observation. Before any observation is feasible
there is nothing to improve on, and the search maximises the probability of
feasibility alone (``LogProbabilityOfFeasibility``) until it finds a feasible point.
For ``"qlognei"`` the constraints enter BoTorch's ``qLogNoisyExpectedImprovement`` as
constraint callables (the same smoothed feasibility indicator over its Monte Carlo draws).

This module imports BoTorch only inside the functions that build an acquisition.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["CONSTRAINED_ACQUISITIONS", "check_constraints_argument", "feasible", "best_feasible", "incumbent",
           "constrained_log_ei", "constrained_batch_acquisition", "OutputColumn"]

#: the acquisitions that take outcome constraints: feasibility-weighted LogEI, and qLogNEI
#: with BoTorch's constraint callables
CONSTRAINED_ACQUISITIONS = ("logei", "qlognei")


def check_constraints_argument(constraints: Any, acquisition: str | None = None) -> int:
    """``constraints`` (the number of constraint columns trailing the objective's) checked:
    an int ``>= 0``, and with ``acquisition`` given, ``0`` unless it is one of
    :data:`CONSTRAINED_ACQUISITIONS`."""
    if isinstance(constraints, bool) or not isinstance(constraints, int) or constraints < 0:
        raise ValueError(f"constraints must be the number of constraint columns (an int >= 0), got {constraints!r}")
    if constraints and acquisition is not None and acquisition not in CONSTRAINED_ACQUISITIONS:
        raise ValueError(f"constraints need acquisition 'logei' (expected improvement weighted by the probability "
                         f"of feasibility) or 'qlognei'; got {acquisition!r}")
    return constraints


def _check_outputs(Y: torch.Tensor, constraints: int, objectives: int = 1) -> None:
    if not isinstance(Y, torch.Tensor) or Y.ndim != 2 or Y.shape[-1] != objectives + constraints:
        shape = tuple(Y.shape) if isinstance(Y, torch.Tensor) else type(Y).__name__
        what = "the objective" if objectives == 1 else "the objectives"
        raise ValueError(f"the outputs must be [n, {objectives} + {constraints}] ({what}, then the constraint "
                         f"values), got {shape}")


def feasible(Y: torch.Tensor, constraints: int, objectives: int = 1) -> torch.Tensor:
    """``[n]`` booleans: whether each row of ``Y`` (``[n, objectives + constraints]``: the
    objective columns, then the constraint values) has every constraint value ``<= 0`` (every
    row when ``constraints == 0``)."""
    _check_outputs(Y, constraints, objectives)
    return (Y[:, objectives:] <= 0).all(dim=-1)


def best_feasible(Y: torch.Tensor, constraints: int) -> torch.Tensor | None:
    """The best (largest) objective value among the feasible rows of ``Y``, a scalar
    tensor; ``None`` when no row is feasible."""
    ok = feasible(Y, constraints)
    return Y[ok, 0].max() if bool(ok.any()) else None


def incumbent(Y: torch.Tensor, constraints: int) -> int:
    """The row of the incumbent: the best feasible one, or, with none feasible, the one
    whose constraint values exceed 0 by the least in total (where a trust region centres
    while it looks for a feasible point, as SCBO does)."""
    ok = feasible(Y, constraints)
    if bool(ok.any()):
        return int(torch.argmax(torch.where(ok, Y[:, 0], -torch.inf)))
    violation = Y[:, 1:].clamp_min(0).sum(dim=-1)
    return int(torch.argmin(violation))


def constrained_log_ei(model, outputs: torch.Tensor, constraints: int):
    """The analytic acquisition for one point: BoTorch's ``LogConstrainedExpectedImprovement``
    (objective output 0, constraint outputs ``1 .. constraints`` feasible at ``<= 0``) over
    the best feasible row of ``outputs`` (``[n, 1 + constraints]``, what the model was
    built on), or ``LogProbabilityOfFeasibility`` when no row is feasible."""
    from botorch.acquisition.analytic import LogConstrainedExpectedImprovement, LogProbabilityOfFeasibility

    bounds = {i: (None, 0.0) for i in range(1, 1 + constraints)}
    best = best_feasible(outputs, constraints)
    if best is None:
        return LogProbabilityOfFeasibility(model, constraints=bounds)
    return LogConstrainedExpectedImprovement(model, best_f=best, objective_index=0, constraints=bounds)


def constrained_batch_acquisition(model, baseline: torch.Tensor, constraints: int):
    """BoTorch's ``qLogNoisyExpectedImprovement`` of output 0 with outputs ``1 .. constraints``
    as constraint callables (feasible at ``<= 0``), ``baseline`` ``[n, d]`` its observed points."""
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.acquisition.objective import GenericMCObjective

    return qLogNoisyExpectedImprovement(model, X_baseline=baseline, prune_baseline=True,
                                        objective=GenericMCObjective(_objective_output),
                                        constraints=[OutputColumn(i) for i in range(1, 1 + constraints)])


def _objective_output(samples: torch.Tensor, X: torch.Tensor | None = None) -> torch.Tensor:
    return samples[..., 0]


class OutputColumn:
    """A constraint callable for BoTorch's Monte Carlo acquisitions: output ``index`` of the
    draws (``[..., m]`` -> ``[...]``; feasible where ``<= 0``)."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __call__(self, samples: torch.Tensor) -> torch.Tensor:
        return samples[..., self.index]
