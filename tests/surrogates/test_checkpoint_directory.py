"""A training run's directory given where a checkpoint is named (``load_surrogate("runs/t1")``,
``npbandit bandit --policies runs/t1``) is called a directory, and the error names the
checkpoints in it, rather than a card ``runs/t1.json`` nobody wrote."""

import pytest
from helpers import tiny_checkpoint

from npbandit import load_surrogate
from npbandit.exceptions import UnknownCheckpointError
from npbandit.policies import make_bandit_policy


def test_a_run_directory_is_pointed_at_the_checkpoint_in_it(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    tiny_checkpoint(run)
    (run / "train_state.json").write_text('{"step": 1}')  # a training run's saved state: no checkpoint
    (run / "train_state.safetensors").write_bytes(b"")
    for given in (run, str(run), f"{run}/"):
        with pytest.raises(UnknownCheckpointError, match=r"is a directory.*" + str(run / "cmanp-bo") + "'") as info:
            load_surrogate(given)
        assert f"{run}.json" not in str(info.value) and "train_state" not in str(info.value)
    assert load_surrogate(run / "cmanp-bo").card["name"] == "cmanp-bo"  # the name the error gives loads


def test_a_directory_without_a_checkpoint_says_so(tmp_path):
    with pytest.raises(UnknownCheckpointError, match=r"is a directory holding no checkpoint \(no \.json card beside"):
        load_surrogate(tmp_path)


def test_a_run_directory_as_a_bandit_policy_is_pointed_at_its_checkpoint(tmp_path):
    tiny_checkpoint(tmp_path)
    for name in (str(tmp_path), f"{tmp_path}-thompson"):
        with pytest.raises(ValueError, match=r"is a directory.*" + str(tmp_path / "cmanp-bo") + "'"):
            make_bandit_policy(name, n_arms=3, context_dim=2, bounds=[[0.0, 0.0], [1.0, 1.0]])
    policy = make_bandit_policy(str(tmp_path / "cmanp-bo"), n_arms=3, context_dim=2, bounds=[[0.0, 0.0], [1.0, 1.0]])
    assert policy.name == "cmanp-bo-ucb"
