"""experiments/benchmarks/bo_wide.py and its problems and methods: the set-ups put the optimum
where they say, the unit-cube coding of mixed spaces round-trips, and a tiny run is stored,
resumed and summarised, with the rows that cannot take a problem yet recorded as such, and a sweep
sent SIGTERM stops at once, leaving no worker behind, and is completed by a rerun without duplicates."""

import contextlib
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from npbandit.exceptions import StorageError
from npbandit.storage import list_runs, run_steps

from .helpers import LAB, ROOT, left_in_session, load_benchmark

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bo_wide")


@pytest.fixture(scope="module")
def problems(bench):
    return sys.modules["bo_wide_problems"]


@pytest.fixture(scope="module")
def methods(bench):
    return sys.modules["bo_wide_methods"]


def test_every_known_optimum_is_where_the_problem_says_and_none_lies_at_the_centre(problems):
    located = 0
    for p in problems.all_problems().values():
        if p.optimizer is None:
            continue
        located += 1
        assert all(q.low <= p.optimizer[q.name] <= q.high for q in p.space), p.label
        assert 0.0 <= p(p.optimizer) - p.optimal_value < 1e-5, p.label  # the regret is never negative
        centre = {q.name: (q.low + q.high) / 2 for q in p.space}
        assert p(centre) - p.optimal_value > 1e-3, p.label  # no free optimum at the box's centre
    assert located >= 18
    embedded = problems.problem("branin-in100")
    assert embedded.dim == 100 and len(embedded.objective.active) == 2
    groups = problems.groups()
    assert len(groups["tuning"]) >= 4 and {"synthetic", "high-d"} <= set(groups)
    assert {p.dim for p in map(problems.problem, groups["high-d"])} >= {12, 30, 60}
    logreg = problems.problem("logreg-breast-cancer")  # fixed folds: the same point, the same loss
    point = {"C": 0.3, "penalty": "l1", "fit_intercept": "true", "class_weight": "balanced"}
    assert logreg(point) == logreg(dict(point)) and 0 < logreg(point) < 1


def test_the_cube_coding_rounds_onto_the_space_and_back(methods, problems):
    rng = np.random.default_rng(0)
    for label in problems.groups()["tuning"]:
        space = problems.problem(label).space
        coding = methods.CubeCoding(space)
        assert coding.dim == sum(len(p.choices) if p.kind == "choice" else 1 for p in space)
        for u in rng.uniform(size=(50, coding.dim)):
            params = coding.decode(u)
            for p in space:
                v = params[p.name]
                if p.kind == "choice":
                    assert v in p.choices
                else:
                    assert p.low <= v <= p.high and (p.kind == "float" or isinstance(v, int))
            assert coding.decode(coding.encode(params)) == params
    svc = methods.CubeCoding(problems.problem("svc-digits").space)  # C, gamma log; kernel one-hot; degree int
    lo = svc.decode(np.zeros(svc.dim))
    assert lo["C"] == pytest.approx(1e-2) and lo["degree"] == 2 and lo["kernel"] == "rbf"
    assert svc.decode(np.ones(svc.dim))["degree"] == 5


def test_a_tiny_run_is_stored_resumed_and_summarised(bench, tmp_path, keep_threads, capsys):
    pytest.importorskip("optuna")
    db = str(tmp_path / "wide.db")
    budget = 12
    jobs = [("shekel4", "random"), ("shekel4", "optimize-tnpd"), ("logreg-breast-cancer", "optuna-tpe"),
            ("logreg-breast-cancer", "optimize-tnpd")]
    for label, method in jobs:
        bench._one(label, method, 0, budget, db)
    runs, notes = bench.collect(db, budget)
    for label, method in jobs:  # a row runs, or says why it cannot yet (NP rows on mixed spaces, until they can)
        assert ((label, method) in runs) != ((label, method) in notes), (label, method)
    assert ("shekel4", "random") in runs and ("shekel4", "optimize-tnpd") in runs
    (run,) = runs[("shekel4", "optimize-tnpd")]
    assert len(run["curve"]) == budget and run["curve"] == sorted(run["curve"], reverse=True)
    stored = [r for r in list_runs(db, kind=bench.KIND) if r.policy == "optimize-tnpd" and r.status == "completed"]
    assert stored[0].surrogate == "tnpd-bo"  # a retrained checkpoint's runs stay apart
    steps = run_steps(db, stored[0].id)
    assert set(steps[0]["action"]) == {"x0", "x1", "x2", "x3"} and math.isfinite(steps[-1]["best_value"])
    (tuned,) = runs[("logreg-breast-cancer", "optuna-tpe")]
    assert 0 < tuned["curve"][-1] < 1  # a cross-validated log loss

    bench.main(["--problems", "shekel4", "logreg-breast-cancer", "--methods", "random", "optuna-tpe",
                "optimize-tnpd", "--seeds", "1", "--budget", str(budget), "--db", db, "--no-run", "--no-write"])
    text = capsys.readouterr().out
    assert "3 runs already" in text or "4 runs already" in text  # shekel4 x 2, the TPE run, optimize when it runs
    assert "| shekel4 | 4 |" in text and "optimize-tnpd against" in text and "Bars (issue 45)" in text


def test_the_turbo_row_spends_its_budget_inside_the_box_and_repeats_with_its_seed(methods, problems):
    """TuRBO-1 (the high-d table's trust-region GP peer): every evaluation inside the problem's
    box, exactly ``budget`` of them, the candidate count of its rule, and the same points again
    from the same seed; a space with an int or a choice is refused before anything runs."""
    pytest.importorskip("botorch")
    shekel = problems.problem("shekel4")
    budget = methods.N_INIT + 4

    def trace():
        seen = []

        def evaluate(params):
            seen.append(params)
            return shekel.objective(params)
        facts = methods.run("turbo", shekel, 0, budget, evaluate)
        return seen, facts

    seen, facts = trace()
    assert len(seen) == budget and facts["candidates"] == 2000 and facts["n_init"] == methods.N_INIT
    for params in seen:
        assert all(p.low <= params[p.name] <= p.high for p in shekel.space)
    assert trace()[0] == seen
    calls = []
    with pytest.raises(methods.Unsupported, match="continuous"):
        methods.run("turbo", problems.problem("logreg-breast-cancer"), 0, budget, calls.append)
    assert calls == []


@pytest.mark.integration
@pytest.mark.slow
def test_a_sweep_sent_sigterm_stops_at_once_and_a_rerun_completes_it_without_duplicates(tmp_path):
    # sent SIGTERM, the script once waited for the run in flight, long enough to be killed outright, and its
    # pool worker, living on, stored that run while a rerun of the command stored it again
    db = tmp_path / "wide.db"
    seeds, budget = 4, 4  # four: the check below holds even if the poll first sees two runs stored
    command = [sys.executable, str(LAB / "benchmarks" / "bo_wide.py"), "--problems", "svc-digits", "--methods",
               "random", "--seeds", str(seeds), "--budget", str(budget), "--db", str(db), "--no-write",
               "--workers", "1"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}

    def completed() -> list[int]:
        """The seeds of the completed runs, each checked whole (a step per evaluation)."""
        try:
            runs = [r for r in list_runs(str(db), kind="bo_wide") if r.status == "completed"]
        except StorageError:  # no database yet
            return []
        assert all(r.n_steps == budget for r in runs)
        return sorted(r.seed for r in runs)

    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (seen := completed()):  # the first run is stored: the next is in flight
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate(timeout=60)
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGTERM)  # the script alone, as `kill PID` does
        proc.communicate(timeout=120)  # seconds, unless hung
        assert proc.returncode != 0  # interrupted
        alive = left_in_session(proc.pid)
    finally:  # whatever failed above, no process of the script outlives the test
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert alive == [], f"processes left in the script's session: {alive}"
    stopped = completed()
    # the run in flight was abandoned, not finished (bar one that ended as the signal was sent); none half-stored
    assert len(stopped) <= len(seen) + 1 < seeds and len(set(stopped)) == len(stopped)
    rerun = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert f"{len(stopped)} runs already in" in rerun.stdout and f"{seeds - len(stopped)} to go" in rerun.stdout
    assert completed() == list(range(seeds))  # every seed once: the rerun did only what was missing
