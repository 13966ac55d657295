"""A process pool's futures read ``running()`` as soon as a call is queued for a worker, not
when a worker takes it, so an evaluation queued behind a hung one (given up or not) was
timed from its submission and given up without ever running -- and, still queued, ran later
and held the worker, so every evaluation after it timed out too. Its timeout now counts from
when the calls submitted before it leave it a worker."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import time
from pathlib import Path

import pytest

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.envs import AsyncEvaluator, BlackBoxEnv

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the pool's workers are forked")

#: the file whose creation lets the hung evaluation return (set before the pool forks)
RELEASE: Path | None = None


def hangs_below_half(x):
    """The point below 0.5 hangs until RELEASE exists (at most 30 s); any other returns at once."""
    if x[0] < 0.5:
        deadline = time.monotonic() + 30
        while not RELEASE.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    return 1.0


def test_an_evaluation_queued_behind_a_hung_one_is_timed_from_when_it_can_start(tmp_path):
    global RELEASE
    RELEASE = tmp_path / "release"
    env = BlackBoxEnv(objective=hangs_below_half, bounds=[[0], [1]], budget=5)
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        evaluator = AsyncEvaluator(pool, timeout=2.0)  # ample for a call that returns at once, under load
        env.evaluator = evaluator
        env.reset(seed=0)
        hung, queued = evaluator.submit(env, [0.1]), evaluator.submit(env, [0.9])
        time.sleep(0.2)  # both are in the pool's queue for its worker by now, both futures running()
        assert evaluator.wait() == [hung] and hung.outcome.timed_out
        evaluator.hand_over(hung)
        assert queued.outcome is None  # still behind the hung call, which holds the only worker
        later = evaluator.submit(env, [0.8])  # submitted while the given-up call still holds the worker
        RELEASE.touch()
        finished = []
        while len(finished) < 2:
            finished += evaluator.wait()
        assert finished == [queued, later]
        assert all(e.outcome.ok and e.outcome.value == 1.0 for e in finished)
