"""`npbandit report`: runs of one policy name on two different checkpoints (two trainings
that both export ``cmanp-bo``) are two rows, told apart by the checkpoint's hash, as the
sweep tells them apart; one checkpoint is one row, labelled as before."""

from npbandit.envs import WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.report import bandit_summary, report_text
from npbandit.report.curves import panels
from npbandit.storage import RunLogger

INFO = {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": 0.5, "horizon": 12}}


class _OnCheckpoint(UniformPolicy):
    """Uniform play under one policy name, recorded as using the checkpoint of hash ``sha``."""

    name = "my-net-ucb"

    def __init__(self, sha):
        super().__init__()
        self.checkpoint = {"name": "my-net", "sha256": sha}


def _runs(db, shas, seeds=(0, 1)):
    for sha in shas:
        for seed in seeds:
            run_episode(WheelBanditEnv(delta=0.5, horizon=12), _OnCheckpoint(sha), seed=seed, logger=RunLogger(db),
                        run_info=INFO)


def test_two_checkpoints_of_one_name_are_two_rows_not_one_row_of_repeated_seeds(tmp_path):
    db = str(tmp_path / "runs.db")
    _runs(db, ["a" * 64, "b" * 64])
    rows = bandit_summary(db)
    assert {r["label"]: r["runs"] for r in rows} == {"my-net-ucb  checkpoint=aaaaaaaaaaaa": 2,
                                                     "my-net-ucb  checkpoint=bbbbbbbbbbbb": 2}
    assert all(not r["repeated_seeds"] for r in rows)
    assert "seeds run more than once" not in report_text(db)
    (panel,) = panels(db)
    assert sorted(line.key.text() for line in panel.lines) == sorted(r["label"] for r in rows)


def test_one_checkpoint_is_one_row_labelled_by_the_policy_alone(tmp_path):
    db = str(tmp_path / "runs.db")
    _runs(db, ["a" * 64])
    assert [(r["label"], r["runs"]) for r in bandit_summary(db)] == [("my-net-ucb", 2)]
