"""A refused ``init_from`` (``npbandit train --init-from``) says the model, size and config
overrides with which the run does start from the checkpoint -- only where some do: a source
whose inputs or outputs are not the run's is told so instead."""

import re

import pytest

from npbandit.cli import main
from npbandit.surrogates import build
from npbandit.surrogates.pretrained import load_surrogate, save_pretrained
from npbandit.training import TrainConfig, train


def _source(directory, model="tnpd", x_dim=1, **config):
    net = build(model, x_dim, 1, size="tiny", **config)
    return save_pretrained(net, directory, "source", prior={"name": "gp1d"}, training={"steps": 1},
                           evaluation={})


def _refusal(tmp_path, card, **kw) -> str:
    config = dict(model="tnpd", prior="gp1d", steps=1, out=str(tmp_path / "run"), size="small", init_from=str(card))
    config.update(kw)
    with pytest.raises(ValueError, match="init_from") as err:
        train(TrainConfig(**config), progress=False)
    assert not (tmp_path / "run").exists()  # refused before anything ran
    return str(err.value)


@pytest.mark.parametrize("source, run, hint, model, size, sets", [
    ({}, {}, "size 'tiny', model_config {} (on the command line: --size tiny)", "tnpd", "tiny", {}),
    ({"emb_depth": 3}, {"model_config": {"min_std": 0.01}},  # the run's min_std is the source's again
     "size 'tiny', model_config {'min_std': 0.001, 'emb_depth': 3} (on the command line: --size tiny --set "
     "min_std=0.001 --set emb_depth=3)", "tnpd", "tiny", {"min_std": 0.001, "emb_depth": 3}),
    ({"model": "cmanp", "n_latents": 4}, {"model": "cmanp-and", "model_config": {"rank": 3}},  # its own field kept
     "size 'tiny', model_config {'rank': 3, 'n_latents': 4} (on the command line: --size tiny --set rank=3 --set "
     "n_latents=4)", "cmanp-and", "tiny", {"rank": 3, "n_latents": 4}),
    ({}, {"model": "cmanp"}, "model 'tnpd', size 'tiny', model_config {} (on the command line: --model tnpd --size "
     "tiny)", "tnpd", "tiny", {}),
])
def test_the_settings_that_start_from_the_source_are_said_and_do(tmp_path, source, run, hint, model, size, sets):
    card = _source(tmp_path, **source)
    message = _refusal(tmp_path, card, **run)
    assert message.endswith(f"; to start from it, train with {hint}"), message
    build(model, 1, 1, size=size, **sets).initialise_from(load_surrogate(card))  # what it says holds


def test_a_source_of_other_inputs_is_told_so_and_no_settings_are_offered(tmp_path):
    card = _source(tmp_path, x_dim=2)
    message = _refusal(tmp_path, card, size="tiny")
    assert "to start from it" not in message
    assert message.endswith("no size or model_config (--size, --set) starts this run from it: the source's inputs "
                            "and outputs (2 -> 1) are not this run's (1 -> 1), which its prior sets"), message


def test_the_command_line_says_the_flags(tmp_path, capsys):
    card = _source(tmp_path, emb_depth=3)
    assert main(["train", "--model", "tnpd", "--prior", "gp1d", "--steps", "1", "--out", str(tmp_path / "run"),
                 "--init-from", str(card)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"^npbandit train: --init-from .*; to start from it, train with size 'tiny', model_config "
                     r"\{'emb_depth': 3\} \(on the command line: --size tiny --set emb_depth=3\)\n$", err), err
