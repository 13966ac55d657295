"""The paper-protocol tables say what they measured: each regression row's full training
lineage and checkpoint, the shift rows' checkpoint, and rows of versions no longer shipped
are marked (experiments/benchmarks/regression_ll.py, experiments/benchmarks/shift.py; rendering only, nothing is
scored here)."""

import json

import pytest

from npbandit.surrogates.pretrained import read_card

from .helpers import LAB, load_benchmark

pytestmark = pytest.mark.lab

regression_ll = load_benchmark("regression_ll")
shift = load_benchmark("shift")


def test_a_fine_tuned_rows_steps_count_every_stage_it_descends_from():
    card = read_card("cmanp-gp1d")
    row = {"name": "cmanp-gp1d", "prior": "gp1d", "steps": card["training"]["steps"],
           **regression_ll.provenance(card)}
    stages = [row["steps"], *(s["steps"] for s in row["lineage"])]
    assert None not in stages and len(stages) >= 3  # v4 <- v3 <- v2 <- the widened v1
    assert regression_ll.steps_text(row).startswith(f"{sum(stages):,} (")
    assert any(s.get("widened") for s in row["lineage"])  # the 32-latent v1's steps are counted
    assert regression_ll.recipe_text(row).startswith(f"{card['training']['loss']}, lr ")


def test_rows_of_checkpoints_no_longer_shipped_are_marked():
    card = read_card("tnpd-gp1d")
    current = {"name": "tnpd-gp1d", "prior": "gp1d", "steps": card["training"]["steps"],
               "model": regression_ll.describe(card), "started_from": None,
               "scores": {"rbf": [1.0, 0.01, 1.0], "matern52": [0.5, 0.01, 0.5]}, **regression_ll.provenance(card)}
    stale = {**current, "sha256": "0" * 64}
    text = regression_ll.render([regression_ll.identify(current), regression_ll.identify(stale)],
                                {"gp1d": 10, "wheel": 10})
    assert text.count("| tnpd-gp1d | ours") == 1 and "tnpd-gp1d (an earlier version, sha 00000000" in text
    rows = {"tnpd-gp1d": {"values": [1.0] * 5, "se": [0.01] * 5, "sha256": "0" * 64, "steps": 1, "model": "m"},
            "te-pt-tnp-gp1d": {"values": [1.0] * 5, "se": [0.01] * 5, "sha256": read_card("te-pt-tnp-gp1d")["sha256"],
                               "steps": 1, "model": "m"},
            "lbanp-gp1d": [1.0] * 5}  # a row from before rows recorded their checkpoint
    table = shift.render(rows, 10)
    assert "tnpd-gp1d (an earlier version" in table and "| te-pt-tnp-gp1d | 1 |" in table
    assert "1.000 ± 0.010" in table and "| lbanp-gp1d | - | - | 1.000 |" in table


def test_the_published_regression_rows_are_the_shipped_checkpoints():
    published = json.loads((LAB / "log" / "results" / "regression_ll.json").read_text())
    for row in published["rows"]:
        if not row.get("reference") and row["prior"] == "gp1d":
            assert row.get("sha256") == read_card(row["name"])["sha256"], row["name"]


def test_regression_ll_sends_bo_checkpoints_to_the_yardstick_and_rerenders_without_them(capsys):
    bench = load_benchmark("regression_ll")
    with pytest.raises(SystemExit, match="bo_yardstick.py --models cmanp-bo"):
        bench.main(["--checkpoints", "cmanp-bo", "--no-write"])
    bench.main(["--no-run", "--no-write"])
    text = capsys.readouterr().out
    assert "### 1-D GP" in text and "tnpd-gp1d" in text and "BO prior" not in text and "cmanp-bo |" not in text
