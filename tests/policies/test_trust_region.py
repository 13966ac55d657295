"""The trust region (TuRBO-1's rules) and BOPolicy(trust_region=True): the model sees the box as its cube."""

import numpy as np
import pytest
import torch

import npbandit.acquisition.proposal as proposal
from npbandit.policies import BOPolicy
from npbandit.policies.trust_region import TrustRegion, TrustRegionSettings


def test_the_region_doubles_after_successes_halves_after_failures_and_restarts():
    assert TrustRegion(2).length == 1.6 and TrustRegion(2).failure_tolerance == 4  # starts as the whole cube
    region = TrustRegion(6, length_init=0.8)  # TuRBO's start
    assert region.length == 0.8 and region.failure_tolerance == 6
    for _ in range(3):
        region.observe(True)
    assert region.length == 1.6
    for _ in range(3):  # capped at length_max
        region.observe(True)
    assert region.length == 1.6
    region.observe(True)
    region.observe(False)  # a failure resets the run of successes
    region.observe(True)
    region.observe(True)
    assert region.length == 1.6 and region.successes == 2
    halvings = 0
    while region.restarts == 0:
        for _ in range(6):
            region.observe(False)
        halvings += 1
    assert halvings == 8 and region.length == 0.8  # 1.6 / 2**8 < 0.5**7: back to the start
    assert region.improves(1.01, 1.0) and not region.improves(1.0005, 1.0)  # TuRBO's margin: 1e-3 |best|
    assert region.improves(-0.9, -1.0) and not region.improves(-0.9995, -1.0)
    assert region.improves(1.01, 1.0, spread=1e9)  # the range plays no part in TuRBO's margin


def test_a_margin_on_the_range_counts_a_success_whatever_constant_is_added_to_the_values():
    by_range = TrustRegion(2, margin_scale="range")
    assert by_range.improves(1.0 + 0.02, 1.0, spread=10.0) and not by_range.improves(1.0 + 0.01, 1.0, spread=10.0)
    assert by_range.improves(-5.0, -float("inf"), spread=0.0)  # a first feasible value improves on none
    assert TrustRegion(2, success_margin=0.0).improves(1.0 + 1e-12, 1.0)  # no margin: any strict improvement
    rng = np.random.default_rng(0)
    values = list(rng.normal(size=60).cumsum() * 0.01)  # steps far below 1e-3 of a constant of 1e4
    for scale, same in (("range", True), ("best", False)):
        runs = []
        for constant in (0.0, 1e4, -1e6):
            policy = BOPolicy(2, model="gp", trust_region=TrustRegionSettings(margin_scale=scale))
            policy.reset(seed=0)
            for v in values:
                policy.observe(None, np.full(2, 0.5), v + constant, {})
            region = policy.region
            runs.append((region.length, region.successes, region.failures, region.restarts))
        assert (runs[0] == runs[1] == runs[2]) is same, (scale, runs)


def test_a_replayed_region_measures_the_range_of_the_finite_values_before_each():
    values = [1000.0, 1001.0, -float("inf"), 1001.5]  # an infeasible value is no part of the range
    turbo = TrustRegion.replay(2, values, n_design=2)
    by_range = TrustRegion.replay(2, values, n_design=2, settings=TrustRegionSettings(margin_scale="range"))
    assert (turbo.successes, turbo.failures) == (0, 2)  # 0.5 is below 1e-3 |1001|
    assert (by_range.successes, by_range.failures) == (1, 0)  # above 1e-3 of the range 1


def test_the_box_is_cut_to_the_cube_and_maps_its_points_onto_it():
    region = TrustRegion(2)
    region.length = 0.4
    lower, upper = region.box(torch.tensor([0.1, 0.5]))
    assert torch.allclose(lower, torch.tensor([0.0, 0.3], dtype=torch.float64))
    assert torch.allclose(upper, torch.tensor([0.3, 0.7], dtype=torch.float64))
    X = torch.tensor([[0.15, 0.5], [0.3, 0.7], [0.5, 0.5], [0.0, 0.29]], dtype=torch.float64)
    unit, inside = region.to_unit(X, lower, upper)
    assert inside.tolist() == [True, True, False, False]
    assert torch.allclose(unit, torch.tensor([[0.5, 0.5], [1.0, 1.0]], dtype=torch.float64))


@pytest.mark.parametrize("kwargs,match", [({"dim": 0}, "dim"), ({"dim": 2, "length_min": 1.7}, "length_min"),
                                          ({"dim": 2, "success_tolerance": 0}, "success_tolerance"),
                                          ({"dim": 2, "failure_tolerance": 1.5}, "failure_tolerance")])
def test_bad_regions_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrustRegion(**kwargs)
    with pytest.raises(ValueError, match="center"):
        TrustRegion(2).box(torch.zeros(3))


def test_a_policy_in_a_trust_region_shows_its_model_only_the_region(monkeypatch):
    seen = []
    real = proposal.propose

    def spy(model, *args, **kwargs):
        seen.append((model.train_X.clone(), kwargs["observed"].clone()))
        return real(model, *args, **kwargs)

    monkeypatch.setattr(proposal, "propose", spy)
    policy = BOPolicy(2, model="cmanp-bo")  # on by default for an NP, off for the GP
    assert policy.name == "cmanp-bo-tr-logei" and policy.params()["trust_region"] is True
    assert BOPolicy(2, model="cmanp-bo", trust_region=False).params()["trust_region"] is False
    assert BOPolicy(2, model="gp").name == "gp-logei"
    policy.reset(seed=0)
    f = lambda x: -float(((x - 0.3) ** 2).sum())  # noqa: E731 (maximised)
    for _ in range(policy.n_init):
        x = policy.act(None)
        policy.observe(None, x, f(x), {})
    best = np.array(policy.X)[int(np.argmax(policy.Y))]
    policy.region.length = 0.2
    x = policy.act(None)
    assert np.all(np.abs(x - best) <= 0.1 + 1e-12), "the proposal left the trust region"
    (train_X, observed), = seen
    seen_half = 0.1 * policy.region.context_factor  # the model sees a box this many times as wide
    inside = np.all(np.abs(np.array(policy.X) - best) <= seen_half, axis=1)
    assert len(train_X) == inside.sum() >= 1
    # the repeat check sees every observation in the model's frame, those outside its box too
    in_box = ((observed >= 0) & (observed <= 1)).all(dim=-1)
    assert len(observed) == len(policy.X) and torch.equal(observed[in_box], train_X)
    assert float(train_X.min()) >= 0.0 and float(train_X.max()) <= 1.0
    policy.observe(None, x, f(x), {})  # a proposal's outcome moves the counters
    assert policy.region.successes + policy.region.failures == 1
    with pytest.raises(TypeError, match="trust_region"):
        BOPolicy(2, model="cmanp-bo", trust_region="yes")


@pytest.mark.slow
def test_optimize_searches_a_trust_region_by_default_for_an_np_and_records_it(tmp_path):
    from npbandit import optimize
    from npbandit.storage import list_runs

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    for flag in (None, False):
        result = optimize(lambda x: float(((x - 0.2) ** 2).sum()), [[-1, -1], [1, 1]], surrogate="tnpd", budget=8,
                          seed=0, db=db, progress=False, **({} if flag is None else {"trust_region": flag}))
        assert len(result.history) == 8
    on, off = sorted(list_runs(db), key=lambda r: r.id)
    assert on.policy_params["trust_region"] is True and on.policy.endswith("-tr-logei")
    assert on.policy_params["trust_region_budget"] == 8  # optimize tells the region its budget
    assert off.policy_params["trust_region"] is False and not off.policy.endswith("-tr-logei")
    with pytest.raises(TypeError, match="trust_region"):
        optimize(lambda x: 0.0, [[0], [1]], budget=3, db=None, trust_region="on")


def test_optimize_searches_and_records_the_trust_region_settings_it_is_given(tmp_path):
    from npbandit import optimize
    from npbandit.storage import list_runs

    db = f"sqlite:///{tmp_path / 'runs.db'}"
    settings = TrustRegionSettings(margin_scale="range", success_margin=0.01)
    result = optimize(lambda x: float(((x - 0.2) ** 2).sum()) + 1e4, [[-1, -1], [1, 1]], surrogate="tnpd", budget=8,
                      seed=0, db=db, progress=False, trust_region=settings)
    assert len(result.history) == 8
    (run,) = list_runs(db)
    assert run.policy_params["trust_region"] is True
    assert (run.policy_params["trust_region_margin_scale"], run.policy_params["trust_region_success_margin"]) == (
        "range", 0.01)
    with pytest.raises(ValueError, match="trust_region=TrustRegionSettings"):
        optimize(lambda x: (0.0, 0.0), [[0], [1]], budget=3, db=None, minimize=[True, True], trust_region=settings)


def test_replaying_a_search_gives_the_region_its_policy_ended_with():
    """NPSampler rebuilds the region from the trial history (replay); BOPolicy resizes it as
    results arrive: both must end in the same state."""
    values = list(np.random.default_rng(3).normal(size=40).cumsum())
    policy = BOPolicy(3, model="cmanp-bo")
    policy.reset(seed=0)
    for i, v in enumerate(values):  # the design's points handed out by the policy, then the proposals'
        policy.observe(None, policy.act(None) if i < policy.n_init else np.full(3, 0.5), v, {})
    given = BOPolicy(3, model="cmanp-bo")  # the same history given to observe directly (a warm start)
    given.reset(seed=0)
    for v in values:
        given.observe(None, np.full(3, 0.5), v, {})
    assert vars(given.region) == vars(policy.region)
    replayed = TrustRegion.replay(3, values, policy.n_init)
    assert (replayed.length, replayed.successes, replayed.failures, replayed.restarts) == (
        policy.region.length, policy.region.successes, policy.region.failures, policy.region.restarts)
    assert replayed.length != TrustRegion(3).length  # the walk moved it


@pytest.mark.slow
def test_the_model_can_see_a_wider_box_than_the_one_searched(monkeypatch):
    seen = []
    real = proposal.propose

    def spy(model, *args, **kwargs):
        seen.append((model.train_X.clone(), kwargs["bounds"].clone()))
        return real(model, *args, **kwargs)

    monkeypatch.setattr(proposal, "propose", spy)
    policy = BOPolicy(2, model="tnpd-bo")
    policy.reset(seed=1)
    f = lambda x: -float(((x - 0.4) ** 2).sum())  # noqa: E731 (maximised)
    for _ in range(8):
        x = policy.act(None)
        policy.observe(None, x, f(x), {})
    best = np.array(policy.X)[int(np.argmax(policy.Y))]
    policy.region.length, policy.region.context_factor = 0.3, 2.0
    seen.clear()
    x = policy.act(None)
    assert np.all(np.abs(x - best) <= 0.15 + 1e-12), "the proposal left the searched box"
    (train_X, bounds), = seen
    X = np.array(policy.X)
    seen_lower, seen_upper = np.clip(best - 0.3, 0, 1), np.clip(best + 0.3, 0, 1)
    inside = np.all((X >= seen_lower) & (X <= seen_upper), axis=1)
    assert len(train_X) == inside.sum() > np.all(np.abs(X - best) <= 0.15, axis=1).sum()
    searched_lower, searched_upper = np.clip(best - 0.15, 0, 1), np.clip(best + 0.15, 0, 1)
    span = seen_upper - seen_lower  # the searched box in the model's unit cube
    assert np.allclose(bounds.numpy(), [(searched_lower - seen_lower) / span, (searched_upper - seen_lower) / span])
    with pytest.raises(ValueError, match="context_factor"):
        TrustRegion(2, context_factor=0.5)


def test_proposals_stay_inside_the_bounds_they_are_given():
    from npbandit.models import NPModel

    X = torch.rand(10, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = -((X - 0.9) ** 2).sum(-1, keepdim=True)  # best outside the bounds
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    bounds = torch.tensor([[0.1, 0.2], [0.4, 0.5]], dtype=torch.float64)
    for acquisition in ("logei", "ucb", "marginal-thompson"):
        x = proposal.propose(model, acquisition, dim=2, best_f=Y.max(), seed=0, bounds=bounds, raw_samples=64,
                       num_restarts=2, thompson_candidates=128)
        assert np.all(x >= bounds[0].numpy()) and np.all(x <= bounds[1].numpy()), acquisition
    with pytest.raises(ValueError, match="bounds"):
        proposal.propose(model, "logei", dim=2, best_f=Y.max(), seed=0, bounds=torch.tensor([[0.5, 0.2], [0.4, 0.5]]))


def test_a_collapsed_region_is_held_when_the_budget_left_cannot_use_a_restart():
    region = TrustRegion(2)
    assert region.restart_evaluations == 32  # 4 failures per halving, 8 halvings from 1.6 below 0.5 ** 7
    assert TrustRegion(6).restart_evaluations == 48
    while region.length / 2 >= region.length_min:  # down to the last side above length_min
        region.observe(False, remaining=100)
    for _ in range(region.failure_tolerance):  # the next halving falls below length_min
        region.observe(False, remaining=31)
    assert (region.length, region.holds, region.restarts) == (region.length_min, 1, 0)
    for _ in range(region.failure_tolerance):  # enough left: TuRBO's restart
        region.observe(False, remaining=32)
    assert (region.length, region.holds, region.restarts) == (region.length_init, 1, 1)
    with pytest.raises(ValueError, match="remaining"):
        region.observe(False, remaining=-1)


def test_a_policy_told_its_budget_holds_the_region_near_the_end_and_records_the_budget():
    values = [-float(i) for i in range(60)]  # nothing improves: the region halves every 4 proposals
    runs = {}
    for budget in (None, 60):
        policy = BOPolicy(2, model="cmanp-bo", budget=budget)
        policy.reset(seed=0)
        for v in values:
            policy.observe(None, np.full(2, 0.5), v, {})
        runs[budget] = policy
    assert runs[None].region.restarts == 1 and runs[None].region.holds == 0  # TuRBO: restarted at the 37th
    assert runs[60].region.restarts == 0 and runs[60].region.holds == 6  # at the 32nd proposal, then every 4th
    assert runs[60].region.length == runs[60].region.length_min
    assert runs[60].params()["trust_region_budget"] == 60 and runs[None].params()["trust_region_budget"] is None
    with pytest.raises(ValueError, match="budget"):
        BOPolicy(2, model="cmanp-bo", budget=0)


def test_the_budget_left_counts_failed_and_in_flight_evaluations():
    # a failed evaluation (on_error="skip") is never observed and one in flight not yet; both are
    # spent, so a restart must not be planned on them
    policy = BOPolicy(2, model="cmanp-bo", n_init=2, budget=10)
    policy.reset(seed=0)
    seen = []
    observe = policy.region.observe
    policy.region.observe = lambda improved, remaining=None: (seen.append(remaining), observe(improved, remaining))
    handed = [policy.act(None) for _ in range(3)]  # the design: one fails, two come back
    for i, x in enumerate(handed[:2]):
        policy.observe(None, x, -float(i), {})
    policy.observe(None, np.full(2, 0.3), 1.0, {})  # given directly: spent too
    assert seen == [10 - 4]  # three handed out, one given
    assert policy.region.successes == 1


@pytest.mark.parametrize("kwargs,match", [({"length_min": 1.7}, "length_min"), ({"length_init": 0.0}, "length_min"),
                                          ({"length_max": 1.0}, "length_init <= length_max"),
                                          ({"success_tolerance": 0}, "success_tolerance"),
                                          ({"failure_tolerance": 1.5}, "failure_tolerance"),
                                          ({"failure_tolerance": True}, "failure_tolerance"),
                                          ({"context_factor": 0.5}, "context_factor"),
                                          ({"context_factor": True}, "context_factor"),
                                          ({"success_margin": -1e-3}, "success_margin"),
                                          ({"success_margin": float("nan")}, "success_margin"),
                                          ({"success_margin": True}, "success_margin"),
                                          ({"margin_scale": "median"}, "margin_scale")])
def test_trust_region_settings_are_validated_as_the_region_is(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrustRegionSettings(**kwargs)
    with pytest.raises(ValueError, match=match):
        TrustRegion(2, **kwargs)


def test_trust_region_settings_are_the_regions_defaults_frozen_and_build_regions():
    settings = TrustRegionSettings()
    assert vars(settings.region(3)) == vars(TrustRegion(3))  # the same defaults, one home
    assert (TrustRegion.length_init, TrustRegion.context_factor) == (settings.length_init, settings.context_factor)
    assert settings.changed() == {}
    turbo = TrustRegionSettings(length_init=0.8, failure_tolerance=2, context_factor=1.0)
    assert turbo.changed() == {"length_init": 0.8, "failure_tolerance": 2, "context_factor": 1.0}
    region = TrustRegion.from_settings(6, turbo)
    assert (region.dim, region.length, region.failure_tolerance, region.context_factor) == (6, 0.8, 2, 1.0)
    assert TrustRegion.from_settings(6, settings).failure_tolerance == 6  # None: max(4, d) for the region's d
    with pytest.raises(AttributeError):
        turbo.length_init = 1.6  # frozen: one object may serve many policies
    assert turbo == TrustRegionSettings(length_init=0.8, failure_tolerance=2, context_factor=1.0) and hash(turbo)
    with pytest.raises(TypeError, match="settings"):
        TrustRegion.from_settings(2, {"length_init": 0.8})


def test_a_policy_searches_and_logs_the_trust_region_it_is_given():
    """Injected settings are the ones the region runs with and the ones the run logs (not
    the class defaults); the defaults log exactly what they always did."""
    settings = TrustRegionSettings(length_init=0.8, success_tolerance=2, context_factor=3.0)
    policy = BOPolicy(2, model="gp", trust_region=settings, budget=30)
    assert policy.trust_region is True and policy.trust_region_settings is settings and policy.name == "gp-tr-logei"
    policy.reset(seed=0)
    region = policy.region
    assert (region.length, region.length_init, region.success_tolerance, region.context_factor) == (0.8, 0.8, 2, 3.0)
    params = policy.params()
    assert params["trust_region_length_init"] == region.length_init == 0.8
    assert params["trust_region_context_factor"] == region.context_factor == 3.0
    assert params["trust_region_success_tolerance"] == region.success_tolerance == 2
    assert params["trust_region_budget"] == 30
    assert not {"trust_region_length_min", "trust_region_length_max", "trust_region_failure_tolerance"} & set(params)
    default = BOPolicy(2, model="gp", trust_region=True).params()
    assert {k: v for k, v in default.items() if k.startswith("trust_region")} == {
        "trust_region": True, "trust_region_length_init": 1.6, "trust_region_context_factor": 2.0,
        "trust_region_budget": None}
    assert BOPolicy(2, model="gp", trust_region=TrustRegionSettings()).params() == default
    assert "trust_region_length_init" not in BOPolicy(2, model="gp").params()  # off: no region settings
    # the settings reach the proposal: the model sees a box context_factor times the searched one
    f = lambda x: -float(((x - 0.4) ** 2).sum())  # noqa: E731 (maximised)
    for _ in range(policy.n_init + 1):
        x = policy.act(None)
        policy.observe(None, x, f(x), {})
    assert policy.region.length_init == 0.8 and policy.region.successes + policy.region.failures == 1
    with pytest.raises(TypeError, match="TrustRegionSettings"):
        BOPolicy(2, model="gp", trust_region={"length_init": 0.8})


def test_nearest_keeps_the_rows_closest_to_the_centre_in_their_order():
    X = torch.tensor([[0.9, 0.9], [0.5, 0.5], [0.1, 0.1], [0.55, 0.5], [0.5, 0.45]], dtype=torch.float64)
    assert proposal.nearest(X, torch.tensor([0.5, 0.5], dtype=torch.float64), 3).tolist() == [1, 3, 4]
    assert proposal.nearest(X, torch.zeros(2, dtype=torch.float64), 9).tolist() == [0, 1, 2, 3, 4]
    # equally near rows: the earlier ones
    assert proposal.nearest(torch.ones(4, 1), torch.zeros(1), 2).tolist() == [0, 1]


def test_a_region_with_more_points_than_max_context_shows_the_model_those_nearest_the_incumbent():
    region = TrustRegion(2)  # the whole cube in view
    X = torch.rand(40, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    shown = []

    def build(X_seen, Y_seen):
        shown.append((X_seen, Y_seen))
        from botorch.models import SingleTaskGP

        return SingleTaskGP(X_seen, Y_seen)

    proposal.propose_in_region(region, X, Y, build, "logei", seed=0, max_context=10, raw_samples=16,
                               num_restarts=2)
    (X_seen, Y_seen), = shown
    assert len(X_seen) == 10
    best = int(torch.argmax(Y))
    lower, upper = region.box(X[best], region.context_factor)
    center = (X[best] - lower) / (upper - lower)
    distance = torch.linalg.vector_norm(region.to_unit(X, lower, upper)[0] - center, dim=-1)
    assert float(torch.linalg.vector_norm(X_seen - center, dim=-1).max()) <= float(torch.sort(distance).values[9])
    assert float(Y_seen.max()) == float(Y.max())  # the incumbent always among them
    with pytest.raises(ValueError, match="max_context"):
        proposal.propose_in_region(region, X, Y, build, "logei", seed=0, max_context=0)


def test_a_policy_limits_its_context_to_what_the_checkpoint_was_trained_with_and_logs_it():
    from npbandit.surrogates.pretrained import context_limit, read_card

    assert context_limit(read_card("tnpd-bo")) == 100  # its prior drew 3..100 context points
    assert context_limit({"prior": {}}) is None
    policy = BOPolicy(2, model="tnpd-bo")
    assert policy.max_context == 100 and policy.params()["max_context"] == 100
    assert BOPolicy(2, model="tnpd-bo", max_context=None).params()["max_context"] is None
    assert BOPolicy(2, model="gp").max_context is None
    with pytest.raises(ValueError, match="max_context"):
        BOPolicy(2, model="tnpd-bo", max_context=0)
