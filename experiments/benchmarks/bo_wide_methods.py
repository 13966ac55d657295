"""The methods of the wide BO benchmark (bo_wide.py), each run on a problem of
bo_wide_problems.py as its users would run it, through its public interface.

Every runner is ``run(problem, seed, budget, evaluate)``: it calls ``evaluate({name: value})``
exactly ``budget`` times (the harness times and records each call) and translates the
neutral space itself:

- ``random``, ``optuna-tpe``, ``optuna-gp``: Optuna's ``RandomSampler`` / ``TPESampler`` /
  ``GPSampler`` with ``seed=seed`` and every other option at its default, ``study.optimize``
  over ``suggest_float`` / ``suggest_int`` (``log=`` as the parameter) / ``suggest_categorical``.
- ``npsampler``: ``npbandit.integrations.optuna.NPSampler(seed=seed)`` (its default checkpoint), likewise.
- ``optimize-tnpd``, ``optimize-cmanp``: ``npbandit.optimize(f, bounds, surrogate=...)`` on a
  continuous box, ``npbandit.optimize(f, space)`` with an ``npbandit.space`` dict otherwise, every
  other argument at its default (``db=None``, no progress bar).
- ``-gr`` / ``-cs`` after an NP row (``optimize-tnpd-gr``, ``optimize-cmanp-cs``): the same with
  ``acq_optimizer=GradientRestarts()`` (``optimize_acqf``) / ``CandidateSearch()``, the optimiser the
  checkpoint's card does not recommend (tnpd-bo's recommends ``CandidateSearch()`` since 2026-11-29).
  Runs recorded before the facts named the optimiser ran ``optimize_acqf``.
- ``-sketch`` after an NP row (``optimize-tnpd-sketch``, ``npsampler-sketch``): the same with
  ``subspace=CountSketch()``, the strategy a space wider than the checkpoint got before
  ``IndexedChoices`` (a mixed space's one-hot columns sketched with the rest); the same as the
  row on a space that fits the checkpoint. For the choosing suite ``mixed-choosing``.
- ``gp``: BoTorch as its documentation recommends: inputs on the unit cube, ``SingleTaskGP``
  with its default kernel and priors and a ``Standardize`` outcome transform, ``fit_gpytorch_mll``,
  ``LogExpectedImprovement`` maximised by ``optimize_acqf`` (10 restarts, 512 raw samples), after
  ``N_INIT`` scrambled Sobol points. Integers and choices by rounding: an int is a coordinate cut
  into equal cells (on the log scale where the parameter has one), a choice one coordinate per
  option (the largest wins); the model sees each evaluated point's canonical coordinates.
- ``turbo``: TuRBO-1 (Eriksson et al. 2019) on the same unit cube, continuous problems only:
  a Matérn-5/2 ARD GP (lengthscales in [0.005, 4], noise in [1e-8, 1e-3]) on the points since
  the last restart, a trust region around the best of them, side 0.8 x the lengthscales
  normalised to geometric mean 1 (doubled after 3 successes in a row, halved after max(4, d)
  failures, up to 1.6, restarted from a fresh Sobol design below 0.5**7), Thompson sampling
  over min(5000, max(2000, 200 d)) candidates that perturb the centre in each coordinate with
  probability min(1, 20 / d).

SAASBO is not a row: its NUTS fit per proposal costs minutes on one core at 100 points, so one
100-evaluation run would take hours.

A method that cannot take a problem yet raises :class:`Unsupported` (or ``npbandit``'s
``CheckpointError``, or an ``ImportError`` of a module ``npbandit`` does not have yet); the
harness records that instead of a result, and retries the cell on its next run.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bo_wide_problems import Param, Problem  # noqa: E402
from common import optimizer_suffix, split_optimizer  # noqa: E402  (the optimiser suffixes, as bo.py's)

#: Sobol points before the BoTorch peers' first model (Optuna's samplers and NPSampler start with 10 random trials)
N_INIT = 10
NUM_RESTARTS, RAW_SAMPLES = 10, 512
OPTUNA_SAMPLERS = {"random": "RandomSampler", "optuna-tpe": "TPESampler", "optuna-gp": "GPSampler"}
NP_SURROGATES = {"optimize-tnpd": "tnpd", "optimize-cmanp": "cmanp"}
NP_METHODS = [*NP_SURROGATES, "npsampler"]
def default_optimizer(method: str) -> str:
    """The acquisition optimiser an NP row's checkpoint recommends (``gradient-restarts`` where
    its card is silent)."""
    from npbandit.surrogates.pretrained import checkpoint_use, read_card

    return checkpoint_use(read_card(checkpoint_of(method)["name"])).get("acq_optimizer", "gradient-restarts")


def _other_optimizer(method: str) -> str:
    name = "gradient-restarts" if default_optimizer(method) == "candidate-search" else "candidate-search"
    return method + optimizer_suffix(name)


METHODS = [*OPTUNA_SAMPLERS, "gp", "turbo", *NP_METHODS]
#: the GP-based peers (the issue's bar: the default NP within 0.5 log10 of the best of them)
GP_PEERS = ("gp", "turbo", "optuna-gp")


class Unsupported(Exception):
    """This method cannot run this problem (a space type, a dimension)."""


def np_method_label(method: str, facts: dict) -> str:
    """The column of a stored NP run: the row less any optimiser suffix, and the suffix of the
    optimiser its facts record when that is not the row's default (a run recorded before the
    facts named one ran ``optimize_acqf``)."""
    base = split_optimizer(method)[0]
    name = facts.get("acq_optimizer", "gradient-restarts")
    return base if name == default_optimizer(base) else base + optimizer_suffix(name)


def checkpoint_of(method: str) -> dict | None:
    """The checkpoint an NP row runs (name and sha256, so a retrained one's runs stay apart)."""
    from npbandit.surrogates.pretrained import read_card

    method = split_optimizer(split_subspace(method)[0])[0]
    if method in NP_SURROGATES:
        from npbandit.api import SURROGATES

        card = read_card(SURROGATES[NP_SURROGATES[method]])
    elif method == "npsampler":
        import inspect

        from npbandit.integrations.optuna import NPSampler

        card = read_card(inspect.signature(NPSampler).parameters["checkpoint"].default)
    else:
        return None
    return {"name": card["name"], "sha256": card["sha256"]}


#: the suffix of an NP row run with ``subspace=CountSketch()``
SKETCH_SUFFIX = "-sketch"


def split_subspace(method: str) -> tuple[str, bool]:
    """A row less :data:`SKETCH_SUFFIX`, and whether it had it."""
    return (method[:-len(SKETCH_SUFFIX)], True) if method.endswith(SKETCH_SUFFIX) else (method, False)


def run(method: str, problem: Problem, seed: int, budget: int, evaluate: Callable[[dict], float]) -> dict:
    """Run ``method``; returns facts to record with the run (e.g. NPSampler's independent draws,
    an NP row's acquisition optimiser)."""
    base, sketch = split_subspace(method)
    if split_optimizer(base)[0] in NP_METHODS:
        from npbandit.acquisition.optimizers import OPTIMIZERS
        from npbandit.acquisition.subspace import CountSketch

        base, named = split_optimizer(base)
        acq_optimizer = None if named is None else OPTIMIZERS[named]()
        subspace = CountSketch() if sketch else None
        facts = (_optuna(base, problem, seed, budget, evaluate, acq_optimizer, subspace) if base == "npsampler"
                 else _optimize(NP_SURROGATES[base], problem, seed, budget, evaluate, acq_optimizer, subspace))
        return {**facts, "acq_optimizer": named or default_optimizer(base),
                **({"subspace": "count-sketch"} if sketch else {})}
    if method in OPTUNA_SAMPLERS:
        return _optuna(method, problem, seed, budget, evaluate)
    if method == "gp":
        return _gp(problem, seed, budget, evaluate)
    if method == "turbo":
        return _turbo(problem, seed, budget, evaluate)
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


# -- Optuna ---------------------------------------------------------------------------------------

def suggest(trial, space: tuple[Param, ...]) -> dict:
    """The neutral space as Optuna suggestions, ``{name: value}``."""
    out = {}
    for p in space:
        if p.kind == "float":
            out[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
        elif p.kind == "int":
            out[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
        else:
            out[p.name] = trial.suggest_categorical(p.name, list(p.choices))
    return out


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "independently" in record.getMessage()


def _optuna(method: str, problem: Problem, seed: int, budget: int, evaluate, acq_optimizer=None,
            subspace=None) -> dict:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if method == "npsampler":
        from npbandit.integrations.optuna import NPSampler

        sampler = NPSampler(seed=seed, acq_optimizer=acq_optimizer, subspace=subspace)
    else:
        sampler = getattr(optuna.samplers, OPTUNA_SAMPLERS[method])(seed=seed)
    # NPSampler logs each parameter it leaves to its independent sampler after the start-up trials
    counter, log = _Counter(), logging.getLogger("optuna.npbandit.integrations.optuna")
    log.addHandler(counter)
    try:
        study = optuna.create_study(direction="minimize", sampler=sampler)
        study.optimize(lambda trial: evaluate(suggest(trial, problem.space)), n_trials=budget)
    finally:
        log.removeHandler(counter)
    return {"optuna": optuna.__version__, "independent_draws": counter.count} if method == "npsampler" else \
        {"optuna": optuna.__version__}


# -- npbandit.optimize ----------------------------------------------------------------------------

def npbandit_space(space: tuple[Param, ...]) -> dict:
    """The neutral space as an ``npbandit.space`` dict (ImportError until that module exists)."""
    from npbandit.space import Choice, Float, Int

    out = {}
    for p in space:
        if p.kind == "float":
            out[p.name] = Float(p.low, p.high, log=p.log)
        elif p.kind == "int":
            out[p.name] = Int(int(p.low), int(p.high), log=p.log)
        else:
            out[p.name] = Choice(list(p.choices))
    return out


def _optimize(surrogate: str, problem: Problem, seed: int, budget: int, evaluate, acq_optimizer=None,
              subspace=None) -> dict:
    import npbandit

    if problem.continuous:  # plain bounds, as a user with a box writes it; the objective gets an array
        names = [p.name for p in problem.space]
        bounds = np.array([[p.low for p in problem.space], [p.high for p in problem.space]])
        npbandit.optimize(lambda x: evaluate(dict(zip(names, map(float, x)))), bounds, surrogate=surrogate,
                          budget=budget, seed=seed, db=None, progress=False, acq_optimizer=acq_optimizer,
                          subspace=subspace)
        return {}
    calls = []

    def objective(params) -> float:  # gets {name: value}
        calls.append(None)
        return evaluate(dict(params))

    try:
        npbandit.optimize(objective, npbandit_space(problem.space), surrogate=surrogate, budget=budget, seed=seed,
                          db=None, progress=False, acq_optimizer=acq_optimizer, subspace=subspace)
    except (TypeError, ValueError) as err:
        if calls:
            raise
        raise Unsupported(f"optimize refuses the search space: {err}") from err
    return {}


# -- the unit cube of the BoTorch peers -----------------------------------------------------------

class CubeCoding:
    """The space on ``[0, 1]^D``: one coordinate per float or int (ints cut into equal cells,
    on the log scale where the parameter has one), one per option of a choice (the largest
    wins). ``decode`` rounds a cube point to a point of the space; ``encode`` gives that
    point's canonical coordinates (an int at its cell's centre, a choice one-hot)."""

    def __init__(self, space: tuple[Param, ...]) -> None:
        self.space = space
        self.widths = [len(p.choices) if p.kind == "choice" else 1 for p in space]
        self.dim = sum(self.widths)

    @staticmethod
    def _range(p: Param) -> tuple[float, float]:
        lo, hi = (p.low - 0.5, p.high + 0.5) if p.kind == "int" else (p.low, p.high)
        return (math.log(lo), math.log(hi)) if p.log else (lo, hi)

    def decode(self, u: np.ndarray) -> dict:
        out, j = {}, 0
        for p, w in zip(self.space, self.widths):
            if p.kind == "choice":
                out[p.name] = p.choices[int(np.argmax(u[j:j + w]))]
            else:
                lo, hi = self._range(p)
                v = lo + float(np.clip(u[j], 0.0, 1.0)) * (hi - lo)
                v = math.exp(v) if p.log else v
                out[p.name] = int(min(max(round(v), p.low), p.high)) if p.kind == "int" else float(v)
            j += w
        return out

    def encode(self, params: dict) -> np.ndarray:
        u = np.zeros(self.dim)
        j = 0
        for p, w in zip(self.space, self.widths):
            v = params[p.name]
            if p.kind == "choice":
                u[j + p.choices.index(v)] = 1.0
            else:
                lo, hi = self._range(p)
                u[j] = ((math.log(v) if p.log else v) - lo) / (hi - lo)
            j += w
        return u


def _design(coding: CubeCoding, n: int, seed: int, evaluate) -> tuple[list, list]:
    import torch
    from torch.quasirandom import SobolEngine

    X, Y = [], []
    for u in SobolEngine(coding.dim, scramble=True, seed=seed).draw(n, dtype=torch.float64).numpy():
        params = coding.decode(u)
        Y.append(-evaluate(params))  # the peers maximise
        X.append(coding.encode(params))
    return X, Y


def _gp(problem: Problem, seed: int, budget: int, evaluate) -> dict:
    import torch
    from botorch.acquisition import LogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize
    from botorch.optim import optimize_acqf
    from gpytorch.mlls import ExactMarginalLogLikelihood

    torch.manual_seed(seed)
    coding = CubeCoding(problem.space)
    X, Y = _design(coding, min(N_INIT, budget), seed, evaluate)
    unit = torch.stack([torch.zeros(coding.dim), torch.ones(coding.dim)]).double()
    while len(Y) < budget:
        train_X, train_Y = torch.tensor(np.array(X)), torch.tensor(Y, dtype=torch.float64).unsqueeze(-1)
        model = SingleTaskGP(train_X, train_Y, outcome_transform=Standardize(m=1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        acq = LogExpectedImprovement(model, best_f=train_Y.max())
        cand, _ = optimize_acqf(acq, bounds=unit, q=1, num_restarts=NUM_RESTARTS, raw_samples=RAW_SAMPLES)
        params = coding.decode(cand[0].numpy())
        Y.append(-evaluate(params))
        X.append(coding.encode(params))
    return {"n_init": N_INIT, "num_restarts": NUM_RESTARTS, "raw_samples": RAW_SAMPLES}


def _turbo(problem: Problem, seed: int, budget: int, evaluate) -> dict:
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.generation import MaxPosteriorSampling
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize
    from gpytorch.constraints import Interval
    from gpytorch.kernels import MaternKernel, ScaleKernel
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.mlls import ExactMarginalLogLikelihood
    from gpytorch.settings import max_cholesky_size
    from torch.quasirandom import SobolEngine

    if not problem.continuous:
        raise Unsupported("the TuRBO row runs continuous boxes only")
    torch.manual_seed(seed)
    coding = CubeCoding(problem.space)
    d = coding.dim
    length_init, length_min, length_max, success_tol, failure_tol = 0.8, 0.5 ** 7, 1.6, 3, max(4, d)
    n_cand = min(5000, max(2000, 200 * d))
    sobol = SobolEngine(d, scramble=True, seed=seed)
    restarts, total = 0, 0
    while total < budget:  # one trust region from a fresh design to its collapse
        X, Y = _design(coding, min(N_INIT, budget - total), seed + 1000 * restarts, evaluate)
        length, successes, failures = length_init, 0, 0
        total += len(Y)
        while total < budget and length >= length_min:
            train_X, train_Y = torch.tensor(np.array(X)), torch.tensor(Y, dtype=torch.float64).unsqueeze(-1)
            kernel = ScaleKernel(MaternKernel(nu=2.5, ard_num_dims=d, lengthscale_constraint=Interval(0.005, 4.0)))
            model = SingleTaskGP(train_X, train_Y, covar_module=kernel,
                                 likelihood=GaussianLikelihood(noise_constraint=Interval(1e-8, 1e-3)),
                                 outcome_transform=Standardize(m=1))
            with max_cholesky_size(float("inf")):
                fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
                centre = train_X[train_Y.argmax()]
                scale = model.covar_module.base_kernel.lengthscale.detach().view(-1)
                scale = scale / scale.log().mean().exp()
                lo = (centre - scale * length / 2).clamp(0.0, 1.0)
                hi = (centre + scale * length / 2).clamp(0.0, 1.0)
                perturbed = lo + (hi - lo) * sobol.draw(n_cand, dtype=torch.float64)
                mask = torch.rand(n_cand, d, dtype=torch.float64) <= min(1.0, 20.0 / d)
                unmoved = (mask.sum(dim=1) == 0).nonzero().view(-1)  # perturb at least one coordinate
                mask[unmoved, torch.randint(d, (len(unmoved),))] = True
                candidates = torch.where(mask, perturbed, centre.expand(n_cand, d))
                with torch.no_grad():
                    pick = MaxPosteriorSampling(model=model, replacement=False)(candidates, num_samples=1)
            params = coding.decode(pick[0].numpy())
            y = -evaluate(params)
            improved = y > max(Y) + 1e-3 * abs(max(Y))
            X.append(coding.encode(params))
            Y.append(y)
            total += 1
            successes, failures = (successes + 1, 0) if improved else (0, failures + 1)
            if successes == success_tol:
                length, successes = min(2 * length, length_max), 0
            elif failures == failure_tol:
                length, failures = length / 2, 0
        restarts += 1
    return {"n_init": N_INIT, "candidates": n_cand, "restarts": restarts - 1}


#: every row name the harness takes: the rows, and each NP row with the other optimiser
METHODS += [_other_optimizer(m) for m in NP_METHODS] + [m + SKETCH_SUFFIX for m in NP_METHODS]
