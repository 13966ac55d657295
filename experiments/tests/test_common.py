"""experiments/benchmarks/common.py: the run record a script resumes from, a paired comparison's
cell, a profile's summaries, and a sweep's response to SIGTERM (the driver stops at once, abandoning
its running jobs; no pool worker outlives it)."""

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from .helpers import LAB, left_in_session, load_benchmark

pytestmark = pytest.mark.lab


def test_a_run_record_keeps_results_and_reruns_only_what_is_missing_or_outdated(tmp_path):
    RunRecord = load_benchmark("common").RunRecord
    calls = []
    record = RunRecord(tmp_path / "sub" / "runs.json")
    assert record.get("a", lambda: calls.append("a") or {"v": 1}) == {"v": 1}
    again = RunRecord(tmp_path / "sub" / "runs.json")  # a later call of the script
    assert again.get("a", lambda: calls.append("a again") or {"v": 2}) == {"v": 1}
    assert again.get("a", lambda: calls.append("redo") or {"v": 3, "trace": []}, redo=lambda r: "trace" not in r) \
        == {"v": 3, "trace": []}
    assert calls == ["a", "redo"] and RunRecord(tmp_path / "sub" / "runs.json").runs == {"a": {"v": 3, "trace": []}}



def test_a_paired_cell_is_the_median_difference_and_the_seeds_that_ended_lower_of_those_both_ran():
    paired_cell = load_benchmark("common").paired_cell
    mine = {"final": [-3.0, -2.0, -1.0], "final_by_seed": {"0": -3.0, "1": -2.0, "2": -1.0}}
    theirs = {"final": [-4.0, -1.0, 0.0], "final_by_seed": {"0": -4.0, "1": -1.0, "3": 0.0}}
    assert paired_cell(mine, theirs) == "-1.00 (1/2)"  # -2.0 - (-1.0); of seeds 0 and 1, lower on 1
    assert paired_cell(theirs, mine) == "+1.00 (1/2)"
    assert paired_cell(mine, None) == paired_cell(None, theirs) == paired_cell({}, theirs) == "-"


def test_a_profile_is_summed_by_package_and_its_top_functions_begin_at_the_header():
    import cProfile
    import pstats

    common = load_benchmark("common")
    profiler = cProfile.Profile()
    profiler.enable()
    sorted(range(10_000), key=lambda v: -v)
    profiler.disable()
    stats = pstats.Stats(profiler)
    by = common.own_seconds_by_package(stats, (("sorted", "sorting"),), per=2)
    assert "sorting" in by and set(by) <= {"sorting", "other (Python, numpy, ...)"}
    assert sum(by.values()) == pytest.approx(sum(row[2] for row in stats.stats.values()) / 2)  # every function once
    assert list(by.values()) == sorted(by.values(), reverse=True)
    rows = common.top_functions(profiler, 2)
    assert rows[0].split()[:2] == ["ncalls", "tottime"] and 2 <= len(rows) <= 3


def test_a_jsonl_study_runs_only_the_missing_cells_and_summarises_its_file(tmp_path, capsys, keep_threads):
    import argparse

    common = load_benchmark("common")
    calls = []

    def study(argv):
        parser = argparse.ArgumentParser()
        parser.add_argument("--seeds", type=int, default=2)
        common.jsonl_study(parser, argv, command="python study.py", default_out=tmp_path / "default.jsonl",
                           keys=("seed",), cells=lambda args: [{"seed": s} for s in range(args.seeds)],
                           run=lambda args, cell: calls.append(cell["seed"]) or {"seed": cell["seed"], "v": 10},
                           describe=lambda row: f"seed {row['seed']} done",
                           summarise=lambda path: f"{len(common.jsonl_rows(path))} rows in {path.name}")

    out = tmp_path / "sub" / "study.jsonl"
    study(["--seeds", "2", "--out", str(out)])
    first = capsys.readouterr().out.splitlines()
    assert first[0] == f"# python study.py --seeds 2 --out {out}" and first[2:] == [
        "seed 0 done", "seed 1 done", "2 rows in study.jsonl"]
    study(["--seeds", "3", "--out", str(out)])  # resumed: only seed 2 runs
    assert calls == [0, 1, 2] and capsys.readouterr().out.splitlines()[2:] == ["seed 2 done", "3 rows in study.jsonl"]
    study(["--summarise", str(out)])  # runs nothing, prints the table only
    assert calls == [0, 1, 2] and capsys.readouterr().out == "3 rows in study.jsonl\n"
    assert common.jsonl_rows(out) == [{"seed": s, "v": 10} for s in range(3)]
    assert not (tmp_path / "default.jsonl").exists()


SWEEP = """
import sys, time
from pathlib import Path
sys.path.insert(0, {benchmarks!r})
from common import run_jobs

def job(i):
    Path({out!r}, f"started-{{i}}").touch()
    time.sleep(30)  # far longer than the driver takes to stop: a job that ends was waited for
    Path({out!r}, f"finished-{{i}}").touch()

if __name__ == "__main__":
    try:
        run_jobs(job, [(i,) for i in range(8)], workers=1, desc="sweep")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


@pytest.mark.parametrize("whole_group", [False, True])
@pytest.mark.integration
@pytest.mark.slow
def test_a_sweep_sent_sigterm_stops_at_once_and_leaves_no_worker_behind(tmp_path, whole_group):
    # `kill PID` signals the driver alone; `kill -- -PGID`, `pkill -f` and Ctrl-C (SIGINT) reach its
    # pool workers too, which must leave the stopping to the driver (they once all waited forever).
    # The driver abandons the running job: waiting for it kept the script alive for a whole run,
    # long enough to be killed outright, and its worker then finished the run on its own
    script = tmp_path / "sweep.py"
    benchmarks = LAB / "benchmarks"
    script.write_text(SWEEP.format(benchmarks=str(benchmarks), out=str(tmp_path)))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started-0").exists():
            assert time.monotonic() < deadline and proc.poll() is None, "the first job never started"
            time.sleep(0.05)
        if whole_group:
            os.killpg(proc.pid, signal.SIGTERM)  # start_new_session: the sweep leads its own group
        else:
            os.kill(proc.pid, signal.SIGTERM)  # the parent alone, as `kill PID` does
        out, _ = proc.communicate(timeout=120)  # seconds, unless hung
        assert "interrupted" in out
        # the running job was abandoned (its worker killed) and nothing new began
        assert {p.name for p in tmp_path.glob("started-*")} == {"started-0"}
        assert not list(tmp_path.glob("finished-*"))
        alive = left_in_session(proc.pid)
    finally:  # whatever failed above, no process of the sweep outlives the test
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert alive == [], f"processes left in the sweep's session: {alive}"
