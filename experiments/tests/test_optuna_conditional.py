"""experiments/benchmarks/optuna_conditional.py: its synthetic problems' optima, one row of a
run with the keys its summary reads, and the summary's paired counts."""

import json

import pytest

from .helpers import load_benchmark

pytestmark = pytest.mark.lab

optuna = pytest.importorskip("optuna")


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("optuna_conditional")


def test_each_synthetic_problem_reaches_its_floor_at_its_optimum(bench):
    best = {"classifier": "svc", "svc_c": 0.7, "svc_gamma": 0.2, "svc_tol": 0.4}
    assert bench.two_branch(optuna.trial.FixedTrial(best)) == 0.0
    rf = {"classifier": "rf", "rf_depth": 0.25, "rf_leaf": 0.6, "rf_split": 0.8}
    assert bench.two_branch(optuna.trial.FixedTrial(rf)) == pytest.approx(0.1)
    c = {"kind": "c", "s": 0.3, "c0": 0.3, "c1": 0.7, "c2": 0.5, "c3": 0.1}
    assert bench.three_branch(optuna.trial.FixedTrial(c)) == 0.0


def test_a_cell_runs_and_the_summary_pairs_its_seeds(bench, tmp_path):
    rows = [bench.run({"problem": "two-branch", "sampler": s, "seed": seed, "trials": 3})
            for s in ("np", "random") for seed in (0, 1)]
    assert all(len(r["values"]) == 3 and r["best"] == min(r["values"]) for r in rows)
    assert all(b in ("svc", "rf") for r in rows for b in r["branches"])
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = bench.summarise(path, 3)
    lower = sum(a["best"] < b["best"] for a, b in zip(rows[:2], rows[2:]))
    higher = sum(a["best"] > b["best"] for a, b in zip(rows[:2], rows[2:]))
    pairs_row = text.split("Paired seeds")[1].split("| two-branch |")[1].splitlines()[0]
    # np-plain ... random, then optimize and optimize-whole (no rows here)
    assert pairs_row == f" - | - | - | - | {lower} / {higher} / {2 - lower - higher} | - | - |"


def test_optimize_runs_each_problem_on_its_written_space(bench):
    spaces = bench.spaces()
    assert set(spaces) == set(bench.PROBLEMS)
    for sampler in ("optimize", "optimize-whole"):
        row = bench.run({"problem": "three-branch", "sampler": sampler, "seed": 0, "trials": 12})
        assert len(row["values"]) == 12 and row["best"] == min(row["values"])
        assert set(row["branches"]) <= {"a", "b", "c"} and len(set(row["branches"])) >= 2
