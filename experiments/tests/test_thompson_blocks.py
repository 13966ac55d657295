"""experiments/benchmarks/thompson_blocks.py: the table a joint Thompson draw's block size is chosen by."""

import functools
import math

import pytest

from npbandit import load_surrogate

from .helpers import load_benchmark, tiny_checkpoint

pytestmark = pytest.mark.lab


@pytest.mark.slow
def test_thompson_block_benchmark_scores_every_block_size(tmp_path, monkeypatch):
    """experiments/benchmarks/thompson_blocks.py: the joint log-likelihood per d and the draw time for
    each block size, the table THOMPSON_BLOCK_SIZE is chosen by."""
    bench = load_benchmark("thompson_blocks")
    # the timer's minimum of 3 repetitions, not the 200 a tiny model's fast draws fit in the script's budget
    monkeypatch.setattr(bench, "median_time", functools.partial(bench.median_time, max_reps=3))
    surrogate = load_surrogate(tiny_checkpoint(tmp_path, "cmanp-and", "bo"))
    blocks = [1, 50, bench.ALL]
    scores = bench.joint_scores(surrogate, blocks, n_batches=1)
    assert set(scores) == set(blocks) and set(scores[1]) == {f"d={d}" for d in range(1, 7)}
    assert all(math.isfinite(v) for row in scores.values() for v in row.values())
    assert scores[1] != scores[50]  # the blocks change the joint being scored
    assert scores[50] == scores[bench.ALL]  # the suite's tasks have 50 targets: one block either way
    times = bench.draw_times(surrogate, blocks, n_candidates=64)
    assert all(t > 0 for t in times.values())
    calib = bench.calibration(surrogate, blocks, n_candidates=64, n_draws=2)
    assert set(calib) == set(blocks) and all(0 < a and 0 < b for a, b in calib.values())
    text = bench.render("tiny", scores, times, calib, 1, 64)
    assert "| 50 |" in text and "| all |" in text and "x b_Q = 5" in text and "mean abs(z)" in text
    with pytest.raises(SystemExit):
        bench.main(["--checkpoint", "cmanp-bo", "--no-write"])  # a diagonal model has no blocks
