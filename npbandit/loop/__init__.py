"""The one run loop, :func:`run_episode`, and the bandit sweeps over it,
:func:`run_bandit_sweep` and :func:`run_wheel_bandits`.

Bandits and BO share the loop: each step ``policy.act(obs)`` -> ``env.step(action)`` ->
the step written -> ``policy.observe(...)``. Its modules: :mod:`~npbandit.loop.episode`
(:func:`run_episode`, the sequential loop, stopping on SIGINT / SIGTERM, the
recommendation at completion), :mod:`~npbandit.loop.asynchronous` (evaluations in flight
on an executor), :mod:`~npbandit.loop.records` (:class:`EpisodeResult` and each step's
record), :mod:`~npbandit.loop.env_params` (what a run records of its environment),
:mod:`~npbandit.loop.bandit_tasks` (:class:`BanditTask`, the bandits a sweep plays: the
wheel, a data set, a CSV file) and :mod:`~npbandit.loop.bandit_sweep`
(:func:`run_bandit_sweep`, :func:`run_wheel_bandits`).
"""

from npbandit.loop.bandit_sweep import run_bandit_sweep, run_wheel_bandits
from npbandit.loop.bandit_tasks import BanditTask, csv_task, dataset_task, wheel_task
from npbandit.loop.episode import run_episode
from npbandit.loop.records import EpisodeResult
from npbandit.stopping import RunInterrupted, stop_on_signals

__all__ = ["run_episode", "run_bandit_sweep", "run_wheel_bandits", "BanditTask", "wheel_task", "dataset_task",
           "csv_task", "EpisodeResult", "RunInterrupted", "stop_on_signals"]
