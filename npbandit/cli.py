"""The ``npbandit`` console script."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import signal
import sys
import textwrap

import torch

from npbandit.envs import ObjectiveError
from npbandit.loop import RunInterrupted
from npbandit.policies.bo import DEFAULT_LIAR, LIARS, OUTPUT_WARPS
from npbandit.priors import PRIORS
from npbandit.storage import DEFAULT_URL
from npbandit.surrogates import available_models


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="npbandit", description="Bayesian optimisation and contextual bandits "
                                     "with pretrained neural-process surrogates.")
    from npbandit._version import __version__

    parser.add_argument("--version", action="version", version=f"npbandit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="short BO run (Branin, CMANP) and wheel-bandit run, logged, then the report")
    demo.add_argument("--db", default=DEFAULT_URL)
    demo.add_argument("--budget", type=_positive_int, default=20, help="BO evaluations on Branin")
    demo.add_argument("--steps", type=_positive_int, default=300, help="wheel-bandit rounds")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--streaming", action="store_true", help="instead: CMANP's exact constant-cost updates")
    demo.add_argument("--n-initial", type=_positive_int, default=2000, help="--streaming: points conditioned first")
    demo.add_argument("--n-updates", type=_positive_int, default=500, help="--streaming: points streamed one by one")
    demo.add_argument("--size", choices=["paper", "small", "tiny"], default="paper", help="--streaming: model size")

    opt = commands.add_parser("optimize", help="Bayesian optimisation of a named test function or module:function")
    target = opt.add_mutually_exclusive_group(required=True)
    target.add_argument("--function", help="an unconstrained, continuous botorch.test_functions problem, e.g. "
                        "branin, hartmann, ackley (constrained and integer-input problems are not offered; "
                        "`npbandit optimize --function list` names them all)")
    target.add_argument("--objective", help="module:function taking one point (numpy) and returning a float; the "
                        "module is looked up on the import path and in the current directory")
    opt.add_argument("--bounds", help='2 x d JSON, e.g. "[[0,0],[1,1]]" (required with --objective)')
    opt.add_argument("--dim", type=_positive_int, help="dimension for test functions that take one")
    opt.add_argument("--surrogate", default="tnpd", help="tnpd (default; the NP that steers today) | cmanp | gp | "
                     "random | a checkpoint trained on the bo prior (npbandit models)")
    opt.add_argument("--budget", type=_positive_int, default=50)
    opt.add_argument("--acquisition", default="logei", help="logei | ucb | thompson | marginal-thompson")
    opt.add_argument("--output-warp", choices=list(OUTPUT_WARPS),
                     help="power-transform the values the surrogate sees (optimize(output_warp=...))")
    opt.add_argument("--trust-region", action=argparse.BooleanOptionalAction, default=None,
                     help="search a trust region around the best point, the surrogate seeing it as its whole "
                          "domain (optimize(trust_region=...); default: on for the NP surrogates, off for gp)")
    opt.add_argument("--n-init", type=_positive_int)
    opt.add_argument("--maximize", action="store_true", help="maximise instead of minimise")
    opt.add_argument("--on-error", choices=["raise", "skip"], default="raise")
    opt.add_argument("--seed", type=int, default=0)
    opt.add_argument("--db", default=DEFAULT_URL)
    opt.add_argument("--batch-size", type=_positive_int,
                     help="evaluations in flight at once (asynchronous BO; > 1 needs --workers or --dask-scheduler; "
                          "default: --workers' count, else 1)")
    parallel = opt.add_mutually_exclusive_group()
    parallel.add_argument("--workers", type=_positive_int,
                          help="evaluate on this many local processes (the objective must be importable: "
                               "--function, or --objective module:function)")
    parallel.add_argument("--dask-scheduler", metavar="ADDRESS",
                          help="evaluate on the workers of this Dask scheduler (the 'dask' extra; with --batch-size)")
    opt.add_argument("--liar", choices=list(LIARS), default=DEFAULT_LIAR,
                     help="with --batch-size > 1, what evaluations in flight are believed at: the worst, mean or "
                          "best value the surrogate sees, 'believer': the surrogate's own mean at each, or "
                          "'penalty': no value, LogEI damped around them "
                          f"(optimize(liar=...); default {DEFAULT_LIAR})")
    opt.add_argument("--eval-timeout", type=float, metavar="SECONDS",
                     help="an evaluation still running after this long is recorded as failed (--on-error says "
                          "what then); needs --workers or --dask-scheduler")

    bandit = commands.add_parser("bandit", help="wheel-bandit runs: several policies, deltas and seeds")
    bandit.add_argument("--policies", nargs="+", default=["cmanp-wheel", "uniform", "linucb"],
                        help="uniform | linucb | gp-ucb | <model>-wheel[-ucb|-thompson|-marginal-thompson]")
    bandit.add_argument("--deltas", type=float, nargs="+", default=[0.5])
    bandit.add_argument("--seeds", type=int, nargs="+", default=[0])
    bandit.add_argument("--steps", type=_positive_int, default=2000)
    bandit.add_argument("--beta", type=float, default=1.0, help="UCB exploration weight (mu + beta * sigma)")
    bandit.add_argument("--db", default=DEFAULT_URL)
    bandit.add_argument("--dask-scheduler", metavar="ADDRESS",
                        help="run on the workers of this Dask scheduler (e.g. tcp://10.0.0.5:8786; the 'dask' "
                             "extra) instead of one after another here; --db must reach every worker (a PostgreSQL "
                             "URL across machines)")

    report = commands.add_parser("report", help="tables of runs and regret from a database (black-box runs grouped "
                                 "by problem: objective, dimension, bounds, direction; bandit runs by delta and "
                                 "run length)")
    report.add_argument("--db", default=DEFAULT_URL)
    report.add_argument("--plot", help="also write a PNG to this path: one panel per problem, median and 25-75 %% "
                        "band over seeds, log regret axis when regret spans a decade")
    report.add_argument("--limit", type=_positive_int, default=20, help="runs listed")
    train = commands.add_parser("train", help="meta-train a surrogate on a prior (resumable)")
    train.add_argument("--model", required=True, help="a registered model: " + " | ".join(available_models()))
    train.add_argument("--prior", required=True, help=" | ".join(PRIORS))
    train.add_argument("--steps", type=_positive_int, required=True)
    train.add_argument("--out", required=True, help="run directory (resumes if it holds the same run)")
    train.add_argument("--name", help="checkpoint name (default <model>-<prior>)")
    train.add_argument("--size", choices=["paper", "small", "tiny"], default="paper")
    train.add_argument("--set", dest="model_config", action="append", default=[], metavar="FIELD=VALUE",
                       help="override a model config field, e.g. --set n_latents=32 (repeatable)")
    train.add_argument("--prior-set", dest="prior_params", action="append", default=[], metavar="PARAM=VALUE",
                       help="set a prior parameter, e.g. --prior-set kernel=matern52 (repeatable)")
    train.add_argument("--batch-size", type=_positive_int, default=16)
    train.add_argument("--lr", type=float, default=5e-4)
    train.add_argument("--grad-clip", type=float, default=1.0)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--eval-every", type=_positive_int, default=1000)
    train.add_argument("--checkpoint-every", type=_positive_int, default=500)
    train.add_argument("--eval-batches", type=_positive_int, default=32, help="batches of 16 held-out tasks per suite entry in periodic evaluations (16 whatever --batch-size is)")
    train.add_argument("--final-eval-batches", type=_positive_int, default=256)
    train.add_argument("--device", default="auto", help="auto (CUDA when present) | cpu | cuda | cuda:N")
    train.add_argument("--threads", type=_positive_int, help="torch CPU threads (default: torch's choice)")
    train.add_argument("--stop-at", type=_positive_int, help="save and stop after this step (resume later)")
    train.add_argument("--init-from", help="fine-tune: start from this checkpoint's weights (same model and config; "
                       "a cmanp-and run may start from a cmanp with its encoder config)")
    train.add_argument("--loss", choices=["sampled", "expected"], default="sampled",
                       help="expected: NLL averaged over the targets' exact predictive distribution (the bo "
                       "prior; joint models use its joint covariance)")
    train.add_argument("--eval-prior-set", dest="eval_prior_params", action="append", default=None,
                       metavar="PARAM=VALUE", help="evaluate on the prior with these parameters instead of "
                       "--prior-set's (repeatable)")
    train.add_argument("--max-minutes", type=float, help="save and stop after this many minutes (resume later)")
    train.add_argument("--loader-workers", type=int, default=0,
                       help="processes drawing the prior's batches ahead of the optimiser (GPU runs; same batches)")
    train.add_argument("--export-now", action="store_true",
                       help="train no further: export the run's saved state as a checkpoint (a run in progress)")

    commands.add_parser("models", help="list the pretrained checkpoints that ship with npbandit")
    return parser


def _parse_assignments(items: list[str], flag: str) -> dict[str, object]:
    """``["a=1", "b=0.5", "c=rbf", "d=[1,2]"]`` -> typed dict (JSON values, else strings)."""
    values: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"npbandit: {flag} expects FIELD=VALUE, got {item!r}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def _list_functions() -> None:
    from npbandit.envs.blackbox import _synthetic_problems

    for name, (_, reason) in sorted(_synthetic_problems().items()):
        print(f"{name:<26}" + ("offered" if reason is None else f"not offered: {reason}"))


def _list_models() -> None:
    from npbandit.surrogates.pretrained import available_checkpoints, read_card

    names = available_checkpoints()
    if not names:
        print("no pretrained checkpoints ship with this version")
        return
    print(models_text([read_card(name) for name in names]))


#: shown above the checkpoint tables of ``npbandit models``
MODELS_NOTE = ("Scores: mean target log-likelihood on the prior's held-out evaluation tasks (log-density per target "
               "point, summed over its outputs; higher is better). Under each checkpoint, 'N(0, 1)' is the baseline "
               "on the same tasks: a predictor that ignores the context and says N(0, 1) for every output. A score "
               "means something only next to its baseline, which depends on the prior and on how its outputs are "
               "encoded; so there is one table per prior, output encoding and set of evaluation tasks. 'joint': a "
               "joint model's joint log-density per target on the same tasks (the papers' metric for it). "
               "'S of N' steps: exported S steps into an N-step schedule (a run still in progress).")


def _output_units(card: dict) -> str:
    """How a checkpoint's target outputs were encoded (what its log-likelihoods are densities of)."""
    from npbandit.surrogates.pretrained import outcome_transform

    transform = outcome_transform(card)  # what the card declares (older wheel cards: read from their prior)
    if transform is not None:
        return transform.describe()
    spec = card.get("prior") or {}
    if spec.get("name") == "bo":
        return "standardised by the context" if "context" in str(spec.get("y")) else "standardised by the task"
    return "as sampled"


def _steps_text(training: dict) -> str:
    """A card's training steps; for a checkpoint started from another (``init_from``, recorded
    with each ancestor's steps) the earlier stages' total in brackets: ``10,000 (+100,000)``."""
    own, earlier, source = int(training.get("steps", 0)), 0, training.get("init_from")
    while isinstance(source, dict):
        earlier += int(source.get("steps") or 0)
        source = source.get("init_from")
    schedule = training.get("schedule_steps")
    return f"{own:,}" + (f" of {int(schedule):,}" if schedule else "") + (f" (+{earlier:,})" if earlier else "")


def _evaluated_on(card: dict) -> tuple[str, str]:
    """``(key, text)``: what a card's scores were measured on -- the evaluation suite's
    priors, in full, and the batch size (the tasks are drawn batch by batch) -- and, for
    a table title, the evaluation parameters (``""`` for the prior's defaults)."""
    from npbandit.surrogates.pretrained import checkpoint_use
    from npbandit.training.evaluation import evaluation_suite

    prior = str(checkpoint_use(card)["prior"])
    evaluation = card.get("evaluation", {})
    params = evaluation.get("prior_params")

    def specs(given: dict) -> Any:
        suite = evaluation_suite(prior, **given)
        out = {name: p.spec() for name, p in suite.items()}
        return next(iter(out.values())) if len(out) == 1 else out

    default = specs({})
    if params is None:  # cards before the evaluation parameters were recorded: scored on their training prior
        used, text = card.get("prior"), "the training prior"
    else:
        try:
            used = specs(params)
        except (TypeError, ValueError):
            used = params
        text = ", ".join(f"{k}={v}" for k, v in params.items())
    key = json.dumps([used, evaluation.get("batch_size")], sort_keys=True, default=str)
    same_as_default = used == default
    return key, "" if same_as_default else text


def models_text(cards: list[dict]) -> str:
    """``npbandit models``: one table per prior and output encoding (log-likelihoods are
    densities of the outputs as encoded, so tables differ in scale: a 5-output wheel
    score sums five densities, a reward divided by 50 has a far higher density than its
    symlog), one column per evaluation entry, and under each checkpoint its N(0, 1)
    baseline on the same tasks (``-`` where the card does not record it)."""
    from npbandit.surrogates.pretrained import TASKS, checkpoint_use

    tables: dict[tuple[str, str, str], list[dict]] = {}
    titles: dict[tuple[str, str, str], str] = {}
    for card in cards:
        key, text = _evaluated_on(card)
        table = (str(checkpoint_use(card)["prior"]), _output_units(card), key)
        tables.setdefault(table, []).append(card)
        titles[table] = text
    lines = textwrap.wrap(MODELS_NOTE, 110)
    for (prior, units, key), group in tables.items():
        entries: list[str] = []
        for card in group:
            entries += [k for k in card.get("evaluation", {}).get("log_likelihood", {}) if k not in entries]
        rows = []
        for card in group:
            use = checkpoint_use(card)
            dims = use["x_dims"]
            evaluation = card.get("evaluation", {})
            model, baseline = evaluation.get("log_likelihood", {}), evaluation.get("baseline_log_likelihood", {})
            rows.append([card["name"], card["model"],
                         (str(dims[0]) if len(dims) == 1 else f"{dims[0]}..{dims[-1]}") + f"->{card['y_dim']}",
                         f"{card.get('parameters', 0):,}", _steps_text(card.get("training", {}))]
                        + [f"{model[k]:.3f}" if k in model else "-" for k in entries])
            joint = evaluation.get("joint_log_likelihood")
            if joint:
                rows.append(["  joint", "", "", "", ""] + [f"{joint[k]:.3f}" if k in joint else "-" for k in entries])
            rows.append(["  N(0, 1)", "", "", "", ""] + [f"{baseline[k]:.3f}" if k in baseline else "-"
                                                          for k in entries])
        header = ["name", "model", "dims", "params", "steps", *entries]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        left = {0, 1, 2}  # text columns; numbers are right-aligned

        def fmt(row: list[str]) -> str:
            return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

        task = TASKS.get(prior, f"tasks of the {prior!r} prior")
        tasks = f"; evaluated on {titles[(prior, units, key)]}" if titles[(prior, units, key)] else ""
        lines += ["", f"prior {prior}: {task}; outputs {units}{tasks}", fmt(header)]
        lines += [fmt(r).rstrip() for r in rows]
    if any("baseline_log_likelihood" not in c.get("evaluation", {}) for c in cards):
        lines += ["", "N(0, 1) '-': the card predates the baseline (python benchmarks/card_baselines.py adds it)"]
    return "\n".join(lines)


def _close_pool(pool: Any, exc_type: Any, exc: Any, tb: Any) -> bool:
    """Exit of ``--workers``' pool: after a finished run wait for the workers; after a stop
    or an error, do not wait for evaluations still running (they are abandoned, as the
    README says; a hung call would otherwise keep the command alive for ever)."""
    if exc_type is None:
        pool.shutdown(wait=True)
        return False
    processes = list(getattr(pool, "_processes", None) or {})  # pids; no public way before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for pid in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)  # the workers ignore SIGINT / SIGTERM
    return False


def _optimize_executor(args: argparse.Namespace, stack: contextlib.ExitStack) -> tuple[Any, int]:
    """``npbandit optimize``'s executor (``None``: evaluate here) and batch size from
    ``--workers`` / ``--dask-scheduler`` / ``--batch-size``; the executor is closed with ``stack``."""
    if args.dask_scheduler is not None:
        if args.batch_size is None:
            raise ValueError("--dask-scheduler needs --batch-size: how many evaluations to keep in flight")
        from npbandit.cluster import dask_executor

        return stack.enter_context(dask_executor(args.dask_scheduler)), args.batch_size
    if args.workers is not None:
        import concurrent.futures as cf
        import multiprocessing

        from npbandit.cluster import leave_stop_signals_to_the_driver

        # spawn, not fork: the parent holds torch's thread pools, which a forked child inherits broken.
        # Ctrl-C reaches the whole process group: the workers leave it to this process, which saves
        # the run and then abandons the evaluations in flight (_close_pool)
        pool = cf.ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=leave_stop_signals_to_the_driver)
        stack.push(functools.partial(_close_pool, pool))
        return pool, args.workers if args.batch_size is None else args.batch_size
    if args.batch_size is not None and args.batch_size > 1:
        raise ValueError("--batch-size > 1 needs --workers N or --dask-scheduler ADDRESS to evaluate on")
    if args.eval_timeout is not None:
        raise ValueError("--eval-timeout needs --workers N or --dask-scheduler ADDRESS (a call running here "
                         "cannot be timed out)")
    return None, 1


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status.

    Every expected failure is one line on stderr and status 2: bad arguments, unknown
    or unfitting checkpoints, a database that cannot be opened or written, an
    objective that fails (``ObjectiveError``) or returns something other than a
    number, a training run that diverges (``FloatingPointError``), a Dask scheduler that does not answer (``OSError``) or Dask not installed
    (``ImportError``, naming the extra). SIGINT / SIGTERM during a run: the run is saved and recorded as
    ``interrupted`` (``train``: its state is saved), one line says so, and the status is
    128 + the signal number."""
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except RunInterrupted as err:
        print(f"npbandit {args.command}: {err}", file=sys.stderr)
        return 128 + int(err.signum)
    except KeyboardInterrupt:  # outside a run: nothing to save
        print(f"npbandit {args.command}: interrupted", file=sys.stderr)
        return 128 + int(signal.SIGINT)
    except (TypeError, ValueError, OSError, ImportError, ObjectiveError, FloatingPointError) as err:
        print(f"npbandit {args.command}: {_one_line(err)}", file=sys.stderr)
        return 2


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    if isinstance(err, ObjectiveError) and "every one of" not in text:
        text += " (--on-error skip records failed evaluations and goes on)"
    return text


def _progress() -> bool:
    # a progress bar redraws in place on a terminal; in a pipe or log file every redraw
    # would be a line of its own, burying the one line that says how the run ended
    return sys.stderr.isatty()


def _parse_bounds(text: str) -> object:
    """``--bounds`` JSON -> a validated ``2 x d`` array; errors name ``--bounds``."""
    from npbandit.envs.blackbox import as_bounds

    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"--bounds must be a 2 x d JSON array such as '[[0, 0], [1, 1]]' (lower row, upper row); "
                         f"{text!r} is not valid JSON: {err}") from None
    return as_bounds(value, name="--bounds")


def _load_objective(spec: str):
    import importlib

    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--objective must look like module:function, got {spec!r}")
    # The console script's sys.path[0] is its bin directory, not the working directory
    # that `python -m npbandit.cli` would put first; look there too (last, so a local
    # file cannot shadow a library that npbandit imports).
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"--objective: cannot import {module_name!r} (searched the import path and {cwd}): "
                         f"{err}") from None
    except Exception as err:  # noqa: BLE001 - the user's module failed while importing
        raise ValueError(f"--objective: importing {module_name!r} raised {type(err).__name__}: {err}") from None
    if not hasattr(module, attr):
        raise ValueError(f"--objective: {module_name!r} has no attribute {attr!r}")
    objective = getattr(module, attr)
    if not callable(objective):
        raise ValueError(f"--objective: {spec!r} is a {type(objective).__name__}, not a function")
    return objective


def _dispatch(args) -> int:
    if args.command == "demo":
        if args.streaming:
            from npbandit.demo import run_demo

            if args.n_updates < 20:
                print("npbandit demo: --n-updates must be at least 20", file=sys.stderr)
                return 2
            run_demo(args.n_initial, args.n_updates, args.seed, args.size)
            return 0
        from npbandit.demo import run_tour

        run_tour(args.db, args.budget, args.steps, args.seed, progress=_progress())
    elif args.command == "optimize":
        from npbandit.api import optimize

        if args.function:
            from npbandit.envs import make_test_function
            from npbandit.envs.blackbox import problem_objective

            if args.function == "list":
                _list_functions()
                return 0
            problem = make_test_function(args.function, args.dim)
            bounds = problem.bounds if args.bounds is None else _parse_bounds(args.bounds)
            if len(bounds[0]) != problem.dim:
                raise ValueError(f"--bounds are {len(bounds[0])}-dimensional but {args.function} takes {problem.dim} "
                                 "input(s)" + ("" if args.dim is not None else " (--dim sets it for the functions "
                                                                               "that take one)"))
            objective = problem_objective(problem, args.function)
            name = args.function.lower()
            # the problem's known optimum is its minimum over its own bounds; elsewhere it is unknown
            optimum = getattr(problem, "_optimal_value", None) if args.bounds is None and not args.maximize else None
        else:
            if args.bounds is None:
                raise ValueError("--bounds is required with --objective")
            bounds = _parse_bounds(args.bounds)
            if args.dim is not None and args.dim != len(bounds[0]):
                raise ValueError(f"--dim {args.dim} disagrees with the {len(bounds[0])}-dimensional --bounds (with "
                                 "--objective, the bounds give the dimension; --dim is for --function)")
            objective = _load_objective(args.objective)
            name = optimum = None
        with contextlib.ExitStack() as stack:
            executor, batch_size = _optimize_executor(args, stack)
            result = optimize(objective, bounds, surrogate=args.surrogate, budget=args.budget,
                              acquisition=args.acquisition, minimize=not args.maximize, n_init=args.n_init,
                              seed=args.seed, db=args.db, on_error=args.on_error, progress=_progress(),
                              name=name, optimal_value=optimum, batch_size=batch_size, executor=executor,
                              eval_timeout=args.eval_timeout, output_warp=args.output_warp,
                              trust_region=args.trust_region, liar=args.liar)
        print(f"run {result.run_id}: best value {result.best_value:.6g} at x = {result.best_x.tolist()} "
              f"after {len(result.history)} evaluations")
    elif args.command == "bandit":
        from npbandit.loop import run_wheel_bandits

        with contextlib.ExitStack() as stack:
            executor = None
            if args.dask_scheduler is not None:
                from npbandit.cluster import dask_executor

                executor = stack.enter_context(dask_executor(args.dask_scheduler))
            run_wheel_bandits(args.policies, args.deltas, args.seeds, args.steps, beta=args.beta, db=args.db,
                              progress=_progress(), executor=executor)
    elif args.command == "report":
        from npbandit.report import plot_regret, report_text

        print(report_text(args.db, limit=args.limit))
        if args.plot:
            print(f"wrote {plot_regret(args.db, args.plot)}")
    elif args.command == "train":
        from npbandit.training import TrainConfig, train

        if args.threads:
            torch.set_num_threads(args.threads)
        config = TrainConfig(model=args.model, prior=args.prior, steps=args.steps, out=args.out, name=args.name,
                             size=args.size, model_config=_parse_assignments(args.model_config, "--set"),
                             prior_params=_parse_assignments(args.prior_params, "--prior-set"),
                             batch_size=args.batch_size, lr=args.lr, grad_clip=args.grad_clip, seed=args.seed,
                             eval_every=args.eval_every, eval_batches=args.eval_batches,
                             checkpoint_every=args.checkpoint_every,
                             final_eval_batches=args.final_eval_batches, device=args.device,
                             init_from=args.init_from, loss=args.loss,
                             eval_prior_params=(None if args.eval_prior_params is None else
                                                _parse_assignments(args.eval_prior_params, "--eval-prior-set")))
        if args.max_minutes is not None and not args.max_minutes > 0:
            raise SystemExit(f"npbandit: --max-minutes must be positive, got {args.max_minutes}")
        result = train(config, stop_at=args.stop_at,
                       stop_after_s=None if args.max_minutes is None else 60 * args.max_minutes,
                       export_now=args.export_now, loader_workers=args.loader_workers)
        if result.stopped_by is not None:  # a scheduler must tell a pre-empted run from a finished --stop-at
            print(f"npbandit train: {signal.Signals(result.stopped_by).name}: saved {config.name} at step "
                  f"{result.step} of {config.steps}; run the same command to resume", file=sys.stderr)
            return 128 + result.stopped_by
        if result.card is None:
            print(f"stopped {config.name} at step {result.step} of {config.steps}; run the same command to resume")
        elif result.step < config.steps:
            print(f"exported {config.name} at step {result.step} of {config.steps}; checkpoint card: {result.card}")
        else:
            print(f"trained {config.name} for {result.step} steps; checkpoint card: {result.card}")
    elif args.command == "models":
        _list_models()
    return 0


if __name__ == "__main__":
    sys.exit(main())
