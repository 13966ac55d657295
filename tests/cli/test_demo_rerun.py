"""``npbandit demo`` run again on one database: its black-box run and its wheel-bandit runs are
found completed and skipped (a second ``make demo`` adds no duplicate to the report), the lines
that say so name a flag the demo takes (``--rerun``), which runs them again."""

import npbandit.demo as demo
from npbandit.cli import main
from npbandit.storage import list_runs


def test_a_tour_run_again_skips_its_runs_and_reruns_them_when_asked(tmp_path):
    db = str(tmp_path / "tour.db")
    lines: list[str] = []
    first = demo.run_tour(db, budget=6, steps=5, say=lines.append)
    lines.clear()
    again = demo.run_tour(db, budget=6, steps=5, say=lines.append)
    skip = [line for line in lines if line.startswith("skipping")]
    n = len(demo.TOUR_POLICIES)
    assert len(skip) == 1 and f"{n} of {n} runs" in skip[0] and "--rerun on the command line" in skip[0]
    assert again.bandit_run_ids == first.bandit_run_ids
    # the black-box run too: the stored one is shown, with the best value and point the first tour found
    bo_skip = [line for line in lines if line.strip().startswith("skipping it")]
    assert len(bo_skip) == 1 and f"run {first.bo_run_id}" in bo_skip[0] and "--rerun" in bo_skip[0]
    assert again.bo_run_id == first.bo_run_id and len(list_runs(db, kind="bo")) == 1
    assert again.best_value == first.best_value and again.best_x == first.best_x
    # another budget or seed is another run
    other = demo.run_tour(db, budget=7, steps=5, say=None)
    assert other.bo_run_id != first.bo_run_id
    assert main(["demo", "--budget", "6", "--steps", "5", "--rerun", "--db", db]) == 0
    bandit_runs = [r for r in list_runs(db, kind="bandit") if r.status == "completed"]
    assert len(bandit_runs) == 2 * len(demo.TOUR_POLICIES)  # each policy once more
    budget_6 = [r for r in list_runs(db, kind="bo") if r.n_steps == 6]
    assert len(budget_6) == 2 and all(r.policy == demo.TOUR_POLICY for r in budget_6)  # the tour's id, as logged
