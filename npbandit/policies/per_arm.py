"""NP-UCB / NP-Thompson on any contextual bandit: one ``bo``-checkpoint regression per arm.

The ``*-wheel`` checkpoints predict the wheel's five arms together from 2-D contexts, so
they serve that bandit alone. A ``*-bo`` checkpoint is a regression on the unit cube
``[0, 1]^d`` (``d`` up to its width, 6 for the shipped ones) meta-trained on GP draws;
:class:`PerArmNPPolicy` holds one such regression per arm, so it serves a bandit with any
number of arms, and contexts of any width through a context projection:

- **What each arm's model reads**: the contexts of the rounds that played that arm, in
  the coordinates of a :class:`~npbandit.policies.context_projection.ContextProjection`
  (``projection=``; by default :class:`~npbandit.policies.context_projection.Identity` for
  contexts no wider than the checkpoint, the contexts as they are, and
  :func:`~npbandit.policies.context_projection.default_projection` for wider ones), mapped
  onto the checkpoint's cube from the box of the rows seen (:func:`working_box`: their
  range plus a margin, widened, never clipped, when a context falls outside it; a ``Box``
  declared far wider than where the contexts lie would crowd them into a corner of the
  cube where the models cannot tell them apart), zero-padded to the checkpoint's width.
  The projection is fitted on the rounds seen once every arm has ``n_init`` rounds and the
  rows outnumber the models' width, and refitted, every arm's model re-conditioned on all
  its rows, when the rows have doubled (:mod:`npbandit.policies.context_projection`).
  Before the first fit the arms with fewer than ``n_init`` rounds are played (uniformly at
  random among them), then any arm at random.
- **One reward scale for all arms**: every arm's rewards are standardised by the mean and
  std of *all* rewards seen (every arm pays in the same units), not by the arm's own. An
  arm's own std after a few rounds can be tiny (two nearly equal rewards), and a model
  standardised by it would report an uncertainty that small everywhere, so UCB would
  never play the arm again; on the shared scale an arm seen twice is still uncertain away
  from its two contexts, and its prediction far from its data reverts to the mean reward
  of all arms. Each arm's :class:`~npbandit.models.NPModel` (the model BO uses, on the
  shared network, with the symmetric views the card recommends) is built with
  ``standardize=False`` on rewards already on that scale. When the pooled mean has moved
  by more than :data:`RESCALE_TOL` of the scale's std, or its std by more than a factor
  ``1 + RESCALE_TOL``, every arm is re-conditioned on the new scale (rare once rewards
  accumulate, as the drift of a running mean falls like ``1 / n``).
- **Streaming**: between fits and re-scalings each round is folded into its arm's model with
  ``condition_on_observations``, the surrogate's ``update`` (constant cost for CMANP); its
  noise estimate is kept until the arm's rounds have grown by ``NOISE_REFRESH`` (a fifth)
  and then read afresh at up to ``NOISE_POINTS`` of its contexts
  (:mod:`npbandit.models.likelihood`), so a round's cost does not grow with the rounds.
- **Decisions**: UCB plays ``argmax_a mu_a(x) + beta * sigma_a(x)`` and Thompson the argmax
  of one draw ``mu_a(x) + sigma_a(x) * z_a`` per arm, where ``mu_a`` / ``sigma_a^2`` is arm
  ``a``'s posterior of the *mean* reward at the round's context in reward units (the NP's
  predictive less its noise estimate, :meth:`NPModel.posterior`). Ties go to the lowest arm.

The arms are separate models: each round asks the network once per arm, at one target
(the arm just updated recomputes its state's latents, the others reuse theirs). They are
not one batch because the arms' states differ in more than their values -- each has its
own rows and noise estimate, and CMANP's elite memory holds ``min(N_a, n_elite)`` points,
which differs between arms -- and the NP protocol has no way to join states of different
context sets.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

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
    ContextualBanditPolicy,
    arm_model_width,
    check_arm_and_reward,
    check_arm_checkpoint,
    check_bandit_context,
    check_bounds,
)
from npbandit.rows import RowBuffer
from npbandit.surrogates.base import NeuralProcess
from npbandit.threads import torch_threads
from npbandit.transforms.moments import RESCALE_TOL, drifted, merge_moments, moment_statistics, moments
from npbandit.validation import check_int, check_real

__all__ = ["PerArmNPPolicy", "PER_ARM_RULES", "RESCALE_TOL"]

#: decision rules of :class:`PerArmNPPolicy` (its arms are independent: Thompson draws them apart)
PER_ARM_RULES = ("ucb", "thompson")


class PerArmNPPolicy(ContextualBanditPolicy):
    """One NP regression per arm on a ``bo`` checkpoint (see the module docstring).

    Args:
        surrogate: a pretrained ``bo`` checkpoint (``load_surrogate("cmanp-bo")``) whose
            width is at least the contexts' dimension; shared by the arms, never changed.
        bounds: ``[2, d]`` (lower row, upper row), finite with lower < upper: the box every
            context lies in (a context outside it is refused). ``d`` is the context width.
            The models' cube is mapped from the box of the contexts seen, not from this one.
        n_arms: the number of arms (``>= 2``).
        rule: ``"ucb"`` or ``"thompson"``.
        beta: the UCB exploration weight (no square root is taken).
        n_init: rounds each arm is played before the first fit builds the arms' models (``>= 1``).
        n_views: symmetric views each arm's model averages over (``None``: the number the
            checkpoint's card recommends, as ``NPModel.from_pretrained``; 1: none).
        projection: how contexts are read: a
            :class:`~npbandit.policies.context_projection.ContextProjection` or the name of
            one (``"identity"``, ``"principal-components"``, ``"reward-directions"``);
            ``None``: :class:`~npbandit.policies.context_projection.Identity` for contexts
            that fit the checkpoint, the default projection for wider ones.

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
            n_views = check_int("n_views", n_views, minimum=1)  # an int: the model refuses a NumPy integer
        self.name = f"{card['name']}-{rule}"
        check_arm_checkpoint(card, self.context_dim, f"bandit policy {self.name!r}")
        self.width = arm_model_width(card)
        self.projection = as_projection(default_projection(self.context_dim, self.width) if projection is None
                                        else projection)
        #: the width of the arms' models' inputs: the context's, or at most the checkpoint's
        self.model_dim = min(self.context_dim, self.width)
        self.surrogate = surrogate.eval()
        self.rule = rule
        self.checkpoint = {"name": card["name"], "sha256": card["sha256"]}
        from npbandit.models.checkpoint import pretrained_defaults  # BoTorch loads with the first per-arm policy

        if n_views is None:  # the card's recommendation for this width, as NPModel.from_pretrained takes it
            n_views = pretrained_defaults(surrogate, torch.zeros(1, self.model_dim), torch.zeros(1, 1),
                                          "PerArmNPPolicy").get("n_views", 1)
        self.n_views = n_views
        # the box comes with each fit; rewards come on the arms' shared scale (see the module docstring)
        self._options = {"bounds": torch.tensor([[0.0] * self.model_dim, [1.0] * self.model_dim]),
                         "n_views": n_views, "standardize": False}
        box = self._options["bounds"].numpy()
        self._model(box.mean(0, keepdims=True), np.zeros((1, 1)))  # the options checked now, not mid-run

    def _model(self, X: np.ndarray, Y: np.ndarray):
        """An arm's model on its rows ``X [n, model_dim]`` (projected) and rewards on the shared
        scale ``Y [n, 1]`` (float64), read in the box ``_options["bounds"]``."""
        from npbandit.models import NPModel

        with torch_threads():
            return NPModel.from_pretrained(self.surrogate, torch.from_numpy(X), torch.from_numpy(Y), **self._options)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.models: list[Any] = [None] * self.n_arms  # NPModel per arm, from the first fit on
        self.counts = [0] * self.n_arms
        self._acted: tuple[Any, np.ndarray] | None = None  # the last context act checked: (obs, its values)
        self._contexts = RowBuffer((self.context_dim,))  # every round's raw row, for the fits
        self._arms, self._rewards = RowBuffer(()), RowBuffer(())
        self.map: ProjectionMap | None = None  # the fitted projection (None before the first fit)
        self.box: np.ndarray | None = None  # [2, k] the box the arms' models read, in projected coordinates
        self.refits: list[int] = []  # the rows each fit of the projection was made on
        self.widenings = 0  # re-conditionings because a context fell outside the box
        self.rescalings = 0  # re-conditionings because the pooled reward mean or std drifted
        self._next_fit: int | None = None  # the rows at which the next scheduled fit comes
        self._projected: tuple[np.ndarray, np.ndarray] | None = None  # (context, coordinates) act computed
        self.scale: tuple[float, float] | None = None  # (mean, std) of the rewards the models are on
        self._moments = None  # running moments of all rewards (npbandit.transforms.moments)

    def _context(self, obs: Any) -> np.ndarray:
        return check_bandit_context(obs, self.context_dim, self.bounds)

    def _observed_context(self, obs: Any) -> np.ndarray:
        """``obs`` checked as :meth:`_context` checks it, once a round: the context :meth:`act`
        last checked is recognised (the same object, its values unchanged) and not checked again."""
        acted, self._acted = self._acted, None
        if acted is not None and acted[0] is obs and np.array_equal(obs, acted[1]):
            return acted[1]
        return self._context(obs)

    def predict(self, obs: Any) -> tuple[np.ndarray, np.ndarray]:
        """Every arm's posterior mean and variance of the mean reward at context ``obs``
        (reward units), ``[n_arms]`` each; NaN for every arm before the first fit."""
        x = self._context(obs)
        return self._predict(None if self.map is None else self._coordinates(x))

    def _predict(self, z: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict` at a context's coordinates ``z [model_dim]`` (``None``: before the first fit)."""
        mean, var = np.full(self.n_arms, np.nan), np.full(self.n_arms, np.nan)
        if z is None:
            return mean, var
        z = torch.from_numpy(z).unsqueeze(0)
        with torch.no_grad(), torch_threads(), warnings.catch_warnings():
            # a latent variance at its floor (the noise estimate covers the predictive, MIN_LATENT_VAR left)
            # times a small reward std falls below GPyTorch's 1e-10, which it raises to that and warns about
            warnings.filterwarnings("ignore", message="Negative variance values detected")
            for arm, model in enumerate(self.models):
                posterior = model.posterior(z)
                mean[arm], var[arm] = float(posterior.mean), float(posterior.variance)
        center, std = self.scale
        return center + std * mean, std ** 2 * var

    def act(self, obs: np.ndarray) -> int:
        x = self._context(obs).copy()  # a copy: obs may be an array its owner changes before observe
        self._acted = (obs, x)
        if self.map is None:  # before the first fit: the arms short of n_init rounds, then any
            waiting = [arm for arm in range(self.n_arms) if self.counts[arm] < self.n_init]
            return int(self.rng.choice(waiting)) if waiting else int(self.rng.integers(self.n_arms))
        z = self._coordinates(x)
        self._projected = (x, z)  # observe streams the same coordinates in (no fit comes between)
        mean, var = self._predict(z)
        if self.rule == "ucb":
            scores = mean + self.beta * np.sqrt(var)
        else:
            scores = mean + np.sqrt(var) * self.rng.standard_normal(self.n_arms)
        return int(np.argmax(scores))

    def observe(self, obs, action, reward, info) -> None:
        """The round's raw row kept; a fit when one is due (the first once every arm has
        ``n_init`` rounds and the rows outnumber the models' width, then whenever they have
        doubled), every arm re-conditioned when the pooled reward scale has drifted, else
        the round streamed into its arm's model."""
        action, reward = check_arm_and_reward(action, reward, self.n_arms)
        x = self._observed_context(obs)
        projected, self._projected = self._projected, None
        n = len(self._contexts) + 1
        z = None
        if self.map is not None and n < self._next_fit:  # its coordinates, any widening on the rows before it
            z = projected[1] if projected is not None and projected[0] is x else self._coordinates(x)
        self._contexts.append(x)
        self._arms.append(action)
        self._rewards.append(reward)
        self.counts[action] += 1
        one = moments(torch.tensor([[reward]], dtype=torch.float64))
        self._moments = one if self._moments is None else merge_moments(self._moments, one)
        if self.map is None:
            if n > self.model_dim and min(self.counts) >= self.n_init:
                self._fit()
            return
        if z is None:
            self._fit()
            return
        if self._drifted():
            self.rescalings += 1
            self._recondition(self.map(self._contexts.array), self.box)
            return
        center, std = self.scale
        with torch_threads():
            self.models[action] = self.models[action].condition_on_observations(
                torch.from_numpy(z).unsqueeze(0), torch.tensor([[(reward - center) / std]], dtype=torch.float64))

    def _drifted(self) -> bool:
        """Whether the pooled reward mean has moved by more than ``RESCALE_TOL`` of the models'
        scale, or its std by more than a factor ``1 + RESCALE_TOL``, since the models were built."""
        return drifted(*moment_statistics(self._moments), *map(torch.tensor, self.scale), RESCALE_TOL)

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
        """Every arm's model built afresh on its rows ``Z [n, k]`` (projected) in ``box`` ``[2, k]``,
        its rewards on the pooled scale of all rewards so far."""
        self.box = box
        self._options["bounds"] = torch.from_numpy(self.box)
        arms, rewards = self._arms.array, self._rewards.array
        # afresh from every reward (O(n), as the rebuild); a copy: the rewards' array is read-only
        self._moments = moments(torch.tensor(rewards)[:, None])
        center, std = (float(v) for v in moment_statistics(self._moments))
        self.scale = (center, std)
        scaled = (rewards - center) / std
        self.models = [self._model(np.ascontiguousarray(Z[arms == a]), scaled[arms == a][:, None].copy())
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
        return {"rule": self.rule, "beta": self.beta, "n_arms": self.n_arms, "n_init": self.n_init,
                "n_views": self.n_views, "bounds": self.bounds.tolist(),
                "projection": {**self.projection.params(), "width": self.model_dim}, "reward_scale": "pooled"}

