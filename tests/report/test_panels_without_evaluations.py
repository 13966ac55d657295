"""``npbandit report --plot`` draws the black-box runs the tables show: a completed run with no
successful evaluation (an ask-and-tell run closed before any was told, or told only
failures) has no row in the tables and no line in a figure, so it draws no empty panel."""

import numpy as np
import pytest

from npbandit import Optimizer, optimize
from npbandit.report import bo_summary
from npbandit.report.curves import panels
from npbandit.report.figures import regret_figures


def test_a_completed_run_without_a_successful_evaluation_draws_no_panel(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    empty = Optimizer([[0, 0], [1, 1]], surrogate="random", budget=4, db=db, name="never-told")
    empty.ask()
    assert empty.close() is None  # completed, with no evaluation
    failed = Optimizer([[0, 0], [1, 1]], surrogate="random", budget=4, db=db, name="told-failures")
    failed.tell(failed.ask(), error="the lab's instrument broke")
    assert failed.close() is None
    optimize(lambda x: float(np.sum(x)), [[0, 0], [1, 1]], surrogate="random", budget=3, db=db, progress=False,
             name="evaluated")
    assert {row["problem"].name for row in bo_summary(db)} == {"evaluated"}
    drawn = [p for p in panels(db) if p.quantity.startswith("bo")]
    assert len(drawn) == 1 and drawn[0].title.startswith("evaluated")
    assert all(np.isfinite(line.curves).any() for line in drawn[0].lines)


def test_a_database_of_such_runs_alone_says_why_nothing_is_plotted(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    empty = Optimizer([[0, 0], [1, 1]], surrogate="random", budget=4, db=db, name="never-told")
    empty.ask()
    empty.close()
    with pytest.raises(ValueError, match="no completed runs .* have no successful evaluation"):
        regret_figures(db)
