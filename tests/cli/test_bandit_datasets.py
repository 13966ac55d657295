"""``npbandit bandit --datasets``: classification bandits (a bundled data set, a CSV file of
one's own) swept as the wheel is -- logged, skipped when done, reported -- and every option
combination the command refuses, in one line naming the options."""

import hashlib
import re

import pytest
from helpers import tiny_checkpoint

from npbandit.cli import main
from npbandit.storage import list_runs, run_steps

ROWS = "width,height,kind\n1.0,2.0,a\n2.5,0.5,b\n0.2,1.1,a\n3.0,3.0,c\n1.7,0.1,b\n0.9,2.2,c\n"


def one_line(err):
    """stderr without progress-bar redraws; asserts it is one line."""
    lines = [line.rsplit("\r", 1)[-1] for line in err.split("\n") if line.rsplit("\r", 1)[-1].strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture()
def own_csv(tmp_path):
    path = tmp_path / "own.csv"
    path.write_text(ROWS, encoding="utf-8")
    return path


def test_the_command_plays_a_bundled_data_set_and_a_csv_file_skips_them_when_done_and_reports_them(
        tmp_path, own_csv, capsys):
    db = str(tmp_path / "runs.db")
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")  # a per-arm NP of random weights: the pairing, not its play
    args = ["bandit", "--datasets", "iris", str(own_csv), "--label-column", "kind", "--policies", "uniform", "linucb",
            f"{card}-thompson", "--seeds", "0", "1", "--steps", "4", "--db", db]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 13 and "dataset=iris seed=0" in out[0] and "dataset=own.csv seed=1" in out[-2]
    assert out[-1].startswith(f"runs saved in {db}; ")  # and how to see them
    runs = list_runs(db)
    assert all(r.status == "completed" and r.n_steps == 4 and len(run_steps(db, r.id)) == 4 for r in runs)
    assert sorted({r.policy for r in runs}) == ["cmanp-bo-thompson", "linucb", "uniform"]
    assert [r.env_params for r in runs[:6]] == [{"dataset": "iris", "horizon": 4}] * 6
    csv_params = runs[-1].env_params
    assert csv_params["csv"] == "own.csv" and csv_params["csv_path"] == str(own_csv.resolve())
    assert csv_params["csv_sha256"] == hashlib.sha256(own_csv.read_bytes()).hexdigest()
    assert (csv_params["label_column"], csv_params["context_dim"], csv_params["n_arms"]) == ("kind", 2, 3)

    assert main(args) == 0  # again: everything is done
    assert capsys.readouterr().out.startswith("skipping 12 of 12 runs: ") and len(list_runs(db)) == 12
    assert main([*args, "--rerun"]) == 0 and len(list_runs(db)) == 24
    capsys.readouterr()

    assert main(["report", "--db", db]) == 0
    report = capsys.readouterr().out
    table = report[report.index("Bandits (completed runs"):].splitlines()[3:]
    iris = [line for line in table if line.startswith("ClassificationBandit-v0 dataset=iris ")]
    own = [line for line in table if "csv=own.csv " in line]
    rows = [line for line in table if not line.startswith("  ")]
    assert len(iris) == len(own) == 3 and len(rows) == 6  # one row per data set and policy
    # --rerun repeated every run, and each row says so
    assert table.count("  (seeds run more than once, each run counted: seed 0 x2, seed 1 x2)") == 6
    # 4 rounds, one of the three policies, 4 runs (2 seeds, each twice)
    assert all(re.search(r" 4  (uniform|linucb|cmanp-bo-thompson) +4 ", line) for line in iris + own), iris + own
    assert all("csv=own.csv" in line for line in report.splitlines() if "context_dim=2 n_arms=3" in line)


def test_a_data_set_without_policies_plays_the_per_arm_np_and_the_baselines(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    assert main(["bandit", "--datasets", "iris", "--steps", "3", "--db", db]) == 0
    assert [r.policy for r in list_runs(db)] == ["cmanp-bo-ucb", "uniform", "linucb"]
    assert main(["bandit", "--policies", "uniform", "--steps", "3", "--db", db]) == 0  # the wheel, at its delta
    assert list_runs(db)[-1].env_params == {"delta": 0.5, "horizon": 3}


@pytest.mark.parametrize("extra,csv_text,message", [
    (["--datasets", "{tmp}/nope.csv"], None, "--datasets: '{tmp}/nope.csv' is neither a data set (iris, wine, "
                                             "breast-cancer, digits, synthetic) nor a file"),
    (["--datasets", "irs"], None, "-- did you mean 'iris'?"),
    (["--datasets", "{csv}"], ROWS, "--datasets {csv} is a CSV file: --label-column NAME is required"),
    (["--datasets", "{csv}", "--label-column", "class"], ROWS,
     "--datasets {csv} --label-column class: label_column 'class' is not a column of {csv}; its columns: width, "
     "height, kind"),
    (["--datasets", "{csv}", "--label-column", "kind"], "width,colour,kind\n1,2,a\n1,red,b\n",
     "--label-column kind: feature column 'colour' of {csv} is not numeric: line 3 holds 'red'"),
    (["--datasets", "{csv}", "--label-column", "kind"], "width,height,kind\n1,2,a\n1,nan,b\n2,,a\n",
     "--label-column kind: feature column 'height' of {csv} has 2 missing, NaN or infinite value(s) (line(s) 3, 4)"),
    (["--datasets", "{csv}", "--label-column", "kind"], "width,kind\n1,a\n2,a\n",
     "--label-column kind: label column 'kind' of {csv} holds 1 class ('a'); a bandit needs at least 2"),
    (["--datasets", "iris", "--deltas", "0.9"], None,
     "--deltas is the wheel's, and --datasets plays data sets instead of the wheel"),
    (["--datasets", "iris", "--label-column", "kind"], None,
     "--label-column goes with a CSV file given to --datasets, and iris is a bundled data set"),
    (["--label-column", "kind"], None, "--label-column goes with a CSV file given to --datasets (the wheel"),
    (["--deltas", "0.5", "1.5"], None, "--deltas must be in [0, 1], got 1.5"),
    # a wheel checkpoint refuses another bandit's shape, in one line, also before a cluster is reached
    (["--datasets", "iris", "--policies", "uniform", "cmanp-wheel"], None,
     "bandit policy 'cmanp-wheel' needs a 'wheel' checkpoint with 4 inputs and 3 outputs"),
    (["--datasets", "iris", "--policies", "cmanp-wheel", "--dask-scheduler", "tcp://127.0.0.1:9"], None,
     "bandit policy 'cmanp-wheel' needs a 'wheel' checkpoint with 4 inputs and 3 outputs"),
])
def test_what_the_command_cannot_run_is_one_line_naming_the_options(tmp_path, capsys, extra, csv_text, message):
    csv = tmp_path / "data.csv"
    if csv_text is not None:
        csv.write_text(csv_text, encoding="utf-8")
    extra = [a.replace("{tmp}", str(tmp_path)).replace("{csv}", str(csv)) for a in extra]
    db = tmp_path / "runs.db"
    assert main(["bandit", *extra, "--steps", "3", "--db", str(db)]) == 2
    expected = message.replace("{tmp}", str(tmp_path)).replace("{csv}", str(csv))
    assert expected in one_line(capsys.readouterr().err)
    assert not db.exists()  # refused before any run
