"""The one run loop, :func:`run_episode`, and the wheel-bandit sweep over it,
:func:`run_wheel_bandits`.

Bandits and BO share the loop: each step ``policy.act(obs)`` -> ``env.step(action)`` ->
the step written -> ``policy.observe(...)``. Its modules: :mod:`~npbandit.loop.episode`
(:func:`run_episode`, the sequential loop, stopping on SIGINT / SIGTERM, the
recommendation at completion), :mod:`~npbandit.loop.asynchronous` (evaluations in flight
on an executor), :mod:`~npbandit.loop.records` (:class:`EpisodeResult` and each step's
record), :mod:`~npbandit.loop.env_params` (what a run records of its environment) and
:mod:`~npbandit.loop.wheel_sweep` (:func:`run_wheel_bandits`).
"""

from npbandit.loop.episode import run_episode
from npbandit.loop.records import EpisodeResult
from npbandit.loop.wheel_sweep import run_wheel_bandits
from npbandit.stopping import RunInterrupted, stop_on_signals

__all__ = ["run_episode", "run_wheel_bandits", "EpisodeResult", "RunInterrupted", "stop_on_signals"]
