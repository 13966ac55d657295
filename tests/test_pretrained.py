"""Checkpoints: no-pickle round trip, integrity checks, and the shipped set."""

import json
from pathlib import Path

import pytest
import torch

from npbandit import load_surrogate
from npbandit.cli import main
from npbandit.surrogates import build
from npbandit.surrogates.pretrained import CheckpointError, available_checkpoints, read_card, save_pretrained

SHIPPED = {"cmanp-gp1d", "cmanp-bo", "cmanp-wheel", "lbanp-gp1d", "lbanp-wheel", "tnpd-gp1d", "tnpd-wheel"}


def saved(tmp_path, name="cmanp"):
    torch.manual_seed(0)
    model = build(name, 2, 1, size="tiny").eval()
    card = save_pretrained(model, tmp_path, f"{name}-test", prior={"name": "test"}, training={"steps": 0},
                           evaluation={"log_likelihood": {}})
    return model, card


@pytest.mark.parametrize("name", ["cmanp", "lbanp", "tnpd", "te-pt-tnp"])
def test_round_trip_gives_identical_outputs(tmp_path, name):
    model, card = saved(tmp_path, name)
    loaded = load_surrogate(card)
    x, y, xt = torch.rand(2, 9, 2), torch.rand(2, 9, 1), torch.rand(2, 4, 2)
    a = model.predict(model.condition(x, y), xt)
    b = loaded.predict(loaded.condition(x, y), xt)
    assert torch.equal(a.loc, b.loc) and torch.equal(a.scale, b.scale)
    assert loaded.card["model"] == name and not loaded.training
    assert load_surrogate(tmp_path / f"{name}-test.safetensors").card["sha256"] == loaded.card["sha256"]


def test_corrupted_weights_are_refused(tmp_path):
    _, card = saved(tmp_path)
    weights = card.with_suffix(".safetensors")
    data = bytearray(weights.read_bytes())
    data[-10] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="sha256"):
        load_surrogate(card)


def test_missing_files_are_reported(tmp_path):
    _, card = saved(tmp_path)
    card.with_suffix(".safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="weights file"):
        load_surrogate(card)
    with pytest.raises(FileNotFoundError, match="shipped"):
        load_surrogate("no-such-model")
    with pytest.raises(TypeError, match="name_or_path"):
        load_surrogate(3)


def test_config_mismatch_is_refused(tmp_path):
    _, card = saved(tmp_path)
    data = json.loads(card.read_text())
    data["config"]["n_layers"] += 1
    card.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="do not match the config"):
        load_surrogate(card)
    data["config"]["n_layerz"] = 1
    card.write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="config does not build"):
        load_surrogate(card)
    card.write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_surrogate(card)


def test_every_shipped_checkpoint_loads_and_matches_its_card():
    names = set(available_checkpoints())
    assert SHIPPED <= names, f"missing shipped checkpoints: {sorted(SHIPPED - names)}"
    for name in sorted(names):
        card = read_card(name)
        model = load_surrogate(name)  # verifies the sha256 and the config
        assert (card["weights"] and model.x_dim == card["x_dim"] and model.y_dim == card["y_dim"])
        assert card["prior"]["name"] == name.rsplit("-", 1)[1]
        assert card["training"]["steps"] > 0 and card["evaluation"]["log_likelihood"]
        weights = Path(card["_path"]).with_name(card["weights"])
        assert weights.stat().st_size <= 5 * 1024 * 1024


def test_cli_lists_shipped_models(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for name in available_checkpoints():
        assert name in out
