"""A run's --out that is a file, and a stop (Ctrl-C, SIGTERM) while the finished run is
being evaluated for its card: both say what happened and how to go on."""

import json
import signal

import pytest

from npbandit.training import TrainConfig, train


def tiny(tmp_path, **kw):
    base = dict(model="tnpd", prior="gp1d", steps=2, out=str(tmp_path / "run"), size="tiny", eval_every=2,
                eval_batches=1, final_eval_batches=1, checkpoint_every=1)
    base.update(kw)
    return TrainConfig(**base)


def test_an_out_that_is_a_file_is_refused_naming_out(tmp_path):
    card = tmp_path / "tnpd-gp1d.json"
    card.write_text("{}")  # e.g. a checkpoint's card given as --out
    with pytest.raises(ValueError, match=r"out .*is a file, not a run directory"):
        train(tiny(tmp_path, out=str(card)), progress=False)


def test_a_stop_during_the_final_evaluation_returns_the_saved_run_and_the_same_call_exports(tmp_path, monkeypatch):
    import npbandit.training.trainer as trainer

    evaluate = trainer.card_evaluation

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # as Ctrl-C during the card's evaluation (minutes at the default 256 batches)

    monkeypatch.setattr(trainer, "card_evaluation", interrupted)
    config = tiny(tmp_path)
    stopped = train(config, progress=False)
    assert stopped.card is None and stopped.step == 2 and stopped.stopped_by == signal.SIGINT
    assert json.loads((tmp_path / "run" / "train_state.json").read_text())["step"] == 2
    monkeypatch.setattr(trainer, "card_evaluation", evaluate)
    done = train(config, progress=False)
    assert done.card is not None and json.loads(done.card.read_text())["training"]["steps"] == 2


def test_the_train_command_says_a_stopped_export_is_made_by_the_same_command(tmp_path, monkeypatch, capsys):
    import npbandit.training.trainer as trainer
    from npbandit.cli import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(trainer, "card_evaluation", interrupted)
    args = ["train", "--model", "tnpd", "--prior", "gp1d", "--size", "tiny", "--steps", "2", "--eval-batches", "1",
            "--final-eval-batches", "1", "--out", str(tmp_path / "run")]
    assert main(args) == 128 + signal.SIGINT
    err = capsys.readouterr().err
    assert "saved tnpd-gp1d at step 2 of 2" in err and "run the same command to export" in err
