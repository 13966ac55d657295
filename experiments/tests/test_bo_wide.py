"""experiments/benchmarks/bo_wide.py and its problems and methods: the set-ups put the optimum
where they say, the unit-cube coding of mixed spaces round-trips, and a tiny run is stored,
resumed and summarised, with the rows that cannot take a problem yet recorded as such."""

import math
import sys

import numpy as np
import pytest

from npbandit.storage import list_runs, run_steps

from .helpers import load_benchmark

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
