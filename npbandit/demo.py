"""``npbandit demo``: the two demos behind the command.

* :func:`run_tour` (``npbandit demo``): a short Bayesian optimisation of Branin with
  ``optimize``'s default surrogate (``tnpd-bo``) and a short wheel-bandit run (CMANP-UCB, Uniform,
  LinUCB), both logged to the database, then the report of that database. What it runs
  is set by the ``TOUR_*`` constants, which ``npbandit demo --help`` reads too
  (:func:`tour_summary`).
* :func:`run_demo` (``npbandit demo --streaming``): CMANP's streaming machinery with
  random weights, so its predictions mean nothing; what it shows is what every use
  relies on: conditioning in chunks, exact single-point updates whose cost does not
  grow with the data, and a state whose size does not either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from npbandit.storage import DEFAULT_URL, display_url

if TYPE_CHECKING:  # the tour's names load without torch (the CLI's help shows them)
    from npbandit.surrogates import CMANP

#: the tour's black-box problem (a botorch test function, optimised on its own bounds)
TOUR_FUNCTION = "branin"
#: the tour's surrogate, an ``optimize(surrogate=...)`` name: ``optimize``'s default
TOUR_SURROGATE = "tnpd"
#: the policy id ``optimize`` logs for the tour's surrogate with its defaults (trust region, LogEI): a tour
#: run again finds its black-box run by it
TOUR_POLICY = "tnpd-bo-tr-logei"
#: the tour's wheel-bandit policies, its delta and the UCB weight
TOUR_POLICIES = ("cmanp-wheel", "uniform", "linucb")
TOUR_DELTA = 0.9
TOUR_BETA = 1.0


def tour_summary() -> tuple[str, str]:
    """``(black-box part, bandit part)`` of what :func:`run_tour` runs, in words:
    ``("Branin with the tnpd-bo surrogate", "CMANP (UCB) vs Uniform vs LinUCB at delta = 0.9")``."""
    from npbandit.optimize_surrogate import SURROGATES
    from npbandit.policies.names import parse_bandit_policy_name
    from npbandit.report.labels import policy_label

    def bandit_name(policy: str) -> str:
        parsed = parse_bandit_policy_name(policy)  # a bare checkpoint name runs its UCB rule
        return policy_label(policy if parsed is None else "-".join(parsed), "bandit")

    checkpoint = SURROGATES.get(TOUR_SURROGATE, TOUR_SURROGATE)
    return (f"{TOUR_FUNCTION.capitalize()} with the {checkpoint} surrogate",
            f"{' vs '.join(bandit_name(p) for p in TOUR_POLICIES)} at delta = {TOUR_DELTA}")


@dataclass(frozen=True)
class TourReport:
    bo_run_id: int | None
    best_value: float
    best_x: list[float]
    bandit_run_ids: list[int | None]
    report: str


def run_tour(db: str = DEFAULT_URL, budget: int = 20, steps: int = 300, seed: int = 0, *,
             progress: bool = False, say: Callable[[str], None] | None = print, rerun: bool = False) -> TourReport:
    """Branin with ``optimize``'s default surrogate (``budget`` evaluations), then the wheel bandit at delta = 0.9
    (``steps`` rounds each of CMANP-UCB, Uniform and LinUCB), all logged to ``db``, then
    the report of ``db`` (the ``TOUR_*`` constants). ``say`` gets every line (``None``: silent).
    A tour run again on the same ``db`` finds its runs completed there already and shows them
    instead of making them again (the black-box run: :func:`_stored_tour_run`; the bandit runs:
    :func:`~npbandit.loop.run_wheel_bandits`), saying so, unless ``rerun``."""
    from npbandit.api import optimize
    from npbandit.envs import make_test_function
    from npbandit.envs.blackbox import problem_objective
    from npbandit.loop import run_wheel_bandits
    from npbandit.report import report_text

    for name, value in (("budget", budget), ("steps", steps)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    say = say or (lambda line: None)
    blackbox, bandit = tour_summary()
    problem = make_test_function(TOUR_FUNCTION)
    say(f"1/3  Bayesian optimisation of {blackbox} ({budget} evaluations) -> {display_url(db)}")
    stored = None if rerun else _stored_tour_run(db, problem, budget, seed)
    if stored is None:
        result = optimize(problem_objective(problem, TOUR_FUNCTION), problem.bounds, surrogate=TOUR_SURROGATE,
                          budget=budget, seed=seed, db=db, progress=progress, name=TOUR_FUNCTION,
                          optimal_value=problem.optimal_value)
        run_id, best_value, best_x = result.run_id, float(result.best_value), np.asarray(result.best_x)
    else:
        run_id, (best_value, best_x) = stored.id, _best_stored(db, stored)
        say(f"     skipping it: {display_url(db)} holds it completed, run {run_id} (the same problem, surrogate, "
            "budget and seed); rerun=True (--rerun on the command line) runs it again")
    say(f"     best value {best_value:.4f} at x = {np.round(best_x, 3).tolist()} "
        f"(optimum {problem.optimal_value:.4f}), run {run_id}")
    say(f"2/3  wheel bandit, {steps} rounds: {bandit} -> {display_url(db)}")
    bandits = run_wheel_bandits(list(TOUR_POLICIES), [TOUR_DELTA], [seed], steps, beta=TOUR_BETA, db=db,
                                progress=progress, say=say, rerun=rerun)
    say("3/3  report\n")
    text = report_text(db)
    say(text)
    return TourReport(run_id, best_value, best_x.tolist(), [b.run_id for b in bandits], text)


def _stored_tour_run(db: str, problem, budget: int, seed: int):
    """The earliest completed black-box run in ``db`` that is the tour's as this npbandit makes it:
    the ``TOUR_FUNCTION`` on its bounds, minimised, ``budget`` evaluations, ``seed``, the policy
    ``TOUR_POLICY`` on the same checkpoint file (its sha256) by the same npbandit version, and
    neither continued from earlier evaluations nor stopped early; ``None`` when there is none.
    The search is deterministic given these, so that run is the one the tour would make again.
    Reads only (an SQLite file not there yet is not created)."""
    from npbandit import __version__
    from npbandit.optimize_surrogate import SURROGATES
    from npbandit.storage import INITIAL_FROM, completed_runs
    from npbandit.surrogates.pretrained import read_card

    checkpoint = SURROGATES.get(TOUR_SURROGATE, TOUR_SURROGATE)
    sha256 = read_card(checkpoint)["sha256"]
    bounds = np.asarray(problem.bounds, dtype=float).tolist()
    for row in sorted(completed_runs(db, kind="bo").values(), key=lambda r: r.id):
        params = row.env_params
        if (row.policy == TOUR_POLICY and row.surrogate == checkpoint and row.checkpoint_sha256 == sha256
                and row.seed == seed and row.n_steps == budget and params.get("objective") == TOUR_FUNCTION
                and params.get("budget") == budget and params.get("minimize") is True
                and params.get("bounds") == bounds and INITIAL_FROM not in row.policy_params
                and row.stopped_early is None and row.versions.get("npbandit") == __version__):
            return row
    return None


def _best_stored(db: str, row) -> tuple[float, np.ndarray]:
    """``(best value, its point)`` of the stored black-box run ``row`` (minimised), from its steps."""
    from npbandit.storage import run_evaluations

    best = min((step for step in run_evaluations(db, row) if not step["failed"] and step["value"] is not None),
               key=lambda step: step["value"])
    return float(best["value"]), np.asarray([best["params"][f"x{i}"] for i in range(len(best["params"]))], dtype=float)


@dataclass(frozen=True)
class DemoReport:
    n_initial: int
    n_updates: int
    condition_s: float
    first_updates_ms: float
    last_updates_ms: float
    state_floats: int
    data_floats: int
    max_abs_diff: float


def _state_floats(model: CMANP, state) -> int:
    model.latents(state)
    tensors = [state.data_state.log_norm, state.data_state.mean_value, *state.latent_cache]
    return sum(t.numel() for t in tensors)


def run_demo(n_initial: int = 2000, n_updates: int = 500, seed: int = 0, size: str = "paper",
             verbose: bool = True) -> DemoReport:
    """Condition CMANP on ``n_initial`` points, stream ``n_updates`` more one at a
    time, and check the result against conditioning on everything at once."""
    if n_initial < 0 or n_updates < 20:
        raise ValueError(f"need n_initial >= 0 and n_updates >= 20, got {n_initial} and {n_updates}")
    import torch

    from npbandit.surrogates import build

    say = print if verbose else (lambda *a, **k: None)
    torch.manual_seed(seed)
    model = build("cmanp", 1, 1, size=size).eval()
    g = torch.Generator().manual_seed(seed)
    n = n_initial + n_updates
    x = torch.rand(1, n, 1, generator=g) * 4 - 2
    y = torch.sin(3 * x) + 0.1 * torch.randn(1, n, 1, generator=g)
    xt = torch.linspace(-2, 2, 5).reshape(1, 5, 1)
    say(f"CMANP ({sum(p.numel() for p in model.parameters()):,} parameters, untrained): "
        f"conditioning on {n_initial:,} points in chunks of {model.config.chunk_size}")
    with torch.inference_mode():
        t0 = time.perf_counter()
        state = model.condition(x[:, :n_initial], y[:, :n_initial])
        condition_s = time.perf_counter() - t0
        say(f"  condition: {condition_s:.3f} s")
        times = []
        for i in range(n_initial, n):
            t0 = time.perf_counter()
            state = model.update(state, x[:, i:i + 1], y[:, i:i + 1])
            times.append(time.perf_counter() - t0)
        k = max(10, n_updates // 10)
        first, last = sorted(times[:k])[k // 2], sorted(times[-k:])[k // 2]
        say(f"  {n_updates} single-point updates: median {1e3 * first:.3f} ms over the first {k}, "
            f"{1e3 * last:.3f} ms over the last {k} (cost does not grow with N)")
        streamed = model.predict(state, xt)
        at_once = model.predict(model.condition(x, y), xt)
        diff = max((streamed.loc - at_once.loc).abs().max().item(), (streamed.scale - at_once.scale).abs().max().item())
        say(f"  streamed state vs conditioning on all {n:,} points at once: max |difference| = {diff:.2e} (float32)")
        floats = _state_floats(model, state)
        say(f"  state: {floats:,} floats, the same for any N; the raw data ({2 * n:,} floats here) is not kept")
        say("  predictions at x = " + ", ".join(f"{v:.1f}" for v in xt.flatten().tolist()) + ": mean "
            + ", ".join(f"{v:+.2f}" for v in streamed.loc.flatten().tolist()) + " (untrained weights)")
    return DemoReport(n_initial, n_updates, condition_s, 1e3 * first, 1e3 * last, floats, 2 * n, diff)
