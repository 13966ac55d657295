import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers import running, wait_until_ended

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
    (["--objective", "bad_objectives:nan", "--bounds", "[[0, 1], [0, 1], [0, 1]]", *RANDOM],
     "pass the transpose, --bounds=[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]; or with --objective, name each input with "
     "--space"),
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
    (["--function", "branin", "--dim", "3", *RANDOM], "--dim 3: branin has a fixed dimension (2); --dim applies only "
     "to the functions that take one: ackley, dixonprice, griewank, hartmann"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[0], [1]]", "--dim", "5", *RANDOM], "--dim 5 disagrees"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[true], [2]]", *RANDOM], "array of numbers"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[-1e308], [1e308]]", *RANDOM], "too wide"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[0], [1]]", "--constraints", "bad_objectives", *RANDOM],
     "--constraints must look like module:function"),
    (["--objective", "bad_objectives:nan", "--bounds", "[[0], [1]]", "--constraints", "bad_objectives:none",
      *RANDOM], "--constraints: 'bad_objectives' has no attribute 'none'"),
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


def test_cli_optimize_takes_outcome_constraints(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(tmp_path))
    write_module(tmp_path, "disc", """
        def f(x):
            return float(x.sum())
        def inside(x):
            return [float(((x - 0.5) ** 2).sum() - 0.09)]
    """)
    db = str(tmp_path / "runs.db")
    assert main(["optimize", "--objective", "disc:f", "--constraints", "disc:inside", "--bounds", "[[0, 0], [1, 1]]",
                 *RANDOM, "--budget", "12", "--db", db]) == 0
    out = capsys.readouterr().out
    steps = run_steps(db, list_runs(db)[0].id)
    assert all(len(s["constraints"]) == 1 for s in steps)
    feasible = [s for s in steps if s["constraints"][0] <= 0]
    if feasible:  # the best feasible value is the one printed
        assert f"best feasible value {min(s['value'] for s in feasible):.6g}" in out
    else:
        assert "no feasible point found" in out


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
    # the third evaluation lasts until the signal ends the run (five minutes at most), so the
    # signal lands inside it however late it comes; a fixed-length evaluation let a slow
    # machine finish it, and start the next, before the signal arrived
    write_module(tmp_path, "slow_objective", f"""
        import time
        def f(x):
            with open({str(tmp_path / 'started.txt')!r}, "a") as log:
                log.write("x\\n")
            with open({str(tmp_path / 'started.txt')!r}) as log:
                if len(log.read().split()) >= 3:
                    time.sleep(300)
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
    proc.send_signal(signum)  # inside the third evaluation
    _, err = proc.communicate(timeout=120)
    evaluated = len(started.read_text().split()) - 1  # the interrupted evaluation never returned
    assert proc.returncode == 128 + signum
    line = one_line(err)
    name = signal.Signals(signum).name
    assert line.startswith(f"npbandit optimize: stopped by {name} after {evaluated} evaluation(s)")
    (run,) = list_runs(db)
    assert run.status == "interrupted" and run.n_steps == evaluated == 2
    assert run.error == f"{signal.Signals(signum).name} after 2 evaluation(s)"
    assert [s["t"] for s in run_steps(db, run.id)] == list(range(evaluated))


@pytest.mark.integration
@pytest.mark.slow
def test_ctrl_c_with_worker_processes_saves_the_run_and_leaves_no_worker(tmp_path):
    # Ctrl-C reaches the whole process group: the workers leave it to the driver, which saves
    # the run, says one line and abandons the evaluations in flight (it does not wait for them).
    # The fifth evaluation starts only once three have come back (two workers), whatever each lasts
    write_module(tmp_path, "slow_objective", f"""
        import os, time
        def f(x):
            with open({str(tmp_path / 'started.txt')!r}, "a") as log:
                log.write(f"{{os.getpid()}}\\n")
            time.sleep(0.3)
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
    # ended, not necessarily reaped yet (a worker left to PID 1 is reaped in its time, or never in
    # a container whose PID 1 does not): waited for, as a fixed sleep raced that on a loaded machine
    pids = sorted({int(p) for p in started.read_text().split()})
    assert wait_until_ended(pids) == [], f"workers still running after the driver ended: {running(pids)}"


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


def test_cli_optimize_draws_a_seed_for_seed_none_and_prints_it(tmp_path, capsys):
    # as optimize(seed=None): a seed drawn, recorded with the run and printed, and that seed repeats the run
    db = str(tmp_path / "runs.db")
    base = ["optimize", "--function", "branin", "--surrogate", "random", "--budget", "3", "--db", db]
    assert main([*base, "--seed", "None"]) == 0
    out = capsys.readouterr().out
    drawn = re.search(r"^seed (\d+) \(drawn; --seed (\d+) repeats the run\)$", out, re.MULTILINE)
    assert drawn and drawn[1] == drawn[2], out
    assert main([*base, "--seed", drawn[1]]) == 0
    assert "drawn" not in capsys.readouterr().out  # a seed given is not said again
    first, again = sorted(list_runs(db), key=lambda r: r.id)
    assert first.seed == again.seed == int(drawn[1])
    points = [[s["params"] for s in run_steps(db, run.id)] for run in (first, again)]
    assert len(points[0]) == 3 and points[0] == points[1]


def test_cli_bandit_checks_policy_names_before_running(tmp_path, capsys):
    db = tmp_path / "runs.db"
    for policy, message in [("cmanp-gp1d", "bandit policy 'cmanp-gp1d' needs a 'wheel' checkpoint"),
                            ("cmanp-bo-marginal-thompson", "its Thompson draws are marginal already"),
                            ("tnpd-gp1d-thompson", "fit: cmanp-and-wheel, cmanp-wheel, lbanp-wheel, tnpd-wheel"),
                            ("cmanp-wheeel", "did you mean 'cmanp-wheel'"),
                            ("linucbb", "did you mean 'linucb'"),
                            # the names other libraries spell in capitals (MABWiser's LinUCB)
                            ("LinUCB", "did you mean 'linucb'"), ("GP-UCB", "did you mean 'gp-ucb'")]:
        assert main(["bandit", "--policies", "uniform", policy, "--steps", "5", "--db", str(db)]) == 2, policy
        assert message in one_line(capsys.readouterr().err), policy
    assert not db.exists()  # nothing ran


def test_cli_bandit_runs_a_per_arm_np_policy_on_the_wheel(tmp_path, capsys):
    """A 'bo' checkpoint is a bandit policy too (one regression per arm), beside the wheel's own."""
    from helpers import tiny_checkpoint

    db = tmp_path / "runs.db"
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    assert main(["bandit", "--policies", f"{card}-thompson", "uniform", "--steps", "12", "--db", str(db)]) == 0
    runs = {run.policy: run for run in list_runs(str(db))}
    assert set(runs) == {"cmanp-bo-thompson", "uniform"} and all(r.status == "completed" for r in runs.values())
    assert runs["cmanp-bo-thompson"].policy_params["bounds"] == [[-1.0, -1.0], [1.0, 1.0]]
    assert len(run_steps(str(db), runs["cmanp-bo-thompson"].id)) == 12


def test_cli_bandit_help_lists_every_kind_of_policy_name(monkeypatch):
    """The per-arm policies (``cmanp-bo``) run with --policies; --help named only the wheel's."""
    monkeypatch.setenv("COLUMNS", "500")  # unwrapped: argparse may break a line at a hyphen
    help_text = " ".join(_commands()["bandit"].format_help().split())
    from npbandit.policies.bandit import BASELINES

    for name in (*BASELINES, "<model>-wheel[-ucb|-thompson|-marginal-thompson]", "<model>-bo[-ucb|-thompson]"):
        assert name in help_text, name


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
    best = min(steps, key=lambda s: s["value"])["params"]
    assert -5 <= best["x0"] <= 10 and 0 <= best["x1"] <= 15, best
    assert f"at x0={best['x0']:.4g}, x1={best['x1']:.4g} after 8 evaluations" in out


def test_cli_optimize_prints_a_wide_point_cut_short(tmp_path, capsys):
    assert main(["optimize", "--function", "ackley", "--dim", "30", "--surrogate", "random", "--budget", "2",
                 "--db", str(tmp_path / "runs.db")]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-2]  # the last says where the run is
    assert "at x0=" in line and "more after 2 evaluations" in line and len(line) < 200, line


# -- --help says what runs ----------------------------------------------------------------------------------------

def _commands():
    from npbandit.cli import build_parser

    parser = build_parser()
    return next(a for a in parser._actions if a.dest == "command").choices


def _options(sub):
    return [a for a in sub._actions if a.option_strings and a.dest != "help"]


_DEFAULT = re.compile(r"default:?\s+([^);]+)", re.IGNORECASE)


def _concrete(default):
    return default is not None and default is not False and default != []


def test_every_option_help_states_the_parsers_own_default(monkeypatch):
    """An option with a default shows it once, as the parser holds it, and names no other; an
    option without one (None: absent) says in words what happens then."""
    from npbandit.cli.options import show_default

    monkeypatch.setenv("COLUMNS", "500")  # --help unwrapped: one line per option

    for name, sub in _commands().items():
        for action in _options(sub):
            where = f"{name} {action.option_strings[0]}"
            assert action.help and action.help.strip(), f"{where} has no help"
            text = " ".join(sub._get_formatter()._expand_help(action).split())
            stated = [m.strip() for m in _DEFAULT.findall(text)]
            if _concrete(action.default):
                assert stated == [show_default(action.default)], (where, text)
                assert text.endswith(f"(default: {show_default(action.default)})"), (where, text)
            elif not (action.required or action.nargs == 0 or isinstance(action, argparse.BooleanOptionalAction)
                      or any(action in g._group_actions and g.required for g in sub._mutually_exclusive_groups)):
                assert stated, f"{where}: help does not say what happens without it: {text!r}"
        # and it is what --help prints
        printed = sub.format_help()
        for action in _options(sub):
            if _concrete(action.default):
                assert f"{action.help.replace('%%', '%')} (default: {show_default(action.default)})" in printed


#: options whose parser default is a function's default, and which function and parameter
_FUNCTION_DEFAULTS = {
    "optimize": ("npbandit.api:optimize", ["surrogate", "budget", "acquisition", "n_init", "seed", "on_error",
                                           "output_warp", "trust_region", "liar", "db", "batch_size",
                                           "acq_optimizer", "avoid_repeats", "name", "optimal_value", "subspace"]),
    "bandit": ("npbandit.loop:run_bandit_sweep", ["beta", "db", "commit_every", "rerun"]),
    "demo": ("npbandit.demo:run_tour", ["budget", "steps", "seed", "db"]),
    "demo-streaming": ("npbandit.demo:run_demo", ["n_initial", "n_updates", "size", "seed"]),
    "report": ("npbandit.report:report_text", ["limit", "db"]),
    "train": ("npbandit.training:TrainConfig", ["size", "name", "batch_size", "lr", "grad_clip", "seed",
                                                "eval_every", "checkpoint_every", "eval_batches",
                                                "final_eval_batches", "device", "init_from", "loss",
                                                "eval_prior_params"]),
    "train-call": ("npbandit.training:train", ["loader_workers", "stop_at"]),
}
#: options with a default of the command line's own (no function takes them with a default)
_CLI_ONLY = {("bandit", "seeds"), ("bandit", "steps"),
             ("demo", "size"), ("demo", "n_initial"), ("demo", "n_updates")}


def test_option_defaults_are_the_defaults_of_the_functions_they_feed():
    import importlib
    import inspect

    commands = _commands()
    covered = set()
    for key, (target, dests) in _FUNCTION_DEFAULTS.items():
        module, attr = target.split(":")
        signature = inspect.signature(getattr(importlib.import_module(module), attr))
        command = key.split("-")[0]
        parser_defaults = {a.dest: a.default for a in _options(commands[command])}
        for dest in dests:
            expected = signature.parameters[dest].default
            if dest == "batch_size" and command == "optimize":
                expected = None  # the CLI's None: --workers' count, else optimize's 1 (its help says so)
            assert parser_defaults[dest] == expected, (command, dest, parser_defaults[dest], expected)
            covered.add((command, dest))
    # every option with a concrete default is checked against a function, or declared the CLI's own
    unchecked = {(name, a.dest) for name, sub in commands.items() for a in _options(sub)
                 if _concrete(a.default) and not isinstance(a, argparse._VersionAction)} - covered - _CLI_ONLY
    assert not unchecked, unchecked


def test_the_size_options_offer_the_named_sizes_of_the_surrogates(monkeypatch):
    """--size is one of npbandit.surrogates.SIZES, whatever that holds (one list of sizes)."""
    import npbandit.surrogates as surrogates
    from npbandit.cli import build_parser

    monkeypatch.setitem(surrogates.SIZES, "minute", {"d_model": 8})
    for command in ("train", "demo"):
        sub = next(a for a in build_parser(command)._actions if a.dest == "command").choices[command]
        (size,) = [a for a in sub._actions if a.dest == "size"]
        assert size.choices == list(surrogates.SIZES) and "minute" in size.choices


def test_bandit_command_hands_its_commit_batch_to_the_sweep(monkeypatch, tmp_path):
    import npbandit.loop

    seen = []
    monkeypatch.setattr(npbandit.loop, "run_bandit_sweep", lambda *a, **kw: seen.append(kw["commit_every"]))
    db = ["--db", f"sqlite:///{tmp_path / 'runs.db'}"]
    assert main(["bandit", *db]) == 0 and main(["bandit", "--commit-every", "50", *db]) == 0
    assert seen == [None, 50]


def test_demo_help_names_what_the_tour_runs(monkeypatch, tmp_path):
    import numpy as np

    import npbandit.api
    import npbandit.loop
    from npbandit.api import SURROGATES, OptimizeResult
    from npbandit.demo import run_tour

    calls = {}

    class Stop(Exception):
        pass

    def fake_optimize(objective, bounds, **kwargs):
        calls["optimize"] = kwargs
        return OptimizeResult(np.zeros(2), 1.0, [], None)

    def fake_bandits(policies, deltas, seeds, steps, **kwargs):
        calls["bandit"] = (policies, deltas)
        raise Stop

    monkeypatch.setattr(npbandit.api, "optimize", fake_optimize)
    monkeypatch.setattr(npbandit.loop, "run_wheel_bandits", fake_bandits)
    with pytest.raises(Stop):
        run_tour(str(tmp_path / "t.db"), say=None)
    help_text = " ".join(_commands()["demo"].format_help().split())
    surrogate = SURROGATES[calls["optimize"]["surrogate"]]
    assert f"{calls['optimize']['name'].capitalize()} with the {surrogate} surrogate" in help_text
    assert not any(f"with the {other} surrogate" in help_text for other in SURROGATES.values() if other != surrogate)
    policies, deltas = calls["bandit"]
    assert f"at delta = {deltas[0]}" in help_text
    assert "CMANP (UCB) vs Uniform vs LinUCB" in help_text and list(policies) == ["cmanp-wheel", "uniform", "linucb"]


@pytest.mark.parametrize("args,message", [
    (["optimize", "--function", "branin", "--budget", "x"], "argument --budget: expected a positive integer, got 'x'"),
    (["optimize", "--function", "branin", "--budget", "0"], "argument --budget: expected a positive integer, got '0'"),
    (["optimize", "--function", "branin", "--seed", "-1"],
     "argument --seed: expected an integer >= 0 or 'none', got '-1'"),
    (["optimize", "--function", "branin", "--seed", "random"],
     "argument --seed: expected an integer >= 0 or 'none', got 'random'"),
    (["optimize", "--function", "branin", "--eval-timeout", "0"],
     "argument --eval-timeout: expected a positive number, got '0'"),
    (["bandit", "--deltas", "nan"], "argument --deltas: expected a finite number, got 'nan'"),
    (["bandit", "--seeds", "one"], "argument --seeds: expected an integer >= 0, got 'one'"),
    (["train", "--model", "cmanp", "--prior", "bo", "--out", "x", "--steps", "1", "--max-minutes", "-5"],
     "argument --max-minutes: expected a positive number, got '-5'"),
])
def test_an_option_of_the_wrong_type_is_named_with_what_it_expects(capsys, args, message):
    with pytest.raises(SystemExit) as info:
        main(args)
    err = capsys.readouterr().err
    assert info.value.code == 2 and message in err and "invalid" not in err


@pytest.mark.parametrize("args,message", [
    (["bandit", "--beta", "-1", "--steps", "3"], "npbandit bandit: --beta must be >= 0.0, got -1.0"),
    (["bandit", "--policies", "uniform", "--seeds", "3", "5", "3", "--steps", "3"],
     "npbandit bandit: --seeds value 3 repeats seed 3"),
    (["bandit", "--policies", "linucb", "uniform", "linucb", "--steps", "3"],
     "npbandit bandit: --policies value 1 'linucb' on delta=0.5 and --policies value 3 'linucb' on delta=0.5 are "
     "the same run"),
    (["bandit", "--policies", "uniform", "nosuch", "--steps", "3"], "npbandit bandit: --policies must be uniform, "),
    (["optimize", "--function", "branin", "--surrogate", "random", "--acq-optimizer", "candidate-search"],
     "npbandit optimize: --acq-optimizer maximises a surrogate's acquisition; --surrogate 'random' (Sobol points) "
     "has none"),
    (["optimize", "--function", "branin", "--liar", "penalty", "--acquisition", "ucb"],
     "npbandit optimize: --liar 'penalty' needs acquisition 'logei'"),
    (["train", "--model", "cmanp", "--prior", "bo", "--steps", "1", "--size", "tiny", "--out", "{tmp}/run",
      "--name", ""], "npbandit train: --name must be a plain file name"),
    (["train", "--model", "cmanp", "--prior", "bo", "--steps", "1", "--size", "tiny", "--out", "{tmp}/run",
      "--eval-prior-set", "nosuch=1"], "npbandit train: --eval-prior-set: "),
])
def test_a_library_error_names_the_flag_the_user_typed(tmp_path, capsys, args, message):
    # the sweep's, optimize's and train's checks name their Python arguments (beta, seeds[2], acq_optimizer,
    # surrogate='random'); the command line's user typed flags, and the error names those
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main([*args, *(["--db", str(tmp_path / "runs.db")] if args[0] != "train" else [])]) == 2
    *_, line = capsys.readouterr().err.splitlines()  # after any warning a first import of torch gives
    assert line.startswith(message), line


def test_only_the_argument_forms_of_a_name_become_flags():
    from npbandit.cli.options import in_flags

    flags = {"policies": ("--policies", True), "policy": ("--policies", False), "out": ("--out", False),
             "bounds": ("--bounds", False), "eval_prior_params": ("--eval-prior-set", True)}
    for prose in ("bandit policy 'x' needs a 'wheel' checkpoint", "out of range: policies are 2",
                  "--out must be empty", "unknown_name is wrong; policy must be"):
        assert in_flags(prose, flags) == prose
    assert in_flags("bounds[0] must be below bounds[1]", flags) == "bounds[0] must be below bounds[1]"  # not a list
    assert in_flags("policies[1] 'x', policies[10] 'x'", flags) == "--policies value 2 'x', --policies value 11 'x'"
    assert in_flags("eval_prior_params (--eval-prior-set): no", flags) == "--eval-prior-set: no"
    # an item by its key: of a list flag named as the flag, of another left as it is
    assert in_flags("policies['a\\tb']: bad", flags) == "--policies 'a\\tb': bad"
    assert in_flags("""policies["it's"] is bad""", flags) == """--policies "it's" is bad"""
    assert in_flags("bounds['x0'] must be", flags) == "bounds['x0'] must be"
    # a switch's keyword as the form typed; a keyword of another flag keeps its value
    flags["trust_region"] = ("--trust-region", False, "--no-trust-region")
    assert in_flags("trust_region=True is for one objective", flags) == "--trust-region is for one objective"
    assert in_flags("with trust_region=False, x", flags) == "with --no-trust-region, x"
    assert in_flags("out=True here", flags) == "--out True here"


@pytest.mark.parametrize("args", [
    ["optimize", "--function", "branin", "--surrogate", "{tmp}/no-such-checkpoint.json"],
    ["optimize", "--function", "branin", "--surrogate", ""],
    ["optimize", "--function", "branin", "--surrogate", "gp", "--acquisition", "pi"],
    ["optimize", "--function", "branin", "--surrogate", "tnpd-gp1d", "--workers", "1"],  # refused before the pool
    ["optimize", "--objective", "math:fabs", "--bounds", "[[0],[1]]", "--surrogate", "random", "--n-init", "0"],
    ["bandit", "--policies", "{tmp}/no-such-checkpoint.json", "--steps", "3"],
    ["bandit", "--policies", "uniform", "--deltas", "2", "--steps", "3"],
])
def test_a_refused_command_leaves_no_database_behind(tmp_path, capsys, args):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    try:
        status = main([*args, "--db", str(tmp_path / "runs.db")])
    except SystemExit as exit:  # refused by argparse
        status = exit.code
    assert status == 2 and capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_the_console_script_is_the_launcher_outside_the_package():
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"] == {"npbandit": "npbandit_console:main"}
    assert "npbandit_console" in pyproject["tool"]["setuptools"]["py-modules"]


@pytest.mark.integration
def test_ctrl_c_while_the_cli_starts_is_one_line_and_status_130():
    # the Ctrl-C is raised exactly where the CLI is imported (a finder that interrupts it), not by a timer
    code = textwrap.dedent("""
        import sys

        class Interrupt:
            def find_spec(self, name, path=None, target=None):
                if name == "npbandit.cli":
                    raise KeyboardInterrupt

        sys.meta_path.insert(0, Interrupt())
        import npbandit_console

        sys.argv = ["npbandit", "models"]
        sys.exit(npbandit_console.main())
    """)
    root = str(Path(__file__).parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 128 + signal.SIGINT
    assert out.stderr.strip() == "npbandit: interrupted"
    # `python -m npbandit` runs the same launcher
    code = code.replace("import npbandit_console", "import runpy").replace(
        "sys.exit(npbandit_console.main())", "runpy.run_module('npbandit', run_name='__main__', alter_sys=True)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 128 + signal.SIGINT
    assert out.stderr.strip() == "npbandit: interrupted"


def test_a_checkpoint_whose_weights_do_not_load_leaves_no_database_behind(tmp_path, capsys):
    from helpers import tiny_checkpoint

    card = tiny_checkpoint(tmp_path / "ckpt", "cmanp", "bo")
    weights = card.with_name(json.loads(card.read_text())["weights"])
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # a copy cut short
    runs = tmp_path / "runs"
    runs.mkdir()
    assert main(["optimize", "--function", "branin", "--surrogate", str(card), "--budget", "3",
                 "--db", str(runs / "runs.db")]) == 2
    assert "npbandit optimize:" in capsys.readouterr().err
    assert list(runs.iterdir()) == []


def test_optimize_a_function_wider_than_the_checkpoint(tmp_path, capsys):
    from helpers import tiny_checkpoint

    card = tiny_checkpoint(tmp_path / "ckpt", "cmanp", "bo")
    db = tmp_path / "runs.db"
    assert main(["optimize", "--function", "ackley", "--dim", "12", "--surrogate", str(card), "--budget", "15",
                 "--db", str(db)]) == 0
    assert "after 15 evaluations" in capsys.readouterr().out
    (run,) = list_runs(f"sqlite:///{db}")
    assert run.policy_params["subspace"] == "redealt-sketch" and run.policy_params["n_init"] == 13


@pytest.mark.parametrize("flag,name", [([], "gradient-restarts"), (["--acq-optimizer", "candidate-search"],
                                                                     "candidate-search"),
                                       (["--acq-optimizer", "gradient-restarts"], "gradient-restarts")])
def test_optimize_hands_the_acquisition_optimiser_to_the_policy(tmp_path, capsys, flag, name):
    """--acq-optimizer reaches optimize(acq_optimizer=...): the run logs the one it ran with;
    without it, the checkpoint's own (the tiny card names none: gradient-restarts)."""
    from helpers import tiny_checkpoint

    from npbandit.acquisition.optimizers import OPTIMIZERS

    card = tiny_checkpoint(tmp_path / "ckpt", "cmanp", "bo")
    db = tmp_path / "runs.db"
    assert main(["optimize", "--function", "branin", "--surrogate", str(card), "--budget", "6", *flag,
                 "--db", str(db)]) == 0
    (run,) = list_runs(f"sqlite:///{db}")
    assert run.policy_params["acq_optimizer"] == OPTIMIZERS[name]().params()


def test_an_unknown_acquisition_optimiser_is_a_one_line_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["optimize", "--function", "branin", "--acq-optimizer", "lbfgs", "--db", str(tmp_path / "runs.db")])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert [line for line in err.splitlines() if "error:" in line] == [err.splitlines()[-1]]
    assert "argument --acq-optimizer: invalid choice: 'lbfgs'" in err.splitlines()[-1]
    assert "candidate-search" in err and "gradient-restarts" in err
    assert list(tmp_path.iterdir()) == []


def test_cli_optimize_goes_on_from_an_earlier_run_of_the_same_problem(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "4", "--db", db]) == 0
    (first,) = list_runs(db)
    assert main(["optimize", "--function", "branin", "--surrogate", "gp", "--budget", "1", "--n-init", "3",
                 "--initial-from", str(first.id), "--db", db]) == 0
    later = [r for r in list_runs(db) if r.id != first.id][0]
    assert later.policy_params["initial"] == 4 and later.n_steps == 1  # the four not evaluated again
    capsys.readouterr()
    for args, match in ((["--function", "branin", "--maximize"], "that run's direction is minimize (without "
                                                                  "--maximize), this one's maximize (--maximize) "),
                        (["--function", "hartmann", "--dim", "3"], "objective is 'branin', this one's 'hartmann'"),
                        (["--function", "branin", "--bounds", "[[0, 0], [1, 1]]"], "that run's --bounds are [["),
                        (["--function", "branin", "--initial-from", "99"], "holds no black-box run 99")):
        given = args if "--initial-from" in args else [*args, "--initial-from", str(first.id)]
        assert main(["optimize", *given, "--surrogate", "random", "--budget", "1", "--db", db]) == 2
        assert match in capsys.readouterr().err


def test_cli_optimize_takes_a_name_an_optimum_and_repeats(tmp_path, monkeypatch, capsys):
    (tmp_path / "noisy.py").write_text("def f(x):\n    return float(sum(v * v for v in x))\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    db = str(tmp_path / "runs.db")
    assert main(["optimize", "--objective", "noisy:f", "--bounds", "[[-1, -1], [1, 1]]", "--surrogate", "gp",
                 "--budget", "6", "--name", "bowl", "--optimal-value", "0", "--no-avoid-repeats", "--db", db]) == 0
    (run,) = list_runs(db)
    assert run.env_params["objective"] == "bowl" and run.env_params["optimal_value"] == 0.0
    assert run.policy_params["avoid_repeats"] is False
    capsys.readouterr()
    assert main(["optimize", "--function", "branin", "--name", "b", "--budget", "1", "--db", db]) == 2
    assert "--name goes with --objective" in capsys.readouterr().err


def test_a_reader_that_stops_reading_ends_the_command_quietly(monkeypatch, capsys):
    # `npbandit report | head`: the write after head exits raises BrokenPipeError; the command
    # stops with the shell's status for SIGPIPE and prints no error of its own
    import npbandit.cli
    from npbandit.cli import report

    def closed_pipe(args):
        raise BrokenPipeError(32, "Broken pipe")

    redirected = []
    monkeypatch.setattr(report, "run", closed_pipe)
    monkeypatch.setattr(npbandit.cli.os, "dup2", lambda fd, to: redirected.append(to))
    monkeypatch.setattr(sys.stdout, "fileno", lambda: 1, raising=False)
    assert main(["report"]) == 128 + int(getattr(signal, "SIGPIPE", 13))
    assert capsys.readouterr().err == "" and redirected == [1]


def test_a_failed_evaluation_s_error_suggests_on_error_skip_and_an_all_failed_run_s_does_not(
        tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(tmp_path))
    write_module(tmp_path, "failing", """
        def f(x):
            raise RuntimeError("solver diverged")
    """)
    base = ["optimize", "--objective", "failing:f", "--bounds", "[[0],[1]]", *RANDOM, "--budget", "3"]
    assert main([*base, "--db", str(tmp_path / "a.db")]) == 2
    err = one_line(capsys.readouterr().err)
    assert "solver diverged" in err and "--on-error skip" in err
    assert main([*base, "--on-error", "skip", "--db", str(tmp_path / "b.db")]) == 2
    err = one_line(capsys.readouterr().err)  # skipping did not help: nothing to suggest
    assert "every one of the 3 evaluations failed" in err and "--on-error skip" not in err


def test_the_result_line_says_how_many_evaluations_failed(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(tmp_path))
    write_module(tmp_path, "sometimes", """
        def f(x):
            if x[0] > 0.5:
                raise RuntimeError("solver diverged")
            return float(x[0])
    """)
    base = ["optimize", "--objective", "sometimes:f", "--bounds", "[[0],[1]]", *RANDOM, "--budget", "4"]
    assert main([*base, "--on-error", "skip", "--db", str(tmp_path / "a.db")]) == 0
    (run,) = list_runs(f"sqlite:///{tmp_path / 'a.db'}")
    failed = sum(step["failed"] for step in run_steps(f"sqlite:///{tmp_path / 'a.db'}", run.id))
    assert 0 < failed < 4
    assert f"after 4 evaluations ({failed} failed)" in capsys.readouterr().out


def test_python_m_npbandit_runs_the_command(monkeypatch, capsys):
    import runpy

    from npbandit import __version__

    monkeypatch.setattr(sys, "argv", ["npbandit", "--version"])
    with pytest.raises(SystemExit) as info:
        runpy.run_module("npbandit", run_name="__main__", alter_sys=True)
    assert info.value.code == 0 and capsys.readouterr().out == f"npbandit {__version__}\n"


def test_a_bad_argument_value_is_a_short_usage_line_and_the_error(tmp_path, capsys):
    for argv, prog in ((["optimize", "--function", "branin", "--budget", "-5"], "npbandit optimize"),
                       (["optimise"], "npbandit")):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        assert capsys.readouterr().err.splitlines() == [f"usage: {prog} ... (see {prog} --help)",
                                                        f"{prog}: error: " + ("argument --budget: expected a positive "
                                                                              "integer, got '-5'" if argv[1:] else
                                                                              "argument command: invalid choice: "
                                                                              "'optimise' (choose from 'demo', "
                                                                              "'optimize', 'bandit', 'report', "
                                                                              "'train', 'models')")]
    assert list(tmp_path.iterdir()) == []


def test_a_warning_while_a_command_runs_is_one_line(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    assert main(["optimize", "--function", "branin", "--surrogate", "gp", "--budget", "2", "--db", db]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "npbandit optimize: warning: --budget 2 does not exceed --n-init 5: every point comes from the Sobol initial "
        "design and the model proposes none; raise budget or lower n_init"]


def counting_objective_run(tmp_path, monkeypatch, module, at, action):
    """``(db, args)`` of ``npbandit optimize`` (Sobol, budget 10) on ``module:f``, a module
    written here whose ``f(x) = sum(x)`` counts its calls in ``tmp_path/calls.txt`` and runs
    the statement ``action`` at call number ``at``."""
    monkeypatch.syspath_prepend(str(tmp_path))
    write_module(tmp_path, module, f"""
        import os, signal
        def f(x):
            with open({str(tmp_path / 'calls.txt')!r}, "a") as log:
                log.write("x\\n")
            if len(open({str(tmp_path / 'calls.txt')!r}).read().split()) == {at}:
                {action}
            return float(x.sum())
    """)
    db = str(tmp_path / "runs.db")
    return db, ["optimize", "--objective", f"{module}:f", "--bounds", "[[0, 0], [1, 1]]", *RANDOM, "--budget", "10",
                "--db", db]


def test_an_interrupted_optimize_says_how_to_go_on(tmp_path, monkeypatch, capsys):
    db, args = counting_objective_run(tmp_path, monkeypatch, "stops", 3, "os.kill(os.getpid(), signal.SIGINT)")
    assert main(args) == 128 + signal.SIGINT
    (run,) = list_runs(db)
    line = one_line(capsys.readouterr().err)
    assert run.status == "interrupted" and line.endswith(
        f"run {run.id} saved all {run.n_steps} and is recorded as interrupted; to go on, run the same command with "
        f"--initial-from {run.id} --budget {10 - run.n_steps} (--budget counts the new evaluations)")
    (tmp_path / "calls.txt").unlink()
    assert main([*args, "--initial-from", str(run.id)]) == 128 + signal.SIGINT  # a continuation stopped in turn
    later = max(r.id for r in list_runs(db))
    assert one_line(capsys.readouterr().err).endswith(
        f"--initial-from {later} --budget {10 - run.n_steps} (--budget counts the new evaluations); run {later} "
        f"continues run {run.id}, and its continuation sees the evaluations of both")


def test_a_failed_optimize_names_its_run_and_says_how_to_go_on(tmp_path, monkeypatch, capsys):
    db, args = counting_objective_run(tmp_path, monkeypatch, "flaky", 4, 'raise RuntimeError("boom")')
    assert main(args) == 2
    (run,) = list_runs(db)
    line = one_line(capsys.readouterr().err)
    assert run.status == "failed" and run.n_steps == 4  # the failed evaluation is a step of the run
    assert line.startswith("npbandit optimize: objective raised RuntimeError: boom at x=")
    assert line.endswith(
        f"(--on-error skip records failed evaluations and goes on); run {run.id} saved 4 evaluations, the failed "
        f"one last, and is recorded as failed; to go on, run the same command with --initial-from {run.id} "
        "--budget 6 (--budget counts the new evaluations)")
    assert main([*args[:-4], "--budget", "6", "--db", db, "--initial-from", str(run.id)]) == 0
    later = list_runs(db)[-1]
    assert later.policy_params["initial"] == 4 and later.n_steps == 6


def test_an_interrupted_bandit_sweep_says_how_to_run_the_rest(tmp_path):
    """The line said only what the interrupted run saved; it now says that the same command
    runs the rest (the completed runs are skipped)."""
    db = str(tmp_path / "runs.db")
    proc = subprocess.Popen([sys.executable, "-m", "npbandit.cli", "bandit", "--policies", "uniform", "--seeds", "0",
                             "1", "--steps", "1000000", "--db", db], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)

    def stepped():  # the first run has a step (the file may exist before its tables do)
        try:
            return any(r.n_steps for r in list_runs(db))
        except Exception:  # noqa: BLE001
            return False

    deadline = time.time() + 120
    while time.time() < deadline and not stepped():
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGINT
    (run,) = list_runs(db)
    assert run.status == "interrupted"
    assert one_line(err).endswith(
        f"run {run.id} saved all {run.n_steps} and is recorded as interrupted; to run the rest, run the same command: "
        "the runs the database holds completed are skipped, the interrupted one runs again")
