"""``npbandit/BlackBox-v0``: black-box optimisation as a Gymnasium environment.

``gym.make("npbandit/BlackBox-v0", function="branin")`` wraps a named
``botorch.test_functions`` problem; ``objective=callable, bounds=...`` wraps any
function of one point. Actions live in the unit cube ``[0, 1]^d`` and are mapped
affinely onto ``bounds`` (2 x d, lower row then upper row, as in BoTorch).
``objective=callable, space=...`` (a :class:`~npbandit.space.SearchSpace` or a dict of
:class:`~npbandit.space.Float` / :class:`~npbandit.space.Int` / :class:`~npbandit.space.Choice`)
wraps a function of named, typed parameters instead: actions live in the space's unit
cube ``[0, 1]^D`` (``D = space.dim`` columns) and the objective is called with
``space.decode(action)``, a dict ``{name: value}``.

* Reward: the objective value, negated when ``minimize=True`` (the default, as for
  BoTorch's test problems), so policies always maximise reward.
* Several objectives: ``minimize`` a sequence of ``m >= 2`` bools, one direction per
  objective (Optuna's ``directions``), or a mapping of the objectives' names to their
  directions (``{"cost": True, "accuracy": False}``, as Ax names its metrics; its order is the
  objectives' order, ``env.objective_names``). The objective then returns ``m`` real numbers in
  that order, or, with names, a mapping with exactly those keys
  (:func:`~npbandit.envs.outcomes.objective_values`); the reward is a ``[m]`` array,
  each value negated where it is minimised (MO-Gymnasium's vector reward); ``info`` has
  ``values`` (the ``m`` values as returned) instead of ``value``, and no ``best_value``
  (several objectives have a front of best points, not one). A value that is NaN or infinite
  fails the evaluation, as for one objective. ``env.objectives`` is ``m`` (1 for one objective).
  ``env.reward_space`` is the reward's ``Box`` of ``m``, which MO-Gymnasium's wrappers read
  (its ``MOSyncVectorEnv`` runs copies; Gymnasium's own vector envs take one float per copy).
* Observation: the last evaluated action and its reward (zeros before the first step).
* ``info``: ``x`` (the evaluated point as the objective received it: an array in the
  original bounds, or the params dict of a space), ``params`` (the same point by name,
  ``{"x0": ..., ...}`` for a box: what a run records), ``t`` (the evaluation, from 0),
  ``value``, ``best_value`` so far and, when the optimum is known, ``simple_regret``.
  ``reset``'s ``info`` holds ``bounds`` (the box, ``2 x d``) or, given a space, ``space``
  (its :meth:`~npbandit.space.SearchSpace.describe`).
* The objective returns one real number: a Python ``float`` or ``int``, a NumPy
  scalar, or a 1-element array / tensor / list. Anything else (a string, ``None``, a bool,
  several numbers) raises :class:`~npbandit.exceptions.ObjectiveReturnError` from ``step``:
  a failed evaluation (an ``ObjectiveError``) that is also a ``TypeError``.
* An objective that raises or returns NaN/inf raises :class:`ObjectiveError` from
  ``step``; nothing non-finite ever reaches a policy. Each such error says how the
  evaluation failed in its :attr:`~npbandit.exceptions.ObjectiveError.kind` (``"raised"``,
  ``"returned"``, ``"nonfinite"`` or ``"timeout"``), which the run loop records with the step.
* ``constraints``: outcome constraints, a callable of the same point returning a sequence
  of ``k`` floats (one real number for ``k = 1``), the point feasible when every value is
  ``<= 0`` (Optuna's ``constraints_func`` convention). It runs right after the objective,
  in the same call (:attr:`BlackBoxEnv.objective` evaluates both, so an executor's worker
  runs both), and its values are judged like the objective's: one that raises or returns
  NaN/inf is an :class:`ObjectiveError`, one that returns anything but ``k`` real numbers
  (``k`` fixed by the episode's first evaluation) an :class:`ObjectiveReturnError`, each
  naming ``constraints``. ``info`` then also has ``constraints`` (the ``k`` values) and
  ``feasible``, and ``best_value`` is the best *feasible* value so far (``None`` until one
  is feasible).
* ``evaluator``: where the objective runs (:mod:`npbandit.envs.evaluation`). ``None``, the
  default: ``step`` calls it. An :class:`~npbandit.envs.evaluation.AsyncEvaluator` runs it
  on an executor's workers and hands each finished evaluation to ``step``, which records it
  exactly as one made in place (asynchronous BO).
* Named problems: the unconstrained, continuous ``botorch.test_functions`` problems
  (:func:`available_functions`). Constrained problems (``pressurevessel``, ...) are
  not offered by name, since a name brings the objective without its constraints, nor
  problems with integer / binary inputs (``labs``, ``ackleymixed``), whose points must be
  integers where a named function's box gives real numbers; :func:`make_test_function`
  says which reason applies and what runs such a problem (``constraints=``, a search
  space with ``Int`` parameters).
* One episode = ``budget`` evaluations, then ``truncated=True``.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.envs.bounds import as_bounds, unit_point
from npbandit.envs.directions import maximised, named_directions
from npbandit.envs.evaluation import ExecutorFailure, Outcome, OutcomeRelay, UnsentError
from npbandit.envs.outcomes import (
    Evaluated,
    WithConstraints,
    constraint_values,
    copied,
    objective_value,
    objective_values,
    shown,
)
from npbandit.exceptions import ObjectiveError, ObjectiveReturnError
from npbandit.feasibility import is_feasible
from npbandit.space import SearchSpace, as_search_space
from npbandit.validation import check_int, check_options, check_real, check_render_mode

__all__ = ["BlackBoxEnv", "ObjectiveError", "named_point", "available_functions", "functions_taking_dim",
           "make_test_function", "objective_value", "objective_values", "constraint_values", "problem_objective"]


#: why a named problem with integer / binary inputs is not offered, and what runs one
_INTEGER_INPUTS = ("it has integer / binary inputs, which a named function's box of reals cannot give it (wrap it "
                   "as an objective over a search space with Int parameters: optimize(f, space), --space)")


@functools.cache
def _synthetic_problems() -> dict[str, tuple[type, str | None]]:
    """Every concrete ``botorch.test_functions`` synthetic problem by lower-case name,
    with the reason it is not offered (``None`` when it is)."""
    from botorch.test_functions import synthetic

    problems: dict[str, tuple[type, str | None]] = {}
    for name, cls in inspect.getmembers(synthetic, inspect.isclass):
        if not issubclass(cls, synthetic.SyntheticTestFunction) or cls is synthetic.SyntheticTestFunction \
                or inspect.isabstract(cls) or cls.__module__ != synthetic.__name__:
            continue
        reason = None
        if issubclass(cls, synthetic.ConstrainedSyntheticTestFunction):
            count = f"{cls.num_constraints} constraint{'s' if cls.num_constraints != 1 else ''}"
            reason = (f"it is a constrained problem ({count}), and its name brings no constraints, so a run would "
                      "report infeasible points as optima (give them as constraints=..., --constraints)")
        else:
            try:
                problem = cls()
            except Exception:  # noqa: BLE001 - needs arguments (e.g. dim); checked when built
                problem = None
            if problem is not None and (getattr(problem, "discrete_inds", None)
                                        or getattr(problem, "categorical_inds", None)):
                reason = _INTEGER_INPUTS
        problems[name.lower()] = (cls, reason)
    return problems


def available_functions() -> list[str]:
    """Names of the ``botorch.test_functions`` synthetic problems usable by name: the
    unconstrained ones with continuous inputs (see the module docstring)."""
    return sorted(name for name, (_, reason) in _synthetic_problems().items() if reason is None)


def functions_taking_dim() -> list[str]:
    """Names of the :func:`available_functions` that take a dimension (``dim``: ackley,
    rosenbrock, ...); the others have a fixed one (branin's 2)."""
    problems = _synthetic_problems()
    return [name for name in available_functions()
            if "dim" in inspect.signature(problems[name][0].__init__).parameters]


def make_test_function(name: str, dim: int | None = None):
    """A ``botorch.test_functions`` problem by (case-insensitive) name, e.g. ``"branin"``, ``"hartmann"``;
    ``dim``: its dimension, for the functions that take one (:func:`functions_taking_dim`;
    ``None``: the function's own).

    Raises ``ValueError`` for unknown names, for problems that are not offered (with the
    reason), for a ``dim`` given to a function of fixed dimension (naming it and the
    functions that take one) and for a ``dim`` the function refuses (hartmann's 3 or 6)."""
    if not isinstance(name, str):
        raise TypeError(f"function must be a name (str), got {type(name).__name__}")
    problems = _synthetic_problems()
    if name.lower() not in problems:
        import difflib

        close = difflib.get_close_matches(name.lower(), available_functions(), n=3)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
        raise ValueError(f"function must be one of {available_functions()}, got {name!r}{hint}")
    cls, reason = problems[name.lower()]
    if reason is not None:
        raise ValueError(f"function {name!r} is not offered: {reason}")
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool) or dim < 1):
        raise ValueError(f"dim must be a positive int or None, got {dim!r}")
    if dim is not None and name.lower() not in functions_taking_dim():
        raise ValueError(f"function {name!r} has a fixed dimension ({cls().dim}); dim applies only to the functions "
                         f"that take one: {', '.join(functions_taking_dim())}")
    kwargs = {"dim": dim} if dim is not None else {}
    try:
        problem = cls(**kwargs)
    except (TypeError, ValueError) as err:
        raise ValueError(f"cannot build {name!r} with dim={dim}: {err}") from None
    if getattr(problem, "discrete_inds", None) or getattr(problem, "categorical_inds", None):
        raise ValueError(f"function {name!r} is not offered: {_INTEGER_INPUTS}")
    return problem


def problem_objective(problem: Any, name: str | None = None) -> Callable[[np.ndarray], float]:
    """A ``botorch.test_functions`` problem as a plain objective of one point.

    The one wrapper behind ``BlackBox-v0``'s named functions, ``npbandit optimize
    --function`` and ``npbandit demo``.

    Args:
        problem: a ``SyntheticTestFunction`` (e.g. from :func:`make_test_function`).
        name: the objective's ``__name__`` (what a logged run calls it); default the
            problem's class name in lower case.

    Returns:
        ``f(x) -> float``: the problem's noise-free value (``evaluate_true``) at ``x``, a
        point of shape ``[d]`` in the problem's own bounds (not the unit cube),
        evaluated in float64.

    Raises:
        TypeError: ``problem`` is not a test problem, or ``name`` is not a string;
            ``f`` raises ``ValueError`` for a point whose shape is not ``[d]``.
    """
    if not callable(getattr(problem, "evaluate_true", None)) or not hasattr(problem, "dim"):
        raise TypeError(f"problem must be a botorch.test_functions problem, got {type(problem).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {type(name).__name__}")
    return _ProblemObjective(problem, name if name is not None else type(problem).__name__.lower())


class _ProblemObjective:
    """:func:`problem_objective`'s callable: a class instance rather than a closure, so that
    plain ``pickle`` carries it to a ``ProcessPoolExecutor``'s workers (``npbandit optimize
    --workers``)."""

    def __init__(self, problem: Any, name: str) -> None:
        self.problem, self.dim = problem, int(problem.dim)
        self.__name__ = self.__qualname__ = name

    def __call__(self, x: np.ndarray) -> float:
        import torch  # a botorch problem: torch is loaded already

        point = torch.as_tensor(np.asarray(x, dtype=np.float64))
        if point.shape != (self.dim,):
            raise ValueError(f"x must be one point of shape [{self.dim}], got shape {list(point.shape)}")
        return float(self.problem.evaluate_true(point[None])[0])

    def __repr__(self) -> str:
        return f"problem_objective({type(self.problem).__name__}, {self.__name__!r})"

    # A process pool pickles with multiprocessing's ForkingPickler, for which torch registers
    # reductions that move a tensor's storage into shared memory *in place*: numpy views of the
    # problem's tensors held elsewhere (its bounds, as the run's box) then read freed memory.
    # The problem travels as plain pickle bytes instead, which copy.
    def __getstate__(self) -> dict[str, Any]:
        import pickle

        return {"problem": pickle.dumps(self.problem), "name": self.__name__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import pickle

        self.__init__(pickle.loads(state["problem"]), state["name"])


def named_point(x: Any) -> dict[str, Any]:
    """A point as :meth:`BlackBoxEnv.params` gives it and a run's steps record it: a space's
    dict (copied) as it is, a box's array as ``{"x0": ..., ...}``."""
    return dict(x) if isinstance(x, dict) else {f"x{i}": float(v) for i, v in enumerate(x)}


class BlackBoxEnv(gym.Env):
    """Sequential evaluation of a black-box function (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, function: str | None = None, objective: Callable[[Any], float] | None = None,
                 bounds: Any = None, dim: int | None = None, minimize: Any = True, budget: int = 100,
                 noise_std: float = 0.0, optimal_value: float | None = None, render_mode: str | None = None,
                 evaluator: Any = None, space: Any = None, constraints: Callable[[Any], Any] | None = None) -> None:
        if (function is None) == (objective is None):
            raise ValueError("pass exactly one of function=<name> or objective=<callable>")
        if space is not None and (function is not None or bounds is not None):
            raise ValueError("space= goes with objective=<callable> instead of bounds=; a named function takes "
                             "bounds=")
        check_render_mode(render_mode)
        self.render_mode = render_mode
        budget = check_int("budget", budget, minimum=1)
        noise_std = check_real("noise_std", noise_std, low=0.0)
        named = isinstance(minimize, Mapping)
        minimize, objectives, names = named_directions(minimize)
        if objectives > 1 and (function is not None or noise_std):
            raise ValueError("minimize with several directions is for objective=<callable> returning one value per "
                             "direction; a named function (function=) has one objective, and noise_std is for those")
        if objectives > 1 and optimal_value is not None:
            raise ValueError("optimal_value is one objective's optimum; several objectives have a front of optima "
                             "(give optimal_value=None)")
        if optimal_value is not None:
            optimal_value = check_real("optimal_value", optimal_value)
        if function is not None:
            problem = make_test_function(function, dim)
            self.name = function.lower()
            self._call = problem_objective(problem, self.name)
            self.bounds = as_bounds(problem.bounds) if bounds is None else as_bounds(bounds)
            if self.bounds.shape[1] != problem.dim:
                raise ValueError(f"bounds are {self.bounds.shape[1]}-dimensional but {self.name} takes "
                                 f"{problem.dim} input(s)" + ("" if dim is not None else " (pass dim= for the "
                                                               "functions that take one)"))
            # the function's known minimum is the optimum of a minimisation over its own box only
            known = getattr(problem, "_optimal_value", None) if bounds is None and minimize else None
            self.optimal_value = known if optimal_value is None else optimal_value
        else:
            if not callable(objective):
                raise TypeError(f"objective must be callable, got {type(objective).__name__}")
            if bounds is None and space is None:
                raise ValueError("bounds (2 x d) or space (a SearchSpace, or a dict of Float / Int / Choice) is "
                                 "required with objective=<callable>")
            self.name = getattr(objective, "__name__", "objective")
            self._call = objective
            self.bounds = None if space is not None else as_bounds(bounds)
            if space is not None:
                space = as_search_space(space)
            given = "space" if space is not None else "bounds"
            d = space.dim if space is not None else self.bounds.shape[1]
            if dim is not None and dim != d:
                raise ValueError(f"dim={dim!r} disagrees with the {d}-dimensional {given} (with objective=, the "
                                 f"{given} give the dimension; dim is for function=)")
            self.optimal_value = optimal_value
        #: the search space: the one given (``space=``), or the box's ``d`` floats named ``x0 ...
        #: x{d-1}`` (:meth:`SearchSpace.from_bounds`)
        self.space = space if space is not None else SearchSpace.from_bounds(self.bounds)
        if constraints is not None and not callable(constraints):
            raise TypeError(f"constraints must be callable (a point -> a sequence of floats, feasible when all are "
                            f"<= 0) or None, got {type(constraints).__name__}")
        #: the outcome constraints' callable, or ``None``
        self.constraints = constraints
        if constraints is not None:
            self._call = WithConstraints(self._call, constraints)
        #: ``k``, the constraint values each evaluation returns (``None`` until the first)
        self.n_constraints: int | None = None
        #: ``True`` / ``False``, or one of them per objective (a tuple) for several objectives
        self.minimize = minimize
        #: ``m``, the values each evaluation returns (1: one objective)
        self.objectives = objectives
        #: the objectives' names, in order: ``minimize``'s keys, or ``f0``, ``f1``, ... for a
        #: sequence (:func:`named_directions`); ``None`` for one objective
        self.objective_names = names
        #: whether the names were given (``minimize`` a mapping): the objective may then return a
        #: mapping of them, and a run records them (``env_params["objective_names"]``)
        self.named_objectives = named
        self.budget = budget
        self.noise_std = noise_std
        self.dim = self.space.dim
        self.action_space = gym.spaces.Box(0.0, 1.0, shape=(self.dim,), dtype=np.float64)
        low = np.concatenate([np.zeros(self.dim), [-np.inf] * objectives])
        high = np.concatenate([np.ones(self.dim), [np.inf] * objectives])
        self.observation_space = gym.spaces.Box(low, high, dtype=np.float64)
        #: several objectives: the ``[m]`` reward's space (MO-Gymnasium's ``reward_space``); ``None``
        #: for one, whose reward is a float
        self.reward_space = (gym.spaces.Box(-np.inf, np.inf, shape=(objectives,), dtype=np.float64)
                             if objectives > 1 else None)
        self.t = 0
        self._begun = False  # step() before the first reset() is refused, as by the bandits
        self.best_value: float | None = None
        self.evaluator = evaluator

    @property
    def evaluator(self) -> Any:
        """Where ``step`` gets the objective's outcome: ``None`` (it calls the objective) or
        an object with ``evaluate(objective, x) -> Outcome`` (:mod:`npbandit.envs.evaluation`)."""
        return self._evaluator

    @evaluator.setter
    def evaluator(self, evaluator: Any) -> None:
        if evaluator is not None and not callable(getattr(evaluator, "evaluate", None)):
            raise TypeError(f"evaluator must be None or have an evaluate(objective, x) method, got "
                            f"{type(evaluator).__name__}")
        self._evaluator = evaluator

    @property
    def objective(self) -> Callable[[np.ndarray], Any]:
        """The callable that evaluates a point in the original bounds (the user's objective,
        or a test function's picklable wrapper): what an executor's worker runs; its outcome
        comes back through the env's ``evaluator`` and ``step``."""
        return self._call

    @property
    def has_space(self) -> bool:
        """Whether the env was given a search space (``space=``) rather than a box."""
        return self.bounds is None

    def to_bounds(self, action: np.ndarray) -> np.ndarray:
        """Unit-cube action ``[d]`` -> point in the original bounds ``[d]`` (a box env only;
        :meth:`point` serves both). A face maps onto the bound itself: ``low + 1.0 * (high -
        low)`` can round past ``high``, which the objective must never receive."""
        if self.bounds is None:
            raise TypeError("this env searches a space (space=), not a box: point(action) gives the params dict")
        low, high = self.bounds
        action = np.asarray(action, dtype=np.float64)
        return np.clip(np.where(action == 1.0, high, low + action * (high - low)), low, high)

    def point(self, action: Any) -> Any:
        """What the objective is called with at unit-cube ``action`` ``[d]``: the point in the
        original bounds (numpy ``[d]``), or with a space the dict ``space.decode(action)``."""
        if self.bounds is None:
            return self.space.decode(np.asarray(action, dtype=np.float64))
        return self.to_bounds(action)

    def params(self, action: Any) -> dict[str, Any]:
        """The point at ``action`` by name in the user's units, as a run records it: the
        params dict of a space, ``{"x0": ..., "x{d-1}": ...}`` (floats, the box's point
        exactly) for a box."""
        return named_point(self.point(action))

    def render(self) -> None:
        """Draw nothing and return ``None``: Gymnasium's convention for an environment made
        with ``render_mode=None``, the only mode this one takes (so a generic loop that calls
        ``render()`` runs on it)."""
        return None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        check_options(options, ())
        super().reset(seed=seed)
        self.t = 0
        self._begun = True
        self.best_value = None
        self.n_constraints = None
        if self.bounds is None:
            return np.zeros(self.dim + self.objectives), {"space": self.space.describe()}
        return np.zeros(self.dim + self.objectives), {"bounds": self.bounds.copy()}

    def _exited(self, err: SystemExit, x: Any) -> SystemExit:
        """``err``, the objective's ``sys.exit``, with a note of the evaluation (1-based) and point
        it ended: the run stops and the process exits with ``err.code``, as the objective asked."""
        code = f"code {err.code}" if isinstance(err.code, int) or err.code is None else repr(err.code)
        err.add_note(f"the objective exited with {code} (sys.exit) at evaluation {self.t}, x={shown(x)}")
        return err

    def _raised(self, who: str, err: BaseException, x: Any) -> str:
        """What an evaluation's failure records: ``who`` raised ``err`` at ``x``; a KeyError
        naming a parameter the point lacks (a conditional space's) says when it exists."""
        lacks = self.space.lacks(x, err.args[0]) if isinstance(err, KeyError) and err.args else None
        why = f" ({lacks}: a point holds its active parameters alone)" if lacks else ""
        raised = err.raised if isinstance(err, UnsentError) else type(err).__name__
        return f"{who} raised {raised}: {err} at x={shown(x)}{why}"

    def step(self, action):
        """Evaluate ``action`` (a point of ``[0, 1]^d``) and record it; Gymnasium's
        ``(obs, reward, terminated, truncated, info)`` (see the module docstring).

        Raises:
            ValueError: ``action`` is not a finite point of the unit cube.
            RuntimeError: before the first ``reset``, or the budget is spent (call ``reset``).
            SystemExit: the objective called ``sys.exit`` (noted with the evaluation and point).
            ObjectiveError: the objective raised or returned NaN / inf (the budget is spent);
                :class:`~npbandit.exceptions.ObjectiveReturnError` (also a ``TypeError``) when it
                returned something other than one real number (``m`` of them, for ``m`` objectives).
        """
        evaluator = self._evaluator
        action = unit_point("action", action, self.dim)
        if not self._begun:
            raise RuntimeError("call reset() before step(): no episode has begun")
        if self.t >= self.budget:
            raise RuntimeError("the budget is spent; call reset()")
        x = self.point(action)
        outcome = None
        if evaluator is not None:
            # an evaluator raises only when misused: that is no evaluation, and spends no budget
            outcome = evaluator.evaluate(self._call, copied(x))
            if not isinstance(outcome, Outcome):
                raise TypeError(f"evaluator.evaluate must return an Outcome, got {type(outcome).__name__}")
        self.t += 1  # a failed evaluation spends budget too
        if outcome is None:
            try:
                out = self._call(x.copy())
            except SystemExit as err:  # not a failed evaluation: the run stops, saying where
                raise self._exited(err, x) from None
            except Exception as err:  # the user's objective: report, never hide
                raise ObjectiveError(self._raised("objective", err, x), x, kind="raised") from err
        elif not outcome.ok:
            err = outcome.value
            if isinstance(err, SystemExit):  # on a worker: stops the run as in this process
                raise self._exited(err, x) from None
            if outcome.timed_out:  # the evaluator gave it up: the objective raised nothing
                raise ObjectiveError(f"objective timed out: {err} at x={shown(x)}", x, kind="timeout") from err
            if isinstance(err, ExecutorFailure):  # the objective raised nothing either
                failed = ("the executor cannot send the objective to its workers, so no evaluation can run there"
                          if err.unsendable else "the executor failed to run the objective")
                raise ObjectiveError(f"{failed}: {err} at x={shown(x)}", x, kind="raised") from err.__cause__
            raise ObjectiveError(self._raised("objective", err, x), x, kind="raised") from err
        else:
            out = outcome.value
        constraints = None
        if self.constraints is not None:
            if not isinstance(out, Evaluated):  # a value handed over that env.objective did not make
                raise ObjectiveReturnError(f"this env has constraints: the outcome at x={shown(x)} must come from "
                                           "env.objective (the objective and its constraints evaluated together)", x)
            out, constraints = out.value, out
        if self.objectives > 1:  # outside the try: its ObjectiveReturnError names what came back
            values = objective_values(out, x, self.objectives, self.objective_names if self.named_objectives else None)
            if not np.isfinite(values).all():
                raise ObjectiveError(f"objective returned {values.tolist()} at x={shown(x)} (NaN or infinite)", x,
                                     kind="nonfinite")
        else:
            value = objective_value(out, x)  # outside the try: its ObjectiveReturnError names what came back
            if not np.isfinite(value):
                raise ObjectiveError(f"objective returned {value} at x={shown(x)}", x, kind="nonfinite")
        if constraints is not None:
            if constraints.failed:
                err = constraints.constraints
                raise ObjectiveError(self._raised("constraints", err, x), x, kind="raised") from err
            constraints = constraint_values(constraints.constraints, x, self.n_constraints)
            self.n_constraints = constraints.size
        feasible = constraints is None or is_feasible(constraints)
        info = {"x": x, "params": named_point(x), "t": self.t - 1}
        if self.objectives > 1:
            reward = maximised(values, self.minimize)
            info["values"] = values.tolist()
        else:
            if self.noise_std:
                value += self.noise_std * float(self.np_random.standard_normal())
            better = feasible and (self.best_value is None
                                   or (value < self.best_value if self.minimize else value > self.best_value))
            if better:
                self.best_value = value
            reward = maximised(value, self.minimize)
            info.update(value=value, best_value=self.best_value)
        if constraints is not None:
            info["constraints"], info["feasible"] = constraints.tolist(), feasible
        if self.optimal_value is not None and self.best_value is not None:
            info["simple_regret"] = abs(self.best_value - self.optimal_value)
        return np.concatenate([action, np.atleast_1d(reward)]), reward, False, self.t >= self.budget, info

    def step_evaluated(self, action, ok: bool, outcome: Any):
        """Deprecated: set ``evaluator`` to an :class:`~npbandit.envs.evaluation.OutcomeRelay`,
        hand it the :class:`~npbandit.envs.evaluation.Outcome` and call ``step(action)``.

        ``step(action)`` for a point evaluated elsewhere: ``outcome`` is the objective's
        return value when ``ok``, else the exception it raised."""
        warnings.warn("BlackBoxEnv.step_evaluated is deprecated and will be removed in the next release: hand the "
                      "outcome to the env's evaluator (npbandit.envs.evaluation.OutcomeRelay) and call step(action)",
                      DeprecationWarning, stacklevel=2)
        if not isinstance(ok, bool):
            raise TypeError(f"ok must be a bool, got {type(ok).__name__}")
        if not ok and not isinstance(outcome, BaseException):
            raise TypeError(f"outcome must be the exception the objective raised when ok is False, "
                            f"got {type(outcome).__name__}")
        relay, previous = OutcomeRelay(), self._evaluator
        relay.hand_over(Outcome(ok, outcome))
        self._evaluator = relay
        try:
            return self.step(action)
        finally:
            self._evaluator = previous
