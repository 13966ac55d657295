"""The methods of the multi-objective BO benchmark (bo_multi.py), each run on a problem of
bo_multi.py as its users would run it, through its public interface.

Every runner is ``run(method, problem, seed, trials, evaluate)``: it calls ``evaluate({name:
value})`` (which returns the objectives, all minimised) exactly ``trials`` times; the harness
times and records each call.

- ``random``, ``optuna-tpe``, ``nsga2``, ``optuna-gp``: an Optuna study made with
  ``directions=["minimize"] * m``, ``study.optimize`` over ``suggest_float``, sampler
  ``RandomSampler`` / ``TPESampler(multivariate=True)`` / ``NSGAIISampler`` / ``GPSampler``
  (logEHVI on several objectives), each with ``seed=seed`` and :data:`N_STARTUP` random trials
  first (``n_startup_trials``; NSGA-II's ``population_size``, its random first generation: its
  default of 50 would spend a 50-trial budget on random draws), every other option at its default.
- ``np-sampler``: ``npbandit.integrations.optuna.NPSampler(seed=seed)``, every option at its
  default (10 start-up trials), in the same study. A sampler that refuses a study of several
  objectives before the first trial raises :class:`~bo_wide_methods.Unsupported` here; the
  harness records that and retries the cell on its next run.
- ``np-optimize``: ``npbandit.optimize(f, space={name: Float(low, high)}, minimize=[True] * m,
  budget=trials, seed=seed, db=None)``, every other option at its default (``2d + 1`` Sobol
  points first, the ``tnpd-bo`` checkpoint): the same search as ``np-sampler`` through the
  library's own door.
- ``botorch``: BoTorch as its documentation recommends for multi-objective BO: a ``ModelListGP``
  of one ``SingleTaskGP`` per objective (default kernel and priors, ``Normalize`` inputs on the
  problem's box, ``Standardize`` outputs), ``fit_gpytorch_mll`` on the summed marginal
  likelihood, ``qLogNoisyExpectedHypervolumeImprovement`` at the problem's reference point (128
  quasi-MC samples, the baseline pruned) maximised by ``optimize_acqf`` (10 restarts, 512 raw
  samples), after 2 (d + 1) scrambled Sobol points.
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bo_wide_methods import NUM_RESTARTS, RAW_SAMPLES, Unsupported, _Counter, suggest  # noqa: E402

#: random trials before a sampler's first model (NPSampler's default; Optuna's TPE and GP samplers' too)
N_STARTUP = 10
#: quasi-MC samples of the BoTorch peer's acquisition (BoTorch's multi-objective tutorials' number)
MC_SAMPLES = 128
OPTUNA_SAMPLERS = ("random", "optuna-tpe", "nsga2", "optuna-gp", "np-sampler")
METHODS = ["random", "optuna-tpe", "nsga2", "optuna-gp", "botorch", "np-sampler", "np-optimize"]
#: the NP row, compared seed by seed with every peer
NP_METHOD = "np-sampler"


def run(method: str, problem, seed: int, trials: int, evaluate: Callable[[dict], Sequence[float]]) -> dict:
    """Run ``method`` for ``trials`` evaluations; returns facts to record with the run."""
    if method in OPTUNA_SAMPLERS:
        return _optuna(method, problem, seed, trials, evaluate)
    if method == "botorch":
        return _botorch(problem, seed, trials, evaluate)
    if method == "np-optimize":
        return _np_optimize(problem, seed, trials, evaluate)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def sampler(method: str, seed: int):
    """The Optuna sampler of row ``method``, seeded by ``seed``."""
    import optuna

    if method == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    with warnings.catch_warnings():  # multivariate TPE is marked experimental
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        if method == "optuna-tpe":
            return optuna.samplers.TPESampler(multivariate=True, n_startup_trials=N_STARTUP, seed=seed)
    if method == "nsga2":
        return optuna.samplers.NSGAIISampler(population_size=N_STARTUP, seed=seed)
    if method == "optuna-gp":
        return optuna.samplers.GPSampler(n_startup_trials=N_STARTUP, seed=seed)
    if method == NP_METHOD:
        from npbandit.integrations.optuna import NPSampler

        return NPSampler(seed=seed)
    raise ValueError(f"method must be one of {OPTUNA_SAMPLERS}, got {method!r}")


def _optuna(method: str, problem, seed: int, trials: int, evaluate) -> dict:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    chosen = sampler(method, seed)
    calls = []

    def objective(trial):
        calls.append(None)
        return evaluate(suggest(trial, problem.space))

    # NPSampler logs each parameter it leaves to its independent sampler after the start-up trials
    counter, log = _Counter(), logging.getLogger("optuna.npbandit.integrations.optuna")
    log.addHandler(counter)
    try:
        study = optuna.create_study(directions=["minimize"] * problem.num_objectives, sampler=chosen)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.optimize(objective, n_trials=trials)
    except ValueError as err:
        if method != NP_METHOD or calls:
            raise
        raise Unsupported(f"the study of {problem.num_objectives} objectives is refused: {err}") from err
    finally:
        log.removeHandler(counter)
    facts = {"optuna": optuna.__version__, "n_startup": N_STARTUP}
    return {**facts, "independent_draws": counter.count} if method == NP_METHOD else facts


def _np_optimize(problem, seed: int, trials: int, evaluate) -> dict:
    import npbandit
    from npbandit.space import Float

    space = {p.name: Float(p.low, p.high) for p in problem.space}
    result = npbandit.optimize(lambda params: list(evaluate(params)), space=space,
                               minimize=[True] * problem.num_objectives, budget=trials, seed=seed, db=None,
                               progress=False)
    return {"front": len(result.front)}


def _botorch(problem, seed: int, trials: int, evaluate) -> dict:
    import torch
    from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import ModelListGP, SingleTaskGP
    from botorch.models.transforms import Normalize, Standardize
    from botorch.optim import optimize_acqf
    from botorch.sampling import SobolQMCNormalSampler
    from gpytorch.mlls import SumMarginalLogLikelihood
    from torch.quasirandom import SobolEngine

    torch.manual_seed(seed)
    d, names = problem.dim, [p.name for p in problem.space]
    bounds = torch.tensor([[p.low for p in problem.space], [p.high for p in problem.space]], dtype=torch.float64)
    n_init = min(2 * (d + 1), trials)
    X = bounds[0] + (bounds[1] - bounds[0]) * SobolEngine(d, scramble=True, seed=seed).draw(n_init, dtype=torch.float64)

    def observe(x) -> list[float]:  # the peer maximises: the negated objectives
        return [-v for v in evaluate(dict(zip(names, map(float, x))))]

    Y = torch.tensor([observe(x) for x in X], dtype=torch.float64)
    ref_point = -torch.tensor(problem.ref_point, dtype=torch.float64)
    while len(Y) < trials:
        model = ModelListGP(*(SingleTaskGP(X, Y[:, i:i + 1], input_transform=Normalize(d, bounds=bounds),
                                           outcome_transform=Standardize(m=1)) for i in range(Y.shape[1])))
        fit_gpytorch_mll(SumMarginalLogLikelihood(model.likelihood, model))
        acq = qLogNoisyExpectedHypervolumeImprovement(
            model, ref_point=ref_point, X_baseline=X, prune_baseline=True,
            sampler=SobolQMCNormalSampler(sample_shape=torch.Size([MC_SAMPLES])))
        cand, _ = optimize_acqf(acq, bounds=bounds, q=1, num_restarts=NUM_RESTARTS, raw_samples=RAW_SAMPLES,
                                options={"batch_limit": 5, "maxiter": 200})
        X = torch.cat([X, cand])
        Y = torch.cat([Y, torch.tensor([observe(cand[0])], dtype=torch.float64)])
    return {"n_init": n_init, "num_restarts": NUM_RESTARTS, "raw_samples": RAW_SAMPLES, "mc_samples": MC_SAMPLES}
