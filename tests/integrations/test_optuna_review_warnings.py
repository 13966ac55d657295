"""What NPSampler warns of in studies run the way Optuna users run them (an Optuna user's
review): a warning that holds for every later trial of a study is given once per study, as
the sampler's other warnings are (npbandit.integrations.optuna_warnings)."""

import warnings

import pytest

optuna = pytest.importorskip("optuna", reason="the Optuna integration needs the 'optuna' extra: "
                                              "pip install -e \".[optuna]\"")

from npbandit.integrations.optuna import NPSampler  # noqa: E402

pytestmark = pytest.mark.integration

optuna.logging.set_verbosity(optuna.logging.WARNING)

REPEATED = "every point of the discrete search space"


def _four_points(directions):
    """An int of two values and a choice of two: four points in all, so every trial after the
    fourth distinct one must repeat an evaluated point."""
    def objective(trial):
        x, c = trial.suggest_int("x", 0, 1), trial.suggest_categorical("c", ["a", "b"])
        value = float(x + (c == "b"))
        return value if len(directions) == 1 else (value, value * 2)
    return objective


@pytest.mark.parametrize("trust_region", [True, False])
@pytest.mark.parametrize("directions", [["minimize"], ["minimize", "maximize"]])
def test_a_discrete_space_evaluated_everywhere_is_said_once_per_study_not_at_every_trial(directions, trust_region):
    # Python's own once-per-place memory of warnings is cleared by every catch_warnings block (BoTorch's and
    # the proposal step's run at each trial), so without the sampler's record this came at every trial
    def run():
        study = optuna.create_study(directions=directions, sampler=NPSampler(
            n_startup_trials=2, seed=0, trust_region=trust_region, num_restarts=2, raw_samples=64))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            study.optimize(_four_points(directions), n_trials=9)
        return [str(w.message) for w in caught if REPEATED in str(w.message)]

    first, second = run(), run()
    assert len(first) == 1, first
    assert len(second) == 1  # each study is told
    assert first[0].startswith("NPSampler")  # says whose proposal repeats
    assert "once per study" in first[0]
