"""A ``KeyboardInterrupt`` the objective raises itself (no signal was sent) stops the run as an
interruption, saved, but is recorded as what it was: ``KeyboardInterrupt``, not ``SIGINT``;
a real SIGINT is still recorded as ``SIGINT``."""

from __future__ import annotations

import os
import pickle
import signal

import numpy as np
import pytest

import npbandit
from npbandit.cli import main
from npbandit.stopping import RunInterrupted, stopped_by
from npbandit.storage import list_runs

BOUNDS = [[0.0, 0.0], [1.0, 1.0]]


def _raises_on_third(calls: list):
    def objective(x):
        calls.append(x)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return float(np.sum(x))

    return objective


def test_a_raised_keyboard_interrupt_is_recorded_as_such(tmp_path):
    db = str(tmp_path / "runs.db")
    with pytest.raises(RunInterrupted) as caught:
        npbandit.optimize(_raises_on_third([]), BOUNDS, surrogate="random", budget=6, db=db, progress=False)
    assert caught.value.signum is None and len(caught.value.history) == 2
    assert str(caught.value).startswith("stopped by KeyboardInterrupt after 2 evaluation(s); run 1 saved all 2")
    (run,) = list_runs(db)
    assert run.status == "interrupted" and run.error == "KeyboardInterrupt after 2 evaluation(s)"
    copy = pickle.loads(pickle.dumps(caught.value))
    assert copy.signum is None and str(copy) == str(caught.value)


def test_a_sigint_is_still_recorded_as_sigint(tmp_path):
    db = str(tmp_path / "runs.db")
    calls = []

    def objective(x):
        calls.append(x)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # delivered to this (the main) thread, through the run's handler
        return float(np.sum(x))

    with pytest.raises(RunInterrupted) as caught:
        npbandit.optimize(objective, BOUNDS, surrogate="random", budget=6, db=db, progress=False)
    assert caught.value.signum == signal.SIGINT
    (run,) = list_runs(db)
    assert run.status == "interrupted" and run.error.startswith("SIGINT after ")


def test_stopped_by_names_a_signal_or_a_raised_interrupt():
    assert stopped_by(signal.SIGTERM) == "SIGTERM" and stopped_by(None) == "KeyboardInterrupt"


def test_the_cli_exits_130_for_a_raised_interrupt(tmp_path, monkeypatch, capsys):
    (tmp_path / "ki_obj.py").write_text("def f(x):\n    raise KeyboardInterrupt\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["optimize", "--objective", "ki_obj:f", "--bounds", "[[0], [1]]", "--surrogate", "random",
                 "--budget", "2", "--db", str(tmp_path / "runs.db")]) == 128 + signal.SIGINT
    assert "stopped by KeyboardInterrupt after 0 evaluation(s)" in capsys.readouterr().err
