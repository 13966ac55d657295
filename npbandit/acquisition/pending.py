"""How points still being evaluated (asynchronous BO) enter the next proposal.

A :class:`PendingStrategy` is one small interface with two hooks that
:func:`~npbandit.acquisition.proposal.propose` calls when points are in flight:

- :meth:`~PendingStrategy.believe` before the acquisition is maximised: the model the
  proposal sees (conditioned on the pending points at believed values, or left as it is)
  and the points it must not repeat;
- :meth:`~PendingStrategy.penalise` once the search box is known: a
  :class:`~npbandit.acquisition.penalty.LocalPenalty` that damps the acquisition around the
  pending points, or ``None``.

Three strategies ship, each named by the string option ``BOPolicy(liar=...)``, ``optimize``
and ``NPSampler`` accept (:data:`LIARS`, resolved by :func:`pending_strategy`):

- :class:`ConstantLiar` (``"worst"``, ``"mean"``, ``"best"``): every pending point at one
  constant of the outputs the model sees (Ginsbourger et al. 2010);
- :class:`KrigingBeliever` (``"believer"``, the default): each pending point at the model's
  own predictive mean there;
- :class:`LocalPenalisation` (``"penalty"``, LogEI only): believed at no value, the
  acquisition damped around each (González et al. 2016).

A liar rather than fantasies because it costs one ``condition_on_observations`` (constant
for CMANP) rather than a batch of fantasy models per proposal.
"""

from __future__ import annotations

import math
from typing import Any

import torch

__all__ = ["PendingStrategy", "ConstantLiar", "KrigingBeliever", "LocalPenalisation", "pending_strategy",
           "LIARS", "DEFAULT_LIAR", "check_liar", "liar_value", "pending_rule"]

#: the names of the shipped strategies, as ``BOPolicy(liar=...)`` takes them: believed at the
#: worst, mean or best output the model sees (:class:`ConstantLiar`), ``"believer"``: each at the
#: model's own predictive mean there (:class:`KrigingBeliever`), or ``"penalty"``: at no value,
#: the acquisition damped around each (:class:`LocalPenalisation`)
LIARS = ("worst", "mean", "best", "believer", "penalty")
#: ``BOPolicy``'s, ``optimize``'s and ``NPSampler``'s default rule for points in flight: the
#: believer leaves the model's mean where the data put it, so a sharp optimum is not pushed away
DEFAULT_LIAR = "believer"


class PendingStrategy:
    """How the points in flight enter a proposal (see the module docstring).

    Subclasses override :meth:`believe` (to condition the model), :meth:`penalise` (to damp
    the acquisition) or both; :meth:`check` refuses an acquisition the strategy cannot serve.
    ``name`` is what a run logs as its ``liar``.
    """

    name: str = "pending"

    def check(self, acquisition: str) -> None:
        """Raise ``ValueError`` when this strategy cannot serve ``acquisition``; every one by default."""

    def believe(self, model, pending: torch.Tensor, *, outputs: torch.Tensor | None,
                observed: torch.Tensor | None) -> tuple[Any, torch.Tensor | None]:
        """The model the proposal sees with ``pending`` ``[p, d]`` (``p >= 1``) in flight and the
        points ``[n, d]`` (or ``None``) it must not repeat. ``outputs`` ``[n, 1]``: the outputs
        the model was built on (maximised), or ``None`` when the caller has none. By default
        both unchanged."""
        return model, observed

    def penalise(self, model, pending: torch.Tensor, *, best_f: float | torch.Tensor, bounds: torch.Tensor,
                 seed: int):
        """A :class:`~npbandit.acquisition.penalty.LocalPenalty` to damp the acquisition around
        ``pending`` ``[p, d]`` in the box ``bounds`` ``[2, d]``, or ``None`` (the default)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted((k, repr(v)) for k, v in vars(self).items()))))


class ConstantLiar(PendingStrategy):
    """Every pending point believed at one constant (Ginsbourger et al. 2010's constant liar).

    Args:
        rule: ``"worst"``, ``"mean"`` or ``"best"``: the minimum, mean or maximum of the
            outputs the model sees (maximised; :meth:`value`), or a finite number: that value,
            in the model's output units.

    Below the best observed value the constant pulls the model's mean down at the pending
    points, so the acquisition looks elsewhere whether or not the spread collapses there.
    """

    RULES = ("worst", "mean", "best")

    def __init__(self, rule: str | float = "mean") -> None:
        if isinstance(rule, str):
            if rule not in self.RULES:
                raise ValueError(f"rule must be one of {self.RULES} or a finite number, got {rule!r}")
        elif isinstance(rule, bool) or not isinstance(rule, (int, float)) or not math.isfinite(rule):
            raise ValueError(f"rule must be one of {self.RULES} or a finite number, got {rule!r}")
        self.rule = rule if isinstance(rule, str) else float(rule)

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.rule if isinstance(self.rule, str) else "constant"

    def value(self, outputs: torch.Tensor | None) -> torch.Tensor:
        """The constant, a scalar tensor, from the outputs ``[n, 1]`` the model sees (not read
        for a numeric rule); of ``[n, 1 + k]`` outputs (the objective, then constraint values)
        the objective's column."""
        if not isinstance(self.rule, str):
            return torch.tensor(self.rule, dtype=torch.float64)
        if outputs is None:
            raise ValueError(f"ConstantLiar({self.rule!r}) needs the outputs the model sees (propose(outputs=...))")
        if outputs.numel() == 0:
            raise ValueError("liar_value needs at least one observed output")
        objective = outputs if outputs.ndim < 2 else outputs[..., 0]
        return {"worst": objective.min, "mean": objective.mean, "best": objective.max}[self.rule]()

    def believe(self, model, pending, *, outputs, observed):
        """The model conditioned on every pending point at the constant; a model of several
        outputs (an objective and its constraints) has the other outputs believed at its own
        mean there, as :class:`KrigingBeliever` believes them: the lie is about the objective."""
        value = torch.as_tensor(self.value(outputs), dtype=torch.float64).reshape(-1)
        if value.numel() != 1 or not torch.isfinite(value).all():
            raise ValueError(f"pending_value must be one finite number, got {value.tolist()!r}")
        with torch.no_grad():
            mean = model.posterior(pending).mean.reshape(len(pending), -1)  # an ExactGP conditions once it predicted
        believed = torch.cat([value.to(mean).expand(len(pending), 1), mean[:, 1:]], dim=-1)
        return condition(model, pending, believed), observed

    def __repr__(self) -> str:
        return f"ConstantLiar({self.rule!r})"


class KrigingBeliever(PendingStrategy):
    """Each pending point believed at the model's own predictive mean there (the kriging
    believer, Ginsbourger et al. 2010).

    The model's mean surface stays where the data put it, so near a sharp optimum the next
    proposal is not pushed off it by a value the region never showed; what keeps it from
    proposing a pending point again is the spread conditioning removes there (all of it for a
    GP, part of it for an NP) and the repeat check, to which the pending points are added as
    if evaluated.
    """

    name = "believer"

    def believe(self, model, pending, *, outputs, observed):
        with torch.no_grad():
            believed = model.posterior(pending).mean.reshape(len(pending), -1)
        model = condition(model, pending, believed)
        if observed is not None:
            observed = torch.cat([torch.as_tensor(observed, dtype=torch.float64), pending])
        return model, observed


class LocalPenalisation(PendingStrategy):
    """Pending points believed at no value: the model is left as it is and LogEI is damped
    around each by González et al. (2016)'s local penalty
    (:class:`~npbandit.acquisition.penalty.LocalPenalty`): the probability that ``x`` lies
    outside the ball in which nothing can beat the objective's maximum ``M`` if ``f(x_j)`` is
    what the model predicts there. ``"logei"`` only (it damps a log acquisition)."""

    name = "penalty"

    def check(self, acquisition: str) -> None:
        if acquisition != "logei":
            raise ValueError(f"liar 'penalty' needs acquisition 'logei' (it damps LogEI), got {acquisition!r}")

    def penalise(self, model, pending, *, best_f, bounds, seed):
        from npbandit.acquisition.penalty import LocalPenalty  # imports BoTorch

        return LocalPenalty.build(model, pending, best_f, bounds, seed)


def pending_strategy(liar: str | PendingStrategy, acquisition: str | None = None) -> PendingStrategy:
    """The strategy ``liar`` names (one of :data:`LIARS`), or ``liar`` itself if it is a
    :class:`PendingStrategy`; checked against the ``acquisition`` it serves, if given."""
    if isinstance(liar, PendingStrategy):
        strategy = liar
    elif isinstance(liar, str) and liar in LIARS:
        strategy = (KrigingBeliever() if liar == "believer" else LocalPenalisation() if liar == "penalty"
                    else ConstantLiar(liar))
    else:
        raise ValueError(f"liar must be one of {LIARS} or a PendingStrategy, got {liar!r}")
    if acquisition is not None:
        strategy.check(acquisition)
    return strategy


def check_liar(liar: Any, acquisition: str | None = None) -> str:
    """``liar`` if it is one of :data:`LIARS` (and, given the ``acquisition`` it serves, one
    that works with it: ``"penalty"`` damps LogEI only); otherwise a ``ValueError``."""
    if not isinstance(liar, str) or liar not in LIARS:
        raise ValueError(f"liar must be one of {LIARS}, got {liar!r}")
    if acquisition is not None:
        pending_strategy(liar, acquisition)
    return liar


def liar_value(Y: torch.Tensor, liar: str) -> torch.Tensor:
    """The constant a pending point is believed at under a constant liar, from the outputs
    ``Y`` ``[n, 1]`` the model sees (maximised): ``"worst"`` their minimum, ``"mean"`` their
    mean, ``"best"`` their maximum. A scalar tensor (:meth:`ConstantLiar.value`)."""
    check_liar(liar)
    if liar == "penalty":
        raise ValueError("liar 'penalty' believes pending points at no value (propose(penalise_pending=True))")
    if liar == "believer":
        raise ValueError("liar 'believer' believes each pending point at the model's mean there, not at one "
                         "constant (propose(believe_pending=True))")
    return ConstantLiar(liar).value(Y)


def pending_rule(Y: torch.Tensor, liar: str) -> dict[str, Any]:
    """:func:`~npbandit.acquisition.proposal.propose`'s keyword arguments for the points in
    flight under ``liar`` (a name), from the outputs ``Y`` ``[n, 1]`` the model sees:
    ``pending_value`` (:func:`liar_value`), ``penalise_pending`` (``True`` for ``"penalty"``,
    with no value) and ``believe_pending`` (``True`` for ``"believer"``, with no value). The
    keyword form of :func:`pending_strategy`, for callers of ``propose`` that pass no strategy."""
    liar = check_liar(liar)
    if liar in ("penalty", "believer"):
        return {"pending_value": None, "penalise_pending": liar == "penalty", "believe_pending": liar == "believer"}
    return {"pending_value": liar_value(Y, liar), "penalise_pending": False, "believe_pending": False}


def condition(model, X: torch.Tensor, Y: torch.Tensor):
    """``model.condition_on_observations(X, Y)`` for the pending points ``X`` ``[p, d]`` at ``Y``
    ``[p, m]``, in the model's output units. A GP told its objective is noise-free (a
    fixed-noise likelihood) needs the new points' noise too: the same variance as its
    observations (converted back through its outcome transform, which
    ``condition_on_observations`` applies to it, output by output)."""
    from gpytorch.likelihoods import FixedNoiseGaussianLikelihood

    likelihood = getattr(model, "likelihood", None)
    if not isinstance(likelihood, FixedNoiseGaussianLikelihood):
        return model.condition_on_observations(X, Y)
    noise = likelihood.noise.min().detach()
    transform = getattr(model, "outcome_transform", None)
    if transform is not None and hasattr(transform, "stdvs"):
        noise = noise * transform.stdvs.reshape(-1)[:Y.shape[-1]] ** 2
    return model.condition_on_observations(X, Y, noise=noise.expand_as(Y).clone())
