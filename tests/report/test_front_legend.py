"""The report's ``front`` counts a run's distinct front points (equal values once), where
``ParetoResult.front`` keeps every evaluation: its legend says so, so that the two counts of
one run, which differ whenever evaluations tie, do not read as a disagreement."""

from __future__ import annotations

from npbandit import optimize
from npbandit.report import bo_summary, report_text


def test_the_legend_says_the_front_counts_distinct_points(tmp_path):
    db = f"sqlite:///{tmp_path / 'ties.db'}"
    result = optimize(lambda x: [1.0, 2.0], [[0.0], [1.0]], minimize=[True, True], surrogate="random", budget=3, db=db,
                      progress=False)
    assert len(result.front) == 3  # every evaluation ties: each is on the result's front
    (row,) = bo_summary(db)
    assert row["front"] == [1]
    assert "front = the distinct points on a run's front" in " ".join(report_text(db).split())
