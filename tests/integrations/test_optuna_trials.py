"""How NPSampler reads and writes a study's trials (npbandit.integrations.optuna_trials): stepped
floats as Optuna writes them, running trials as pending points (their stored proposals included),
enqueued partial parameters."""

import math
import warnings

import numpy as np
import pytest
import torch

optuna = pytest.importorskip("optuna", reason="the Optuna integration needs the 'optuna' extra: "
                                              "pip install -e \".[optuna]\"")

from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution  # noqa: E402
from optuna.trial import TrialState, create_trial  # noqa: E402

from npbandit.acquisition.proposal import REPEAT_DISTANCE  # noqa: E402
from npbandit.integrations.optuna import NPSampler  # noqa: E402
from npbandit.integrations.optuna_trials import (  # noqa: E402
    known_params,
    optuna_values,
    parameter_of,
    store_proposal,
    stored_proposal,
)
from npbandit.space import Choice  # noqa: E402

pytestmark = pytest.mark.integration

optuna.logging.set_verbosity(optuna.logging.WARNING)

XY = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}


def sampler(**kwargs) -> NPSampler:
    return NPSampler(**{"n_startup_trials": 4, "num_restarts": 2, "raw_samples": 64, **kwargs})


def _study(**kwargs):
    """A minimised study of ``x, y`` in [0, 1]^2 with five completed trials (past the start-up)."""
    study = optuna.create_study(sampler=sampler(seed=0, **kwargs))
    for x, y in [(0.1, 0.9), (0.8, 0.2), (0.45, 0.55), (0.6, 0.35), (0.3, 0.3)]:
        study.add_trial(create_trial(params={"x": x, "y": y}, distributions=XY,
                                     value=(x - 0.42) ** 2 + (y - 0.37) ** 2))
    return study


def _fixed_proposal(monkeypatch, points):
    """``NPSampler._propose`` replaced by one returning ``points`` in turn; what it saw is recorded."""
    seen = []

    def propose(self, X, Y, pending, seed, *rest):
        seen.append({"X": X.clone(), "Y": Y.clone(), "pending": None if pending is None else pending.clone()})
        return np.asarray(points[len(seen) - 1], dtype=np.float64)

    monkeypatch.setattr(NPSampler, "_propose", propose)
    return seen


# -- stepped floats ---------------------------------------------------------------------

def test_stepped_float_values_are_optunas_grid_values():
    # Optuna's samplers write the k-th value of a stepped float as k * step + low in float64
    # (0.35000000000000003 for k = 7 of step 0.05); the NP's proposals are the same floats, so one
    # grid point is one value in a study whichever sampler drew it
    dists = {"q": FloatDistribution(0.0, 1.0, step=0.05), "r": FloatDistribution(-1.0, 2.0, step=0.3),
             "n": IntDistribution(0, 10, step=2), "c": CategoricalDistribution(["a", "b"])}
    for name in ("q", "r"):
        d = dists[name]
        for k in range(round((d.high - d.low) / d.step) + 1):
            canonical = min(max(k * d.step + d.low, d.low), d.high)
            # npbandit.space's own value (low + k * step to 14 significant digits) and its neighbours in
            # floating point all map to the same float
            for v in (float(f"{d.low + k * d.step:.14g}"), np.nextafter(canonical, 2.0), canonical):
                assert optuna_values({name: v}, dists)[name] == canonical
    assert optuna_values({"n": 4, "c": "b"}, dists) == {"n": 4, "c": "b"}
    assert optuna_values({"x": 0.1 + 0.2}, {"x": FloatDistribution(0.0, 1.0)}) == {"x": 0.1 + 0.2}


def test_the_nps_stepped_proposals_match_optunas_random_sampler(monkeypatch):
    step = 0.05
    dist = {"q": FloatDistribution(0.0, 1.0, step=step)}
    grid = [k * step for k in range(21)]  # as Optuna writes them
    # the NP proposes each grid point in turn (the unit cube gives each an interval of width 1/21)
    seen = _fixed_proposal(monkeypatch, [[(k + 0.5) / 21] for k in range(21)])
    study = optuna.create_study(sampler=sampler(seed=0))
    for v in (0.1, 0.4, 0.7, 0.9):
        study.add_trial(create_trial(params={"q": v}, distributions=dist, value=v))
    proposed = [study.ask().suggest_float("q", 0.0, 1.0, step=step) for _ in range(21)]
    assert len(seen) == 21 and proposed == grid  # 0.35000000000000003 for k = 7, not 0.35
    randoms = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    drawn = {randoms.ask().suggest_float("q", 0.0, 1.0, step=step) for _ in range(200)}
    assert drawn <= set(grid)


# -- categorical choices Optuna records as an earlier one ------------------------------------

def test_a_choice_optuna_records_as_an_earlier_equal_one_is_never_proposed():
    # Optuna stores a categorical value as the index of the first choice == to it: True is recorded as 1,
    # so proposing True evaluated 1 while the NP believed it had tried True, and it proposed True again
    choices = [1, True, "a"]
    assert parameter_of(CategoricalDistribution(choices)) == Choice([1, "a"])
    assert parameter_of(CategoricalDistribution(["a", "b", "a"])) == Choice(["a", "b"])  # a repeat, as Optuna
    study = optuna.create_study(sampler=sampler(seed=0))
    with pytest.warns(RuntimeWarning, match=r"parameter 'c': its choices at positions \[1\] equal earlier ones "
                      r".*NPSampler proposes among \[1, 'a'\]") as caught:
        study.optimize(lambda t: (t.suggest_float("x", 0.0, 1.0) - 0.3) ** 2 + (t.suggest_categorical("c", choices)
                                                                                == "a"), n_trials=8)
    assert len([w for w in caught if "positions" in str(w.message)]) == 1  # once per study
    proposed = [(t.params["c"], stored_proposal(t)["c"]) for t in study.trials if stored_proposal(t)]
    assert len(proposed) == 4
    assert all(type(value) is type(p) and value == p for value, p in proposed)  # evaluated as proposed


# -- running trials ---------------------------------------------------------------------

def test_a_running_trial_is_pending_at_its_proposal_before_it_suggested_every_parameter(monkeypatch):
    seen = _fixed_proposal(monkeypatch, [[0.25, 0.75], [0.5, 0.5]])
    study = _study()
    first = study.ask()
    assert first.suggest_float("x", 0.0, 1.0) == 0.25  # y not suggested yet: its objective is still running
    stored = study.trials[-1]
    assert known_params(stored) == {"x": 0.25, "y": 0.75}  # the proposal is stored with the trial
    second = study.ask()
    second.suggest_float("x", 0.0, 1.0)
    assert seen[0]["pending"] is None
    assert seen[1]["pending"].tolist() == [[0.25, 0.75]]  # the first trial's point, though y was not suggested
    assert first.suggest_float("y", 0.0, 1.0) == 0.75


def test_the_next_trial_differs_from_a_running_trial_that_suggested_part_of_its_parameters():
    # two workers: the first has suggested x only when the second asks (deterministic: no threads)
    study = _study()
    first = study.ask()
    x1 = first.suggest_float("x", 0.0, 1.0)
    second = study.ask()
    x2, y2 = second.suggest_float("x", 0.0, 1.0), second.suggest_float("y", 0.0, 1.0)
    y1 = first.suggest_float("y", 0.0, 1.0)
    assert math.hypot(x1 - x2, y1 - y2) > REPEAT_DISTANCE, ((x1, y1), (x2, y2))


def test_a_trial_that_completes_while_a_proposal_reads_the_study_is_seen_completed_or_running(monkeypatch):
    # another worker's trial completing between the proposal's read of the completed trials and its read of the
    # running ones was in neither, and its point could be proposed again (n_jobs threads on SQLite did so)
    seen = _fixed_proposal(monkeypatch, [[0.25, 0.75], [0.5, 0.5]])
    study = _study()
    first = study.ask()
    first.suggest_float("x", 0.0, 1.0), first.suggest_float("y", 0.0, 1.0)
    read, calls = study.get_trials, []

    def read_then_finish(*args, **kwargs):  # the other worker's trial completes after the proposal's second read
        trials = read(*args, **kwargs)
        calls.append(1)
        if len(calls) == 2:
            study.tell(first, 0.3)
        return trials

    monkeypatch.setattr(study, "get_trials", read_then_finish)
    study.ask().suggest_float("x", 0.0, 1.0)
    assert study.trials[5].state == TrialState.COMPLETE  # it completed while the proposal was made
    pending = seen[1]["pending"]
    assert [0.25, 0.75] in seen[1]["X"].tolist() or (pending is not None and [0.25, 0.75] in pending.tolist())


def test_proposals_are_stored_in_chunks_an_rdb_storage_holds():
    study = optuna.create_study()
    trial = study.ask()
    params = {f"parameter_{i:03d}": 0.1 + i / 1000 for i in range(150)}  # about 4000 characters of JSON
    store_proposal(study, study.trials[0], {**params, "o": object()})  # a choice JSON cannot hold is left out
    frozen = study.trials[0]
    chunks = [v for k, v in frozen.system_attrs.items() if k.startswith("npsampler:proposal:")]
    assert len(chunks) >= 2 and all(len(c) <= 2045 for c in chunks)
    assert known_params(frozen) == params
    trial.suggest_float("parameter_000", 0.0, 1.0)
    assert known_params(study.trials[0])["parameter_000"] == trial.params["parameter_000"]


def test_a_failed_trial_optuna_re_runs_is_left_to_its_retry(monkeypatch):
    # a worker that dies leaves its trial running; with heartbeats Optuna fails it, and its retry callback adds
    # a waiting trial with the same values: the failure says nothing of the point, the retry says what it gives
    seen = _fixed_proposal(monkeypatch, [[0.5, 0.5], [0.6, 0.6]])
    study = _study()
    study.add_trial(create_trial(params={"x": 0.42, "y": 0.37}, distributions=XY, state=TrialState.FAIL))
    study.ask().suggest_float("x", 0.0, 1.0)
    assert [0.42, 0.37] in seen[0]["X"].tolist()  # a failed trial is seen (at the worst value)
    storages = optuna.storages
    retry = getattr(storages, "RetryHeartbeatStaleTrialCallback", None) or storages.RetryFailedTrialCallback
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # experimental in Optuna
        retry()(study, study.trials[5])
    rerun = study.ask()  # the retry: its values are the failed trial's
    assert (rerun.suggest_float("x", 0.0, 1.0), rerun.suggest_float("y", 0.0, 1.0)) == (0.42, 0.37)
    study.ask().suggest_float("x", 0.0, 1.0)
    assert [0.42, 0.37] not in seen[1]["X"].tolist()  # not the failure: the retry, pending there
    assert seen[1]["pending"].tolist()[-1] == [0.42, 0.37]


# -- enqueued trials ----------------------------------------------------------------------

def test_an_enqueued_partial_trial_keeps_its_value_the_np_proposes_the_rest_and_sees_its_result(monkeypatch,
                                                                                                caplog):
    seen = _fixed_proposal(monkeypatch, [[0.5, 0.25], [0.5, 0.6], [0.6, 0.6]])
    study = _study()
    study.enqueue_trial({"x": 0.3})
    optuna.logging.enable_propagation()
    try:
        trial = study.ask()
        y = trial.suggest_float("y", 0.0, 1.0)  # the NP proposes (x, y); x is not suggested yet
        running = study.ask()  # another worker asks while the enqueued trial runs
        running.suggest_float("x", 0.0, 1.0), running.suggest_float("y", 0.0, 1.0)
        x = trial.suggest_float("x", 0.0, 1.0)
    finally:
        optuna.logging.disable_propagation()
    assert "independently" not in caplog.text  # y is the NP's, not a silent random draw
    assert (x, y) == (0.3, 0.25)  # the enqueued value kept; y from the NP's proposal
    # the other worker saw the enqueued trial pending at its enqueued x (not the proposal's 0.5) and proposed y
    assert seen[1]["pending"].tolist() == [[0.3, 0.25]]
    study.tell(trial, 0.01)
    study.tell(running, 1.0)
    study.ask().suggest_float("x", 0.0, 1.0)
    X, Y = seen[2]["X"], seen[2]["Y"]
    # the enqueued trial's result is modelled like any other's (minimised: negated)
    assert X.shape == (7, 2) and torch.equal(X[5], torch.tensor([0.3, 0.25], dtype=torch.float64))
    assert float(Y[5, 0]) == -0.01
