"""``npbandit models CHECKPOINT ...``: one's own checkpoints in the table the shipped ones get,
beside a shipped one when it is named too, and refused as ``load_surrogate`` refuses them."""

import json
import re

import pytest
from helpers import Lines, registered_prior, tiny_checkpoint

from npbandit.cli import main
from npbandit.surrogates import build
from npbandit.surrogates.pretrained import available_checkpoints, save_pretrained


def _rows(out: str) -> dict[str, str]:
    return {line.split()[0]: line for line in out.splitlines() if line.strip()}


def test_own_checkpoints_are_listed_under_their_path_alone_or_beside_a_shipped_one(tmp_path, capsys):
    card = tiny_checkpoint(tmp_path)  # named cmanp-bo, as a shipped checkpoint is
    for given in (card, card.with_suffix(".safetensors"), card.with_suffix("")):
        assert main(["models", str(given)]) == 0
        rows = _rows(capsys.readouterr().out)
        assert str(card.with_suffix("")) in rows and "cmanp-bo" not in rows
        assert rows[str(card.with_suffix(""))].split()[1:3] == ["cmanp", "1..6->1"]
    assert main(["models", str(card), "cmanp-bo", str(card)]) == 0  # a checkpoint named twice is listed once
    rows = _rows(capsys.readouterr().out)
    assert {str(card.with_suffix("")), "cmanp-bo"} <= set(rows)
    assert sum(name == str(card.with_suffix("")) for name in rows) == 1
    assert set(available_checkpoints()) - {"cmanp-bo"} - set(rows)  # the shipped ones not named are not listed


@pytest.mark.parametrize("given, message", [
    ("nowhere/mine", r"no checkpoint 'nowhere/mine'.*no card at nowhere/mine\.json"),
    ("cmanp-boo", r"did you mean 'cmanp-bo'"),
])
def test_an_unknown_checkpoint_is_one_line_as_load_surrogate_says_it(given, message, capsys):
    assert main(["models", given]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("npbandit models: ")
    assert re.search(message, err)


def test_a_card_without_its_weights_is_refused_naming_the_file(tmp_path, capsys):
    card = tiny_checkpoint(tmp_path)
    card.with_suffix(".safetensors").unlink()
    assert main(["models", str(card)]) == 2
    assert "cmanp-bo.safetensors" in capsys.readouterr().err


def test_a_checkpoint_of_a_prior_not_registered_here_is_listed_saying_so(tmp_path, capsys):
    with registered_prior(Lines):
        card = save_pretrained(build("tnpd", 1, 1, size="tiny"), tmp_path, "tnpd-lines", prior=Lines().spec(),
                               training={"steps": 1}, evaluation={"log_likelihood": {"lines": 0.5},
                                                                  "prior_params": {}, "batch_size": 16})
        assert main(["models", str(card)]) == 0
        registered = capsys.readouterr().out
    assert "prior test-lines" in registered and "not registered" not in registered
    assert main(["models", str(card)]) == 0
    out = capsys.readouterr().out
    assert "prior test-lines" in out and "a prior this process has not registered (--plugin MODULE)" in out
    assert _rows(out)[str(card.with_suffix(""))].split()[-1] == "0.500"
    assert json.loads(card.read_text())["name"] == "tnpd-lines"  # the card itself is left as it was
