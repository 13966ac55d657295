"""A sweep given one task twice (``--deltas 0.5 0.50``, ``--datasets iris iris``, one CSV file
by two spellings of its path) is refused naming the repeated task, not "the policy ... and the
policy ..." (the same value, twice) with "give each policy and task once"."""

import pytest

from npbandit.cli import main
from npbandit.loop import dataset_task, run_bandit_sweep, wheel_task


@pytest.mark.parametrize("args,message", [
    (["--deltas", "0.5", "0.50"], "npbandit bandit: --deltas value 1 delta=0.5 and --deltas value 2 delta=0.5 are "
                                  "the same task"),
    (["--datasets", "iris", "iris"], "npbandit bandit: --datasets value 1 dataset=iris and --datasets value 2 "
                                     "dataset=iris are the same task"),
    (["--datasets", "f.csv", "./f.csv", "--label-column", "y"],
     "npbandit bandit: --datasets value 1 dataset=f.csv and --datasets value 2 dataset=f.csv are the same task"),
])
def test_a_task_given_twice_is_named_as_the_option_typed(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.csv").write_text("x,y\n1,a\n2,b\n")
    assert main(["bandit", "--policies", "uniform", "linucb", "--steps", "3", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1 and "policies" not in err, err
    assert not (tmp_path / "npbandit.db").exists()


def test_the_sweep_names_the_tasks_by_their_index():
    with pytest.raises(ValueError, match=r"^tasks\[0\] delta=0\.9 and tasks\[2\] delta=0\.9 are the same task"):
        run_bandit_sweep(["uniform"], [wheel_task(0.9), dataset_task("iris"), wheel_task(0.9)], [0], 3, say=None)
