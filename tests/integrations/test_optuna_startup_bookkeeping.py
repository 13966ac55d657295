"""NPSampler's start-up trials (the trials it began before ``n_startup_trials`` had completed,
whose later parameters it does not warn about) are forgotten once finished, also when Optuna
finishes one without calling ``after_trial``: a trial its heartbeat failed
(``optuna.storages.fail_stale_trials`` sets the state in the storage, nothing else)."""

import pytest

optuna = pytest.importorskip("optuna", reason="the Optuna integration needs the 'optuna' extra")

from optuna.trial import TrialState  # noqa: E402

from npbandit.integrations.optuna import NPSampler  # noqa: E402

pytestmark = pytest.mark.integration

optuna.logging.set_verbosity(optuna.logging.WARNING)


def test_a_start_up_trial_finished_without_after_trial_is_forgotten():
    sampler = NPSampler(n_startup_trials=10, seed=0)
    study = optuna.create_study(sampler=sampler)
    stale = study.ask()
    stale.suggest_float("x", 0.0, 1.0)
    held = sampler._startup_trials[study._storage]
    assert held == {stale._trial_id}
    # what a failed heartbeat does: the storage's state set to FAIL, after_trial never called
    study._storage.set_trial_state_values(stale._trial_id, TrialState.FAIL)
    second = study.ask()
    x = second.suggest_float("x", 0.0, 1.0)  # the sampler reads the study's trials again: the finished one goes
    assert held == {second._trial_id}
    study.tell(second, x)  # finished the usual way: after_trial drops it
    assert held == set()


def test_a_running_start_up_trial_of_another_study_in_the_storage_stays():
    storage = optuna.storages.InMemoryStorage()
    sampler = NPSampler(n_startup_trials=10, seed=0)
    first = optuna.create_study(sampler=sampler, storage=storage, study_name="first")
    other = optuna.create_study(sampler=sampler, storage=storage, study_name="other")
    running = first.ask()
    running.suggest_float("x", 0.0, 1.0)
    for _ in range(2):  # the other study's reads leave the first study's running trial alone
        trial = other.ask()
        other.tell(trial, trial.suggest_float("x", 0.0, 1.0))
    assert sampler._startup_trials[storage] == {running._trial_id}
