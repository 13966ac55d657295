"""NPSampler on a study of several objectives: what the NP sees (each objective maximised, failed
trials at the worst of each, constraints after the objectives), that its proposals are the trials'
parameters, and what it refuses (another acquisition; a recommendation, which needs one objective)."""

import math

import numpy as np
import pytest
import torch

optuna = pytest.importorskip("optuna", reason="the Optuna integration needs the 'optuna' extra: "
                                              "pip install -e \".[optuna]\"")

from optuna.distributions import FloatDistribution  # noqa: E402
from optuna.trial import TrialState, create_trial  # noqa: E402

from npbandit.integrations.optuna import NPSampler  # noqa: E402
from npbandit.integrations.optuna_trials import stored_proposal  # noqa: E402

pytestmark = pytest.mark.integration

optuna.logging.set_verbosity(optuna.logging.WARNING)

XY = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}


@pytest.fixture(scope="module")
def tiny_card(tmp_path_factory):
    """A tiny random-weight card: for the plumbing of several objectives, not their optimisation."""
    from helpers import tiny_checkpoint

    return str(tiny_checkpoint(tmp_path_factory.mktemp("tiny")))


def sampler(**kwargs) -> NPSampler:
    return NPSampler(**{"n_startup_trials": 4, "num_restarts": 2, "raw_samples": 64, "seed": 0, **kwargs})


def _two(trial) -> tuple[float, float]:
    """Two objectives in conflict: distance to (0.2, 0.2) and to (0.8, 0.8); the second maximised
    as its negative."""
    x, y = trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)
    return (x - 0.2) ** 2 + (y - 0.2) ** 2, -((x - 0.8) ** 2 + (y - 0.8) ** 2)


def _spy(monkeypatch):
    calls = []
    original = NPSampler._propose

    def spy(self, X, Y, pending, seed, region=None, space=None, search=None, constraints=0, objectives=1,
            avoid_repeats=True):
        calls.append({"Y": Y.clone(), "region": region, "search": search, "constraints": constraints,
                      "objectives": objectives, "pending": pending})
        return original(self, X, Y, pending, seed, region, space, search, constraints, objectives, avoid_repeats)

    monkeypatch.setattr(NPSampler, "_propose", spy)
    return calls


def test_a_study_of_two_objectives_is_searched_by_the_np(monkeypatch, tiny_card):
    calls = _spy(monkeypatch)
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=sampler(checkpoint=tiny_card))
    study.optimize(_two, n_trials=7)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 7
    assert len(calls) == 3  # trials 4, 5, 6
    for call, trial in zip(calls, study.trials[4:]):
        # each objective maximised: the first minimised (negated), the second maximised as it is
        done = study.trials[:trial.number]
        expected = torch.tensor([[-t.values[0], t.values[1]] for t in done], dtype=torch.float64)
        torch.testing.assert_close(call["Y"], expected, rtol=0, atol=0)
        assert call["objectives"] == 2 and call["constraints"] == 0
        assert call["region"] is None and call["search"] is None  # no trust region, the whole cube
        # the trial evaluates the NP's proposal
        assert stored_proposal(trial) == trial.params
    assert all(0.0 <= t.params[n] <= 1.0 for t in study.trials for n in ("x", "y"))


def test_the_np_sees_each_objective_warped(monkeypatch, tiny_card):
    from npbandit.acquisition.multi_objective import warp_objectives

    calls = _spy(monkeypatch)
    models = []
    original = NPSampler._value_model
    monkeypatch.setattr(NPSampler, "_value_model", lambda self, X, Y: models.append(Y.clone()) or original(self, X, Y))
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=sampler(checkpoint=tiny_card))
    study.optimize(_two, n_trials=5)
    (call,), (seen,) = calls, models
    torch.testing.assert_close(seen, warp_objectives(call["Y"], 2), rtol=0, atol=0)
    assert not torch.equal(seen, call["Y"])


def test_the_same_seed_repeats_the_study(tiny_card):
    def run():
        study = optuna.create_study(directions=["minimize", "maximize"], sampler=sampler(checkpoint=tiny_card))
        study.optimize(_two, n_trials=6)
        return [t.params for t in study.trials]

    assert run() == run()


def test_failed_trials_are_seen_at_the_worst_value_of_each_objective(monkeypatch, tiny_card):
    calls = _spy(monkeypatch)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler(checkpoint=tiny_card))
    points = [(0.1, 0.9), (0.8, 0.2), (0.45, 0.55), (0.6, 0.35)]
    for x, y in points:
        study.add_trial(create_trial(params={"x": x, "y": y}, distributions=XY, values=[x + y, x * y]))
    study.add_trial(create_trial(params={"x": 0.3, "y": 0.3}, distributions=XY, state=TrialState.FAIL))
    # an infinity on the worsening side is a failure too; on the improving side, the best finite value
    study.add_trial(create_trial(params={"x": 0.7, "y": 0.7}, distributions=XY, values=[math.inf, 0.1]))
    study.add_trial(create_trial(params={"x": 0.2, "y": 0.2}, distributions=XY, values=[-math.inf, 0.5]))
    study.ask().suggest_float("x", 0.0, 1.0)
    (call,) = calls
    maximised = -torch.tensor([[x + y, x * y] for x, y in points], dtype=torch.float64)
    clipped = torch.stack([maximised[:, 0].max(), torch.tensor(-0.5, dtype=torch.float64)])[None]
    worst = torch.cat([maximised, clipped]).min(dim=0).values  # over every completed trial's row
    expected = torch.cat([maximised, worst[None], worst[None], clipped])
    torch.testing.assert_close(call["Y"], expected, rtol=0, atol=0)


def test_constraints_follow_the_objectives(monkeypatch, tiny_card):
    calls = _spy(monkeypatch)
    study = optuna.create_study(directions=["minimize", "maximize"],
                                sampler=sampler(checkpoint=tiny_card, constraints_func=lambda t: [t.params["x"] - 0.5]))
    study.optimize(_two, n_trials=6)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 6
    call = calls[-1]
    assert call["objectives"] == 2 and call["constraints"] == 1
    expected = torch.tensor([[-t.values[0], t.values[1], t.params["x"] - 0.5] for t in study.trials[:5]],
                            dtype=torch.float64)
    torch.testing.assert_close(call["Y"], expected, rtol=0, atol=0)


def test_a_space_wider_than_the_checkpoint_is_searched_whole_on_its_most_relevant_columns(monkeypatch):
    calls = _spy(monkeypatch)

    def wide(trial):
        x = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(8)]
        return sum((v - 0.2) ** 2 for v in x[:2]), sum((v - 0.8) ** 2 for v in x[:2])

    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler())
    study.optimize(wide, n_trials=6)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 6
    assert len(calls) == 2 and all(c["search"] is None for c in calls)  # no subspace: the whole 8-D cube


def test_a_subspace_given_for_a_study_of_several_objectives_is_said_to_be_unused():
    from npbandit.acquisition.subspace import CountSketch

    def wide(trial):
        x = [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(8)]
        return sum(x[:2]), -sum(x[:2])

    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler(subspace=CountSketch()))
    study.optimize(wide, n_trials=4)
    with pytest.warns(RuntimeWarning, match=r"NPSampler\(subspace=CountSketch\(.*\)\) is not used in a study of "
                                            r"several objectives"):
        study.optimize(wide, n_trials=1)


def test_running_trials_reach_the_proposal_as_pending_points(monkeypatch, tiny_card):
    calls = _spy(monkeypatch)
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=sampler(checkpoint=tiny_card))
    study.optimize(_two, n_trials=4)
    first = study.ask()
    first.suggest_float("x", 0.0, 1.0), first.suggest_float("y", 0.0, 1.0)
    study.ask().suggest_float("x", 0.0, 1.0)  # while the first still runs
    assert calls[-1]["pending"] is not None and calls[-1]["pending"].shape == (1, 2)
    np.testing.assert_allclose(calls[-1]["pending"][0].numpy(), [first.params["x"], first.params["y"]])


def test_another_acquisition_is_refused_before_any_objective_runs(tiny_card):
    calls = []

    def objective(t):
        calls.append(t.number)
        return t.suggest_float("x", 0, 1), 1.0

    study = optuna.create_study(directions=["minimize", "minimize"],
                                sampler=sampler(checkpoint=tiny_card, acquisition="ucb"))
    message = (r"^NPSampler\(acquisition='ucb'\) optimises one objective; this study has 2 directions, which "
               r"NPSampler searches with acquisition 'logei' \(its several-objective form, the log expected "
               r"hypervolume improvement\)$")
    with pytest.raises(ValueError, match=message):
        study.optimize(objective, n_trials=3, catch=(ValueError,))
    assert calls == []  # the objective never ran
    (trial,) = study.trials
    assert trial.state == TrialState.FAIL  # no trial left running


def test_a_recommendation_needs_one_objective(tiny_card):
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=sampler(checkpoint=tiny_card))
    study.optimize(_two, n_trials=5)
    with pytest.raises(ValueError, match=r"NPSampler.recommended_trial is defined for a study of one objective; "
                                         r"this study has 2 directions: study.best_trials holds its Pareto front"):
        study.sampler.recommended_trial(study)
