"""``npbandit optimize``: Bayesian optimisation of a named test function or of the user's
``module:function``, evaluated here, on local worker processes or on a Dask cluster; with
``--directions``, of an objective of several values, whose Pareto front it prints. The
problem its flags name (function or objective, box or space, directions) is read by
:mod:`npbandit.cli.problem`."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from npbandit.cli.options import positive_float, positive_int, progress, results_line, seed_or_none
from npbandit.cli.problem import (
    check_dim,
    list_functions,
    load_callable,
    parse_bounds,
    parse_direction,
    parse_space,
    read_minimize,
)

__all__ = ["COMMAND", "HELP", "add_arguments", "run"]

COMMAND = "optimize"
HELP = "Bayesian optimisation of a named test function or module:function"
USES_DB = True
SCOPES_THREADS = True  # --threads goes to optimize(threads=...): proposals only, not the objective's calls
TAKES_PLUGINS = True  # --surrogate may be a checkpoint of a family a --plugin module registers
#: optimize's ``minimize`` is fed by --directions where it is a list (its errors name it so)
ARGUMENT_ALIASES = {"minimize": "directions"}


def add_arguments(opt: argparse.ArgumentParser) -> None:
    """``npbandit optimize``'s options; their defaults are :func:`npbandit.optimize`'s."""
    from npbandit.acquisition.optimizers import OPTIMIZERS
    from npbandit.acquisition.pending import DEFAULT_LIAR, LIARS
    from npbandit.acquisition.wide_spaces import SUBSPACES
    from npbandit.policies.bo import OUTPUT_WARPS

    target = opt.add_mutually_exclusive_group(required=True)
    target.add_argument("--function", help="an unconstrained, continuous botorch.test_functions problem, e.g. "
                        "branin, hartmann, ackley (constrained and integer-input problems are not offered; "
                        "`npbandit optimize --function list` names them all)")
    target.add_argument("--objective", help="module:function taking one point (numpy) and returning a float; the "
                        "module is looked up on the import path and in the current directory")
    box = opt.add_mutually_exclusive_group()
    box.add_argument("--bounds", help='2 x d JSON, e.g. "[[0,0],[1,1]]" (with --objective, this or --space is '
                     "required; default with --function: the function's own bounds, where its known optimum is "
                     "recorded)")
    box.add_argument("--space", metavar="JSON_OR_PATH",
                     help="with --objective: a search space of named float / int / choice parameters, as JSON or "
                          "a .json file holding it, in the form a run records (SearchSpace.describe), e.g. "
                          '\'{"lr": {"type": "float", "low": 1e-4, "high": 0.1, "log": true}, "layers": {"type": '
                          '"int", "low": 1, "high": 4}, "act": {"type": "choice", "values": ["relu", "tanh"]}}\'; '
                          'a choice\'s "dependents" (parameters that exist only under some of its values) as '
                          '[value, [names]] pairs, [["tanh", ["slope"]]]; '
                          'linear constraints on its floats may sit beside the parameters as "parameter_constraints": '
                          '["lr <= 2*momentum"] (as --parameter-constraint); '
                          "the objective is then called with a dict {name: value} (default: none, --bounds give a box)")
    opt.add_argument("--parameter-constraint", action="append", metavar="TEXT", dest="parameter_constraints",
                     help='a linear constraint on the inputs every evaluated point satisfies, e.g. "x0 + 2*x1 <= 3" '
                          "or \"lr <= 2*momentum\" (<= or >=; numbers, names, *, +, -; names x0 .. x{d-1} for "
                          "--bounds and --function, the parameters' for --space, floats on a linear scale only); "
                          "repeat it for several (default: none)")
    opt.add_argument("--constraints", metavar="MODULE:FUNCTION",
                     help="outcome constraints: module:function taking the point (as the objective does) and "
                          "returning a sequence of floats, the point feasible when all are <= 0 (the best value "
                          "printed is then the best feasible one; needs --acquisition logei or qlognei) "
                          "(default: none)")
    opt.add_argument("--dim", type=positive_int, help="dimension for the test functions that take one (ackley, "
                     "rosenbrock, ...; `npbandit optimize --function list` says which); the others have a fixed one "
                     "(default: the function's own)")
    opt.add_argument("--surrogate", default="tnpd", help="tnpd (the tnpd-bo checkpoint: TNP-D trained on the bo "
                     "prior) | cmanp (cmanp-bo) | gp | random (Sobol search) | a checkpoint trained on the bo prior "
                     "(npbandit models)")
    opt.add_argument("--budget", type=positive_int, default=50, help="evaluations, the initial design included")
    opt.add_argument("--acquisition", default="logei", help="logei | ucb | thompson | marginal-thompson | qlognei")
    opt.add_argument("--acq-optimizer", choices=list(OPTIMIZERS),
                     help="how each proposal maximises the LogEI / UCB acquisition: candidate-search (batched "
                          "scoring of Sobol points and of perturbations of the best, no gradients) or "
                          "gradient-restarts (BoTorch's optimize_acqf: L-BFGS-B from several starts), at their "
                          "defaults (optimize(acq_optimizer=...); default: what the checkpoint's card recommends, "
                          "candidate-search for tnpd; gradient-restarts for gp and for a card that names none)")
    opt.add_argument("--output-warp", choices=list(OUTPUT_WARPS),
                     help="power-transform the values the surrogate sees (optimize(output_warp=...); default: none)")
    opt.add_argument("--trust-region", action=argparse.BooleanOptionalAction, default=None,
                     help="search a trust region around the best point, the surrogate seeing it as its whole "
                          "domain (optimize(trust_region=...); default: on for the NP surrogates, off for gp)")
    opt.add_argument("--branches", action=argparse.BooleanOptionalAction, default=None,
                     help="with a conditional --space (a choice with dependents) and one objective: search each "
                          "value of the first such choice by a model of its own (--branches), or the whole space by "
                          "one model (--no-branches) (optimize(branches=...); default: by branch where it can)")
    opt.add_argument("--subspace", choices=list(SUBSPACES),
                     help="the subspace strategy through which an NP checkpoint searches more inputs than it takes, "
                          "at its default settings (optimize(subspace=...); used whatever the width once given): "
                          "redealt-sketch (a count sketch re-dealt through the best point, inputs an ARD GP finds "
                          "relevant leading its bins), count-sketch, coordinates (a trust region whose proposals "
                          "move as many inputs as the checkpoint takes) or indexed-choices (a --space's choices on "
                          "one column each); default: indexed-choices for a space with a choice of three or more "
                          "values, redealt-sketch for a box, count-sketch otherwise, and only when d is wider than "
                          "the checkpoint")
    opt.add_argument("--n-init", type=positive_int, help="initial Sobol points (default: 2d + 1; 2 d_e + 1 when d is "
                     "wider than the surrogate, which then searches a d_e-dimensional subspace)")
    opt.add_argument("--maximize", action="store_true", help="maximise instead of minimise")
    opt.add_argument("--directions", nargs="+", type=parse_direction, metavar="DIRECTION",
                     help="with --objective: several objectives, the objective returning one number per direction "
                          "given, in this order: minimize or maximize for each (as optuna create-study "
                          "--directions; min / max too), at least two, e.g. --directions minimize maximize; or each "
                          "objective named, NAME=DIRECTION, e.g. --directions cost=minimize accuracy=maximize "
                          "(optimize(minimize={'cost': True, 'accuracy': False})), the objective then returning a "
                          "dict of those names or the numbers in this order, and the run printing and recording the "
                          "names. The run prints its Pareto front, the evaluations no other beats in every objective "
                          "(optimize(minimize=[True, False]); --acquisition, --output-warp, --trust-region, "
                          "--liar and --optimal-value are then for one objective and refused; default: one "
                          "objective, minimised unless --maximize)")
    opt.add_argument("--avoid-repeats", action=argparse.BooleanOptionalAction, default=True,
                     help="never propose a point already evaluated (optimize(avoid_repeats=...)); "
                          "--no-avoid-repeats lets a noisy objective be measured again where it looks best")
    opt.add_argument("--name", help="with --objective: the problem's name in the database and the report "
                                    "(default: module:function's name)")
    opt.add_argument("--optimal-value", type=float, metavar="VALUE",
                     help="with --objective: the known optimum, so the report shows simple regret (default: "
                          "unknown; a --function records its own)")
    opt.add_argument("--on-error", choices=["raise", "skip"], default="raise",
                     help="an evaluation that raises or returns NaN / inf: stop the run (raise) or record it as "
                          "failed and go on (skip)")
    opt.add_argument("--seed", type=seed_or_none, default=0,
                     help="seeds the initial design and the acquisition optimisation: the same seed, the same run; "
                          "'none' draws one (optimize(seed=None)), printed with the result and recorded with the run")
    opt.add_argument("--batch-size", type=positive_int,
                     help="evaluations in flight at once (asynchronous BO; > 1 needs --workers or --dask-scheduler; "
                          "default: --workers' count, else 1)")
    parallel = opt.add_mutually_exclusive_group()
    parallel.add_argument("--workers", type=positive_int,
                          help="evaluate on this many local processes (the objective must be importable: "
                               "--function, or --objective module:function; default: evaluate here, one at a time)")
    parallel.add_argument("--dask-scheduler", metavar="ADDRESS",
                          help="evaluate on the workers of this Dask scheduler (the 'dask' extra; with --batch-size; "
                               "default: none, see --workers)")
    opt.add_argument("--liar", choices=list(LIARS), default=DEFAULT_LIAR,
                     help="with --batch-size > 1, what evaluations in flight are believed at: the worst, mean or "
                          "best value the surrogate sees, 'believer': the surrogate's own mean at each, or "
                          "'penalty': no value, LogEI damped around them (optimize(liar=...))")
    opt.add_argument("--initial-from", type=positive_int, metavar="RUN_ID",
                     help="start from the evaluations of run RUN_ID in --db, a run of the same problem (objective, "
                          "bounds or space, direction, constraints), its failed ones carried as failures: none is "
                          "evaluated again (the initial design goes on past the points that run drew), and --budget "
                          "counts the new evaluations only. The new run sees everything RUN_ID saw: the points RUN_ID "
                          "was given (followed back through the runs it continued), then its own evaluations; how an "
                          "interrupted or failed run goes on (optimize(initial=RUN_ID); default: none)")
    opt.add_argument("--eval-timeout", type=positive_float, metavar="SECONDS",
                     help="an evaluation still running after this long is recorded as failed (--on-error says "
                          "what then); needs --workers or --dask-scheduler (default: no limit)")


def run(args: argparse.Namespace) -> int:
    """Run ``npbandit optimize``; prints the best value found and the model's recommendation,
    then where the run is (:func:`~npbandit.cli.options.results_line`)."""
    from npbandit.acquisition.optimizers import OPTIMIZERS
    from npbandit.acquisition.wide_spaces import named_subspace
    from npbandit.api import optimize
    from npbandit.feasibility import best_step

    minimize = read_minimize(args)
    if args.function:
        from npbandit.envs import make_test_function
        from npbandit.envs.blackbox import problem_objective

        if args.space is not None:
            raise ValueError("--space goes with --objective (a named --function takes --bounds)")
        if args.function == "list":
            list_functions()
            return 0
        for flag, given in (("--name", args.name), ("--optimal-value", args.optimal_value)):
            if given is not None:
                raise ValueError(f"{flag} goes with --objective (a named --function records its own)")
        check_dim(args.function, args.dim)
        problem = make_test_function(args.function, args.dim)
        bounds = problem.bounds if args.bounds is None else parse_bounds(args.bounds)
        if len(bounds[0]) != problem.dim:
            raise ValueError(f"--bounds are {len(bounds[0])}-dimensional but {args.function} takes {problem.dim} "
                             "input(s)" + ("" if args.dim is not None else " (--dim sets it for the functions "
                                                                           "that take one)"))
        objective = problem_objective(problem, args.function)
        name = args.function.lower()
        # the problem's known optimum is its minimum over its own bounds; elsewhere it is unknown
        optimum = getattr(problem, "_optimal_value", None) if args.bounds is None and not args.maximize else None
    else:
        if args.bounds is None and args.space is None:
            raise ValueError("--bounds or --space is required with --objective")
        bounds = parse_bounds(args.bounds) if args.space is None else parse_space(args.space, args)
        d = len(bounds[0]) if args.space is None else bounds.dim
        if args.dim is not None and args.dim != d:
            given = "--bounds" if args.space is None else "--space"
            raise ValueError(f"--dim {args.dim} disagrees with the {d}-dimensional {given} (with --objective, "
                             f"{given} gives the dimension; --dim is for --function)")
        objective = load_callable(args.objective, "--objective")
        name, optimum = args.name, args.optimal_value
    constraints = None if args.constraints is None else load_callable(args.constraints, "--constraints")
    if args.subspace == "indexed-choices" and args.space is None:
        raise ValueError("--subspace indexed-choices goes with --space (it indexes a space's choices; a box has none)")
    subspace = None if args.subspace is None else named_subspace(args.subspace, None if args.space is None else bounds)
    _check_before_starting(args, bounds.dim if args.space is not None else len(bounds[0]))
    initial = None if args.initial_from is None else _earlier_steps(args, bounds, name or objective, constraints,
                                                                      minimize)
    with contextlib.ExitStack() as stack, _several_values_hint(args):
        executor, batch_size = _optimize_executor(args, stack)
        result = optimize(objective, bounds, surrogate=args.surrogate, budget=args.budget,
                          acquisition=args.acquisition, minimize=minimize, n_init=args.n_init,
                          seed=args.seed, db=args.db, on_error=args.on_error, progress=progress(),
                          name=name, optimal_value=optimum, batch_size=batch_size, executor=executor,
                          eval_timeout=args.eval_timeout, output_warp=args.output_warp,
                          trust_region=args.trust_region, branches=args.branches, liar=args.liar,
                          threads=args.threads, constraints=constraints, initial=initial,
                          parameter_constraints=args.parameter_constraints,
                          avoid_repeats=args.avoid_repeats, subspace=subspace,
                          acq_optimizer=None if args.acq_optimizer is None else OPTIMIZERS[args.acq_optimizer]())
    if args.directions is not None:
        _print_front(args, result, initial, constraints is not None)
        print(results_line(args.db))
        return 0
    what = "best value" if constraints is None else "best feasible value" if result.feasible else \
        "no feasible point found; least violating: value"
    failed = sum(h["failed"] for h in result.history)  # --on-error skip: say so, the best is of the others
    print(f"run {result.run_id}: {what} {result.best_value:.6g} at {_point_text(result.best_x)} "
          f"after {len(result.history)} evaluations" + (f" ({failed} failed)" if failed else ""))
    if args.seed is None:  # the only record of a drawn seed outside the database: say how to repeat the run
        print(f"seed {result.seed} (drawn; --seed {result.seed} repeats the run)")
    earlier = None if initial is None else best_step(initial, not args.maximize, constraints is not None)
    if earlier is not None and (not result.feasible or (earlier["value"] < result.best_value if not args.maximize
                                                        else earlier["value"] > result.best_value)):
        # the result is this run's own evaluations; one who resumed a stopped run needs the best of all
        print(f"better among the {len(initial)} evaluations it continues: value {earlier['value']:.6g} at "
              f"{_point_text(earlier['params'])} (run {earlier['run_id']}, evaluation {earlier['t']})")
    if result.recommended_by == "model":  # the evaluated point the model believes best (noisy objectives)
        # its observed value beside the model's: on a deterministic objective the observation is the value
        observed = next((h["value"] for h in result.history if not h["failed"]
                         and _same_point(h["x"], result.recommended_x)), None)
        seen = "" if observed is None else f"observed {observed:.6g}, "
        print(f"recommended by the model: {_point_text(result.recommended_x)} ({seen}posterior mean "
              f"{result.recommended_value:.6g})")
    print(results_line(args.db))
    return 0


@contextlib.contextmanager
def _several_values_hint(args: argparse.Namespace):
    """An objective of one value (no ``--directions``) that returned several numbers: the
    failure optimize reports (its :data:`~npbandit.envs.outcomes.SEVERAL_OBJECTIVES_HINT`
    saying how to search several objectives in Python) re-raised as a ``ValueError`` whose
    hint names ``--directions``. Not the failed evaluation's ``--initial-from`` line: that run
    was of one objective, and a run of several cannot continue it."""
    from npbandit.envs import ObjectiveError
    from npbandit.envs.outcomes import SEVERAL_OBJECTIVES_HINT

    try:
        yield
    except ObjectiveError as err:
        if args.directions is not None or SEVERAL_OBJECTIVES_HINT not in str(err):
            raise
        # one evaluation stopped the run (kind set): say the run is saved, as the error line of one does
        run = "" if err.run_id is None or err.kind is None else f" (run {err.run_id} is recorded as failed)"
        hint = ("; for several objectives give one direction per value, e.g. --directions minimize maximize, or "
                "return one number that weighs them")
        raise ValueError(str(err).replace(SEVERAL_OBJECTIVES_HINT, hint) + run) from None


def _print_front(args: argparse.Namespace, result: Any, initial: list[dict[str, Any]] | None,
                 constrained: bool) -> None:
    """What a run of several objectives prints: a line with the run, the size of its front,
    its evaluations and failures, then the front (:attr:`ParetoResult.front
    <npbandit.optimize_result.ParetoResult.front>`), one evaluation a row: its ``t``, each value
    under a header naming its objective's direction, and the point by name. With ``initial``
    (``--initial-from``'s evaluations), the front is this run's own, as for one objective; the
    evaluations it continues that are on the front of all (theirs and this run's) follow it.
    A drawn seed (``--seed none``) is printed as for one objective; the database, as for one
    objective, on the closing line (:func:`~npbandit.cli.options.results_line`)."""
    failed = sum(h["failed"] for h in result.history)
    n = len(result.history)
    counted = f"after {n} evaluation{'' if n == 1 else 's'}" + (f" ({failed} failed)" if failed else "")
    if not result.front:
        print(f"run {result.run_id}: no evaluation satisfied the constraints, so no Pareto front, {counted}")
    else:
        size = len(result.front)
        print(f"run {result.run_id}: {size} evaluation{'' if size == 1 else 's'} on the Pareto front {counted}")
        print("\n".join(_front_rows(result.front, result.minimize, _headed(result))))
    if args.seed is None:  # as for one objective: the only record of a drawn seed outside the database
        print(f"seed {result.seed} (drawn; --seed {result.seed} repeats the run)")
    if initial:
        _print_earlier_on_front(result, initial, constrained)


def _headed(result: Any) -> tuple[str, ...] | None:
    """The names a front's table heads its values with: the result's objective names where they
    were given (``--directions cost=minimize ...``), ``None`` for objectives named by position."""
    from npbandit.objective_names import positional_names

    names = result.objective_names
    return None if names == positional_names(len(result.minimize)) else names


def _front_rows(entries: list[dict[str, Any]], minimize: tuple[bool, ...], names: tuple[str, ...] | None = None,
                runs: bool = False) -> list[str]:
    """A table of front entries (history dicts: ``t``, ``x``, ``values``; with ``runs``, also
    ``run_id``, shown first): a header naming each value's objective (``names``, else ``value 1``,
    ``value 2``, ...) and direction, then one row each, the numbers right-aligned under it and the
    point by name last."""
    head = [*(["run"] if runs else []), "t",
            *(f"{names[i] if names else f'value {i + 1}'} ({'minimize' if low else 'maximize'})"
              for i, low in enumerate(minimize))]
    rows = [[*([str(h["run_id"])] if runs else []), str(h["t"]), *(f"{v:.6g}" for v in h["values"])]
            for h in entries]
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
    lines = ["  " + "  ".join(cell.rjust(w) for cell, w in zip(head, widths)) + "  point"]
    for row, h in zip(rows, entries):
        lines.append("  " + "  ".join(cell.rjust(w) for cell, w in zip(row, widths)) + f"  {_point_text(h['x'])}")
    return lines


def _print_earlier_on_front(result: Any, initial: list[dict[str, Any]], constrained: bool) -> None:
    """``--initial-from`` with several objectives: the evaluations continued that are on the
    front of all of them and this run's (the result's front is this run's own, as its best is
    for one objective), and how many of this run's front they beat; nothing when none is."""
    from npbandit.optimize_result import ParetoResult
    from npbandit.report.summary import step_feasible

    earlier = [{"run_id": s["run_id"], "t": s["t"], "x": s["params"], "values": s["values"], "failed": False,
                **({"feasible": step_feasible(s)} if constrained else {})}
               for s in initial if not s["failed"] and s.get("values") is not None]
    both = ParetoResult.of_history(earlier + list(result.history), result.minimize, None)
    kept = [h for h in both.front if "run_id" in h]  # this run's history entries carry none
    if not kept:
        return
    beaten = len(result.front) - (len(both.front) - len(kept))
    print(f"the front of these and the {len(initial)} evaluations it continues also holds {len(kept)} of those"
          + (f", which beat {beaten} of this run's front" if beaten else "") + ":")
    print("\n".join(_front_rows(kept, result.minimize, _headed(result), runs=True)))


def _earlier_steps(args: argparse.Namespace, bounds: Any, objective: Any, constraints: Any,
                   minimize: bool | list[bool] | dict[str, bool]) -> list[dict[str, Any]]:
    """``--initial-from``: every evaluation that run in ``--db`` saw (the points it was given,
    following a chain of continued runs back, then its own: ``run_evaluations``), after
    checking that it is a black-box run of this problem (objective, box or space, direction
    or directions and the objectives' names, constraints); ``ValueError`` naming
    ``--initial-from`` and what differs otherwise."""
    from npbandit.envs.directions import named_directions
    from npbandit.objective_names import objective_label
    from npbandit.optimize_setup import same_constraints
    from npbandit.space import SearchSpace
    from npbandit.warm_start import continued_run

    directions, m, names = named_directions(minimize)
    # objectives named here are compared by name first (names in another order: their directions follow them);
    # else the directions first (a run of one objective against --directions min max says the directions)
    named = {} if m == 1 else {"objective_names": list(names)}
    here = {"objective": objective if isinstance(objective, str) else objective_label(objective),
            **(named if isinstance(minimize, dict) else {}),
            "minimize": directions if m == 1 else list(directions),
            **({} if isinstance(minimize, dict) else named),
            "constraints": None if constraints is None else objective_label(constraints),
            "parameter_constraints": args.parameter_constraints}
    if isinstance(bounds, SearchSpace):
        here["space"] = bounds.describe()
    else:
        here["bounds"] = [[float(v) for v in row] for row in bounds]
    linear = None
    if args.parameter_constraints:  # the same constraints however written (optimize refuses bad ones later)
        from npbandit.space.linear_constraints import LinearConstraints

        space = bounds if isinstance(bounds, SearchSpace) else SearchSpace.from_bounds(bounds)
        try:
            linear = LinearConstraints(args.parameter_constraints, space)
        except (TypeError, ValueError):
            pass
    return continued_run(args.db, args.initial_from, "--initial-from", problem=here, same=same_constraints(linear),
                         said=_in_flags(args, m))


def _in_flags(args: argparse.Namespace, m: int) -> dict[str, tuple[str, Any]]:
    """How ``--initial-from``'s refusal says a setting of the run that differs (``continued_run``'s
    ``said``): by the flags that give it here (``--maximize``, ``--directions``, ``--bounds``, ...),
    not by ``optimize``'s argument names, which a command line's user never typed."""
    def direction(value: Any) -> str:  # one objective's minimize, or several objectives' list of them
        if isinstance(value, bool):
            return "minimize (without --maximize)" if value else "maximize (--maximize)"
        if isinstance(value, list) and all(isinstance(v, bool) for v in value):
            return "--directions " + " ".join("minimize" if v else "maximize" for v in value)
        return shown(value)

    def shown(value: Any) -> str:
        return "none" if value is None else repr(value)

    from_file = (getattr(args, "flag_overrides", None) or {}).get("parameter_constraints")
    return {"minimize": ("direction is" if m == 1 else "directions are", direction),
            "objective_names": ("objectives' names (--directions NAME=DIRECTION) are", shown),
            "bounds": ("--bounds are" if args.bounds is not None else "bounds are", shown),
            "space": ("--space is", shown),
            "constraints": ("--constraints are", shown),
            "parameter_constraints": (f"{from_file[0] if from_file else '--parameter-constraint'} values are", shown)}


def _same_point(a: Any, b: Any) -> bool:
    """Whether two of a result's points are the same point (a space's params dicts, or a box's arrays)."""
    import numpy as np

    if isinstance(a, dict) or isinstance(b, dict):
        return a == b
    return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float))


def _point_text(point: Any) -> str:
    """A result's point on one line, as ``npbandit report`` shows one: a box's point by
    name (``x0=0.1234, x1=...``), a space's params dict as it is; floats to 4 significant
    digits, the inputs that do not fit counted (``... 13 more``). The exact point is the
    result's ``best_x`` and the run's steps in the database."""
    from npbandit.envs.blackbox import named_point
    from npbandit.report.summary import params_text

    return params_text(named_point(point))


def _check_before_starting(args: argparse.Namespace, d: int) -> None:
    """What :func:`npbandit.optimize` would refuse, checked before any worker or cluster is
    started for it: the surrogate (an unknown or unfitting checkpoint), the acquisition,
    before anything is evaluated or logged."""
    from npbandit.acquisition.proposal import ACQUISITIONS
    from npbandit.optimize_surrogate import surrogate_checkpoint

    if args.acquisition not in ACQUISITIONS:
        raise ValueError(f"--acquisition must be one of {', '.join(ACQUISITIONS)}, got {args.acquisition!r}")
    surrogate_checkpoint(args.surrogate, d)


def _optimize_executor(args: argparse.Namespace, stack: contextlib.ExitStack) -> tuple[Any, int]:
    """``npbandit optimize``'s executor (``None``: evaluate here) and batch size from
    ``--workers`` / ``--dask-scheduler`` / ``--batch-size``; the executor is closed with ``stack``."""
    if args.dask_scheduler is not None:
        if args.batch_size is None:
            raise ValueError("--dask-scheduler needs --batch-size: how many evaluations to keep in flight")
        from npbandit.cluster import dask_executor

        return stack.enter_context(dask_executor(args.dask_scheduler)), args.batch_size
    if args.workers is not None:
        from npbandit.cluster import process_pool

        # Ctrl-C reaches the whole process group: the workers leave it to this process, which saves
        # the run and then abandons the evaluations in flight; the workers end with this process
        pool = stack.enter_context(process_pool(args.workers))
        return pool, args.workers if args.batch_size is None else args.batch_size
    if args.batch_size is not None and args.batch_size > 1:
        raise ValueError("--batch-size > 1 needs --workers N or --dask-scheduler ADDRESS to evaluate on")
    if args.eval_timeout is not None:
        raise ValueError("--eval-timeout needs --workers N or --dask-scheduler ADDRESS (a call running here "
                         "cannot be timed out)")
    return None, 1
