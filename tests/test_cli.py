import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from npbandit.cli import main
from npbandit.demo import run_demo
from npbandit.storage import list_runs, open_db, run_steps


def test_demo_streams_exactly_and_keeps_state_constant():
    report = run_demo(n_initial=200, n_updates=40, size="tiny", verbose=False)
    assert report.max_abs_diff < 1e-4
    small = run_demo(n_initial=10, n_updates=40, size="tiny", verbose=False)
    assert report.state_floats == small.state_floats
    assert report.data_floats == 480


def test_cli_demo_prints_what_happened(capsys):
    assert main(["demo", "--streaming", "--n-initial", "50", "--n-updates", "20", "--size", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "single-point updates" in out and "max |difference|" in out


def test_cli_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--n-updates", "0"])
    assert main(["demo", "--streaming", "--n-updates", "5", "--size", "tiny"]) == 2


@pytest.mark.integration
@pytest.mark.slow
def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "npbandit.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("npbandit ")


def write_module(directory, name, body):
    (directory / f"{name}.py").write_text(textwrap.dedent(body))


def one_line(err):
    """stderr without the progress bar's carriage-return redraws; asserts it is one line."""
    lines = [line.rsplit("\r", 1)[-1] for line in err.split("\n") if line.rsplit("\r", 1)[-1].strip()]
    assert len(lines) == 1, err
    return lines[0]


RANDOM = ["--surrogate", "random"]


@pytest.mark.parametrize("args,message", [
    (["--objective", "bad_objectives:nan", "--bounds", "[[0],[1]]", "--budget", "30", *RANDOM],
     "objective returned nan"),
    (["--objective", "bad_objectives:text", "--bounds", "[[0],[1]]", *RANDOM], "must return a float, got str"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[0],[1]", *RANDOM], "--bounds must be a 2 x d JSON array"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[0, 0]]", *RANDOM], "--bounds must have shape 2 x d"),
    (["--function", "labs", *RANDOM], "'labs' is not offered: it has integer / binary inputs"),
    (["--function", "ackleymixed", *RANDOM], "'ackleymixed' is not offered"),
    (["--function", "pressurevessel", *RANDOM], "'pressurevessel' is not offered: it is a constrained problem"),
    (["--function", "branin", "--surrogate", "tnpd-gp1d"], "fit: cmanp-and-bo, cmanp-bo"),
    (["--function", "branin", *RANDOM, "--batch-size", "2"], "--batch-size > 1 needs --workers N or --dask-scheduler"),
    (["--function", "branin", *RANDOM, "--eval-timeout", "5"], "--eval-timeout needs --workers N"),
    (["--function", "branin", *RANDOM, "--dask-scheduler", "tcp://127.0.0.1:9"], "--dask-scheduler needs --batch-size"),
    (["--function", "branin", *RANDOM, "--db", "{tmp}/missing/runs.db"], "does not exist"),
    (["--function", "branin", *RANDOM, "--db", "sqlite:///file:{tmp}/ro.db?mode=ro&uri=true"],
     "attempt to write a readonly database"),
    (["--function", "branin", *RANDOM, "--db", "{tmp}/notes.txt"], "file is not a database"),
    (["--function", "branin", "--bounds", "[[0, 0, 0], [1, 1, 1]]", *RANDOM], "branin takes 2 input(s)"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[0], [1]]", "--dim", "5", *RANDOM], "--dim 5 disagrees"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[true], [2]]", *RANDOM], "array of numbers"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[-1e308], [1e308]]", *RANDOM], "too wide"),
])
def test_cli_optimize_errors_are_one_line_with_status_2(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.syspath_prepend(str(tmp_path))
    write_module(tmp_path, "bad_objectives", """
        def nan(x):
            return float("nan") if x[0] > 0.5 else float(x.sum())
        def text(x):
            return "1.5"
    """)
    open_db(str(tmp_path / "ro.db"))
    (tmp_path / "notes.txt").write_text("not a database, but a text file a user pointed --db at\n" * 200)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    db = str(tmp_path / "runs.db")
    assert main(["optimize", *args, *([] if "--db" in args else ["--db", db])]) == 2
    assert message in one_line(capsys.readouterr().err)
    if "nan" in message:
        assert "nan" in list_runs(db)[0].error


@pytest.mark.integration
@pytest.mark.slow
def test_console_script_imports_objectives_from_the_working_directory(tmp_path):
    script = Path(sys.executable).with_name("npbandit")
    if not script.exists():
        pytest.skip("the console script is not installed next to this interpreter")
    write_module(tmp_path, "local_objective", """
        def f(x):
            return float((x ** 2).sum())
    """)
    out = subprocess.run([str(script), "optimize", "--objective", "local_objective:f", "--bounds", "[[-1],[1]]",
                          "--surrogate", "random", "--budget", "3", "--db", "runs.db"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "after 3 evaluations" in out.stdout


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.integration
@pytest.mark.slow
def test_a_signal_saves_every_evaluation_and_records_interrupted(tmp_path, signum):
    write_module(tmp_path, "slow_objective", f"""
        import time
        def f(x):
            with open({str(tmp_path / 'started.txt')!r}, "a") as log:
                log.write("x\\n")
            time.sleep(1.0)
            return float(x.sum())
    """)
    db = str(tmp_path / "runs.db")
    proc = subprocess.Popen([sys.executable, "-m", "npbandit.cli", "optimize", "--objective", "slow_objective:f",
                             "--bounds", "[[0, 0], [1, 1]]", "--surrogate", "random", "--budget", "1000",
                             "--db", db], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a shell's background job (nohup … &) starts with SIGINT ignored and a child inherits
                            # that; npbandit rightly leaves an ignored SIGINT ignored, so give the child a default one
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    started = tmp_path / "started.txt"
    deadline = time.time() + 120
    while time.time() < deadline and (not started.exists() or len(started.read_text().split()) < 3):
        time.sleep(0.05)
    time.sleep(0.3)  # inside the third evaluation
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    evaluated = len(started.read_text().split()) - 1  # the interrupted evaluation never returned
    assert proc.returncode == 128 + signum
    line = one_line(err)
    assert line.startswith(f"npbandit optimize: stopped by {signal.Signals(signum).name} after {evaluated} step(s)")
    (run,) = list_runs(db)
    assert run.status == "interrupted" and run.n_steps == evaluated == 2
    assert run.error == f"{signal.Signals(signum).name} after 2 step(s)"
    assert [s["t"] for s in run_steps(db, run.id)] == list(range(evaluated))


@pytest.mark.integration
@pytest.mark.slow
def test_ctrl_c_with_worker_processes_saves_the_run_and_leaves_no_worker(tmp_path):
    # Ctrl-C reaches the whole process group: the workers leave it to the driver, which saves
    # the run, says one line and abandons the evaluations in flight (it does not wait for them)
    write_module(tmp_path, "slow_objective", f"""
        import os, time
        def f(x):
            with open({str(tmp_path / 'started.txt')!r}, "a") as log:
                log.write(f"{{os.getpid()}}\\n")
            time.sleep(1.0)
            return float(x.sum())
    """)
    db = str(tmp_path / "runs.db")
    proc = subprocess.Popen([sys.executable, "-m", "npbandit.cli", "optimize", "--objective", "slow_objective:f",
                             "--bounds", "[[0, 0], [1, 1]]", "--surrogate", "random", "--budget", "1000",
                             "--workers", "2", "--db", db], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    started = tmp_path / "started.txt"
    deadline = time.time() + 120
    while time.time() < deadline and (not started.exists() or len(started.read_text().split()) < 5):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGINT
    assert one_line(err).startswith("npbandit optimize: stopped by SIGINT after")
    (run,) = list_runs(db)
    assert run.status == "interrupted" and run.n_steps >= 3
    time.sleep(0.5)
    for pid in {int(p) for p in started.read_text().split()}:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_cli_report_reads_without_writing_and_refuses_a_missing_database(tmp_path, capsys):
    db = tmp_path / "runs.db"
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "3", "--db", str(db)]) == 0
    open_db(str(db)).dispose()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    before = db.read_bytes()
    capsys.readouterr()
    assert main(["report", "--db", str(db)]) == 0
    assert "branin" in capsys.readouterr().out and db.read_bytes() == before
    assert main(["report", "--db", str(tmp_path / "typo.db")]) == 2
    assert "no database at" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "typo.db").exists()


def test_cli_bandit_checks_policy_names_before_running(tmp_path, capsys):
    db = tmp_path / "runs.db"
    for policy, message in [("cmanp-bo", "bandit policy 'cmanp-bo' needs a 'wheel' checkpoint"),
                            ("tnpd-gp1d-thompson", "fit: cmanp-and-wheel, cmanp-wheel, lbanp-wheel, tnpd-wheel"),
                            ("cmanp-wheeel", "did you mean 'cmanp-wheel'"),
                            ("linucbb", "did you mean 'linucb'")]:
        assert main(["bandit", "--policies", "uniform", policy, "--steps", "5", "--db", str(db)]) == 2, policy
        assert message in one_line(capsys.readouterr().err), policy
    assert not db.exists()  # nothing ran


@pytest.mark.integration
@pytest.mark.slow
def test_cli_optimize_on_local_worker_processes(tmp_path, capsys):
    """--workers N: the evaluations run in N spawned processes, N of them in flight, each step
    recording the process that ran it."""
    db = str(tmp_path / "runs.db")
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "8", "--workers", "2",
                 "--db", db]) == 0
    out = capsys.readouterr().out
    assert "after 8 evaluations" in out
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert run.status == "completed" and len(steps) == 8
    pids = {s["worker"].split(":")[1] for s in steps}
    assert str(os.getpid()) not in pids and 1 <= len(pids) <= 2
    # the points are Branin's, in its box: sending the objective to the pool left this process's
    # view of the problem's bounds intact (torch's shared-memory pickling moved them once)
    best = out.split("at x = ")[1].split(" after")[0]
    x = json.loads(best)
    assert -5 <= x[0] <= 10 and 0 <= x[1] <= 15, best
