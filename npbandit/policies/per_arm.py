"""NP-UCB / NP-Thompson on any contextual bandit: one ``bo``-checkpoint regression per arm.

The ``*-wheel`` checkpoints predict the wheel's five arms together from 2-D contexts, so
they serve that bandit alone. A ``*-bo`` checkpoint is a regression on the unit cube
``[0, 1]^d`` (``d`` up to its width, 6 for the shipped ones) meta-trained on GP draws;
:class:`PerArmNPPolicy` holds one such regression per arm, so it serves a bandit with any
number of arms and contexts of up to that width:

- **What each arm's model sees**: the contexts of the rounds that played that arm and
  their rewards, nothing else. It is an :class:`~npbandit.models.NPModel` on the shared
  network (:mod:`npbandit.models`, the model BO uses): contexts are mapped from
  ``bounds`` (the ``Box``'s finite low / high, or the caller's) onto the checkpoint's
  cube and zero-padded to its width; rewards are standardised by the arm's own mean and
  std, as the ``bo`` prior standardised every training task (:mod:`npbandit.models.network`);
  with the symmetric views the card recommends (``n_views``).
- **Streaming**: an arm's model is built on its first ``n_init`` rounds; each later round
  of the arm is folded in with ``condition_on_observations``, the surrogate's ``update``
  (constant cost for CMANP), its standardisation re-fitted (one full conditioning of that
  arm) only when the arm's reward mean or std has drifted
  (:mod:`npbandit.models.conditioning`). The arm's noise estimate is kept until its rounds
  have grown by ``NOISE_REFRESH`` (a fifth) and then read afresh at up to ``NOISE_POINTS``
  of its contexts (:mod:`npbandit.models.likelihood`), so a round's cost does not grow with
  the rounds.
- **Decisions**: while some arm has fewer than ``n_init`` rounds, one such arm is played
  (uniformly at random; no arm model exists before). Then UCB plays
  ``argmax_a mu_a(x) + beta * sigma_a(x)`` and Thompson the argmax of one draw
  ``mu_a(x) + sigma_a(x) * z_a`` per arm, where ``mu_a`` / ``sigma_a^2`` is arm ``a``'s
  posterior of the *mean* reward at the round's context in reward units (the NP's
  predictive less its noise estimate, :meth:`NPModel.posterior`). Ties go to the lowest arm.

**Contexts wider than the checkpoint** (``d > width``) are read through a
:class:`~npbandit.policies.context_projection.ContextProjection` (``projection=``; the
default, :func:`~npbandit.policies.context_projection.default_projection`, when ``d`` is
wider and none is given): each arm's model then reads the context's ``k <= width``
projected coordinates, mapped onto the cube from a box of the rows seen; the projection is
refitted, and every arm's model re-conditioned on all its rows, when the rows have doubled
(the schedule, the box and what happens before the first fit:
:mod:`npbandit.policies.context_projection`). Contexts that fit the checkpoint and no
``projection`` given: they are read as they are, as above.

The arms are separate models: each round asks the network once per arm, at one target
(the arm just updated recomputes its state's latents, the others reuse theirs). They are
not one batch because the arms' states differ in more than their values -- each has its
own rows, standardisation and noise estimate, and CMANP's elite memory holds
``min(N_a, n_elite)`` points, which differs between arms -- and the NP protocol has no
way to join states of different context sets.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from npbandit.policies.bandit import check_arm_and_reward
from npbandit.policies.base import Policy
from npbandit.policies.context_projection import (
    ContextProjection,
    ProjectionMap,
    as_projection,
    check_map,
    default_projection,
    next_refit,
    working_box,
)
from npbandit.policies.problem import (
    arm_model_width,
    check_arm_checkpoint,
    check_arm_space,
    check_bounds,
    check_context,
    check_context_space,
)
from npbandit.rows import RowBuffer
from npbandit.surrogates.base import NeuralProcess
from npbandit.threads import torch_threads
from npbandit.validation import check_int, check_real

__all__ = ["PerArmNPPolicy", "PER_ARM_RULES"]

#: decision rules of :class:`PerArmNPPolicy` (its arms are independent: Thompson draws them apart)
PER_ARM_RULES = ("ucb", "thompson")
#: how far (a share of the box's width) a context may stray outside ``bounds``: rounding, not data
BOUNDS_TOLERANCE = 1e-6


class PerArmNPPolicy(Policy):
    """One NP regression per arm on a ``bo`` checkpoint (see the module docstring).

    Args:
        surrogate: a pretrained ``bo`` checkpoint (``load_surrogate("cmanp-bo")``) whose
            width is at least the contexts' dimension; shared by the arms, never changed.
        bounds: ``[2, d]`` (lower row, upper row), finite with lower < upper: the box every
            context lies in, mapped onto the checkpoint's cube. ``d`` is the context width.
        n_arms: the number of arms (``>= 2``).
        rule: ``"ucb"`` or ``"thompson"``.
        beta: the UCB exploration weight (no square root is taken).
        n_init: rounds each arm is played before its model is built (``>= 1``; with one,
            the arm's rewards are standardised by a std of 1, in whatever units they come).
        n_views: symmetric views each arm's model averages over (``None``: the number the
            checkpoint's card recommends, as ``NPModel.from_pretrained``; 1: none).
        projection: how contexts are read when wider than the checkpoint: a
            :class:`~npbandit.policies.context_projection.ContextProjection` or the name of
            one (``"principal-components"``, ``"reward-directions"``); ``None``: the default
            for contexts wider than the checkpoint, and none for contexts that fit it. Given
            for contexts that fit, they are read through it too.

    Network calls run at npbandit's thread count (:mod:`npbandit.threads`).

    Raises:
        TypeError: ``surrogate`` is not a loaded checkpoint.
        CheckpointError: a checkpoint that is not a ``bo`` one.
        ValueError: any other argument out of range.
    """

    def __init__(self, surrogate: NeuralProcess, bounds: Any, n_arms: int, rule: str = "ucb", beta: float = 1.0,
                 n_init: int = 2, n_views: int | None = None,
                 projection: ContextProjection | str | None = None) -> None:
        card = getattr(surrogate, "card", None)
        if not isinstance(surrogate, NeuralProcess) or not isinstance(card, dict):
            raise TypeError("surrogate must be a pretrained 'bo' checkpoint (load_surrogate('cmanp-bo')), "
                            f"got {type(surrogate).__name__}")
        if rule not in PER_ARM_RULES:
            raise ValueError(f"rule must be one of {PER_ARM_RULES}, got {rule!r}")
        self.bounds = check_bounds("bounds", bounds)
        self.context_dim = self.bounds.shape[1]
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.beta = check_real("beta", beta, low=0.0)
        self.n_init = check_int("n_init", n_init, minimum=1)
        if n_views is not None:
            check_int("n_views", n_views, minimum=1)
        self.name = f"{card['name']}-{rule}"
        check_arm_checkpoint(card, self.context_dim, f"bandit policy {self.name!r}")
        self.width = arm_model_width(card)
        if projection is None and self.context_dim > self.width:
            projection = default_projection()
        self.projection = None if projection is None else as_projection(projection)
        #: the width of the arms' models' inputs: the context's, or at most the checkpoint's through the projection
        self.model_dim = self.context_dim if self.projection is None else min(self.context_dim, self.width)
        self.surrogate = surrogate.eval()
        self.rule = rule
        self.checkpoint = {"name": card["name"], "sha256": card["sha256"]}
        from npbandit.models.checkpoint import pretrained_defaults  # BoTorch loads with the first per-arm policy

        if n_views is None:  # the card's recommendation for this width, as NPModel.from_pretrained takes it
            n_views = pretrained_defaults(surrogate, torch.zeros(1, self.model_dim), torch.zeros(1, 1),
                                          "PerArmNPPolicy").get("n_views", 1)
        self.n_views = n_views
        self._options = {"bounds": torch.from_numpy(np.array(self.bounds)), "n_views": n_views}
        if self.projection is not None:  # the box comes with each fit; the options checked on the unit one
            self._options["bounds"] = torch.tensor([[0.0] * self.model_dim, [1.0] * self.model_dim])
        box = self._options["bounds"].numpy()
        self._model(box.mean(0, keepdims=True), np.zeros((1, 1)))  # the options checked now, not mid-run

    def _model(self, X: np.ndarray, Y: np.ndarray):
        """An arm's model on its rows ``X [n, model_dim]``, ``Y [n, 1]`` (float64), read in
        the box ``_options["bounds"]``."""
        from npbandit.models import NPModel

        with torch_threads():
            return NPModel.from_pretrained(self.surrogate, torch.from_numpy(X), torch.from_numpy(Y), **self._options)

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        check_arm_space(action_space, self.n_arms, f"policy {self.name!r}")
        check_context_space(observation_space, self.context_dim, f"policy {self.name!r}")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.models: list[Any] = [None] * self.n_arms  # NPModel per arm, once it has n_init rounds
        self.rows: list[list[tuple[np.ndarray, float]]] = [[] for _ in range(self.n_arms)]  # rounds before that
        self.counts = [0] * self.n_arms
        self._acted: tuple[Any, np.ndarray] | None = None  # the last context act checked: (obs, its values)
        if self.projection is not None:  # every round's raw row, for the refits
            self._contexts = RowBuffer((self.context_dim,))
            self._arms, self._rewards = RowBuffer(()), RowBuffer(())
            self.map: ProjectionMap | None = None  # the fitted projection (None before the first fit)
            self.box: np.ndarray | None = None  # [2, k] the box the arms' models read, in projected coordinates
            self.refits: list[int] = []  # the rows each fit of the projection was made on
            self.widenings = 0  # re-conditionings because a context fell outside the box
            self._next_fit: int | None = None  # the rows at which the next scheduled fit comes
            self._projected: tuple[np.ndarray, np.ndarray] | None = None  # (context, coordinates) act computed

    def _context(self, obs: Any) -> np.ndarray:
        x = check_context(obs, self.context_dim)
        low, high = self.bounds
        slack = BOUNDS_TOLERANCE * (high - low)
        if ((x < low - slack) | (x > high + slack)).any():
            raise ValueError(f"obs {x.tolist()} lies outside the policy's context bounds (lower {low.tolist()}, "
                             f"upper {high.tolist()}); build it with bounds that contain every context")
        return x

    def _observed_context(self, obs: Any) -> np.ndarray:
        """``obs`` checked as :meth:`_context` checks it, once a round: the context :meth:`act`
        last checked is recognised (the same object, its values unchanged) and not checked again."""
        acted, self._acted = self._acted, None
        if acted is not None and acted[0] is obs and np.array_equal(obs, acted[1]):
            return acted[1]
        return self._context(obs)

    def predict(self, obs: Any) -> tuple[np.ndarray, np.ndarray]:
        """Every arm's posterior mean and variance of the mean reward at context ``obs``
        (reward units), ``[n_arms]`` each; NaN for an arm with fewer than ``n_init`` rounds
        (and, through a projection, every arm before the first fit)."""
        x = self._context(obs)
        return self._predict(x if self.projection is None or self.map is None else self._coordinates(x))

    def _predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict` at a checked context ``x [model_dim]`` (projected where contexts are)."""
        x = torch.from_numpy(x).unsqueeze(0)
        mean, var = np.full(self.n_arms, np.nan), np.full(self.n_arms, np.nan)
        with torch.no_grad(), torch_threads(), warnings.catch_warnings():
            # a latent variance at its floor (the noise estimate covers the predictive, MIN_LATENT_VAR left)
            # times a small reward std falls below GPyTorch's 1e-10, which it raises to that and warns about
            warnings.filterwarnings("ignore", message="Negative variance values detected")
            for arm, model in enumerate(self.models):
                if model is not None:
                    posterior = model.posterior(x)
                    mean[arm], var[arm] = float(posterior.mean), float(posterior.variance)
        return mean, var

    def act(self, obs: np.ndarray) -> int:
        x = self._context(obs).copy()  # a copy: obs may be an array its owner changes before observe
        self._acted = (obs, x)
        waiting = [arm for arm, model in enumerate(self.models) if model is None]
        if waiting:
            if self.projection is not None and all(c >= self.n_init for c in self.counts):
                return int(self.rng.integers(self.n_arms))  # every arm has its rounds; the first fit waits for rows
            return int(self.rng.choice([arm for arm in waiting if self.counts[arm] < self.n_init] or waiting))
        if self.projection is not None:
            z = self._coordinates(x)
            self._projected = (x, z)  # observe streams the same coordinates in (no fit comes between)
            x = z
        mean, var = self._predict(x)
        if self.rule == "ucb":
            scores = mean + self.beta * np.sqrt(var)
        else:
            scores = mean + np.sqrt(var) * self.rng.standard_normal(self.n_arms)
        return int(np.argmax(scores))

    def observe(self, obs, action, reward, info) -> None:
        action, reward = check_arm_and_reward(action, reward, self.n_arms)
        x = self._observed_context(obs)
        if self.projection is not None:
            self._observe_projected(x, action, reward)
            return
        model = self.models[action]
        if model is None:
            rows = self.rows[action]
            rows.append((x.copy(), reward))  # obs may be an array the env reuses
            if len(rows) == self.n_init:
                self.models[action] = self._model(np.stack([r[0] for r in rows]), np.array([[r[1]] for r in rows]))
                rows.clear()
        else:
            with torch_threads():
                self.models[action] = model.condition_on_observations(torch.from_numpy(x).unsqueeze(0),
                                                                      torch.tensor([[reward]], dtype=torch.float64))
        self.counts[action] += 1

    def _observe_projected(self, x: np.ndarray, action: int, reward: float) -> None:
        """:meth:`observe` through the projection: the raw row kept; a fit when one is due
        (the first once every arm has ``n_init`` rounds and the rows outnumber ``width``,
        then whenever they have doubled), else the round streamed into its arm's model."""
        self._contexts.append(x)
        self._arms.append(action)
        self._rewards.append(reward)
        self.counts[action] += 1
        n = len(self._contexts)
        if self.map is None:
            if n > self.model_dim and min(self.counts) >= self.n_init:
                self._fit()
            return
        if n >= self._next_fit:
            self._fit()
            return
        projected, self._projected = self._projected, None
        z = projected[1] if projected is not None and projected[0] is x else self._coordinates(x)
        with torch_threads():
            self.models[action] = self.models[action].condition_on_observations(
                torch.from_numpy(z).unsqueeze(0), torch.tensor([[reward]], dtype=torch.float64))

    def _fit(self) -> None:
        """Refit the projection on every row so far and re-condition every arm in its coordinates."""
        X = self._contexts.array
        n = len(X)
        fitted = self.projection.fit(X.copy(), self._arms.array.astype(np.int64), self._rewards.array.copy(),
                                     self.n_arms, self.model_dim)
        self.map = check_map(fitted, self.context_dim, self.model_dim, self.projection)
        self.refits.append(n)
        self._next_fit = next_refit(n)
        Z = self.map(X)
        self._recondition(Z, working_box(Z))

    def _recondition(self, Z: np.ndarray, box: np.ndarray) -> None:
        """Every arm's model built afresh on its rows ``Z [n, k]`` (projected) in ``box`` ``[2, k]``."""
        self.box = box
        self._options["bounds"] = torch.from_numpy(self.box)
        arms, rewards = self._arms.array, self._rewards.array
        self.models = [self._model(np.ascontiguousarray(Z[arms == a]), rewards[arms == a][:, None].copy())
                       for a in range(self.n_arms)]

    def _coordinates(self, x: np.ndarray) -> np.ndarray:
        """A checked context ``x [d]`` in the fitted projection's coordinates ``[k]``; one outside
        the box first widens it (every arm re-conditioned in a box that holds it, never clipped)."""
        z = self.map(x)
        if ((z < self.box[0]) | (z > self.box[1])).any():
            self.widenings += 1
            Z = self.map(self._contexts.array)
            self._recondition(Z, working_box(np.vstack([Z, z])))
        return z

    def params(self) -> dict[str, Any]:
        out = {"rule": self.rule, "beta": self.beta, "n_arms": self.n_arms, "n_init": self.n_init,
               "n_views": self.n_views, "bounds": self.bounds.tolist()}
        if self.projection is not None:
            out["projection"] = {**self.projection.params(), "width": self.model_dim}
        return out
