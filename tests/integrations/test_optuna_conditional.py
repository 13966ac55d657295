"""NPSampler on conditional (define-by-run) spaces: the groups of parameters suggested
together (npbandit.integrations.optuna_groups), the branch a gating categorical decides
(npbandit.integrations.optuna_branches), and the proposals the sampler makes from them."""

import warnings

import pytest

optuna = pytest.importorskip("optuna", reason="the Optuna integration needs the 'optuna' extra: "
                                              "pip install -e \".[optuna]\"")

from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution  # noqa: E402
from optuna.trial import TrialState, create_trial  # noqa: E402

from npbandit.integrations.optuna import NPSampler  # noqa: E402
from npbandit.integrations.optuna_branches import (  # noqa: E402
    MIN_BRANCH_TRIALS,
    best_branch,
    branches,
    first_choice,
    gating_choice,
)
from npbandit.integrations.optuna_groups import conditional_group, parameter_groups  # noqa: E402
from npbandit.integrations.optuna_trials import (  # noqa: E402
    FIRST_TRY_KEY,
    GROUP_PROPOSAL_KEY,
    PROPOSAL_KEY,
    known_params,
    store_proposal,
    stored_proposal,
)

pytestmark = pytest.mark.integration

optuna.logging.set_verbosity(optuna.logging.WARNING)

CLASSIFIER = CategoricalDistribution(["svc", "rf"])
SVC = {"svc_c": FloatDistribution(0.0, 1.0), "svc_gamma": FloatDistribution(0.0, 1.0)}
RF = {"rf_depth": IntDistribution(2, 32)}
SHARED = {"scale": FloatDistribution(0.0, 1.0)}


def svc_trial(c: float, gamma: float, value: float, scale: float = 0.5):
    return create_trial(params={"classifier": "svc", "svc_c": c, "svc_gamma": gamma, "scale": scale},
                        distributions={"classifier": CLASSIFIER, **SVC, **SHARED}, value=value)


def rf_trial(depth: int, value: float, scale: float = 0.5):
    return create_trial(params={"classifier": "rf", "rf_depth": depth, "scale": scale},
                        distributions={"classifier": CLASSIFIER, **RF, **SHARED}, value=value)


def sampler(**kwargs) -> NPSampler:
    return NPSampler(**{"n_startup_trials": 4, "num_restarts": 2, "raw_samples": 64, **kwargs})


def two_branches(t) -> float:
    if t.suggest_categorical("classifier", ["svc", "rf"]) == "svc":
        return (t.suggest_float("svc_c", 0.0, 1.0) - 0.7) ** 2 + (t.suggest_float("svc_gamma", 0.0, 1.0) - 0.2) ** 2
    return 0.1 + (t.suggest_int("rf_depth", 2, 32) - 20) ** 2 / 900


# -- groups --------------------------------------------------------------------------------

def test_the_groups_are_the_finest_partition_each_trial_suggests_wholly_or_not_at_all():
    trials = [svc_trial(0.1, 0.2, 1.0), rf_trial(4, 2.0), svc_trial(0.3, 0.4, 3.0)]
    groups = parameter_groups(trials)
    assert sorted(map(sorted, groups)) == [["classifier", "scale"], ["rf_depth"], ["svc_c", "svc_gamma"]]
    assert parameter_groups(list(reversed(trials))) == groups  # the same whatever the trials' order
    assert parameter_groups([]) == []


def test_a_conditional_group_holds_its_branchs_trials_and_only_parameters_of_one_distribution():
    trials = [svc_trial(0.1, 0.2, 1.0), rf_trial(4, 2.0), svc_trial(0.3, 0.4, 3.0)]
    group = conditional_group("svc_c", SVC["svc_c"], trials)
    assert list(group.search_space) == ["svc_c", "svc_gamma"] and [t.value for t in group.trials] == [1.0, 3.0]
    assert conditional_group("scale", SHARED["scale"], trials) is None  # in every trial: not conditional
    assert conditional_group("svc_c", FloatDistribution(0.0, 2.0), trials) is None  # suggested now with another range
    assert conditional_group("new", FloatDistribution(0.0, 1.0), trials) is None  # no trial suggested it
    # a parameter whose range changed between the group's trials stays with the independent sampler
    changed = create_trial(params={"classifier": "svc", "svc_c": 0.5, "svc_gamma": 1.5, "scale": 0.5},
                           distributions={"classifier": CLASSIFIER, **SVC, "svc_gamma": FloatDistribution(0.0, 2.0),
                                          **SHARED}, value=0.0)
    group = conditional_group("svc_c", SVC["svc_c"], trials + [changed])
    assert list(group.search_space) == ["svc_c"] and len(group.trials) == 3


def test_a_trials_known_parameters_merge_its_group_proposal_under_its_relative_one():
    study = optuna.create_study()
    trial = study.ask()
    frozen = study._storage.get_trial(trial._trial_id)
    store_proposal(study, frozen, {"svc_c": 0.25, "x": 1.0}, GROUP_PROPOSAL_KEY)
    store_proposal(study, frozen, {"x": 2.0})
    frozen = study._storage.get_trial(trial._trial_id)
    assert stored_proposal(frozen, GROUP_PROPOSAL_KEY) == {"svc_c": 0.25, "x": 1.0}
    assert stored_proposal(frozen, PROPOSAL_KEY) == {"x": 2.0}
    assert known_params(frozen) == {"svc_c": 0.25, "x": 2.0}


# -- branches ------------------------------------------------------------------------------

def test_the_gating_choice_is_the_categorical_whose_value_decides_the_groups():
    space = {"classifier": CLASSIFIER, **SHARED}
    trials = [svc_trial(0.1, 0.2, 1.0), rf_trial(4, 2.0)]
    assert gating_choice(space, trials) == "classifier"
    # a categorical taken with both branches' groups decides nothing
    other = CategoricalDistribution(["a", "b"])
    mixed = [create_trial(params={**t.params, "o": "a"}, distributions={**t.distributions, "o": other},
                          value=t.value) for t in trials]
    mixed.append(create_trial(params={**trials[0].params, "o": "b"}, distributions={**trials[0].distributions,
                                                                                   "o": other}, value=0.0))
    mixed.append(create_trial(params={**trials[1].params, "o": "b"}, distributions={**trials[1].distributions,
                                                                                   "o": other}, value=0.0))
    assert gating_choice({**space, "o": other}, mixed) == "classifier"
    assert gating_choice(space, [svc_trial(0.1, 0.2, 1.0), svc_trial(0.3, 0.4, 2.0)]) is None  # nothing conditional


def test_a_choice_inside_a_branch_deciding_a_sub_branch_leaves_the_outer_choice_the_gate():
    kernel = CategoricalDistribution(["linear", "rbf"])
    gamma = FloatDistribution(0.0, 1.0)

    def nested_svc(k: str, c: float, value: float):
        params = {"classifier": "svc", "svc_c": c, "svc_kernel": k, "scale": 0.5}
        dists = {"classifier": CLASSIFIER, "svc_c": SVC["svc_c"], "svc_kernel": kernel, **SHARED}
        if k == "rbf":
            params, dists = {**params, "svc_gamma": 0.3}, {**dists, "svc_gamma": gamma}
        return create_trial(params=params, distributions=dists, value=value)

    space = {"classifier": CLASSIFIER, **SHARED}
    trials = [nested_svc("linear", 0.1, 1.0), nested_svc("rbf", 0.2, 0.5), rf_trial(4, 2.0), rf_trial(8, 3.0),
              nested_svc("rbf", 0.6, 0.2)]
    assert gating_choice(space, trials) == "classifier"
    svc, rf = branches("classifier", space, trials)  # the branch's own: what every svc trial suggested
    assert list(svc.search_space) == ["scale", "svc_c", "svc_kernel"] and list(rf.search_space) == ["scale", "rf_depth"]
    # a group that trials of two values suggested, some and not others, is no sub-branch of either
    shared_gamma = [*trials, create_trial(params={**trials[2].params, "svc_gamma": 0.3},
                                          distributions={**trials[2].distributions, "svc_gamma": gamma}, value=1.0)]
    assert gating_choice(space, shared_gamma) is None
    # the sampler compares the branches and proposes the svc branch's own parameters with the NP
    study = optuna.create_study(sampler=sampler(seed=0))
    for t in [nested_svc("linear", 0.9, 0.8), nested_svc("rbf", 0.7, 0.1), nested_svc("rbf", 0.4, 0.3),
              nested_svc("linear", 0.2, 0.9), *[rf_trial(depth, 5.0 + depth / 100) for depth in (4, 12, 20, 28)]]:
        study.add_trial(t)
    trial = study.ask()
    assert trial.suggest_categorical("classifier", ["svc", "rf"]) == "svc"  # every rf value far worse than svc's
    stored = stored_proposal(study._storage.get_trial(trial._trial_id), GROUP_PROPOSAL_KEY)
    assert set(stored) == {"svc_c", "svc_kernel"}
    assert trial.suggest_categorical("svc_kernel", ["linear", "rbf"]) == stored["svc_kernel"]


def test_each_choice_is_a_branch_with_its_trials_and_its_own_parameters():
    space = {"classifier": CLASSIFIER, **SHARED}
    trials = [svc_trial(0.1, 0.2, 1.0), rf_trial(4, 2.0), svc_trial(0.3, 0.4, 3.0)]
    svc, rf = branches("classifier", space, trials)
    assert (svc.value, rf.value) == ("svc", "rf")
    assert list(svc.search_space) == ["scale", "svc_c", "svc_gamma"] and len(svc.trials) == 2
    assert list(rf.search_space) == ["scale", "rf_depth"] and len(rf.trials) == 1
    unseen = branches("classifier", {"classifier": CategoricalDistribution(["svc", "rf", "knn"]), **SHARED}, [])
    assert [(b.value, b.trials, b.search_space) for b in unseen][2] == ("knn", [], {})
    with pytest.raises(ValueError, match="gate must name a categorical"):
        branches("scale", space, trials)


def test_the_branch_with_the_highest_acquisition_value_is_taken():
    space = {"classifier": CLASSIFIER, **SHARED}
    options = branches("classifier", space, [svc_trial(0.1, 0.2, 1.0), rf_trial(4, 2.0)])
    values = {"svc": -3.0, "rf": -1.0}
    asked = []

    def propose(branch, startup):
        asked.append((branch.value, startup))
        return {"x": branch.value}, values[branch.value]

    chosen, params = best_branch(options, n_startup_trials=10, propose=propose)
    assert chosen.value == "rf" and params == {"x": "rf"}
    assert asked == [("svc", 7), ("rf", 5)]  # min(n_startup_trials, 2 * columns + 1)
    values["rf"] = float("nan")  # a branch without a finite value is passed over
    assert best_branch(options, n_startup_trials=10, propose=propose)[0].value == "svc"


# -- the sampler ---------------------------------------------------------------------------

def test_a_choice_with_fewer_than_two_trials_is_taken_first():
    study = optuna.create_study(sampler=sampler(seed=0))
    for c in (0.1, 0.3, 0.5, 0.7, 0.9):
        study.add_trial(svc_trial(c, 0.5, c))
    study.add_trial(rf_trial(8, 0.05))
    assert MIN_BRANCH_TRIALS == 2
    trial = study.ask()
    assert trial.suggest_categorical("classifier", ["svc", "rf"]) == "rf"


def test_a_choice_whose_trials_fail_or_are_pruned_counts_as_tried_and_is_not_taken_again_and_again():
    study = optuna.create_study(sampler=sampler(seed=0))
    for c in (0.1, 0.3, 0.5, 0.7, 0.9):
        study.add_trial(svc_trial(c, 0.5, c))
    study.add_trial(rf_trial(8, 0.05))
    for state in (TrialState.FAIL, TrialState.PRUNED):  # the rf branch's other trials did not complete
        study.add_trial(create_trial(params={"classifier": "rf", "rf_depth": 12, "scale": 0.5},
                                     distributions={"classifier": CLASSIFIER, **RF, **SHARED}, state=state))
    for _ in range(3):  # rf has one completed trial, too few for a model: passed over, not retried
        trial = study.ask()
        assert trial.suggest_categorical("classifier", ["svc", "rf"]) == "svc"
        study.tell(trial, state=TrialState.FAIL)
    # a choice that running trials have taken counts as tried too (another worker is evaluating it)
    options = branches("classifier", {"classifier": CLASSIFIER, **SHARED}, [rf_trial(8, 0.05)])
    assert first_choice(CLASSIFIER, options, []).value == "svc"
    assert first_choice(CLASSIFIER, options, ["svc", "svc"]).value == "rf"
    assert first_choice(CLASSIFIER, options, ["svc", "svc", "rf", "knn"]) is None  # "knn": no choice, not counted


def test_a_gate_choice_optuna_records_as_an_earlier_equal_one_is_not_a_branch_taken_first_forever():
    # Optuna records True as 1 (the first choice == to it): a branch for True never had a trial, so it was
    # taken first in every trial, each evaluating 1's branch as a start-up draw, and the NP never proposed
    gate = CategoricalDistribution(["svc", 1, True])
    svc = [create_trial(params={"m": "svc", "svc_c": c}, distributions={"m": gate, "svc_c": SVC["svc_c"]},
                        value=c) for c in (0.2, 0.6, 0.9)]
    one = [create_trial(params={"m": 1, "rf_depth": d}, distributions={"m": gate, **RF}, value=d / 32)
           for d in (4, 16)]
    assert [b.value for b in branches("m", {"m": gate}, svc + one)] == ["svc", 1]
    study = optuna.create_study(sampler=sampler(seed=0))
    study.add_trials(svc + one)
    trial = study.ask()
    with pytest.warns(RuntimeWarning, match="positions"):
        value = trial.suggest_categorical("m", ["svc", 1, True])
    (trial.suggest_float("svc_c", 0.0, 1.0) if value == "svc" else trial.suggest_int("rf_depth", 2, 32))
    assert FIRST_TRY_KEY not in study.trials[-1].system_attrs  # both branches were tried: the NP compared them


def test_a_gate_choice_of_none_is_a_branch_taken_first_like_any_other():
    # None is a choice like another (a categorical of None, bool, int, float and str values): read as "no choice
    # to take first", a branch for None that the start-up never drew was never taken
    gate = CategoricalDistribution([None, "svc", "rf"])
    svc = [create_trial(params={"m": "svc", "svc_c": c}, distributions={"m": gate, "svc_c": SVC["svc_c"]},
                        value=c) for c in (0.2, 0.6, 0.9)]
    rf = [create_trial(params={"m": "rf", "rf_depth": d}, distributions={"m": gate, **RF}, value=d / 32)
          for d in (4, 16)]
    options = branches("m", {"m": gate}, svc + rf)
    assert first_choice(gate, options, []) is options[0] and options[0].value is None
    assert first_choice(gate, options, [None, None]) is None  # None taken twice: every choice has been tried
    study = optuna.create_study(sampler=sampler(seed=0))
    study.add_trials(svc + rf)
    trial = study.ask()
    assert trial.suggest_categorical("m", [None, "svc", "rf"]) is None
    assert study.trials[-1].system_attrs.get(FIRST_TRY_KEY) is True


def test_the_branch_whose_model_expects_improvement_is_taken_and_its_parameters_are_the_nps():
    study = optuna.create_study(sampler=sampler(seed=0))
    for c, g in ((0.6, 0.1), (0.8, 0.3), (0.7, 0.25), (0.2, 0.9), (0.4, 0.6)):
        study.add_trial(svc_trial(c, g, (c - 0.7) ** 2 + (g - 0.2) ** 2))
    for depth in (4, 12, 20, 28):
        study.add_trial(rf_trial(depth, 5.0 + depth / 100))  # every rf value far worse than svc's
    trial = study.ask()
    assert trial.suggest_categorical("classifier", ["svc", "rf"]) == "svc"
    stored = stored_proposal(study._storage.get_trial(trial._trial_id), GROUP_PROPOSAL_KEY)
    assert set(stored) == {"svc_c", "svc_gamma"}
    assert trial.suggest_float("svc_c", 0.0, 1.0) == stored["svc_c"]
    assert trial.suggest_float("svc_gamma", 0.0, 1.0) == stored["svc_gamma"]


def test_an_enqueued_choice_takes_its_branchs_proposal():
    # svc is the branch the NP would take; the user enqueues rf: its parameters (and the shared scale) are
    # rf's model's proposal, not svc's point with rf's parameters drawn apart from it
    study = optuna.create_study(sampler=sampler(seed=0))
    for c, g in ((0.6, 0.1), (0.8, 0.3), (0.7, 0.25), (0.2, 0.9), (0.4, 0.6)):
        study.add_trial(svc_trial(c, g, (c - 0.7) ** 2 + (g - 0.2) ** 2))
    for depth, scale in ((4, 0.1), (12, 0.3), (20, 0.9), (28, 0.6)):
        study.add_trial(rf_trial(depth, 5.0 + depth / 100, scale))
    study.enqueue_trial({"classifier": "rf"})
    trial = study.ask()
    assert trial.suggest_categorical("classifier", ["svc", "rf"]) == "rf"  # enqueued: no proposal yet
    depth, scale = trial.suggest_int("rf_depth", 2, 32), trial.suggest_float("scale", 0.0, 1.0)
    frozen = study._storage.get_trial(trial._trial_id)
    assert stored_proposal(frozen, PROPOSAL_KEY) == {"classifier": "rf", "scale": scale}
    assert stored_proposal(frozen, GROUP_PROPOSAL_KEY) == {"rf_depth": depth}  # the rf branch's point


def test_a_group_no_gating_choice_decides_is_proposed_by_the_np_from_its_own_trials():
    def by_threshold(t):  # a float, not a categorical, decides whether "y" is suggested
        x = t.suggest_float("x", 0.0, 1.0)
        return x + (t.suggest_float("y", 0.0, 1.0) if x > 0.5 else 1.0)

    study = optuna.create_study(sampler=sampler(seed=0, trust_region=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(by_threshold, n_trials=14)
    late = [t for t in study.trials[4:] if "y" in t.params]
    for t in late:
        group_trials = [s for s in study.trials[:t.number] if "y" in s.params and s.state == TrialState.COMPLETE]
        if len(group_trials) >= 3:  # min(n_startup_trials, 2 * 1 + 1): the group's own start-up is over
            assert stored_proposal(t, GROUP_PROPOSAL_KEY)["y"] == t.params["y"]
    assert any(len([s for s in study.trials[:t.number] if "y" in s.params]) >= 3 for t in late)


def test_without_conditional_the_branches_parameters_are_drawn_independently():
    study = optuna.create_study(sampler=sampler(seed=0, conditional=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(two_branches, n_trials=8)
    assert not any(stored_proposal(t, GROUP_PROPOSAL_KEY) for t in study.trials)
    with pytest.raises(TypeError, match="conditional"):
        NPSampler(conditional=1)


def test_conditional_proposals_repeat_on_one_seed():
    runs = []
    for _ in range(2):
        study = optuna.create_study(sampler=sampler(seed=3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study.optimize(two_branches, n_trials=10)
        runs.append([t.params for t in study.trials])
    assert runs[0] == runs[1]


def test_conditional_proposals_are_the_same_when_the_encoded_rows_of_a_space_are_let_go():
    # the sampler keeps the rows of a bounded number of spaces (max_encoded_spaces): a space let go is encoded
    # again, so a study meeting more spaces than that is proposed the same points, only more slowly. Eight trials
    # suffice: the NP's (from the fifth) read the whole space and each branch's, and with one space kept they
    # encode the trials some 2.5 times as often as with the default
    runs, samplers = [], []
    for max_spaces in (None, 1):
        shared = sampler(seed=3) if max_spaces is None else sampler(seed=3, max_encoded_spaces=max_spaces)
        study = optuna.create_study(sampler=shared)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            study.optimize(two_branches, n_trials=8)
        runs.append([t.params for t in study.trials])
        samplers.append(shared)
    assert len(samplers[0]._encoded._tables) >= 3  # the whole space and each branch's: more than one space held
    assert len(samplers[1]._encoded._tables) == 1
    assert runs[0] == runs[1]


def test_a_branch_sees_only_the_failed_and_running_trials_that_took_its_choice():
    from npbandit.integrations.optuna_observations import study_observations
    from npbandit.integrations.optuna_trials import pending_points
    from npbandit.space import Float, SearchSpace

    reduce = CategoricalDistribution(["none", "pca"])
    c = FloatDistribution(0.0, 1.0)
    study = optuna.create_study()
    for x, value in ((0.1, 1.0), (0.5, 0.5)):
        study.add_trial(create_trial(params={"C": x, "reduce": "none"}, distributions={"C": c, "reduce": reduce},
                                     value=value))
    # a failed and a running trial of the other branch: they have C as well
    study.add_trial(create_trial(params={"C": 0.9, "reduce": "pca"}, distributions={"C": c, "reduce": reduce},
                                 state=TrialState.FAIL))
    study.enqueue_trial({"C": 0.3, "reduce": "pca"})
    running = study.ask()
    running.suggest_float("C", 0.0, 1.0)
    running.suggest_categorical("reduce", ["none", "pca"])
    space = SearchSpace({"C": Float(0.0, 1.0)})
    completed = study.get_trials(states=(TrialState.COMPLETE,))

    def seen(fixed):
        return study_observations(study, {"C": c}, space, None, completed, None, constrained=False,
                                  trust_region=False, n_startup_trials=2, warn_left_out=lambda *a: None, fixed=fixed)

    assert len(seen(None).trials) == 3 and seen(None).pending is not None
    assert len(seen({"reduce": "none"}).trials) == 2 and seen({"reduce": "none"}).pending is None
    assert pending_points(study.trials, space, None, {"reduce": "pca"}) is not None


def test_a_conditional_studys_recommendation_is_its_best_branchs_best_trial():
    study = optuna.create_study(sampler=sampler(seed=0))
    for c, g in ((0.6, 0.1), (0.8, 0.3), (0.7, 0.25), (0.2, 0.9), (0.4, 0.6)):
        study.add_trial(svc_trial(c, g, (c - 0.7) ** 2 + (g - 0.2) ** 2))
    for depth in (4, 12, 20, 28):
        study.add_trial(rf_trial(depth, 5.0 + depth / 100))
    best = study.sampler.recommended_trial(study)
    assert best.params["classifier"] == "svc" and best.value < 0.05
    assert sampler(seed=0, conditional=False).recommended_trial(study) is not None  # the intersection space's model


def test_a_branch_that_always_fails_is_seen_where_it_was_proposed_and_left():
    def objective(t):
        if t.suggest_categorical("classifier", ["svc", "rf"]) == "svc":
            return (t.suggest_float("a", 0.0, 1.0) - 0.3) ** 2
        t.suggest_float("b", 0.0, 1.0)
        raise ValueError("rf fails")

    study = optuna.create_study(sampler=sampler(seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study.optimize(objective, n_trials=20, catch=(ValueError,))
    # no completed rf trial, so no gate: the intersection space (classifier, a) sees each failed rf
    # trial at the point proposed for it, and leaves the branch
    late = [t.params["classifier"] for t in study.trials[12:]]
    assert late.count("rf") <= 1, late


def test_a_shorter_proposal_written_over_a_longer_one_reads_back_alone():
    study = optuna.create_study()
    trial = study.ask()
    long = {f"p{i}": "x" * 40 for i in range(100)}  # more than one chunk of JSON
    store_proposal(study, study._storage.get_trial(trial._trial_id), long)
    store_proposal(study, study._storage.get_trial(trial._trial_id), {"q": 1})
    assert stored_proposal(study._storage.get_trial(trial._trial_id)) == {"q": 1}


def test_a_trial_taking_a_branch_first_draws_its_other_parameters_quietly(caplog):
    study = optuna.create_study(sampler=sampler(seed=0))
    for c in (0.1, 0.3, 0.5, 0.7, 0.9):
        study.add_trial(svc_trial(c, 0.5, c))
    study.add_trial(rf_trial(8, 0.05))
    trial = study.ask()
    optuna.logging.enable_propagation()
    try:
        with caplog.at_level("WARNING"):
            assert trial.suggest_categorical("classifier", ["svc", "rf"]) == "rf"  # the first-try branch
            trial.suggest_float("scale", 0.0, 1.0)
            trial.suggest_int("rf_depth", 2, 32)
    finally:
        optuna.logging.disable_propagation()
    assert not [r for r in caplog.records if "independently" in r.getMessage()]


def test_a_branch_wider_than_the_checkpoint_is_compared_too():
    wide = {f"w{i}": FloatDistribution(0.0, 1.0) for i in range(8)}  # 8 columns against the checkpoint's 6

    def trial(kind, params, value):
        dists = {"classifier": CLASSIFIER, **(wide if kind == "svc" else RF)}
        return create_trial(params={"classifier": kind, **params}, distributions=dists, value=value)

    study = optuna.create_study(sampler=sampler(seed=0))
    for i in range(6):
        point = {f"w{j}": (0.1 * (i + j)) % 1.0 for j in range(8)}
        study.add_trial(trial("svc", point, sum((v - 0.5) ** 2 for v in point.values())))
    for depth in (4, 12, 20, 28):
        study.add_trial(trial("rf", {"rf_depth": depth}, 50.0 + depth))  # every rf value far worse
    t = study.ask()
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)  # the value's model reads its columns quietly
        assert t.suggest_categorical("classifier", ["svc", "rf"]) == "svc"
    stored = stored_proposal(study._storage.get_trial(t._trial_id), GROUP_PROPOSAL_KEY)
    assert set(stored) == set(wide)  # the branch path proposed the wide branch's parameters


def test_without_conditional_groups_a_relative_space_of_one_gate_may_repeat_its_values_without_warning():
    # conditional=False: the NP proposes only the gate, the branch parameters come from the independent
    # sampler, so a gate value proposed again is no repeated trial (it warned "every point of the discrete
    # search space ... evaluated" on every trial once both values had been tried)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study = optuna.create_study(sampler=sampler(seed=0, conditional=False))
        study.optimize(two_branches, n_trials=8)
    assert not [w for w in caught if "every point of the discrete search space" in str(w.message)]
    assert len(study.trials) == 8

    def gate_only(t) -> float:  # the trial is its gate alone: a repeat is a repeated trial, and said so
        return {"svc": 1.0, "rf": 2.0}[t.suggest_categorical("classifier", ["svc", "rf"])]

    with pytest.warns(RuntimeWarning, match="every point of the discrete search space"):
        optuna.create_study(sampler=sampler(seed=0, conditional=False)).optimize(gate_only, n_trials=6)
