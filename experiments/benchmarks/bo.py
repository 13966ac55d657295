"""Bayesian-optimisation regret on standard test functions (docs/protocols.md §4).

Branin-2, Hartmann-3, Hartmann-6, Ackley-4, Levy-4 and Rosenbrock-3 (minimised, inputs
mapped to the unit cube), ``--seeds`` seeds, ``--budget`` evaluations including a
``2d + 1``-point scrambled Sobol design that is the same for every method of a seed.
Methods: every shipped ``*-bo`` checkpoint with LogEI in the trust region, as ``optimize`` runs
it (``<checkpoint>-tr``: ``NPModel`` + ``optimize_acqf`` on the observations in the box, rebuilt per
proposal; ``<checkpoint>`` alone: one global model, streaming ``condition_on_observations``;
``-yeo-johnson`` before ``-tr`` for the output warp; ``-thompson``, ``-marginal-thompson`` or
``-ucb`` after it for another acquisition, as ``BOPolicy`` names them), BoTorch ``SingleTaskGP`` + LogEI refit every
iteration (told the functions are noise-free, with a Matérn-5/2 kernel: ``GP_OPTIONS``), Sobol search, and two peers
users would otherwise pick: Optuna's default sampler (``optuna-tpe``: ``TPESampler(seed=seed)``,
every other option Optuna's default) and ``optuna-gp`` (``GPSampler(seed=seed)``, likewise), and
``optuna-np``: npbandit's own ``NPSampler("cmanp-bo", seed=seed)`` (LogEI, 10 random start-up
trials), i.e. the ``cmanp-bo`` row reached through Optuna (``cmanp-bo`` was NPSampler's default
when the row was made; it is ``tnpd-bo`` since 2026-11-24). The Optuna rows search each
function's own bounds through Optuna's ask-and-tell interface, starting from their samplers'
own 10 random trials rather than the Sobol design; every trial is one evaluation of the same
environment, logged like the others. Optuna is an optional benchmark dependency:
``pip install -e ".[bench]"`` (``optuna==5.0.0``).
Reported: median and quartiles of log10 simple regret vs evaluations (final values in the
table, curves in the JSON), and seconds per iteration. Runs go through ``npbandit.storage``;
completed runs are not repeated. ``--workers`` runs them in local processes,
``--dask-scheduler`` on a Dask cluster's workers (README, "More than one machine").

    python experiments/benchmarks/bo.py --workers 2
    python experiments/benchmarks/bo.py --dask-scheduler tcp://10.0.0.5:8786 --db postgresql+psycopg://bench@10.0.0.5/runs
    python experiments/benchmarks/bo.py --functions branin --seeds 2 --budget 12 --no-write   # quick look
    python experiments/benchmarks/bo.py --methods optuna-tpe --workers 1 --no-write           # one row
    python experiments/benchmarks/bo.py --methods cmanp-and-bo-thompson cmanp-and-bo-marginal-thompson gp-thompson \
        --section bo-thompson                                                     # joint vs marginal draws
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    ROOT,
    add_cluster_arguments,
    is_current,
    machine_line,
    new_figure,
    optimizer_suffix,
    paired_cell,
    prepare_db,
    publish,
    run_jobs,
    save_figure,
    split_optimizer,
)

from npbandit.acquisition.proposal import REPEAT_DISTANCE  # noqa: E402  (what avoid_repeats avoids)
from npbandit.policies.base import Policy  # noqa: E402

RUN_THREADS = 1  # torch threads per run (each worker process sets it)
FUNCTIONS = {"branin": None, "hartmann3": ("hartmann", 3), "hartmann6": ("hartmann", 6), "ackley4": ("ackley", 4),
             "levy4": ("levy", 4), "rosenbrock3": ("rosenbrock", 3)}
#: the GP row's BOPolicy settings: every suite function is deterministic (see BOPolicy's
#: ``noise_free``); a logged GP run counts only if it ran with these
#: (Matérn-5/2 since 2026-11-24: on these functions it beat SingleTaskGP's default RBF kernel by 1.0 log10 on
#: Hartmann-3, 0.2 on Hartmann-6 and 0.5 on Levy-4, level elsewhere; experiments/log/results.md)
GP_OPTIONS = {"noise_free": True, "gp_kernel": "matern52"}
#: the Optuna rows: method name -> sampler class (Optuna's, or npbandit's NPSampler); the version
#: their numbers are for
OPTUNA_SAMPLERS = {"optuna-tpe": "TPESampler", "optuna-gp": "GPSampler", "optuna-np": "NPSampler"}
OPTUNA_VERSION = "5.0.0"
#: a model column's acquisition other than LogEI (BOPolicy's): ``gp-thompson``, ``cmanp-and-bo-marginal-thompson``
ACQUISITION_SUFFIXES = ("-marginal-thompson", "-thompson", "-ucb", "-qlognei")
#: the optuna-np row's checkpoint: the cmanp-bo column through Optuna (NPSampler's default is tnpd-bo)
NP_CHECKPOINT = "cmanp-bo"
# what a user would pick instead of an NP (issue 14's bars are stated against these)
PAIRED_REFERENCES = ("sobol", "optuna-tpe", "gp", "optuna-gp")
#: the column family of the bo prior's Bayes predictive (experiments/benchmarks/prior_bayes.py): what a perfectly
#: trained *-bo network would search like; not a product surrogate
BAYES_MODEL = "bayes-gp"
OPTUNA_MISSING = ("the {methods} row(s) need Optuna {version}, an optional benchmark dependency: "
                  "pip install -e \".[bench]\" (or pip install optuna=={version}), or leave the row(s) out "
                  "with --methods")


def _problem(label: str) -> tuple[str, int | None]:
    spec = FUNCTIONS[label]
    return (label, None) if spec is None else spec


def require_optuna(methods: list[str]):
    """The ``optuna`` module at the pinned version, or an ImportError naming the ``bench`` extra."""
    asked = [m for m in methods if m in OPTUNA_SAMPLERS]
    try:
        import optuna
    except ImportError:
        raise ImportError(OPTUNA_MISSING.format(methods=", ".join(asked), version=OPTUNA_VERSION)) from None
    if optuna.__version__ != OPTUNA_VERSION:
        raise ImportError(OPTUNA_MISSING.format(methods=", ".join(asked), version=OPTUNA_VERSION)
                          + f" (found Optuna {optuna.__version__})")
    return optuna


class OptunaPolicy(Policy):
    """An Optuna sampler as a policy: ``act`` asks for a trial, ``observe`` tells its value.

    Optuna searches the function's own ``bounds`` (``suggest_float`` per coordinate,
    minimising the objective value, as a user would set it up); the point goes to the
    environment as its unit-cube action, which maps it back affinely onto the same bounds,
    so the objective, the regret and the log are those of every other row. The sampler is
    ``optuna.samplers.<TPESampler|GPSampler>(seed=seed)`` or
    ``npbandit.integrations.optuna.NPSampler(NP_CHECKPOINT, seed=seed)``: every other option at its default.
    """

    def __init__(self, method: str, bounds: np.ndarray) -> None:
        if method not in OPTUNA_SAMPLERS:
            raise ValueError(f"method must be one of {list(OPTUNA_SAMPLERS)}, got {method!r}")
        self.optuna = require_optuna([method])
        self.name, self.sampler_name = method, OPTUNA_SAMPLERS[method]
        self.low, self.high = np.asarray(bounds[0], dtype=np.float64), np.asarray(bounds[1], dtype=np.float64)
        if self.sampler_name == "NPSampler":
            from npbandit.surrogates.pretrained import read_card

            card = read_card(NP_CHECKPOINT)  # logged with the run, so a retrained checkpoint's runs stay apart
            self.checkpoint = {"name": card["name"], "sha256": card["sha256"]}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        optuna = self.optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        if self.sampler_name == "NPSampler":
            from npbandit.integrations.optuna import NPSampler

            sampler = NPSampler(NP_CHECKPOINT, seed=seed)
        else:
            sampler = getattr(optuna.samplers, self.sampler_name)(seed=seed)
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.trial = None

    def act(self, obs: np.ndarray) -> np.ndarray:
        self.trial = self.study.ask()
        x = np.array([self.trial.suggest_float(f"x{i}", float(lo), float(hi))
                      for i, (lo, hi) in enumerate(zip(self.low, self.high))])
        return np.clip((x - self.low) / (self.high - self.low), 0.0, 1.0)

    def observe(self, obs, action, reward, info) -> None:
        self.study.tell(self.trial, float(info["value"]))  # the objective value, minimised
        self.trial = None

    def params(self) -> dict:
        defaults = "NPSampler" if self.sampler_name == "NPSampler" else "Optuna"
        return {"dim": len(self.low), "sampler": self.sampler_name,
                "sampler_options": f"{defaults} defaults, seed=run seed", "optuna": self.optuna.__version__}


def split_method(method: str) -> tuple[str, str]:
    """A column's model and acquisition: ``<checkpoint or gp>[-ucb|-thompson|-marginal-thompson|-qlognei]``,
    LogEI without a suffix (``cmanp-and-bo-thompson`` -> ``("cmanp-and-bo", "thompson")``), a last
    ``-cs`` / ``-gr`` (the acquisition optimiser, ``common.OPTIMIZER_SUFFIXES``) left out."""
    method = split_optimizer(method)[0]
    for suffix in ACQUISITION_SUFFIXES:
        if method.endswith(suffix):
            return method[:-len(suffix)], suffix[1:]
    return method, "logei"


def default_optimizer(method: str) -> str:
    """The acquisition optimiser a column runs when it names none: ``BOPolicy``'s default, what
    an NP checkpoint's card recommends (``optimize_acqf`` where it is silent), ``optimize_acqf``
    for the GP and the prior's Bayes yardstick."""
    from npbandit.surrogates.pretrained import checkpoint_use, read_card

    model = base_model(method)
    if model in ("gp", "sobol", BAYES_MODEL) or method in OPTUNA_SAMPLERS:
        return "gradient-restarts"
    return checkpoint_use(read_card(model)).get("acq_optimizer", "gradient-restarts")


def split_warp(model: str) -> tuple[str, str | None]:
    """A column's model part and its output warp: ``cmanp-bo-yeo-johnson`` ->
    ``("cmanp-bo", "yeo-johnson")`` (``BOPolicy(output_warp=...)``), ``cmanp-bo`` -> ``("cmanp-bo", None)``."""
    from npbandit.policies.bo import OUTPUT_WARPS

    for warp in OUTPUT_WARPS:
        if model.endswith(f"-{warp}"):
            return model[:-len(warp) - 1], warp
    return model, None


def split_trust_region(model: str) -> tuple[str, bool]:
    """A column's model part and whether it searches in a trust region: ``cmanp-bo-tr`` ->
    ``("cmanp-bo", True)`` (``BOPolicy(trust_region=True)``), ``cmanp-bo`` -> ``("cmanp-bo", False)``."""
    return (model[:-3], True) if model.endswith("-tr") else (model, False)


def base_model(method: str) -> str:
    """The model (checkpoint name or ``gp``) of a column: ``cmanp-bo-yeo-johnson-tr-ucb`` -> ``cmanp-bo``."""
    return split_warp(split_trust_region(split_method(method)[0])[0])[0]


def method_notes(methods: list[str]) -> str:
    """What the table's columns are, for the families among ``methods`` only."""
    models = [split_method(m)[0] for m in methods]
    acquisitions = {split_method(m)[1] for m in methods if m not in OPTUNA_SAMPLERS and m != "sobol"}
    notes = []
    if any(split_method(m)[1] == "logei" and base_model(m) not in ("gp", "sobol", BAYES_MODEL)
           and m not in OPTUNA_SAMPLERS for m in methods):
        notes.append("NP rows: LogEI on "
                     "`NPModel.from_pretrained` with its defaults (cmanp-bo averages over the 4 symmetric views of the "
                     "box its card recommends since 2026-11-24; rows logged before then, and the other checkpoints, "
                     "use one). NP and gp "
                     "rows never propose a point within 1e-3 of an evaluated one (`BOPolicy(avoid_repeats=True)`, "
                     "the default since 2026-11-24; a run's `avoid_repeats` parameter says which it used).")
    if "gp" in models:
        notes.append("gp: BoTorch `SingleTaskGP` with a Matérn-5/2 kernel (BoTorch's dimension-scaled LogNormal "
                     "lengthscale prior, as its default RBF kernel has; `Standardize`), refit every "
                     "iteration, told the functions are noise-free (fixed observation variance 1e-6 in standardised "
                     "units, BoTorch's recommendation for noise-free observations); LogEI optimised by `optimize_acqf` "
                     "(10 restarts, 512 raw samples).")
    if BAYES_MODEL in {base_model(m) for m in methods if m not in OPTUNA_SAMPLERS}:
        from prior_bayes import KEEP_NATS, NUM_SAMPLES

        notes.append(f"{BAYES_MODEL}: the bo prior's own Bayes predictive (`BOPrior.bayes_posterior`: {NUM_SAMPLES} "
                     "hyperparameter draws from the prior per proposal, weighted by the observations' likelihood, "
                     "the outputs' offset and scale integrated out; the components within "
                     f"{KEEP_NATS:g} nats of the heaviest predict, as a Gaussian with the mixture's moments), "
                     "i.e. what a perfectly trained *-bo network would predict, searched as the NP rows are "
                     "(LogEI, repeats avoided, -tr as below); a yardstick, not a shipped surrogate "
                     "(experiments/benchmarks/prior_bayes.py).")
    if any(m in OPTUNA_SAMPLERS for m in methods):
        notes.append(f"optuna-tpe / optuna-gp: Optuna {OPTUNA_VERSION} `TPESampler(seed=seed)` (Optuna's default "
                     "sampler, all options at their defaults: multivariate TPE for one objective, 10 random start-up "
                     "trials, 24 EI candidates) and `GPSampler(seed=seed)` (defaults: 10 random start-up trials, "
                     "inferred noise); optuna-np: npbandit's `NPSampler(\"cmanp-bo\", seed=seed)` (LogEI, as the "
                     "cmanp-bo row, after 10 random start-up trials). Each Optuna row searches the function's own "
                     "bounds by ask-and-tell and starts from its sampler's own random trials, not the Sobol design.")
    if acquisitions & {"thompson", "marginal-thompson"}:
        from npbandit.acquisition.thompson import THOMPSON_BLOCK_SIZE

        blocks = ("one block, the head's one-shot joint; runs logged before 2026-11-24 evening drew "
                  "autoregressive blocks of 25" if THOMPSON_BLOCK_SIZE is None
                  else f"autoregressive blocks of {THOMPSON_BLOCK_SIZE}")
        notes.append("-thompson: the argmax of one posterior draw over 2,048 Sobol candidates (fresh per "
                     f"proposal), joint across the candidates for a joint model (CMANP-AND: {blocks}) and the GP; "
                     "-marginal-thompson: every candidate drawn from its own marginal, the ablation of the joint "
                     "draw.")
    if "qlognei" in acquisitions:
        from npbandit.policies.bo import Q_BATCH

        notes.append(f"-qlognei: {Q_BATCH} points per proposal maximising BoTorch's qLogNoisyExpectedImprovement "
                     "jointly over them (10 restarts, 512 raw samples; Monte Carlo over the model's joint posterior "
                     "of the batch and the observations), evaluated one after another; no repeat check.")
    if any(default_optimizer(m) == "candidate-search" or split_optimizer(m)[1] for m in methods):
        notes.append("Acquisition optimiser: each row's default (`BOPolicy`'s: what the checkpoint's card recommends, "
                     "else `optimize_acqf`); tnpd-bo's card recommends `CandidateSearch()` since 2026-11-29 "
                     "(npbandit.acquisition.optimizers: 512 Sobol points scored, the best 8 refined by 8 rounds of "
                     "32 Gaussian perturbations each, a walker's step halving after a round without progress; no "
                     "gradients); the other rows run `optimize_acqf` (`GradientRestarts()`: 10 restarts, 512 raw "
                     "samples). A -gr row runs `optimize_acqf` where its default is the candidate search (every "
                     "tnpd-bo run logged before then), a -cs row `CandidateSearch()` where its default is "
                     "`optimize_acqf`.")
    if any(split_trust_region(m)[1] for m in models):
        notes.append("-tr: every proposal inside a trust region around the best point that starts as the whole cube "
                     "and shrinks after proposals that do not improve (TuRBO-1's rules), the model seeing only the "
                     "observations in a box twice its side around the same centre, mapped onto the unit cube "
                     "(`BOPolicy(trust_region=True)`, the default for the NP checkpoints since 2026-11-24; the "
                     "model's box was the searched box itself in runs logged before `TrustRegion.context_factor` "
                     "(2) was recorded); NP columns without -tr run `trust_region=False`, one global model "
                     "streamed.")
    if any(split_warp(split_trust_region(m)[0])[1] for m in models):
        notes.append("-yeo-johnson: the surrogate sees standardised, Yeo-Johnson-warped values, refit per proposal "
                     "(`BOPolicy(output_warp=...)`).")
    return " ".join(notes)


def make_policy(method: str, env):
    """The policy of one table column for ``env`` (a ``BlackBoxEnv``):
    ``<model>[-yeo-johnson][-tr][-<acquisition>]``."""
    from npbandit.policies import BOPolicy, SobolPolicy

    if method == "sobol":
        return SobolPolicy(env.dim)
    if method in OPTUNA_SAMPLERS:
        return OptunaPolicy(method, env.bounds)
    model, acquisition = split_method(method)
    model, trust_region = split_trust_region(model)
    from npbandit.acquisition.optimizers import OPTIMIZERS

    named = split_optimizer(method)[1]
    acq_optimizer = None if named is None else OPTIMIZERS[named]()
    if model == BAYES_MODEL:
        if acquisition != "logei":
            raise ValueError(f"{BAYES_MODEL} runs LogEI only, got {method!r}")
        from prior_bayes import PriorBayesPolicy

        return PriorBayesPolicy(env.dim, trust_region=trust_region, budget=env.budget)
    model, warp = split_warp(model)
    return BOPolicy(env.dim, model=model, acquisition=acquisition, output_warp=warp, trust_region=trust_region,
                    budget=env.budget, acq_optimizer=acq_optimizer, **(GP_OPTIONS if model == "gp" else {}))


def _one(method: str, label: str, seed: int, budget: int, db: str) -> None:
    import torch

    torch.set_num_threads(RUN_THREADS)
    from npbandit.envs import BlackBoxEnv
    from npbandit.loop import run_episode
    from npbandit.storage import RunLogger

    name, dim = _problem(label)
    env = BlackBoxEnv(function=name, dim=dim, budget=budget)
    policy = make_policy(method, env)
    run_episode(env, policy, seed=seed, logger=RunLogger(db, commit_every=budget),
                run_info={"kind": "bo", "env_id": "npbandit/BlackBox-v0",
                          "env_params": {"objective": label, "budget": budget, "benchmark": "bo",
                                         "optimal_value": env.optimal_value}})


def _method_of(policy: str, params: dict | None = None) -> str:
    """A stored run's column: its policy's name (less ``-logei``), and an optimiser suffix when
    its logged acquisition optimiser is not the column's default (a run logged without one ran
    ``optimize_acqf``)."""
    method = policy.removesuffix("-logei")
    name = ((params or {}).get("acq_optimizer") or {}).get("name", "gradient-restarts")
    if name == default_optimizer(method):
        return method
    return method + optimizer_suffix(name)


def repeat_share(actions: list, n_init: int) -> float:
    """The share of the proposals after the first ``n_init`` points (unit-cube actions in
    order) that lie within ``REPEAT_DISTANCE`` of an earlier point: on these noise-free
    functions a repeat teaches nothing, so a surrogate that makes many does not learn from
    what it observes (0 for Sobol)."""
    import numpy as np

    x = np.asarray(actions, dtype=np.float64)
    if len(x) <= n_init:
        return 0.0
    near = [np.linalg.norm(x[:i] - x[i], axis=1).min() < REPEAT_DISTANCE for i in range(n_init, len(x))]
    return float(np.mean(near))


def is_current_config(method: str, params: dict) -> bool:
    """Whether a logged run ran with the configuration this script runs now: the GP with
    ``GP_OPTIONS`` (earlier GP runs inferred the noise, or used the RBF kernel), Optuna at ``OPTUNA_VERSION``, a
    trust region with ``TrustRegion``'s settings."""
    if base_model(method) == "gp":
        return all(params.get(k) == v for k, v in GP_OPTIONS.items())
    if base_model(method) == BAYES_MODEL:
        from prior_bayes import KEEP_NATS, NUM_SAMPLES

        if (params.get("bayes_samples"), params.get("bayes_keep_nats")) != (NUM_SAMPLES, KEEP_NATS):
            return False
    if method in OPTUNA_SAMPLERS:
        return params.get("optuna") == OPTUNA_VERSION
    model, acquisition = split_method(method)
    if acquisition == "thompson" and base_model(method).startswith("cmanp-and"):
        from npbandit.acquisition.thompson import THOMPSON_BLOCK_SIZE

        # a joint draw's blocks (runs logged before they were recorded: 25)
        if params.get("thompson_block_size", 25) != ("all" if THOMPSON_BLOCK_SIZE is None else THOMPSON_BLOCK_SIZE):
            return False
    if split_trust_region(model)[1]:  # runs logged before the settings were recorded: 1.6, 1
        from npbandit.policies.trust_region import TrustRegion

        # runs logged before the search told its region the budget restarted it whenever it collapsed
        return (params.get("trust_region_length_init", 1.6) == TrustRegion.length_init
                and params.get("trust_region_context_factor", 1.0) == TrustRegion.context_factor
                and params.get("trust_region_budget") is not None)
    return True


def _policy_params(db: str) -> dict[int, dict]:
    from sqlalchemy import select

    from npbandit.storage import Run, open_db

    with open_db(db).connect() as conn:
        return {i: p or {} for i, p in conn.execute(select(Run.id, Run.policy_params).where(Run.kind == "bo"))}


def collect(db: str, budget: int) -> dict[tuple[str, str], list[dict]]:
    from npbandit.storage import list_runs, run_steps

    runs: dict[tuple[str, str], list[dict]] = {}
    params = _policy_params(db)
    for r in list_runs(db, kind="bo"):
        if (r.status != "completed" or r.env_params.get("benchmark") != "bo" or r.env_params.get("budget") != budget
                or not is_current(r, base_model(_method_of(r.policy, params.get(r.id))))
                or not is_current_config(_method_of(r.policy, params.get(r.id)), params.get(r.id, {}))):
            continue
        steps = run_steps(db, r.id)
        opt = r.env_params["optimal_value"]
        curve = [math.log10(max(s["best_value"] - opt, 1e-12)) for s in steps]
        per_iter = statistics.fmean(s["act_s"] + s["observe_s"] for s in steps)
        n_init = params.get(r.id, {}).get("n_init", 2 * r.env_params["dim"] + 1)
        runs.setdefault((r.env_params["objective"], _method_of(r.policy, params.get(r.id))), []).append(
            {"seed": r.seed, "curve": curve, "s_per_iter": per_iter,
             "repeats": repeat_share([s["action"] for s in steps], n_init), "versions": r.versions})
    return runs


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return q[0], statistics.median(values), q[2]


def main(argv: list[str] | None = None) -> None:
    from npbandit.storage import display_url
    from npbandit.surrogates.pretrained import available_checkpoints

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=list(FUNCTIONS))
    parser.add_argument("--methods", nargs="+",
                        default=[f"{n}-tr" for n in available_checkpoints() if n.endswith("-bo")]
                        + ["gp", *OPTUNA_SAMPLERS, "sobol"])  # the NPs as optimize() runs them
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=60)
    add_cluster_arguments(parser)
    parser.add_argument("--db", default=str(ROOT / "runs" / "bench_bo.db"))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true", help="only summarise the completed runs in --db")
    parser.add_argument("--paired", nargs="+", default=["cmanp-bo-tr", "tnpd-bo-tr", "optuna-np"],
                        help="methods compared seed by seed with what a user would pick instead "
                             f"({', '.join(PAIRED_REFERENCES)}; those of --methods), one table each")
    parser.add_argument("--against", nargs="+", default=None, metavar="METHOD",
                        help="the columns --paired's methods are compared with (default: "
                             f"{', '.join(PAIRED_REFERENCES)}; those of --methods), e.g. a shipped checkpoint's "
                             "column against a candidate's")
    parser.add_argument("--section", default="bo",
                        help="docs section (and JSON/figure name) to write; another name than 'bo' publishes a "
                             "subset of methods beside the main table instead of replacing it")
    args = parser.parse_args(argv)
    missing = [m for m in args.against or [] if m not in args.methods]
    if missing:
        parser.error(f"--against: {', '.join(missing)} not among --methods")
    args.db = prepare_db(args.db)
    have = collect(args.db, args.budget)
    done = {(f, m, run["seed"]) for (f, m), rs in have.items() for run in rs}
    # seed-major: an interrupted run leaves the first k seeds of every function and method
    todo = [(m, f, s) for s in range(args.seeds) for f in args.functions for m in args.methods
            if (f, m, s) not in done]
    print(f"{len(done)} runs already in {display_url(args.db)}; {len(todo)} to go")
    if not args.no_run and any(m in OPTUNA_SAMPLERS for m, _, _ in todo):
        try:
            require_optuna(args.methods)
        except ImportError as err:
            parser.error(str(err))
    if not args.no_run:
        run_jobs(_one, [(m, f, s, args.budget, args.db) for m, f, s in todo], args.workers, "bo runs",
                 args.dask_scheduler)
    runs = collect(args.db, args.budget)
    command = "python experiments/benchmarks/bo.py" + (f" --workers {args.workers}" if not args.dask_scheduler else
                                             " --dask-scheduler ADDRESS")
    if args.section != "bo":
        command += f" --methods {' '.join(args.methods)} --section {args.section}"
    if args.seeds != 10:
        command += f" --seeds {args.seeds}"
    heading = ("## Bayesian optimisation regret (protocols.md §4)" if args.section == "bo" else
               f"### Bayesian optimisation regret, {', '.join(args.methods)} "
               "(protocols.md §4; run beside the main table)")
    lines = [heading, "",
             f"Command: `{command}` (CPU: {machine_line(RUN_THREADS)}). Minimisation, "
             f"{args.budget} evaluations including "
             f"the 2d + 1 Sobol points (identical across methods for a seed), {args.seeds} seeds. log10 simple "
             "regret at the last evaluation: median [25 %, 75 %]; seconds per iteration (act + observe), mean.", "",
             method_notes(args.methods), "",
             "| function | " + " | ".join(args.methods) + " |", "|---|" + "---:|" * len(args.methods)]
    summary = {}
    for f in args.functions:
        cells = []
        for m in args.methods:
            rs = [r for r in runs.get((f, m), []) if r["seed"] < args.seeds]
            if not rs:
                cells.append("-")
                continue
            q1, med, q3 = quartiles([r["curve"][-1] for r in rs])
            t = statistics.fmean(r["s_per_iter"] for r in rs)
            summary[f"{f}/{m}"] = {"final": [q1, med, q3], "s_per_iter": t, "runs": len(rs),
                                   "repeats": statistics.median(r["repeats"] for r in rs),
                                   # per seed, so two columns can be compared seed by seed
                                   "final_by_seed": {str(r["seed"]): r["curve"][-1] for r in rs},
                                   "quartile_curves": [list(quartiles(list(c)))
                                                       for c in zip(*[r["curve"] for r in rs])]}
            cells.append(f"{med:.2f} [{q1:.2f}, {q3:.2f}] ({t:.2f} s)")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    lines += ["", f"Repeats: share of the proposals after the initial design within {REPEAT_DISTANCE:g} (unit cube) "
              "of an earlier point, median over seeds (a repeat of a noise-free evaluation teaches nothing).", "",
              "| function | " + " | ".join(args.methods) + " |", "|---|" + "---:|" * len(args.methods)]
    lines += [f"| {f} | " + " | ".join(f"{summary[f'{f}/{m}']['repeats']:.2f}" if f"{f}/{m}" in summary else "-"
                                       for m in args.methods) + " |" for f in args.functions]
    counts = [c["runs"] for c in summary.values()]
    if counts and min(counts) < args.seeds:
        lines += ["", f"**Incomplete:** {min(counts)} to {max(counts)} of the {args.seeds} seeds per cell so far "
                  "(the script resumes where it stopped)."]
    references = args.against or [m for m in PAIRED_REFERENCES if m in args.methods]
    for method in [m for m in args.paired if m in args.methods and m not in references]:
        lines += ["", f"Paired: {method}'s median minus the row's, and on how many seeds {method} ended lower.", "",
                  *paired_table(summary, args.functions, method, references)]
    figure = "bo_regret" if args.section == "bo" else f"{args.section.replace('-', '_')}_regret"
    lines += ["", f"![log10 simple regret vs evaluations: median and quartiles](figures/{figure}.png)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        plot(summary, args.functions, args.methods, figure)
        optuna_rows = any(m in OPTUNA_SAMPLERS for m in args.methods)
        tabulated = [r["versions"] for f in args.functions for m in args.methods for r in runs.get((f, m), [])
                     if r["seed"] < args.seeds]
        publish(args.section, text, f"{args.section.replace('-', '_')}.json", command, {"summary": summary},
                pages=("benchmarks.md", "results.md"), threads=RUN_THREADS,
                packages=("optuna", "greenlet") if optuna_rows else (), runs=tabulated)


def paired_table(summary: dict, functions: list[str], method: str, references: list[str]) -> list[str]:
    """Markdown lines comparing ``method`` with each of ``references``, function by function:
    the difference of the median final log10 regrets (negative: ``method`` ends lower) and on
    how many of the seeds both ran ``method`` ended lower (``summary`` as ``main`` builds it).
    Cells where either has no runs are ``-``."""
    lines = ["| " + method + " against | " + " | ".join(functions) + " |", "|---|" + "---:|" * len(functions)]
    for ref in references:
        cells = [paired_cell(summary.get(f"{f}/{method}"), summary.get(f"{f}/{ref}")) for f in functions]
        lines.append(f"| {ref} | " + " | ".join(cells) + " |")
    return lines


def plot(summary: dict, functions: list[str], methods: list[str], name: str = "bo_regret") -> None:
    """Median log10 simple regret vs evaluations with the quartile band, one panel per function."""
    fig, axes = new_figure(len(functions))
    for ax, f in zip(axes, functions):
        for m in methods:
            cell = summary.get(f"{f}/{m}")
            if not cell:
                continue
            q1, med, q3 = zip(*cell["quartile_curves"])
            evals = range(1, len(med) + 1)
            ax.plot(evals, med, label=m)
            ax.fill_between(evals, q1, q3, alpha=0.2)
        ax.set_title(f)
        ax.set_xlabel("evaluations")
        ax.set_ylabel("log10 simple regret")
    axes[0].legend(fontsize=8)
    save_figure(fig, name)


if __name__ == "__main__":
    main()
