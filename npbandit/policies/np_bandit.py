"""NP-UCB and NP-Thompson on a bandit surrogate (a ``*-wheel`` checkpoint):
:class:`NPBanditPolicy`. NP policies for any bandit (one ``*-bo`` regression per arm) are in
:mod:`npbandit.policies.per_arm`; the policy names of both are parsed and checked in
:mod:`npbandit.policies.names`.

NP policies follow the NP bandit protocol (docs/protocols.md §3): the history is the
surrogate's context; each past round contributes its context ``x`` and a reward row in
which only the played arm was observed. The policy fills the other arms as the
surrogate's prior did (:class:`~npbandit.priors.wheel.RewardFill`, the fill its card
declares) and hands the surrogate the row in reward units; the surrogate's outcome
transform encodes it as its prior did. Each observation is streamed in with ``update`` --
CMANP's constant-cost update; other surrogates re-condition inside their ``update``. The
first action is uniform (there is nothing to condition on).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from npbandit.policies.base import Policy
from npbandit.policies.names import BANDIT_PRIORS, RULES
from npbandit.policies.problem import check_arm_and_reward, check_bandit_context, check_bandit_spaces, outside
from npbandit.priors.wheel import RewardFill
from npbandit.surrogates.base import NeuralProcess
from npbandit.threads import check_threads, torch_threads
from npbandit.transforms.base import OutcomeTransform
from npbandit.transforms.reward import RewardEncoding
from npbandit.validation import check_real

__all__ = ["NPBanditPolicy"]


class NPBanditPolicy(Policy):
    """UCB (``argmax mu + beta * sigma``, β = 1 in the wheel protocol) or Thompson
    sampling (``argmax`` of one draw of every arm's reward) on an NP surrogate.

    Thompson draws from the surrogate's joint predictive of the arms' rewards at the
    round's context given the history (``surrogate.sample``): for a joint-predictive
    model (``joint_predictive``, e.g. CMANP-AND with ``y_dim = n_arms``) the arms'
    rewards are drawn together, correlated as the model predicts them (the arms share
    one wheel, so what the history says about one arm moves the others); for a diagonal
    model they are independent, its joint. ``"marginal-thompson"`` draws every arm from
    its marginal alone even for a joint model: the ablation that isolates the joint.
    The draws are of the *observed* reward (the predictive, observation noise included),
    not of the mean reward as in textbook Thompson sampling: the surrogates predict
    observations; on the wheel the noise (σ = 0.05 for the small arms) keeps about 1 %
    of the inner rounds exploring even under an exact model.

    Args:
        surrogate: a pretrained NP with ``y_dim == n_arms`` that carries its outcome
            transform (``load_surrogate("cmanp-wheel")`` sets the
            :class:`~npbandit.transforms.RewardEncoding` its card declares).
        rule: ``"ucb"``, ``"thompson"`` or ``"marginal-thompson"``.
        beta: the UCB exploration weight (explicit; no square root is taken).
        fill: what stands in the unplayed arms of each reward row
            (:class:`~npbandit.priors.wheel.RewardFill` or its kind, ``"zeros"`` /
            ``"noise"``); ``None``: the fill the surrogate's ``RewardEncoding`` names. A
            noise fill draws from the policy's generator.
        threads: torch's intra-op threads for each step's network call
            (:class:`~npbandit.threads.torch_threads`): a positive int, ``"torch"`` or
            ``None`` (default: ``NPBANDIT_THREADS``, else ``OMP_NUM_THREADS`` /
            ``MKL_NUM_THREADS``, else 1).

    Decisions are made on the network's Gaussian (the predictive's ``.encoded``); the
    encoding is strictly increasing, so UCB picks the arm with the highest ``Φ(β)``
    quantile in reward units, and a Thompson draw ranks the arms as the same draw in
    reward units would.

    Raises:
        ValueError: the surrogate has no outcome transform (a model from ``build``: set
            ``surrogate.outcome_transform`` to the encoding it was trained with), or no
            ``fill`` is given and its transform names none.
    """

    def __init__(self, surrogate: NeuralProcess, rule: str = "ucb", beta: float = 1.0,
                 fill: RewardFill | str | None = None, threads: int | str | None = None) -> None:
        if not isinstance(surrogate, NeuralProcess):
            raise TypeError(f"surrogate must be an npbandit NeuralProcess, got {type(surrogate).__name__}")
        if rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
        beta = check_real("beta", beta, low=0.0)
        self.threads = check_threads("threads", threads)
        card = getattr(surrogate, "card", None)
        if card is not None:  # a checkpoint of another prior would fail later, on a shape or silently
            from npbandit.surrogates.pretrained import check_checkpoint_kind

            check_checkpoint_kind(card, prior=BANDIT_PRIORS, purpose="NPBanditPolicy")
        transform = surrogate.outcome_transform
        if transform is None:  # the network reads encoded rewards: someone must encode them
            raise ValueError("surrogate has no outcome_transform: NPBanditPolicy passes rewards in reward units, and "
                             "the surrogate must encode them as its prior did; load it with load_surrogate, or set "
                             "surrogate.outcome_transform = RewardEncoding(...) (or Bilog(...)) as trained")
        if fill is None:
            if not isinstance(transform, RewardEncoding):
                raise ValueError(f"fill is required: the surrogate's outcome_transform ({transform.describe()}) names "
                                 "no fill for unplayed arms; pass fill='zeros' or 'noise' as its prior filled them")
            fill = transform.fill
        self.fill = fill if isinstance(fill, RewardFill) else RewardFill(fill)
        self.surrogate = surrogate.eval()
        self.rule, self.beta = rule, float(beta)
        self.n_arms = surrogate.y_dim
        self.name = f"{surrogate.name if card is None else card['name']}-{rule}"
        self.checkpoint = None if card is None else {"name": card["name"], "sha256": card["sha256"]}
        # the interval every input was drawn from in training (a card's ``input_domain``): the
        # network reads contexts as they come, so one outside it is a context it never saw
        self.input_domain = None
        if card is not None:
            from npbandit.surrogates.pretrained import checkpoint_use

            domain = checkpoint_use(card).get("input_domain")
            self.input_domain = None if domain is None else (float(domain[0]), float(domain[1]))
        # the box a context must lie in: that interval in every dimension (the bounds other policies take from a Box)
        self.bounds = None if self.input_domain is None else \
            np.repeat(np.asarray(self.input_domain, dtype=np.float64)[:, None], surrogate.x_dim, axis=1)
        self._ref = next(surrogate.parameters())
        self._largest = torch.finfo(self._ref.dtype).max  # what a context or reward must not exceed
        # the surrogate's dtype in numpy, where it has one: a context is cast there, then shared
        self._np_dtype = {torch.float32: np.float32, torch.float64: np.float64}.get(self._ref.dtype)

    @property
    def encoding(self) -> RewardEncoding | OutcomeTransform:
        """The surrogate's outcome transform with the policy's fill, as a
        :class:`~npbandit.transforms.RewardEncoding` where it is one (a ``Bilog`` or
        ``Scale``), else the transform itself (recorded with the policy's parameters)."""
        transform = self.surrogate.outcome_transform
        try:
            return RewardEncoding.of(transform, self.fill.kind)
        except TypeError:
            return transform

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        # on the surrogate's device: sample() and torch.randn draw with it there
        self.torch_rng = torch.Generator(device=self._ref.device).manual_seed(int(self.rng.integers(2**62)))
        empty = torch.zeros(1, 0, self.surrogate.x_dim, **self._like)
        with torch.inference_mode(), torch_threads(self.threads):
            self.state = self.surrogate.condition(empty, torch.zeros(1, 0, self.n_arms, **self._like))
        # one reward row per arm played, 1 where observed: observe scales it, the fill fills the rest
        self._played = torch.eye(self.n_arms, **self._like).reshape(self.n_arms, 1, 1, self.n_arms)
        self._observed = self._played.bool()

    @property
    def _like(self) -> dict[str, Any]:
        return {"dtype": self._ref.dtype, "device": self._ref.device}

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        """Also refuses a ``Box`` whose finite sides leave the checkpoint's ``input_domain``
        (up to :data:`~npbandit.policies.problem.CONTEXT_TOLERANCE` of its width): the network
        would read contexts it was never trained on."""
        who = f"policy {self.name!r} (a checkpoint of {self.surrogate.x_dim}-D contexts and {self.n_arms} arms)"
        check_bandit_spaces(observation_space, action_space, self.n_arms, self.surrogate.x_dim, who)
        if self.input_domain is None:
            return
        lo, hi = self.input_domain
        low, high = (np.asarray(side, dtype=np.float64).reshape(-1)
                     for side in (observation_space.low, observation_space.high))
        out = outside(low, high, lo, hi)
        if out.any():
            i = int(np.flatnonzero(out)[0])
            raise ValueError(f"env.observation_space {observation_space} leaves the inputs {who} was trained on, "
                             f"[{lo:g}, {hi:g}] in every dimension: its dimension {i} spans [{low[i]:g}, {high[i]:g}]; "
                             f"the network reads contexts as they come, so map them into [{lo:g}, {hi:g}], or use one "
                             "regression per arm on a 'bo' checkpoint (cmanp-bo), which maps any finite box")

    def _context(self, obs: Any) -> torch.Tensor:
        """``obs`` checked (:func:`~npbandit.policies.problem.check_bandit_context`, within
        the checkpoint's ``input_domain``, and the surrogate's dtype) as the target ``[1, 1, dx]``
        the surrogate reads."""
        context = check_bandit_context(obs, self.surrogate.x_dim, self.bounds,
                                       what=f"the inputs policy {self.name!r}'s checkpoint was trained on",
                                       fix="map the contexts into them")
        if np.abs(context).max() > self._largest:
            raise ValueError(f"obs {context.tolist()} does not fit the surrogate's {self._ref.dtype}")
        if self._np_dtype is None:
            return torch.as_tensor(context, **self._like).reshape(1, 1, -1)
        return torch.from_numpy(context.astype(self._np_dtype)).to(self._ref.device).view(1, 1, -1)

    def act(self, obs: np.ndarray) -> int:
        x = self._context(obs)  # checked on the first round too, which reads no model
        if self.state.num_points == 0:
            return int(self.rng.integers(self.n_arms))
        if self.rule == "thompson" and self.surrogate.joint_predictive:
            # data units; the encoding is one increasing map for every arm: same argmax
            with torch.inference_mode(), torch_threads(self.threads):
                return int(torch.argmax(self.surrogate.sample(self.state, x, 1, self.torch_rng)[0, 0, 0]))
        with torch.inference_mode(), torch_threads(self.threads):
            # model units (see the class docstring); x and the state are the policy's own, checked
            dist = self.surrogate.predict(self.state, x, check=False).encoded
            mu, sigma = dist.loc[0, 0], dist.scale[0, 0]
            if self.rule == "ucb":
                return int(torch.argmax(torch.add(mu, sigma, alpha=self.beta)))
            return int(torch.argmax(mu + sigma * torch.randn(mu.shape, generator=self.torch_rng, dtype=mu.dtype)))

    def observe(self, obs, action, reward, info) -> None:
        action, reward = check_arm_and_reward(action, reward, self.n_arms)
        x = self._context(obs)
        if abs(reward) > self._largest:
            raise ValueError(f"reward {reward!r} does not fit the surrogate's {self._ref.dtype}")
        with torch.inference_mode(), torch_threads(self.threads):
            # reward units: the played arm's reward, zeros elsewhere, as a zeros fill leaves it; a
            # noise fill draws from the policy's generator
            y = self._played[action] * reward
            if self.fill.kind != "zeros":
                y = self.fill.apply(y, self._observed[action], self.torch_rng)
            # the surrogate encodes the row; x, y and the state are the policy's own, checked
            self.state = self.surrogate.update(self.state, x, y, check=False)

    def params(self) -> dict[str, Any]:
        encoding = self.encoding
        if isinstance(encoding, RewardEncoding):
            return {"rule": self.rule, "beta": self.beta, **encoding.spec()}
        return {"rule": self.rule, "beta": self.beta, "outcome_transform": encoding.describe(),
                "reward_fill": self.fill.kind}

