"""A bandit sweep's lines (``npbandit bandit``, ``npbandit demo``) line up in columns when its
run ids cross a power of ten: ``run 9:`` is padded to the width of ``run 10:``."""

from npbandit.loop import run_bandit_sweep, wheel_task


def test_run_lines_keep_their_columns_from_run_9_to_run_10(tmp_path):
    db, lines = str(tmp_path / "runs.db"), []
    results = run_bandit_sweep(["uniform"], [wheel_task(0.5)], range(11), 2, db=db, say=lines.append)
    assert [r.run_id for r in results] == list(range(1, 12))
    assert lines[8].startswith("run 9:  uniform ") and lines[9].startswith("run 10: uniform ")
    assert len({line.index("uniform") for line in lines}) == 1
    assert len({line.index("seed=") for line in lines}) == 1
    # a sweep whose ids all have one digit is not padded
    other, said = str(tmp_path / "other.db"), []
    run_bandit_sweep(["uniform"], [wheel_task(0.5)], range(3), 2, db=other, say=said.append)
    assert [line[:len("run 1: uniform")] for line in said] == [f"run {i}: uniform" for i in (1, 2, 3)]
