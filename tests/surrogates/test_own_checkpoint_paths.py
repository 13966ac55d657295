"""One's own checkpoint named by a path that is not quite a checkpoint: a training run's
directory or a path with nothing there (``optimize`` and the bandit door say so, as
``load_surrogate`` does), a checkpoint whose two files were renamed together, a run's
resumable state (``train_state.*``), and the files ``save_pretrained`` writes (readable as
the umask allows, an unwritable directory an ``OSError``)."""

import json
import os
import stat

import pytest
from helpers import tiny_checkpoint

import npbandit
from npbandit import load_surrogate
from npbandit.exceptions import CheckpointError
from npbandit.policies import make_bandit_policy
from npbandit.surrogates import build
from npbandit.surrogates.pretrained import save_pretrained


def _optimize(surrogate):
    return npbandit.optimize(lambda x: float(x[0]), bounds=[[0.0], [1.0]], surrogate=surrogate, budget=3, db=None,
                             progress=False)


def test_optimize_points_a_run_directory_at_the_checkpoint_in_it(tmp_path):
    tiny_checkpoint(tmp_path)
    with pytest.raises(ValueError, match=r"surrogate .*is a directory.*" + str(tmp_path / "cmanp-bo") + "'"):
        _optimize(str(tmp_path))


def test_a_checkpoint_path_with_nothing_there_says_no_card_is_there(tmp_path):
    missing = tmp_path / "runs" / "cmanp-bo.json"
    with pytest.raises(ValueError, match=r"surrogate .*no card at " + str(missing)):
        _optimize(str(missing))
    with pytest.raises(ValueError, match=r"no card at " + str(missing)):
        make_bandit_policy(str(missing), n_arms=3, context_dim=2, bounds=[[0.0, 0.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match=r"surrogate must be one of"):  # a mistyped name: the names known
        _optimize("cmanp-boo")


def test_a_renamed_checkpoint_names_the_file_its_card_expects_and_the_one_beside_it(tmp_path):
    card = tiny_checkpoint(tmp_path)
    card.rename(tmp_path / "mine.json")
    card.with_suffix(".safetensors").rename(tmp_path / "mine.safetensors")
    with pytest.raises(FileNotFoundError, match=r"cmanp-bo\.safetensors.*mine\.safetensors.*renamed"):
        load_surrogate(tmp_path / "mine")
    with pytest.raises(FileNotFoundError, match=r"policy .*mine\.safetensors.*renamed"):
        make_bandit_policy(str(tmp_path / "mine"), n_arms=3, context_dim=2, bounds=[[0.0, 0.0], [1.0, 1.0]])


def test_a_runs_resumable_state_is_not_read_as_a_checkpoint(tmp_path):
    tiny_checkpoint(tmp_path)
    (tmp_path / "train_state.json").write_text(json.dumps({"config": {}, "step": 3, "prior_spec": {}}))
    (tmp_path / "train_state.safetensors").write_bytes(b"")
    for given in ("train_state", "train_state.json", "train_state.safetensors"):
        with pytest.raises(CheckpointError, match=r"resumable state.*--export-now.*" + str(tmp_path / "cmanp-bo")):
            load_surrogate(tmp_path / given)


def test_save_pretrained_writes_files_the_umask_lets_others_read(tmp_path):
    card = tiny_checkpoint(tmp_path)
    previous = os.umask(0o022)
    try:
        card = tiny_checkpoint(tmp_path)
    finally:
        os.umask(previous)
    for path in (card, card.with_suffix(".safetensors")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cmanp-bo.json", "cmanp-bo.safetensors"]  # no temp file


def test_a_weights_file_that_cannot_be_written_is_an_oserror(tmp_path):
    (tmp_path / "t.safetensors").mkdir()  # as a read-only directory or a full disk answers: an OSError
    with pytest.raises(OSError):
        save_pretrained(build("tnpd", 1, 1, size="tiny"), tmp_path, "t", prior={"name": "gp1d"}, training={},
                        evaluation={})
