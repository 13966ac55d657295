"""``npbandit demo`` run again on one database: its wheel-bandit runs are found completed and
skipped, and the line that says so names a flag the demo takes (``--rerun``), which runs them
again."""

import npbandit.demo as demo
from npbandit.cli import main
from npbandit.storage import list_runs


def test_a_tour_run_again_skips_its_bandit_runs_and_reruns_them_when_asked(tmp_path):
    db = str(tmp_path / "tour.db")
    lines: list[str] = []
    first = demo.run_tour(db, budget=6, steps=5, say=lines.append)
    lines.clear()
    again = demo.run_tour(db, budget=6, steps=5, say=lines.append)
    skip = [line for line in lines if line.startswith("skipping")]
    n = len(demo.TOUR_POLICIES)
    assert len(skip) == 1 and f"{n} of {n} runs" in skip[0] and "--rerun on the command line" in skip[0]
    assert again.bandit_run_ids == first.bandit_run_ids
    assert main(["demo", "--budget", "6", "--steps", "5", "--rerun", "--db", db]) == 0
    bandit_runs = [r for r in list_runs(db, kind="bandit") if r.status == "completed"]
    assert len(bandit_runs) == 2 * len(demo.TOUR_POLICIES)  # each policy once more
