"""An objective that calls ``sys.exit``: the run stops (``on_error`` does not skip an exit),
is recorded as failed, and ``npbandit optimize`` says so in one line -- which evaluation,
what the run saved, how to go on -- and exits with the objective's code."""

import concurrent.futures as cf
import textwrap

import numpy as np
import pytest

from npbandit import optimize
from npbandit.cli import main
from npbandit.storage import list_runs

BOX = ["--bounds", "[[0, 0], [1, 1]]", "--surrogate", "random"]


@pytest.fixture
def exits(tmp_path, monkeypatch):
    """A module ``exits_obj`` on the import path: ``f`` exits with code 3 at its third call,
    ``g`` with the message 'no licence' (code 1 for Python)."""
    (tmp_path / "exits_obj.py").write_text(textwrap.dedent("""
        import sys
        calls = []
        def f(x):
            calls.append(x)
            if len(calls) == 3:
                sys.exit(3)
            return float(sum(x))
        def g(x):
            calls.append(x)
            if len(calls) == 3:
                sys.exit("no licence")
            return float(sum(x))
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "exits_obj", raising=False)
    return str(tmp_path / "runs.db")


@pytest.mark.parametrize("on_error", ["raise", "skip"])
def test_an_objective_that_exits_ends_the_command_with_its_code_and_one_line(exits, capsys, on_error):
    assert main(["optimize", "--objective", "exits_obj:f", *BOX, "--budget", "10", "--db", exits,
                 "--on-error", on_error]) == 3
    lines = capsys.readouterr().err.strip().splitlines()
    (run,) = list_runs(exits)
    assert len(lines) == 1
    assert lines[0].startswith("npbandit optimize: the objective exited with code 3 (sys.exit) at evaluation 3, x=[")
    assert lines[0].endswith(f"; run {run.id} saved 2 evaluations and is recorded as failed; to go on, run the same "
                             f"command with --initial-from {run.id} --budget 8 (--budget counts the new evaluations)")
    assert run.status == "failed" and run.n_steps == 2
    assert run.error.startswith("SystemExit: 3; the objective exited with code 3 (sys.exit) at evaluation 3")


def test_an_exit_with_a_message_exits_1_as_python_does(exits, capsys):
    assert main(["optimize", "--objective", "exits_obj:g", *BOX, "--budget", "10", "--db", exits]) == 1
    line = capsys.readouterr().err.strip()
    assert line.startswith("npbandit optimize: the objective exited with 'no licence' (sys.exit) at evaluation 3")


def test_an_exit_on_a_worker_thread_stops_the_run_as_in_the_main_one(tmp_path):
    calls = []

    def objective(x):
        calls.append(x)
        if len(calls) == 3:
            raise SystemExit(4)
        return float(np.sum(x))

    with cf.ThreadPoolExecutor(2) as pool, pytest.raises(SystemExit) as stopped:
        optimize(objective, [[0, 0], [1, 1]], surrogate="random", budget=10, executor=pool, batch_size=2,
                 db=str(tmp_path / "runs.db"), progress=False, on_error="skip")
    assert stopped.value.code == 4
    assert any(note.startswith("the objective exited with code 4 (sys.exit) at evaluation ")
               for note in stopped.value.__notes__)
    (run,) = list_runs(str(tmp_path / "runs.db"))
    assert run.status == "failed" and stopped.value.run_id == run.id
