"""The shape of a contextual bandit -- how many arms, how wide a context, in which box --
and the checks that pair a bandit policy with an environment.

A bandit environment in Gymnasium's terms has a ``Box`` observation space of contexts of
shape ``(d,)`` and a ``Discrete`` action space of arms ``0 .. n - 1``.
:func:`bandit_problem` reads those spaces (or takes ``n_arms`` / ``context_dim`` /
``bounds`` as given) into a :class:`BanditProblem`, what
:func:`~npbandit.policies.make_bandit_policy` builds a policy for; :data:`WHEEL` is the
wheel bandit's problem (2-D contexts in ``[-1, 1]^2``, 5 arms), the default. A built
policy checks an environment's spaces against what it was built for
(:meth:`~npbandit.policies.base.Policy.check_spaces`, which ``run_episode`` calls before a
run starts) with :func:`check_bandit_spaces`: :func:`check_arm_space` and
:func:`check_context_space` (and, holding bounds, :func:`check_bounds_cover`: they must
contain the ``Box``'s finite sides); and each context it is handed with
:func:`check_bandit_context` (:func:`check_context`, then, holding bounds,
:func:`check_context_in_bounds`), the one check every shipped bandit policy makes; and
each step it observes with :func:`check_arm_and_reward` (an arm, a finite reward).

Every check raises a one-line error naming the argument (``env.observation_space``,
``env.action_space``, ``bounds``, ``obs``, ``context_dim``) and what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.envs.bounds import as_bounds
from npbandit.policies.base import Policy
from npbandit.validation import check_arm, check_int, check_real

__all__ = ["ContextualBanditPolicy",
           "BanditProblem", "WHEEL", "ARM_PRIORS", "CONTEXT_TOLERANCE", "bandit_problem", "problem_of_spaces",
           "check_bounds", "check_context", "check_context_in_bounds", "check_bandit_context", "check_bounds_cover",
           "check_arm_space", "check_context_space", "check_bandit_spaces", "outside", "check_arm_checkpoint",
           "arm_model_width", "check_arm_and_reward"]

#: priors whose checkpoints serve as one reward regression per arm (:mod:`npbandit.policies.per_arm`)
ARM_PRIORS = ("bo",)
#: how far (a share of the box's width) a context may stray outside its bounds: rounding, not data
CONTEXT_TOLERANCE = 1e-6


def check_bounds(name: str, bounds: Any, context_dim: int | None = None) -> np.ndarray:
    """``bounds`` as a read-only float64 ``[2, d]`` array (lower row, upper row), checked as a
    black-box box is (:func:`~npbandit.envs.bounds.as_bounds`: numbers, finite, lower <
    upper), and ``d == context_dim`` when given."""
    array = as_bounds(bounds, name=name)
    if context_dim is not None and array.shape[1] != context_dim:
        raise ValueError(f"{name} must have shape [2, {context_dim}] (one column per context dimension), "
                         f"got shape {array.shape}")
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class BanditProblem:
    """A contextual bandit's shape.

    Attributes:
        n_arms: arms ``0 .. n_arms - 1`` (at least 2).
        context_dim: ``d``, the width of a context (contexts are arrays of shape ``(d,)``).
        bounds: ``[2, d]`` float64, the box every context lies in (lower row, upper row;
            finite, lower < upper), or ``None`` where the contexts have no known finite
            box (an unbounded ``Box``): fine for policies that read raw contexts, refused
            by those that map contexts onto a checkpoint's cube.
    """

    n_arms: int
    context_dim: int
    bounds: np.ndarray | None = None

    def __post_init__(self) -> None:
        # held as ints: a NumPy integer (a shape read off an array) is refused further on (a model's x_dim)
        object.__setattr__(self, "n_arms", check_int("n_arms", self.n_arms, minimum=2))
        object.__setattr__(self, "context_dim", check_int("context_dim", self.context_dim, minimum=1))
        if self.bounds is not None:
            object.__setattr__(self, "bounds", check_bounds("bounds", self.bounds, self.context_dim))

    def describe(self) -> str:
        """``"3-D contexts, 4 arms"``: the shape in words, for messages."""
        return f"{self.context_dim}-D contexts, {self.n_arms} arms"


#: the wheel bandit (``npbandit/WheelBandit-v0``): contexts in the unit disc, inside [-1, 1]^2, and 5 arms
WHEEL = BanditProblem(5, 2, np.array([[-1.0, -1.0], [1.0, 1.0]]))


def check_context(obs: Any, context_dim: int | None) -> np.ndarray:
    """``obs`` as a float64 context of shape ``(context_dim,)`` (``None``: ``(d,)``, any
    ``d >= 1``), finite; ``ValueError`` naming ``obs`` otherwise (a context of another width
    would otherwise fail deep inside a model, or broadcast silently)."""
    shape = "(d,)" if context_dim is None else f"({context_dim},)"
    try:
        x = np.asarray(obs, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"obs must be a context of shape {shape}, got {type(obs).__name__}") from None
    if x.ndim != 1 or not x.size or (context_dim is not None and x.shape != (context_dim,)):
        raise ValueError(f"obs must be a context of shape {shape}, got shape {x.shape}")
    bad = ~np.isfinite(x)
    if bad.any():
        more = f" and {int(bad.sum()) - 1} more" if bad.sum() > 1 else ""
        raise ValueError(f"obs must be finite, got {_context_text(x)}: dimension {int(np.flatnonzero(bad)[0])} is "
                         f"{x[bad][0]}{more}")
    return x


# the values of a context an error message shows before it abbreviates (a wide context's
# whole list, and its bounds', would make a message of thousands of characters)
_SHOWN_VALUES = 8


def _context_text(x: np.ndarray) -> str:
    """``x`` as an error message shows it: the whole list for at most ``_SHOWN_VALUES``
    values, else its first ones and its width."""
    if len(x) <= _SHOWN_VALUES:
        return str(x.tolist())
    return "[" + ", ".join(str(v) for v in x[:_SHOWN_VALUES - 2].tolist()) + f", ...] ({len(x)} values)"


def outside(low: np.ndarray, high: np.ndarray, lower: Any, upper: Any) -> np.ndarray:
    """Per dimension, whether the interval ``[low, high]`` leaves ``[lower, upper]`` (arrays, or
    numbers for every dimension) by more than :data:`CONTEXT_TOLERANCE` of its width; an
    infinite ``low`` / ``high`` (a ``Box``'s unbounded side) is not compared. A context is the
    interval ``[x, x]``. The one rule of :func:`check_context_in_bounds`,
    :func:`check_bounds_cover` and a wheel checkpoint's ``input_domain``."""
    slack = CONTEXT_TOLERANCE * (np.subtract(upper, lower))
    return (np.isfinite(low) & (low < np.subtract(lower, slack))) | (np.isfinite(high) & (high > np.add(upper, slack)))


def check_context_in_bounds(x: np.ndarray, bounds: np.ndarray,
                            what: str = "the policy's context bounds",
                            fix: str = "build it with bounds that contain every context") -> np.ndarray:
    """A checked context ``x [d]`` (:func:`check_context`) that lies in ``bounds [2, d]``, up to
    :data:`CONTEXT_TOLERANCE` of the box's width; ``ValueError`` naming ``obs`` otherwise (a
    policy that maps contexts from its bounds never clips one), saying ``what`` the bounds
    are and how to ``fix`` it."""
    low, high = bounds
    out = outside(x, x, low, high)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        more = f" (and {int(out.sum()) - 1} more dimensions)" if out.sum() > 1 else ""
        raise ValueError(f"obs {_context_text(x)} lies outside {what}: dimension {i} is {x[i]:g}, "
                         f"its bounds [{low[i]:g}, {high[i]:g}]{more}; {fix}")
    return x


def check_bandit_context(obs: Any, context_dim: int | None, bounds: np.ndarray | None = None,
                         **message: str) -> np.ndarray:
    """A bandit policy's check of each context it is handed (``act``, ``observe``): ``obs`` as
    a finite float64 context of shape ``(context_dim,)`` (:func:`check_context`; ``None``: any
    width) and, when the policy holds ``bounds [2, d]`` (the box it was built for: an
    environment's ``Box``, or its checkpoint's inputs), inside them
    (:func:`check_context_in_bounds`, whose ``what`` / ``fix`` ``message`` passes on). One
    rule for every policy: a context the policy was not built for is refused, whether or not
    the policy would have read it."""
    x = check_context(obs, context_dim)
    return x if bounds is None else check_context_in_bounds(x, bounds, **message)


def check_bounds_cover(bounds: np.ndarray, observation_space: Any, who: str | None = None) -> None:
    """Refuse ``bounds [2, d]`` (a context box, checked by :func:`check_bounds`) that do not
    contain the finite part of ``observation_space``, a 1-D ``Box`` of width ``d`` (check its
    width first, :func:`check_context_space`): each finite ``low`` / ``high`` of the ``Box``
    must lie within ``bounds``, up to :data:`CONTEXT_TOLERANCE` of their width (an unbounded
    side is the caller's to bound, and is not compared). The one-line ``ValueError`` names
    ``bounds`` (of policy ``who``, when given) and the first dimension the ``Box`` leaves them in.
    A policy holding bounds calls it from its ``check_spaces``, so that ``run_episode`` refuses
    the pairing before a run starts."""
    low, high = (np.asarray(b, dtype=np.float64).reshape(-1) for b in (observation_space.low, observation_space.high))
    out = outside(low, high, bounds[0], bounds[1])
    if out.any():
        i = int(np.flatnonzero(out)[0])
        more = f" and {int(out.sum()) - 1} more" if out.sum() > 1 else ""
        owner = "" if who is None else f" of {who}"
        raise ValueError(f"bounds{owner} (lower {bounds[0].tolist()}, upper {bounds[1].tolist()}) do not contain "
                         f"env.observation_space {observation_space}: its dimension {i} spans "
                         f"[{low[i]:g}, {high[i]:g}], the bounds [{bounds[0, i]:g}, {bounds[1, i]:g}]{more}; "
                         "use bounds that contain the Box (or the Box's own: make_bandit_policy(name, env=env))")


def problem_of_spaces(observation_space: Any, action_space: Any, bounds: Any = None,
                      name: str = "env") -> BanditProblem:
    """The :class:`BanditProblem` of a bandit's spaces: ``observation_space`` a
    ``gymnasium.spaces.Box`` of shape ``(d,)``, ``action_space`` a ``Discrete(n)`` starting
    at 0 with ``n >= 2``. ``bounds``: the context box, overriding the ``Box``'s own (needed
    where the ``Box`` is unbounded; it must contain the ``Box``'s finite sides,
    :func:`check_bounds_cover`); without it, the ``Box``'s low / high where they are
    finite with low < high, else ``None``. ``name`` prefixes the spaces in messages.

    Raises:
        TypeError: a space of another kind.
        ValueError: a ``Box`` that is not 1-D, a ``Discrete`` not starting at 0 or with
            fewer than 2 actions, or bad ``bounds`` (narrower than the ``Box``).
    """
    n_arms = _arms(action_space, f"{name}.action_space")
    context_dim = _context_dim(observation_space, f"{name}.observation_space")
    if bounds is not None:  # a box of the caller's: it must hold every context the Box allows
        bounds = check_bounds("bounds", bounds, context_dim)
        check_bounds_cover(bounds, observation_space)
        return BanditProblem(n_arms, context_dim, bounds)
    low, high = (np.asarray(b, dtype=np.float64).reshape(-1) for b in (observation_space.low, observation_space.high))
    box = None
    if np.isfinite(low).all() and np.isfinite(high).all() and (low < high).all():
        box = np.stack([low, high])
    return BanditProblem(n_arms, context_dim, box)


def bandit_problem(env: Any = None, *, n_arms: Any = None, context_dim: Any = None,
                   bounds: Any = None) -> BanditProblem:
    """What :func:`~npbandit.policies.make_bandit_policy` builds a policy for: ``env``'s
    spaces (:func:`problem_of_spaces`; ``bounds`` may override the ``Box``'s), or
    ``n_arms`` and ``context_dim`` (with optional ``bounds``), or, given none of them, the
    wheel bandit (:data:`WHEEL`).

    Raises:
        TypeError: ``env`` is not a ``gymnasium.Env``, or its spaces are of another kind.
        ValueError: ``env`` together with ``n_arms`` / ``context_dim``; one of ``n_arms`` /
            ``context_dim`` without the other; ``bounds`` alone; bad values.
    """
    if env is not None:
        if not isinstance(env, gym.Env):
            raise TypeError(f"env must be a gymnasium.Env, got {type(env).__name__}")
        if n_arms is not None or context_dim is not None:
            raise ValueError("pass env or n_arms and context_dim, not both (env's spaces give them)")
        return problem_of_spaces(env.observation_space, env.action_space, bounds)
    if n_arms is None and context_dim is None:
        if bounds is not None:
            raise ValueError("bounds needs env, or n_arms and context_dim: it is the box of a bandit's contexts")
        return WHEEL
    if n_arms is None or context_dim is None:
        missing = "n_arms" if n_arms is None else "context_dim"
        raise ValueError(f"{missing} is required with {'context_dim' if n_arms is None else 'n_arms'} "
                         "(or pass env=, whose spaces give both)")
    return BanditProblem(n_arms, context_dim, None if bounds is None else bounds)


def check_arm_space(action_space: Any, n_arms: int, who: str) -> None:
    """Refuse an ``action_space`` that is not ``Discrete(n_arms)`` starting at 0: the arms
    policy ``who`` was built for."""
    n = _arms(action_space, "env.action_space")
    if n != n_arms:
        raise ValueError(f"env.action_space is {action_space} ({n} arms) but {who} was built for {n_arms} arms; "
                         "build it for this env: make_bandit_policy(name, env=env)")


def check_context_space(observation_space: Any, context_dim: int | None, who: str) -> None:
    """Refuse an ``observation_space`` that is not a 1-D ``Box`` of ``context_dim``
    (``None``: any width) contexts: what policy ``who`` was built for."""
    d = _context_dim(observation_space, "env.observation_space")
    if context_dim is not None and d != context_dim:
        raise ValueError(f"env.observation_space is {observation_space} ({d}-D contexts) but {who} was built for "
                         f"{context_dim}-D contexts; build it for this env: make_bandit_policy(name, env=env)")


def check_bandit_spaces(observation_space: Any, action_space: Any, n_arms: int, context_dim: int | None, who: str,
                        bounds: np.ndarray | None = None) -> None:
    """A bandit policy's :meth:`~npbandit.policies.base.Policy.check_spaces`: refuse an
    ``action_space`` of other arms than the ``n_arms`` policy ``who`` was built for
    (:func:`check_arm_space`), then an ``observation_space`` of other contexts than its
    ``context_dim`` (``None``: any width; :func:`check_context_space`), then, with ``bounds``
    (its context box), a ``Box`` they do not contain (:func:`check_bounds_cover`)."""
    check_arm_space(action_space, n_arms, who)
    check_context_space(observation_space, context_dim, who)
    if bounds is not None:
        check_bounds_cover(bounds, observation_space, who)


def check_arm_checkpoint(card: dict[str, Any], context_dim: int, purpose: str) -> None:
    """Refuse a checkpoint that cannot be one arm's reward regression for contexts of
    ``context_dim``: one trained on a prior other than :data:`ARM_PRIORS` (``CheckpointError``).
    A ``bo`` checkpoint narrower than the contexts serves them through a context projection
    (:mod:`npbandit.policies.context_projection`), so it is checked at its own width.
    ``purpose`` names the user in the message."""
    from npbandit.surrogates.pretrained import check_checkpoint_kind, checkpoint_use

    use = checkpoint_use(card)
    x_dim = min(context_dim, max(use["x_dims"])) if use["prior"] in ARM_PRIORS else context_dim
    check_checkpoint_kind(card, prior=ARM_PRIORS, x_dim=x_dim, y_dim=1, purpose=purpose)


def arm_model_width(card: dict[str, Any]) -> int:
    """The most context features an arm's model on this ``bo`` checkpoint reads directly
    (its widest trained input dimension); wider contexts are projected onto as many."""
    from npbandit.surrogates.pretrained import checkpoint_use

    return max(checkpoint_use(card)["x_dims"])


def _arms(action_space: Any, name: str) -> int:
    if not isinstance(action_space, gym.spaces.Discrete):
        raise TypeError(f"{name} must be a gymnasium.spaces.Discrete (one action per arm), got {action_space!r}")
    if int(action_space.start) != 0:
        raise ValueError(f"{name} must number its arms from 0 (Discrete(n), start=0), got {action_space!r}")
    if int(action_space.n) < 2:
        raise ValueError(f"{name} must have at least 2 arms, got {action_space!r}")
    return int(action_space.n)


def _context_dim(observation_space: Any, name: str) -> int:
    if not isinstance(observation_space, gym.spaces.Box):
        raise TypeError(f"{name} must be a gymnasium.spaces.Box of contexts, got {observation_space!r}")
    if len(observation_space.shape) != 1 or observation_space.shape[0] < 1:
        raise ValueError(f"{name} must be a 1-D Box (contexts of shape (d,)), got shape {observation_space.shape}")
    return int(observation_space.shape[0])


def check_arm_and_reward(action: Any, reward: Any, n_arms: int) -> tuple[int, float]:
    """``(action, reward)`` as an arm index in ``[0, n_arms)`` (:func:`~npbandit.validation.check_arm`) and a
    finite float, a bool reward (Python's or NumPy's: a Bernoulli bandit's success or not)
    as 1.0 or 0.0, as :func:`~npbandit.loop.run_episode` takes it; ``ValueError`` naming
    them otherwise."""
    if isinstance(reward, (bool, np.bool_)):
        reward = float(reward)
    return check_arm("action", action, n_arms), check_real("reward", reward)


class ContextualBanditPolicy(Policy):
    """A policy for a contextual bandit of ``n_arms`` arms whose contexts have ``context_dim``
    features (``None``: the first context's) inside ``bounds`` (``None``: anywhere finite):
    :meth:`check_spaces` refuses an environment of other shapes before a run starts
    (:func:`check_bandit_spaces`). A subclass sets ``n_arms``, ``context_dim``, ``bounds`` and
    ``name``."""

    n_arms: int
    context_dim: int | None
    bounds: np.ndarray | None

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        check_bandit_spaces(observation_space, action_space, self.n_arms, self.context_dim, f"policy {self.name!r}",
                            self.bounds)

    def _linear_features(self, obs: Any) -> np.ndarray:
        """``obs`` checked (:func:`check_bandit_context`) with a constant 1 appended: the
        features of a linear model with an intercept, ``[context_dim + 1]``."""
        return np.append(check_bandit_context(obs, self.context_dim, self.bounds), 1.0)
