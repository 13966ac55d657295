"""Contextual-bandit policies: NP-UCB / NP-Thompson on a bandit surrogate (a ``*-wheel``
checkpoint), and baselines. NP policies for any bandit (one ``*-bo`` regression per arm)
are in :mod:`npbandit.policies.per_arm`; the policy names of both are parsed and checked here.

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

import warnings
from typing import Any

import numpy as np
import torch

from npbandit.exceptions import CheckpointError
from npbandit.policies.base import Policy
from npbandit.policies.problem import (
    ARM_PRIORS,
    check_arm_checkpoint,
    check_bandit_context,
    check_bandit_spaces,
    check_bounds,
    outside,
)
from npbandit.priors.wheel import RewardFill
from npbandit.surrogates.base import NeuralProcess
from npbandit.threads import check_threads, torch_threads
from npbandit.transforms.base import OutcomeTransform
from npbandit.transforms.moments import RESCALE_TOL, drifted, merge_moments, moment_statistics, moments
from npbandit.transforms.reward import RewardEncoding
from npbandit.validation import check_arm, check_int, check_real

__all__ = ["UniformPolicy", "LinUCBPolicy", "NPBanditPolicy", "GPUCBPolicy", "BASELINES", "BANDIT_PRIORS", "RULES",
           "parse_bandit_policy_name", "check_bandit_policy_name"]

#: bandit policies that need no checkpoint
BASELINES = ("uniform", "linucb", "lin-ts", "gp-ucb")
#: decision rules of :class:`NPBanditPolicy`
RULES = ("ucb", "thompson", "marginal-thompson")
#: priors whose checkpoints are bandit surrogates (context -> one reward per arm)
BANDIT_PRIORS = ("wheel",)


def parse_bandit_policy_name(name: str) -> tuple[str, str] | None:
    """``<checkpoint>[-ucb|-thompson|-marginal-thompson]`` -> ``(checkpoint, rule)``: a
    ``*-wheel`` checkpoint runs as :class:`NPBanditPolicy`, a ``*-bo`` one as
    :class:`~npbandit.policies.per_arm.PerArmNPPolicy` (``cmanp-bo-thompson``); a bare
    model name means its ``-wheel`` checkpoint (``cmanp`` -> ``cmanp-wheel``); a checkpoint
    path is taken as it is; ``None`` for the baselines (:data:`BASELINES`), which take no
    rule (``linucb-thompson`` is refused)."""
    from npbandit.surrogates import available_models

    if not isinstance(name, str):
        raise TypeError(f"policy must be a name, got {type(name).__name__}")
    if name in BASELINES:
        return None
    rule = "ucb"
    for suffix in ("-ucb", "-marginal-thompson", "-thompson"):
        if name.endswith(suffix):
            name, rule = name[: -len(suffix)], suffix[1:]
            break
    if name in BASELINES:
        raise ValueError(f"policy {name!r} is a baseline with its own rule: no -{rule} suffix")
    return (f"{name}-wheel" if name.lower() in available_models() else name), rule


def check_bandit_policy_name(name: str, *, context_dim: int = 2, n_arms: int = 5) -> None:
    """Check a bandit policy name before anything runs, for a bandit with ``context_dim``-D
    contexts and ``n_arms`` arms (the wheel bandit's by default): a baseline; a checkpoint
    trained on a bandit prior with ``context_dim`` inputs and ``n_arms`` outputs (the
    ``*-wheel`` ones); or a ``bo`` checkpoint, one regression per arm
    (:mod:`npbandit.policies.per_arm`; contexts wider than it are projected), with the rule
    ``ucb`` or ``thompson``.

    Raises:
        ValueError: an unknown name (with the closest known names), or a checkpoint
            trained for something else (``CheckpointError``, listing those that fit).
        FileNotFoundError: a known checkpoint whose card or weights file is missing.
    """
    import difflib
    from pathlib import Path

    from npbandit.surrogates.pretrained import (
        UnknownCheckpointError,
        check_checkpoint_kind,
        checkpoint_use,
        fitting_checkpoints,
        read_card,
    )

    parsed = parse_bandit_policy_name(name)
    if parsed is None:
        return
    checkpoint, rule = parsed
    try:
        card = read_card(checkpoint)
    except UnknownCheckpointError as err:
        if Path(checkpoint).is_dir():  # a training run's directory: the error names the checkpoints in it
            raise ValueError(f"policy {name!r}: {err}") from None
        fit = fitting_checkpoints(prior=BANDIT_PRIORS, x_dim=context_dim, y_dim=n_arms)
        fit += fitting_checkpoints(prior=ARM_PRIORS, y_dim=1)  # any width: wider contexts are projected
        known = [*BASELINES, *fit, *(c.rsplit("-", 1)[0] for c in fit)]
        close = difflib.get_close_matches(name.lower(), known, n=2, cutoff=0.6)  # LinUCB, as other libraries spell it
        hint = f" -- did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"policy must be {', '.join(BASELINES)} or a bandit checkpoint "
                         "[-ucb|-thompson|-marginal-thompson] "
                         f"({', '.join(fit) or 'none shipped'}, or a checkpoint path); got {name!r}{hint}") from None
    weights = Path(card["_path"]).with_name(card["weights"])
    if not weights.exists():
        raise FileNotFoundError(f"policy {name!r}: checkpoint {card['name']!r} has its card but its weights file "
                                f"{weights} is missing")
    if checkpoint_use(card)["prior"] in ARM_PRIORS:  # one regression per arm
        if rule == "marginal-thompson":
            raise ValueError(f"policy {name!r}: a 'bo' checkpoint models each arm apart, so its Thompson draws are "
                             "marginal already: use -thompson")
        check_arm_checkpoint(card, context_dim, f"bandit policy {name!r}")
        return
    try:
        check_checkpoint_kind(card, prior=BANDIT_PRIORS, x_dim=context_dim, y_dim=n_arms,
                              purpose=f"bandit policy {name!r}")
    except CheckpointError as err:  # say which checkpoints serve this bandit the other way
        arms = fitting_checkpoints(prior=ARM_PRIORS, y_dim=1)  # any width: wider contexts are projected
        names = ", ".join(repr(a) for a in arms) or "none shipped"
        raise CheckpointError(f"{str(err).rstrip('.')}. For {context_dim}-dimensional contexts and {n_arms} arms, "
                              f"name a policy that fits one regression per arm on a 'bo' checkpoint instead: {names}"
                              ) from None


def check_arm_and_reward(action: Any, reward: Any, n_arms: int) -> tuple[int, float]:
    """``(action, reward)`` as an arm index in ``[0, n_arms)`` (:func:`check_arm`) and a
    finite float, a bool reward (Python's or NumPy's: a Bernoulli bandit's success or not)
    as 1.0 or 0.0, as :func:`~npbandit.loop.run_episode` takes it; ``ValueError`` naming
    them otherwise."""
    if isinstance(reward, (bool, np.bool_)):
        reward = float(reward)
    return check_arm("action", action, n_arms), check_real("reward", reward)


class UniformPolicy(Policy):
    """Pulls an arm uniformly at random (the normaliser of the wheel protocol).

    ``context_dim``: the width of every context (``None``: ``bounds``' width, else any
    width, the same within a run). ``bounds``: ``[2, d]`` (lower row, upper row), the box
    every context lies in (``make_bandit_policy`` passes the ``Box``'s finite bounds), or
    ``None``. It reads no context, but checks each one as the other policies do
    (:func:`~npbandit.policies.problem.check_bandit_context`: a finite array of shape
    ``(d,)``, inside ``bounds``), and the environment's spaces against what it was built for."""

    name = "uniform"

    def __init__(self, n_arms: int = 5, context_dim: int | None = None, bounds: Any = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.context_dim = None if context_dim is None else check_int("context_dim", context_dim, minimum=1)
        self.bounds = None if bounds is None else check_bounds("bounds", bounds, self.context_dim)
        if self.bounds is not None:
            self.context_dim = self.bounds.shape[1]

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        check_bandit_spaces(observation_space, action_space, self.n_arms, self.context_dim, f"policy {self.name!r}",
                            self.bounds)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._width = self.context_dim  # None: the first context's

    def _check(self, obs: Any) -> None:
        self._width = len(check_bandit_context(obs, self._width, self.bounds))

    def act(self, obs: np.ndarray) -> int:
        self._check(obs)
        return int(self.rng.integers(self.n_arms))

    def observe(self, obs, action, reward, info) -> None:
        check_arm_and_reward(action, reward, self.n_arms)
        self._check(obs)

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms}


class LinUCBPolicy(Policy):
    """Disjoint LinUCB (Li et al. 2010): per arm, ridge regression on ``[x, 1]`` and
    ``argmax theta·z + alpha * sqrt(z^T A^-1 z)``.

    ``bounds``: ``[2, context_dim]`` (lower row, upper row), the box every context lies in
    (``make_bandit_policy`` passes the ``Box``'s finite bounds), or ``None``: a context
    outside it is refused (:func:`~npbandit.policies.problem.check_bandit_context`), as is
    an environment whose ``Box`` it does not contain. The contexts are read as they come."""

    name = "linucb"

    def __init__(self, n_arms: int = 5, context_dim: int = 2, alpha: float = 1.0, ridge: float = 1.0,
                 bounds: Any = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.context_dim = check_int("context_dim", context_dim, minimum=1)
        self.bounds = None if bounds is None else check_bounds("bounds", bounds, self.context_dim)
        self.alpha = check_real("alpha", alpha, low=0.0)
        self.ridge = check_real("ridge", ridge)
        if not self.ridge > 0:
            raise ValueError(f"ridge must be positive, got {ridge!r}")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        k = self.context_dim + 1
        self.A_inv = np.stack([np.eye(k) / self.ridge] * self.n_arms)
        self.b = np.zeros((self.n_arms, k))

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        check_bandit_spaces(observation_space, action_space, self.n_arms, self.context_dim, f"policy {self.name!r}",
                            self.bounds)

    def _features(self, obs: np.ndarray) -> np.ndarray:
        return np.append(check_bandit_context(obs, self.context_dim, self.bounds), 1.0)

    def act(self, obs: np.ndarray) -> int:
        z = self._features(obs)
        theta = np.einsum("akl,al->ak", self.A_inv, self.b)
        width = np.sqrt(np.einsum("k,akl,l->a", z, self.A_inv, z))
        scores = theta @ z + self.alpha * width
        best = np.flatnonzero(scores == scores.max())
        return int(self.rng.choice(best))

    def observe(self, obs, action, reward, info) -> None:
        action, reward = check_arm_and_reward(action, reward, self.n_arms)
        z = self._features(obs)
        a_inv = self.A_inv[action]
        u = a_inv @ z  # Sherman-Morrison rank-one update of A^-1
        self.A_inv[action] = a_inv - np.outer(u, u) / (1.0 + z @ u)
        self.b[action] += reward * z

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms, "alpha": self.alpha, "ridge": self.ridge}


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


class GPUCBPolicy(Policy):
    """GP-UCB with one BoTorch ``SingleTaskGP`` per arm on the contexts where it was
    played (:func:`npbandit.policies.gp.fit_single_task_gp`, as ``BOPolicy``'s GP).

    Every arm's GP reads its rewards on one scale for all arms, standardised by the mean
    and std of *all* rewards seen, with a prior mean of 0 there (``fit_single_task_gp(...,
    standardize=False)``): far from its data an arm is predicted at the mean reward of all
    arms, with the prior's uncertainty. Standardised by its own rewards, an arm played once
    would be predicted at that one reward everywhere, with a std of 1 in reward units, and
    an arm whose first reward fell low would never be played again. When the pooled mean
    has moved by more than :data:`~npbandit.transforms.moments.RESCALE_TOL` of the std an
    arm's GP was built on, or the std by more than a factor ``1 + RESCALE_TOL``, the GP is
    rebuilt on the new scale (as the per-arm NP policy re-conditions its arms).

    Each arm's GP is rebuilt with its new point every time the arm is played; its
    hyperparameters are fitted afresh when the arm's data has doubled or grown by
    ``refit_every`` points since their last fit (at 1, 2, 4, ..., 32, 64, 114, ...
    points with the default 50), and reused in between: an exact GP refit every round
    of a 2000-round run would take hours on a CPU, and a fit made on the first few
    points must not stand for the run.

    ``bounds``: ``[2, d]`` (lower row, upper row), the box every context lies in: the GPs
    read each context mapped from it onto the unit cube ``[0, 1]^d``, the inputs BoTorch's
    default priors are made for (its lengthscale prior assumes them: on contexts of another
    scale a GP fits a lengthscale that cannot tell them apart); a context outside the box
    is refused (``ValueError`` naming ``obs``), and ``check_spaces`` refuses an environment
    whose ``Box`` the bounds do not contain. ``None``: the contexts are read as they come
    (fine at about unit scale), and BoTorch's warning that they are not in the unit cube is
    shown once. ``make_bandit_policy`` passes the ``Box``'s finite bounds.

    ``threads``: torch's intra-op threads for each step's fits and predictions
    (:class:`~npbandit.threads.torch_threads`; ``None``: ``NPBANDIT_THREADS``, else
    ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``, else 1). ``context_dim``: the width of
    every context, checked on each one (``None``: ``bounds``' width, else any width, the
    same within a run).

    A warning raised in the GPs' fits and predictions reaches the user once per policy
    (each category and message), not once a round."""

    name = "gp-ucb"

    def __init__(self, n_arms: int = 5, beta: float = 1.0, refit_every: int = 50,
                 threads: int | str | None = None, context_dim: int | None = None, bounds: Any = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.beta = check_real("beta", beta, low=0.0)
        self.refit_every = check_int("refit_every", refit_every, minimum=1)
        self.threads = check_threads("threads", threads)
        self.context_dim = None if context_dim is None else check_int("context_dim", context_dim, minimum=1)
        self.bounds = None if bounds is None else check_bounds("bounds", bounds, self.context_dim)
        if self.bounds is not None:
            self.context_dim = self.bounds.shape[1]
        self._warned: set[tuple[type, str]] = set()  # the warnings shown (category, message)

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        check_bandit_spaces(observation_space, action_space, self.n_arms, self.context_dim, f"policy {self.name!r}",
                            self.bounds)

    def _context(self, obs: Any) -> np.ndarray:
        """``obs`` checked (its width, finite, inside ``bounds``) and as the GPs read it."""
        x = check_bandit_context(obs, self._width, self.bounds)
        self._width = len(x)
        if self.bounds is None:
            return x
        low, high = self.bounds
        return (x - low) / (high - low)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.X: list[list[np.ndarray]] = [[] for _ in range(self.n_arms)]
        self.Y: list[list[float]] = [[] for _ in range(self.n_arms)]
        self.models: list[Any] = [None] * self.n_arms
        self.hypers: list[dict[str, torch.Tensor] | None] = [None] * self.n_arms
        self.fitted_on = [0] * self.n_arms  # points each arm's hyperparameters were fitted on
        self.scales: list[tuple[float, float] | None] = [None] * self.n_arms  # (mean, std) each GP's rewards are on
        self._moments = None  # running moments of all rewards (npbandit.transforms.moments)
        self._width = self.context_dim  # None: the first context's

    def _model(self, arm: int):
        import npbandit.policies.gp as gp  # BoTorch loads only when a GP-UCB policy first fits

        center, std = self.scales[arm] = tuple(float(v) for v in moment_statistics(self._moments))
        X = torch.tensor(np.array(self.X[arm]), dtype=torch.float64)
        Y = (torch.tensor(self.Y[arm], dtype=torch.float64).unsqueeze(-1) - center) / std
        n, fitted = len(self.Y[arm]), self.fitted_on[arm]
        reuse = self.hypers[arm] is not None and n < 2 * fitted and n - fitted < self.refit_every
        model = gp.fit_single_task_gp(X, Y, hyperparameters=self.hypers[arm] if reuse else None, standardize=False)
        if not reuse:
            self.hypers[arm], self.fitted_on[arm] = gp.gp_hyperparameters(model), n
        return model

    def _stale(self, arm: int) -> bool:
        """Whether arm ``arm``'s GP is unbuilt, or built on a reward scale the pooled one has left."""
        return self.models[arm] is None or drifted(*moment_statistics(self._moments),
                                                   *map(torch.tensor, self.scales[arm]), RESCALE_TOL)

    def act(self, obs: np.ndarray) -> int:
        x = self._context(obs)
        untried = [a for a in range(self.n_arms) if not self.Y[a]]
        if untried:
            return int(self.rng.choice(untried))
        x = torch.from_numpy(x).reshape(1, -1)
        scores = []
        with torch_threads(self.threads), warnings.catch_warnings(record=True) as caught:
            for arm in range(self.n_arms):
                if self._stale(arm):
                    self.models[arm] = self._model(arm)
                with torch.no_grad():
                    post = self.models[arm].posterior(x)
                center, std = self.scales[arm]
                scores.append(center + std * (float(post.mean) + self.beta * float(post.variance.sqrt())))
        self._show_once(caught)
        return int(np.argmax(scores))

    def _show_once(self, caught: list[warnings.WarningMessage]) -> None:
        """Show the warnings of a step's fits and predictions that this policy has not shown
        yet (as the filters let them through: ignored ones are not caught, an error is raised
        where it occurs). BoTorch's fits run inside ``catch_warnings``, which clears Python's
        memory of the warnings already shown, so its ``default`` filter alone shows one a round."""
        for w in caught:
            key = (w.category, str(w.message))
            if key not in self._warned:
                self._warned.add(key)
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)

    def observe(self, obs, action, reward, info) -> None:
        action, reward = check_arm_and_reward(action, reward, self.n_arms)
        self.X[action].append(self._context(obs))
        self.Y[action].append(reward)
        self.models[action] = None
        one = moments(torch.tensor([[reward]], dtype=torch.float64))
        self._moments = one if self._moments is None else merge_moments(self._moments, one)

    def params(self) -> dict[str, Any]:
        return {"beta": self.beta, "refit_every": self.refit_every,
                "bounds": None if self.bounds is None else self.bounds.tolist(), "reward_scale": "pooled"}
