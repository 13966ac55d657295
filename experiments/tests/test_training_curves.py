"""experiments/benchmarks/training_curves.py: the learning-curve table of `npbandit train` runs."""

import json

import pytest

from npbandit.training import TrainConfig, train

from .helpers import load_benchmark

pytestmark = pytest.mark.lab


def test_gp1d_expected_loss_trains_and_its_curve_renders(tmp_path):
    """gp1d batches carry the exact moments, so --loss expected runs there; the run's periodic
    evaluations come out of experiments/benchmarks/training_curves.py as a table with one column per kernel."""
    config = TrainConfig(model="tnpd", prior="gp1d", steps=30, out=str(tmp_path / "run"), size="tiny", eval_every=15,
                         eval_batches=2, final_eval_batches=2, checkpoint_every=10, loss="expected")
    result = train(config, progress=False)
    assert json.loads(result.card.read_text())["training"]["loss"] == "expected"
    curves = load_benchmark("training_curves")
    runs = curves.load_runs([tmp_path / "run"])
    assert [e["step"] for e in runs["run"]["log"]] == [15, 30]
    keys = curves.suite_entries(runs)
    assert "rbf" in keys and "matern52" in keys
    text = curves.table(runs, keys)
    last = runs["run"]["log"][-1]["eval_ll"]["rbf"]
    assert "| run | 30 |" in text and f"{last:.3f}" in text
    with pytest.raises(FileNotFoundError, match="train_state.json"):
        curves.load_runs([tmp_path])
