"""Checkpoints: no-pickle round trip, integrity checks, and the shipped set."""

import hashlib
import json
import re
from pathlib import Path

import pytest
import torch
from helpers import tiny_checkpoint
from safetensors.torch import load_file, save_file

from npbandit import load_surrogate
from npbandit.cli import main
from npbandit.surrogates import build
from npbandit.surrogates.pretrained import (
    CheckpointError,
    UnknownCheckpointError,
    available_checkpoints,
    check_checkpoint_kind,
    checkpoint_use,
    fitting_checkpoints,
    read_card,
    save_pretrained,
)

SHIPPED = {"cmanp-gp1d", "cmanp-bo", "cmanp-wheel", "lbanp-gp1d", "lbanp-wheel", "tnpd-gp1d", "tnpd-wheel"}


def saved(tmp_path, name="cmanp"):
    torch.manual_seed(0)
    model = build(name, 2, 1, size="tiny").eval()
    card = save_pretrained(model, tmp_path, f"{name}-test", prior={"name": "test"}, training={"steps": 0},
                           evaluation={"log_likelihood": {}})
    return model, card


@pytest.mark.parametrize("name", ["cmanp", "cmanp-and", "lbanp", "tnpd", "te-pt-tnp"])
def test_round_trip_gives_identical_outputs(tmp_path, name):
    model, card = saved(tmp_path, name)
    loaded = load_surrogate(card)
    x, y, xt = torch.rand(2, 9, 2), torch.rand(2, 9, 1), torch.rand(2, 4, 2)
    a = model.predict(model.condition(x, y), xt)
    b = loaded.predict(loaded.condition(x, y), xt)
    assert torch.equal(a.loc, b.loc) and torch.equal(a.scale, b.scale)
    assert loaded.card["model"] == name and not loaded.training
    assert load_surrogate(tmp_path / f"{name}-test.safetensors").card["sha256"] == loaded.card["sha256"]


def test_a_loaded_network_is_frozen_unless_asked_to_train(tmp_path):
    # inference callers (NPModel, BOPolicy, NPSampler) differentiate in the inputs only
    _, card = saved(tmp_path)
    frozen = load_surrogate(card)
    assert not any(p.requires_grad for p in frozen.parameters())
    x, y = torch.rand(1, 9, 2), torch.rand(1, 9, 1)
    xt = torch.rand(1, 4, 2, requires_grad=True)
    frozen.predict(frozen.condition(x, y), xt).loc.sum().backward()
    assert xt.grad is not None and all(p.grad is None for p in frozen.parameters())
    trainable = load_surrogate(card, requires_grad=True)
    assert all(p.requires_grad for p in trainable.parameters())
    trainable.predict(trainable.condition(x, y), xt).loc.sum().backward()
    assert all(p.grad is not None for p in trainable.parameters() if p.requires_grad)
    with pytest.raises(TypeError, match="requires_grad"):
        load_surrogate(card, requires_grad="yes")


def test_corrupted_weights_are_refused(tmp_path):
    _, card = saved(tmp_path)
    weights = card.with_suffix(".safetensors")
    data = bytearray(weights.read_bytes())
    data[-10] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="sha256") as err:
        load_surrogate(card)
    assert str(weights) in str(err.value)  # the full path: the file to look at, wherever the run was started


def _rehash(card):
    """Write the weights' current sha256 into ``card``: the damage goes past the hash check."""
    data = json.loads(card.read_text())
    data["sha256"] = hashlib.sha256(card.with_suffix(".safetensors").read_bytes()).hexdigest()
    card.write_text(json.dumps(data))


@pytest.mark.parametrize("keep", [0.5, 0.99, 20, 4])
def test_a_truncated_weights_file_whose_hash_matches_is_a_checkpoint_error(tmp_path, keep):
    # once a 23-line SafetensorError traceback; `keep`: the fraction (or the bytes) left
    _, card = saved(tmp_path)
    weights = card.with_suffix(".safetensors")
    data = weights.read_bytes()
    weights.write_bytes(data[:int(len(data) * keep) if isinstance(keep, float) else keep])
    _rehash(card)
    with pytest.raises(CheckpointError, match=r"checkpoint 'cmanp-test': weights file .*cmanp-test\.safetensors "
                                              r"is damaged"):
        load_surrogate(card)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused_at_load_naming_the_tensor(tmp_path, value):
    # once loaded, and failed only after the initial design, in a message that did not name the checkpoint
    _, card = saved(tmp_path)
    weights = card.with_suffix(".safetensors")
    tensors = load_file(str(weights))
    name = sorted(tensors)[len(tensors) // 2]
    tensors[name].view(-1)[0] = value
    save_file(tensors, str(weights), metadata={"format": "npbandit-checkpoint/1"})
    _rehash(card)
    with pytest.raises(CheckpointError, match=rf"checkpoint 'cmanp-test': weights file .*cmanp-test\.safetensors "
                                              rf"holds 1 non-finite value\(s\) in tensor '{re.escape(name)}'"):
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


@pytest.mark.slow
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


def test_cli_counts_the_steps_of_the_checkpoints_a_model_started_from(capsys):
    assert main(["models"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    training = read_card("cmanp-gp1d")["training"]  # v5: a fine-tune of v4, of v3, of the 100k-step v2
    earlier, source = 0, training["init_from"]
    while source is not None:  # every checkpoint of the chain, each counted once
        earlier, source = earlier + (source["steps"] or 0), source["init_from"]
    assert earlier == 130_000 and f"{training['steps']:,} (+{earlier:,})" in rows["cmanp-gp1d"]
    assert read_card("tnpd-gp1d")["training"]["init_from"] is None  # trained from scratch: no brackets
    assert rows["tnpd-gp1d"].split()[4] == "100,000" and "(+" not in rows["tnpd-gp1d"]


def test_a_card_says_what_its_checkpoint_is_for(tmp_path):
    card = read_card(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    assert card["use"] == checkpoint_use({k: v for k, v in card.items() if k != "use"})  # written = derived
    assert card["use"]["prior"] == "bo" and card["use"]["x_dims"] == [1, 2, 3, 4, 5, 6]
    assert card["use"]["standardizes_outputs"] is True and card["use"]["input_domain"] == [0.0, 1.0]
    for name in available_checkpoints():  # shipped cards predate the "use" block: derived from the prior
        use = checkpoint_use(read_card(name))
        assert use["prior"] == name.rsplit("-", 1)[1] and use["standardizes_outputs"] == (use["prior"] == "bo")


def test_check_checkpoint_kind_names_what_fits():
    check_checkpoint_kind(read_card("cmanp-bo"), prior="bo", x_dim=3, y_dim=1)
    check_checkpoint_kind(read_card("tnpd-wheel"), prior=("wheel",), x_dim=2, y_dim=5)
    with pytest.raises(CheckpointError,
                       match=r"^optimize needs a 'bo' checkpoint with 2 inputs and 1 output; checkpoint 'tnpd-gp1d' "
                             r"has prior 'gp1d' \(not 'bo'\) and 1 input \(not 2\)\. It is for 1-D regression.*1 raw "
                             r"output\. Shipped checkpoints that fit: cmanp-and-bo, cmanp-bo, retreever-bo, "
                             r"te-pt-tnp-bo"):
        check_checkpoint_kind(read_card("tnpd-gp1d"), prior="bo", x_dim=2, y_dim=1, purpose="optimize")
    with pytest.raises(CheckpointError, match=r"with 7 inputs; checkpoint 'cmanp-bo' has 1 to 6 inputs \(not 7\)\. .*"
                                              r"No shipped checkpoint fits\.$"):
        check_checkpoint_kind(read_card("cmanp-bo"), prior="bo", x_dim=7)
    with pytest.raises(CheckpointError, match="fit: cmanp-and-wheel, cmanp-wheel, lbanp-wheel, tnpd-wheel"):
        check_checkpoint_kind(read_card("cmanp-bo"), prior="wheel", y_dim=5)
    with pytest.raises(ValueError, match="x_dim"):
        check_checkpoint_kind(read_card("cmanp-bo"), x_dim=0)
    assert fitting_checkpoints(prior="gp1d") == [n for n in available_checkpoints() if n.endswith("-gp1d")]


def test_unknown_names_get_a_suggestion_and_missing_files_are_named(tmp_path):
    with pytest.raises(UnknownCheckpointError, match="did you mean 'cmanp-bo'"):
        load_surrogate("cmanp-b0")
    _, card = saved(tmp_path)
    card.unlink()  # the weights are still there: the card is missing, the name is not unknown
    with pytest.raises(FileNotFoundError, match="card .* is missing") as info:
        load_surrogate(tmp_path / "cmanp-test")
    assert not isinstance(info.value, UnknownCheckpointError)


def test_a_bandit_policy_refuses_a_checkpoint_of_another_prior():
    from npbandit.policies import NPBanditPolicy

    with pytest.raises(CheckpointError, match="NPBanditPolicy needs a 'wheel' checkpoint"):
        NPBanditPolicy(load_surrogate("cmanp-bo"))


def test_a_refused_checkpoint_is_told_what_it_misses_of_what_was_asked():
    from npbandit.surrogates.pretrained import check_checkpoint_kind, read_card

    # NPModel takes a wheel checkpoint for 5 outputs: refused for one, the message says it is the outputs
    with pytest.raises(CheckpointError, match=r"^NPModel needs a 'gp1d', 'bo' or 'wheel' checkpoint with 1 output; "
                                              r"checkpoint 'cmanp-wheel' has 5 outputs \(not 1\)\. It is for "
                                              r".* Shipped"):
        check_checkpoint_kind(read_card("cmanp-wheel"), prior=("gp1d", "bo", "wheel"), y_dim=1, purpose="NPModel")
    with pytest.raises(CheckpointError, match=r"has prior 'bo' \(not 'wheel' or 'gp1d'\) and 1 to 6 inputs "
                                              r"\(not 7\)\. It is for"):
        check_checkpoint_kind(read_card("cmanp-bo"), prior=("wheel", "gp1d"), x_dim=7, purpose="this use")


@pytest.mark.parametrize("name", ["", "   "])
def test_an_empty_checkpoint_name_is_one_line_naming_the_argument(name):
    with pytest.raises(ValueError, match="name_or_path must be a checkpoint name or a path, got an empty string"):
        load_surrogate(name)
