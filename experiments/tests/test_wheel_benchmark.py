"""experiments/benchmarks/wheel.py: which stored runs each row counts, and where a section is published."""

import json
from pathlib import Path

import pytest

from .helpers import load_benchmark, tiny_checkpoint

pytestmark = pytest.mark.lab


def test_wheel_benchmark_finds_runs_under_any_name_of_their_policy(tmp_path):
    """experiments/benchmarks/wheel.py's rows: ``-ucb`` spelled out, a bare model name and a checkpoint
    path find the runs stored under the card's name (before, such rows printed '-')."""
    bench = load_benchmark("wheel")
    assert bench.run_key("cmanp-and-wheel-ucb") == bench.run_key("cmanp-and-wheel") == "cmanp-and-wheel"
    assert bench.run_key("cmanp") == "cmanp-wheel" and bench.run_key("uniform") == "uniform"
    path = tiny_checkpoint(tmp_path, "cmanp-and", "wheel")
    name = json.loads(path.read_text())["name"]
    assert bench.run_key(f"{path}-thompson") == f"{name}-thompson"
    assert bench.run_key(f"{path}-ucb") == bench.run_key(str(path)) == name


def test_wheel_benchmark_keeps_a_training_runs_card_apart_from_the_shipped_checkpoint(tmp_path):
    """A card path whose card is named like a shipped checkpoint (a training run's export):
    its runs count when that path is asked for, are not re-run, and are not mixed into the
    shipped checkpoint's row (before, they were never summarised and re-ran every time)."""
    bench = load_benchmark("wheel")
    path = str(tiny_checkpoint(tmp_path, "cmanp", "wheel"))
    assert json.loads(Path(path).read_text())["name"] == "cmanp-wheel"
    db = f"sqlite:///{tmp_path / 'wheel.db'}"
    for policy in (path, "uniform"):
        bench._one(policy, 0.5, 0, 20, db)
    assert bench._done(db, 20, [path, "uniform"]) == {("cmanp-wheel", 0.5, 0), ("uniform", 0.5, 0)}
    assert bench._done(db, 20, ["cmanp-wheel", "uniform"]) == {("uniform", 0.5, 0)}
    ours = bench.summarise(db, 20, [0.5], [path, "uniform"], 1)
    assert ours[f"{path}@0.5"]["runs"] == 1 and ours["uniform@0.5"]["cumulative"][0] == 100.0
    assert "cmanp-wheel@0.5" not in bench.summarise(db, 20, [0.5], ["cmanp-wheel", "uniform"], 1)


def test_wheel_benchmark_section_publishes_beside_the_main_table(tmp_path, monkeypatch):
    """``--section NAME`` writes its own section, JSON and figure and leaves the main
    table (section 'wheel') alone, naming its policies in the heading and the command."""
    bench = load_benchmark("wheel")
    published = []
    monkeypatch.setattr(bench, "publish", lambda section, text, json_name, command, payload, **kw:
                        published.append((section, text, json_name, command)))
    monkeypatch.setattr(bench, "plot", lambda summary, deltas, policies, name="wheel_regret": published.append(name))
    db = f"sqlite:///{tmp_path / 'wheel.db'}"
    bench._one("uniform", 0.5, 0, 20, db)  # here, not in the script's worker processes
    bench.main(["--seeds", "1", "--steps", "20", "--deltas", "0.5", "--policies", "uniform", "--no-run",
                "--db", db, "--section", "wheel-extra"])
    figure, (section, text, json_name, command) = published
    assert (section, json_name, figure) == ("wheel-extra", "wheel_extra.json", "wheel_extra_regret")
    # the runs are in another database than the default: the command names it, so it reproduces the table
    assert command.endswith(f"--policies uniform --section wheel-extra --seeds 1 --db {db}")
    assert text.startswith("### Wheel bandit, uniform") and "figures/wheel_extra_regret.png" in text
    assert "| uniform (ours) | 100.00 ± 0.00 |" in text


def test_wheel_benchmark_first_seed_summarises_only_its_own_seeds(tmp_path, monkeypatch):
    """``--first-seed`` (a choosing run on reward tables the published table never uses): the
    summary counts the runs of seeds first-seed .. first-seed + seeds - 1 and no others, both ways."""
    bench = load_benchmark("wheel")
    db = f"sqlite:///{tmp_path / 'wheel.db'}"
    for seed in (0, 7):
        bench._one("uniform", 0.5, seed, 20, db)
    assert bench.summarise(db, 20, [0.5], ["uniform"], 1)["uniform@0.5"]["runs"] == 1
    assert bench.summarise(db, 20, [0.5], ["uniform"], 1, first_seed=7)["uniform@0.5"]["runs"] == 1
    assert bench.summarise(db, 20, [0.5], ["uniform"], 8)["uniform@0.5"]["runs"] == 2
    assert "uniform@0.5" not in bench.summarise(db, 20, [0.5], ["uniform"], 6, first_seed=1)
    published = []
    monkeypatch.setattr(bench, "publish", lambda *a, **kw: published.append(a[3]))
    monkeypatch.setattr(bench, "plot", lambda *a, **kw: None)
    bench.main(["--seeds", "1", "--first-seed", "7", "--steps", "20", "--deltas", "0.5", "--policies", "uniform",
                "--no-run", "--db", db])
    assert published[0].endswith(f"--seeds 1 --first-seed 7 --db {db}")  # the command reproduces the table
