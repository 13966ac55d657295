"""Bayesian optimisation of several objectives on the unit cube: :class:`ParetoBOPolicy`, what
``optimize(..., minimize=[...])`` runs.

It searches the Pareto front the way ``NPSampler`` searches an Optuna study of several
objectives, from the same pieces of :mod:`npbandit.acquisition.multi_objective`: a model of
every output (one NP per output for a checkpoint; a multi-output ``SingleTaskGP`` for
``"gp"``) on each objective warped towards a Gaussian, and the log expected hypervolume
improvement over the feasible front, maximised over the whole cube. There is no trust region
(it follows one incumbent, and a front has many) and no subspace strategy (those follow one
objective's incumbent too): a cube wider than the checkpoint is seen by the NP on its most
relevant columns (``NPModel(columns="relevant")``). Once the observations outnumber what the
checkpoint was trained to condition on, the NP sees the best non-dominated layers
(:func:`~npbandit.acquisition.multi_objective.front_rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.multi_objective import front_rows, warp_objectives
from npbandit.acquisition.optimizers import AcquisitionOptimizer, resolve_acq_optimizer
from npbandit.acquisition.pinned import Pinned, pin
from npbandit.acquisition.proposal import propose, warn_if_repeated
from npbandit.feasibility import check_constraint_count
from npbandit.policies.base import Policy, Recommendation
from npbandit.policies.design import SobolDesign, check_snap, snap_points
from npbandit.policies.factories import NPModelFactory, as_model_factory
from npbandit.policies.observations import HandOuts, hand_out
from npbandit.rows import RowBuffer
from npbandit.surrogates.pretrained import checkpoint_use, context_limit, served_width
from npbandit.threads import check_threads
from npbandit.transforms.standardize import output_scale
from npbandit.validation import check_int

__all__ = ["ParetoBOPolicy", "ParetoObservations"]

#: what a proposal's hand-out records as the best value known then: a front has no single best
_NO_SCALAR_BEST = -np.inf


class ParetoObservations:
    """What a :class:`ParetoBOPolicy` has seen: the observed points ``[d]`` with their rewards
    ``[m]`` (each objective maximised) and constraint values ``[k]``, and the points whose
    evaluation failed, as arrays grown in place."""

    def __init__(self, objectives: int) -> None:
        self.objectives = objectives
        self.X = RowBuffer()
        self.outputs = RowBuffer()  # [n, m + k]: rewards, then constraint values
        self.failed = RowBuffer()
        self.constraints: int | None = None  # k, once the first observation says

    def __len__(self) -> int:
        return len(self.X)

    def add(self, x: np.ndarray, reward: np.ndarray, c: np.ndarray | None) -> None:
        """Observation ``x [d]`` with rewards ``[m]`` and constraint values ``c [k]`` (``None``: none)."""
        k = 0 if c is None else len(c)
        check_constraint_count(k, self.constraints, "info['constraints']", "this one holds", unit="observation")
        self.constraints = k
        self.X.append(x)
        self.outputs.append(np.concatenate([reward, [] if c is None else c]))

    def data(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``X [n + f, d]`` and the outputs ``[n + f, m + k]`` a model sees: the observations,
        then the ``f`` failed points at each objective's worst reward and each constraint's
        worst (largest) value observed (none before a value is); each output multiplied by the
        exact power of two that keeps it standardisable and clear of variance floors
        (:func:`~npbandit.transforms.standardize.output_scale`)."""
        Y = torch.from_numpy(self.outputs.array.copy())
        X = torch.from_numpy(self.X.array.copy())
        if len(self.failed):
            worst = torch.cat([Y[:, :self.objectives].amin(dim=0), Y[:, self.objectives:].amax(dim=0)])
            X = torch.cat([X, torch.from_numpy(self.failed.array.copy())])
            Y = torch.cat([Y, worst.expand(len(self.failed), -1)])
        return X, Y * output_scale(Y)


class ParetoBOPolicy(Policy):
    """Bayesian optimisation of ``objectives`` objectives at once (the module docstring).

    Each observation's reward is an array ``[m]`` of the objectives' values, each maximised
    (``BlackBox-v0`` with ``minimize=[...]`` negates those it minimises); with
    ``constrained``, ``info["constraints"]`` holds its ``k`` outcome-constraint values
    (feasible when all are ``<= 0``). The first ``n_init`` points are a scrambled Sobol
    design; then each proposal maximises the log expected hypervolume improvement
    (:func:`~npbandit.acquisition.proposal.propose` with ``objectives=m``).

    Args:
        dim: input dimension.
        objectives: ``m >= 2``.
        model: a ``bo`` checkpoint name or path, ``"gp"`` (a ``SingleTaskGP`` of ``m + k``
            outputs, refit for every proposal) or a model factory ``(train_X [n, d],
            train_Y [n, m + k]) -> Model`` of ``m + k`` outputs.
        n_init: initial Sobol points (default ``2 * dim + 1``; ``2 w + 1`` for a checkpoint of
            ``w < dim`` inputs).
        max_n_init: the most that default may be, as :class:`~npbandit.policies.BOPolicy`'s.
        avoid_repeats: never propose a point within ``REPEAT_DISTANCE`` of an evaluated or
            pending one (:func:`~npbandit.acquisition.proposal.propose`).
        budget: the evaluations the search will make (logged; nothing here depends on it).
        threads: torch's intra-op threads per proposal (:class:`~npbandit.threads.torch_threads`).
        max_context: the most observations an NP conditions on: ``"checkpoint"`` (default:
            what it was trained with), an int, or ``None`` (every one); past it, the best
            non-dominated layers (:func:`~npbandit.acquisition.multi_objective.front_rows`).
        snap: as :class:`~npbandit.policies.BOPolicy`'s: where points of the cube are evaluated.
        constrained: ``True``: every observation carries ``info["constraints"]``.
        acq_optimizer: how the acquisition is maximised
            (:mod:`npbandit.acquisition.optimizers`); ``None``: what the checkpoint's card
            recommends, ``GradientRestarts()`` for any other model.

    Points in flight (``act(pending=...)``) are believed at the model's mean there (the
    kriging believer). Failed evaluations are seen at each output's worst value. There is no
    recommendation (:meth:`recommend` returns ``None``): the result of such a search is its
    front.
    """

    def __init__(self, dim: int, objectives: int, model: str | Callable[[torch.Tensor, torch.Tensor], Any] = "tnpd-bo",
                 n_init: int | None = None, avoid_repeats: bool = True, budget: int | None = None,
                 threads: int | str | None = None, max_context: int | str | None = "checkpoint",
                 snap: Callable[[torch.Tensor], torch.Tensor] | None = None, constrained: bool = False,
                 acq_optimizer: AcquisitionOptimizer | None = None, max_n_init: int | None = None) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        if isinstance(objectives, bool) or not isinstance(objectives, int) or objectives < 2:
            raise ValueError(f"objectives must be an int >= 2 (for one objective use BOPolicy), got {objectives!r}")
        for name, flag in (("avoid_repeats", avoid_repeats), ("constrained", constrained)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise ValueError(f"budget must be None or a positive int, got {budget!r}")
        if n_init is not None and (isinstance(n_init, bool) or not isinstance(n_init, int) or n_init < 1):
            raise ValueError(f"n_init must be a positive int, got {n_init!r}")
        max_n_init = None if max_n_init is None else check_int("max_n_init", max_n_init, minimum=1)
        self.dim, self.objectives, self.budget = dim, objectives, budget
        self.avoid_repeats, self.constrained = avoid_repeats, constrained
        self.threads = check_threads("threads", threads)
        self.snap = check_snap(snap)
        self.model_factory, self.model_name = as_model_factory(model)
        self.surrogate = self.model_factory.surrogate if isinstance(self.model_factory, NPModelFactory) else None
        card = None if self.surrogate is None else self.surrogate.card
        if card is not None:
            self.checkpoint = {"name": card["name"], "sha256": card["sha256"]}
        recommended = None if card is None else checkpoint_use(card).get("acq_optimizer")
        self.acq_optimizer = resolve_acq_optimizer(acq_optimizer, recommended, None, None, acquisition="logei")
        if max_context == "checkpoint":
            max_context = None if card is None else context_limit(card)
        elif max_context is not None and (isinstance(max_context, bool) or not isinstance(max_context, int)
                                          or max_context < 1):
            raise ValueError(f"max_context must be 'checkpoint', a positive int or None, got {max_context!r}")
        self.max_context = max_context
        #: the inputs the NP reads: ``dim``, or its checkpoint's width when that is smaller
        self.width = dim if self.surrogate is None else min(dim, served_width(self.surrogate))
        self.n_init = (n_init if n_init is not None else 2 * self.width + 1 if max_n_init is None
                       else min(2 * self.width + 1, max_n_init))
        self.name = f"{self.model_name}-logehvi"

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.seen = ParetoObservations(self.objectives)
        self.design = SobolDesign(self.dim, seed)
        self.hand_outs = HandOuts()

    def act(self, obs: np.ndarray, pending: np.ndarray | None = None, pinned: Pinned | None = None) -> np.ndarray:
        """The next point, ``[d]`` in the unit cube; ``pending`` ``[p, d]``: points handed out
        and not yet observed, believed at the model's mean there. Design points until
        ``n_init`` are observed, failed or in flight (and at least two are observed).
        ``pinned``: columns held at given values (as ``BOPolicy.act``'s)."""
        return hand_out(self.hand_outs, pending, dim=self.dim, n_init=self.n_init, observed=len(self.seen),
                        failed=len(self.seen.failed), design=lambda: self._design_point(pinned),
                        propose=lambda points: self._propose(points, pinned),
                        seed_from=None if self.surrogate is not None else self.rng, threads=self.threads)

    def _design_point(self, pinned: Pinned | None = None) -> np.ndarray:
        """The next design point (:meth:`HandOuts.design_point`), with ``pinned``'s columns set."""
        return self.hand_outs.design_point(self.design, self.snap, (*self.seen.X.array, *self.seen.failed.array),
                                           None if pinned is None else pinned.apply)

    def _propose(self, pending: torch.Tensor | None, pinned: Pinned | None = None) -> np.ndarray:
        X, Y = self.seen.data()
        m, k = self.objectives, self.seen.constraints or 0
        keep = front_rows(Y, m, k, self.max_context)
        Y = warp_objectives(Y, m, k)
        point = propose(self._model(X[keep], Y[keep]), "logei", dim=self.dim, best_f=None,
                        seed=int(self.rng.integers(2**31)), pending=pending, outputs=Y,
                        observed=X if self.avoid_repeats else None, snap=self.snap, constraints=k, objectives=m,
                        acq_optimizer=self.acq_optimizer, pinned=pinned)
        if self.avoid_repeats:
            warn_if_repeated(point, X, self.snap)
        point = pin(pinned, snap_points(self.snap, point))
        self.hand_outs.add(point, _NO_SCALAR_BEST)
        return point

    def _model(self, X: torch.Tensor, Y: torch.Tensor):
        """The model of every output on ``X [n, d]``, ``Y [n, m + k]``: an NP wider than its
        checkpoint reads the most relevant columns."""
        if self.surrogate is not None and self.width < self.dim:
            from npbandit.models import NPModel

            return NPModel.from_pretrained(self.surrogate, X, Y, columns="relevant")
        return self.model_factory(X, Y)

    def observe(self, obs, action, reward, info) -> None:
        rewards = np.asarray(reward, dtype=np.float64)
        if rewards.shape != (self.objectives,) or not np.isfinite(rewards).all():
            raise ValueError(f"ParetoBOPolicy observes one finite reward per objective, an array of shape "
                             f"({self.objectives},); got {reward!r}")
        c = None
        if self.constrained:
            given = info.get("constraints") if isinstance(info, dict) else None
            if given is None:
                raise ValueError("ParetoBOPolicy(constrained=True) observes each point's constraint values in "
                                 "info['constraints'] (a sequence of floats, feasible when all are <= 0); this "
                                 "observation has none")
            c = np.asarray(given, dtype=np.float64).reshape(-1)
            if not c.size or not np.isfinite(c).all():
                raise ValueError(f"info['constraints'] must be a non-empty sequence of finite floats, got {given!r}")
        x = np.asarray(action, dtype=np.float64)
        self.hand_outs.settle(x, lambda: None)
        self.seen.add(x, rewards, c)

    def observe_failure(self, obs, action, error: str) -> None:
        """A point whose evaluation failed: never proposed again, and seen by the model at each
        output's worst observed value (a failure read as a bad outcome of its region)."""
        x = np.asarray(action, dtype=np.float64)
        self.hand_outs.settle(x, lambda: None)
        self.seen.failed.append(x)

    def recommend(self) -> Recommendation | None:
        """``None``: several objectives have a front of best points, not one."""
        return None

    def params(self) -> dict[str, Any]:
        """The settings this policy runs with (JSON-serialisable; logged with each run)."""
        out = {"dim": self.dim, "objectives": self.objectives, "acquisition": "log-ehvi", "n_init": self.n_init,
               "acq_optimizer": self.acq_optimizer.params(), "avoid_repeats": self.avoid_repeats,
               "liar": "believer", "max_context": self.max_context}
        if self.constrained:
            out["constrained"] = True
        if self.width < self.dim:
            out["columns"] = "relevant"
            out["subspace_width"] = self.width
        factory_params = getattr(self.model_factory, "params", None)
        if callable(factory_params):
            out.update(factory_params())
        return out
