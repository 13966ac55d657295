"""npbandit.integrations.optuna.NPSampler (the proposal step it shares with optimize: test_bo_baselines.py; how it
reads and writes trials -- grid values, running and enqueued trials, multi-objective studies: test_optuna_trials.py;
what it tells the user -- log messages, the conditional-space warning: test_optuna_messages.py)."""

import math
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

optuna = pytest.importorskip("optuna", reason="the Optuna integration needs the 'optuna' extra: "
                                              "pip install -e \".[optuna]\"")

from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution  # noqa: E402
from optuna.trial import TrialState, create_trial  # noqa: E402

from npbandit.integrations.optuna import NPSampler  # noqa: E402
from npbandit.integrations.optuna_trials import parameter_of  # noqa: E402
from npbandit.policies.trust_region import TrustRegion  # noqa: E402
from npbandit.space import Float, Int  # noqa: E402
from npbandit.surrogates.pretrained import CheckpointError  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
#: small acquisition optimisation: these tests check plumbing, not optimisation quality
FAST = {"num_restarts": 2, "raw_samples": 64}

optuna.logging.set_verbosity(optuna.logging.WARNING)


def sampler(**kwargs) -> NPSampler:
    return NPSampler(**{"n_startup_trials": 4, **FAST, **kwargs})


def mixed(trial) -> float:
    """Every kind of parameter the sampler maps (six unit-cube columns, the shipped checkpoints'
    width): plain / log / stepped float, stepped int, log int, a two-choice category."""
    x = trial.suggest_float("x", -2.0, 3.0)
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    q = trial.suggest_float("q", 0.0, 1.0, step=0.25)
    k = trial.suggest_int("k", 0, 20, step=4)
    w = trial.suggest_int("w", 1, 64, log=True)
    c = trial.suggest_categorical("c", ["a", "b"])
    return (x - 1) ** 2 + (math.log10(lr) + 2) ** 2 + q + k / 20 + abs(math.log2(w) - 3) + (c == "b")


CHOICES = ("relu", None, 2.5)  # a categorical's choices come back as these very objects


def typed(trial) -> float:
    """An int, a log-scale float and a three-choice categorical (one-hot: three columns)."""
    n = trial.suggest_int("n", 1, 6)
    lr = trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    act = trial.suggest_categorical("act", CHOICES)
    return abs(n - 4) + (math.log10(lr) + 2) ** 2 + {"relu": 1.0, None: 0.0, 2.5: 2.0}[act]


def params(study) -> list[dict]:
    return [t.params for t in study.trials]


# -- search-space mapping ---------------------------------------------------------------

@pytest.mark.parametrize(("low", "high", "settings"), [(1e-3, 1.0, {"log": True, "step": 1e-3}),
                                                      (1, 65, {"log": True, "step": 2})])
def test_the_settings_optuna_refuses_the_search_space_refuses(low, high, settings):
    # a log scale with a step other than an Int's 1: no distribution, no parameter, nothing to map
    dist, parameter = (IntDistribution, Int) if isinstance(low, int) else (FloatDistribution, Float)
    with pytest.raises(ValueError):
        dist(low, high, **settings)
    with pytest.raises(ValueError, match="log=True"):
        parameter(low, high, **settings)


@pytest.mark.parametrize("dist", [FloatDistribution(-2, 3), FloatDistribution(1e-4, 1e-1, log=True),
                                  FloatDistribution(0, 1, step=0.1), IntDistribution(1, 5),
                                  IntDistribution(0, 20, step=4), IntDistribution(1, 64, log=True),
                                  CategoricalDistribution(CHOICES), CategoricalDistribution([True, False])])
def test_distributions_read_as_the_search_spaces_parameters(dist):
    # one implementation of the unit cube: npbandit.space's (its own tests check the mapping)
    parameter = parameter_of(dist)
    if isinstance(dist, CategoricalDistribution):
        grid = list(dist.choices)
        assert parameter.values == dist.choices and parameter.columns == (3 if len(grid) == 3 else 1)
    else:
        grid = (np.linspace(dist.low, dist.high, 7) if dist.step is None
                else np.arange(dist.low, dist.high + dist.step / 2, dist.step))
        grid = [int(v) if isinstance(dist, IntDistribution) else float(v) for v in grid]
    for v in grid:
        u = parameter.encode(v)
        assert ((0 <= u) & (u <= 1)).all()
        back = parameter.decode(u)
        assert back is v if isinstance(dist, CategoricalDistribution) else back == pytest.approx(v, rel=1e-12)
    for u in np.random.default_rng(0).random((101, parameter.columns)):
        x = parameter.decode(u)
        assert dist._contains(dist.to_internal_repr(x)), (u, x)
        assert type(x) is (int if isinstance(dist, IntDistribution) else float) or x in dist.choices
    assert parameter_of(CategoricalDistribution([1.0, float("nan")])) is None  # left to the independent sampler


# -- studies ----------------------------------------------------------------------------

@pytest.mark.slow
def test_mixed_space_study_proposes_with_the_np(monkeypatch):
    calls = []
    original = NPSampler._propose

    def spy(self, X, Y, pending, seed, *rest):
        calls.append((X.shape, Y.shape))
        return original(self, X, Y, pending, seed, *rest)

    monkeypatch.setattr(NPSampler, "_propose", spy)
    study = optuna.create_study(sampler=sampler(seed=0))
    study.optimize(mixed, n_trials=8)
    # trials 4..7 come from the NP, over the six parameters (the category's one column included)
    assert [c[0] for c in calls] == [(n, 6) for n in range(4, 8)] and all(c[1] == (c[0][0], 1) for c in calls)
    for p in params(study):
        assert -2 <= p["x"] <= 3 and 1e-4 <= p["lr"] <= 1e-1 and p["c"] in ("a", "b")
        assert p["q"] in (0, 0.25, 0.5, 0.75, 1.0)
        assert isinstance(p["k"], int) and p["k"] % 4 == 0 and 0 <= p["k"] <= 20
        assert isinstance(p["w"], int) and 1 <= p["w"] <= 64


@pytest.mark.slow
def test_same_seed_one_worker_repeats_the_trials():
    def run(seed):
        study = optuna.create_study(sampler=sampler(seed=seed))
        study.optimize(mixed, n_trials=7)
        return params(study)

    first = run(3)
    assert run(3) == first
    assert run(4) != first


def test_reseed_rng_keeps_the_seed_and_reseeds_the_users_independent_sampler():
    class Counting(optuna.samplers.RandomSampler):
        reseeded = 0

        def reseed_rng(self):
            Counting.reseeded += 1
            super().reseed_rng()

    def run(reseed):
        s = sampler(seed=3, n_startup_trials=2)
        if reseed:
            s.reseed_rng()
        study = optuna.create_study(sampler=s)
        study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2, n_trials=3)
        return params(study)

    assert run(True) == run(False)  # the draws and the proposal are keyed by (seed, trial number)
    NPSampler(seed=0, independent_sampler=Counting(seed=0)).reseed_rng()
    assert Counting.reseeded == 1
    # its own docstring says so, not BaseSampler's (which says the seed changes)
    assert "own ``seed`` stays" in " ".join(NPSampler.reseed_rng.__doc__.split())


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_direction_is_honoured(direction):
    # completed trials of f(x) = x; a minimising study looks low, a maximising one high
    study = optuna.create_study(direction=direction, sampler=sampler(seed=0))
    dist = FloatDistribution(0.0, 1.0)
    for x in np.linspace(0.05, 0.95, 7):
        study.add_trial(create_trial(params={"x": float(x)}, distributions={"x": dist}, value=float(x)))
    trial = study.ask()
    x = trial.suggest_float("x", 0.0, 1.0)
    assert (x < 0.3) if direction == "minimize" else (x > 0.7)


def test_completed_failed_pruned_and_infinite_trials_inform_the_np(monkeypatch):
    seen = {}

    def capture(self, X, Y, pending, seed, *rest):
        seen["X"], seen["Y"], seen["pending"] = X, Y, pending
        return np.full(X.shape[-1], 0.5)

    monkeypatch.setattr(NPSampler, "_propose", capture)
    study = optuna.create_study(sampler=sampler(seed=0))
    dist = {"x": FloatDistribution(0.0, 10.0)}
    for x in (1.0, 2.0, 3.0, 4.0):
        study.add_trial(create_trial(params={"x": x}, distributions=dist, value=x))
    study.add_trial(create_trial(params={"x": 5.0}, distributions=dist, value=float("inf")))
    study.add_trial(create_trial(params={"x": 6.0}, distributions=dist, state=TrialState.FAIL))
    study.add_trial(create_trial(params={"x": 7.0}, distributions=dist, state=TrialState.PRUNED,
                                 intermediate_values={0: 1.0}))
    study.add_trial(create_trial(params={"x": 8.0}, distributions=dist, state=TrialState.RUNNING))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is left out
        x = study.ask().suggest_float("x", 0.0, 10.0)
    assert x == 5.0
    # the infinite (x = 5), failed (6) and pruned (7) trials too, at the worst completed value; the running one not
    assert seen["X"].squeeze(-1).tolist() == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    assert seen["Y"].squeeze(-1).tolist() == [-1.0, -2.0, -3.0, -4.0, -4.0, -4.0, -4.0]  # minimised: negated
    assert seen["pending"].squeeze(-1).tolist() == [0.8]  # the running trial (believed at the worst value)


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_an_infinity_on_the_improving_side_is_seen_at_the_best_value_not_the_worst(monkeypatch, direction):
    # minimising log(error), a perfect trial gives -inf: Optuna's best_trial, and GPSampler clips it to the
    # best finite value; seen at the worst, the NP would steer away from the best point found
    seen = {}

    def capture(self, X, Y, pending, seed, *rest):
        seen["X"], seen["Y"] = X, Y
        return np.full(X.shape[-1], 0.5)

    monkeypatch.setattr(NPSampler, "_propose", capture)
    sign = 1.0 if direction == "minimize" else -1.0  # the values as the study records them
    study = optuna.create_study(direction=direction, sampler=sampler(seed=0))
    dist = {"x": FloatDistribution(0.0, 10.0)}
    for x in (1.0, 2.0, 3.0, 4.0):
        study.add_trial(create_trial(params={"x": x}, distributions=dist, value=sign * x))
    study.add_trial(create_trial(params={"x": 5.0}, distributions=dist, value=-sign * math.inf))  # improving
    study.add_trial(create_trial(params={"x": 6.0}, distributions=dist, value=sign * math.inf))  # worsening
    assert study.best_trial.number == 4
    study.ask().suggest_float("x", 0.0, 10.0)
    assert seen["X"].squeeze(-1).tolist() == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    # maximised values: the improving infinity at the best finite one, the worsening one at the worst
    assert seen["Y"].squeeze(-1).tolist() == [-1.0, -2.0, -3.0, -4.0, -1.0, -4.0]


def test_a_huge_finite_value_is_proposed_around_as_the_same_study_scaled_down():
    # an objective's 1e300 for a bad point: in the values' units a spread that large has a variance (its
    # square) past float64, and the proposal failed inside BoTorch (a probability tensor with nan); the
    # values the NP sees are scaled by a power of two, exactly, which leaves every acquisition's maximiser
    factor = 2.0 ** -897  # 1e300 = 0.746 * 2 ** 997, brought under 2 ** 100

    def proposal(scale):
        study = optuna.create_study(sampler=sampler(seed=0))
        dist = {"x": FloatDistribution(0.0, 1.0)}
        for x, value in ((0.1, 1.0), (0.9, 1e300), (0.5, 2.0), (0.3, 0.5), (0.7, 3.0)):
            study.add_trial(create_trial(params={"x": x}, distributions=dist, value=value * scale))
        return study.ask().suggest_float("x", 0.0, 1.0)

    assert proposal(1.0) == proposal(factor)


def test_a_study_of_tiny_range_is_proposed_at_the_same_numbers_whatever_its_units():
    # values spanning under 2 ** -10 are seen brought to a range in [1, 2) by one power of two: a study in
    # units 2 ** 20 apart proposes the same points (unscaled, the NP's variance in those units meets
    # gpytorch's floor)
    def proposals(scale):
        study = optuna.create_study(sampler=sampler(seed=0))
        study.optimize(lambda t: scale * ((t.suggest_float("x", 0.0, 1.0) - 0.3) ** 2 + 1.0), n_trials=9)
        return [t.params["x"] for t in study.trials]

    assert proposals(2.0 ** -16) == proposals(2.0 ** -36)


def test_the_np_is_told_which_points_the_completed_trials_evaluated(monkeypatch):
    import npbandit.integrations.optuna_proposals as integration

    seen = []
    monkeypatch.setattr(integration, "propose", lambda model, acquisition, **kw: seen.append(kw["observed"]) or
                        np.full(1, 0.5))
    dist = {"x": FloatDistribution(0.0, 10.0)}
    for avoid in (True, False):
        study = optuna.create_study(sampler=sampler(seed=0, avoid_repeats=avoid, trust_region=False))
        for x in (1.0, 2.0, 3.0, 4.0):
            study.add_trial(create_trial(params={"x": x}, distributions=dist, value=x))
        study.ask().suggest_float("x", 0.0, 10.0)
    assert seen[0].squeeze(-1).tolist() == [0.1, 0.2, 0.3, 0.4] and seen[1] is None
    with pytest.raises(TypeError, match="avoid_repeats"):
        NPSampler(avoid_repeats=None)


@pytest.mark.parametrize("liar, expected", [("worst", -4.0), ("mean", -2.5), ("best", -1.0)])
def test_running_trials_are_believed_at_the_samplers_liar(monkeypatch, liar, expected):
    import npbandit.integrations.optuna_proposals as integration

    seen = {}
    monkeypatch.setattr(integration, "propose", lambda model, acquisition, **kw: seen.update(kw) or np.full(1, 0.5))
    study = optuna.create_study(sampler=sampler(seed=0, trust_region=False, liar=liar))
    dist = {"x": FloatDistribution(0.0, 10.0)}
    for x in (1.0, 2.0, 3.0, 4.0):
        study.add_trial(create_trial(params={"x": x}, distributions=dist, value=x))
    study.add_trial(create_trial(params={"x": 8.0}, distributions=dist, state=TrialState.RUNNING))
    study.ask().suggest_float("x", 0.0, 10.0)
    assert seen["pending"].squeeze(-1).tolist() == [0.8]
    # of the negated values -1..-4 (minimised) the model sees
    assert float(seen["pending_strategy"].value(seen["outputs"])) == expected


def test_a_pending_strategy_passed_as_liar_decides_where_running_trials_push():
    # liar takes a PendingStrategy object as BOPolicy does: it is handed the running trial's point, and the next
    # proposal moves away from it; the base strategy (which leaves the model as it is: no pending points) gives
    # both asks the same acquisition, and with it the second lands where the first did
    from npbandit.acquisition.pending import ConstantLiar, PendingStrategy

    class Recording(ConstantLiar):
        def __init__(self):
            super().__init__("worst")
            self.pending = []

        def believe(self, model, pending, *, outputs, observed):
            self.pending.append(pending.clone())
            return super().believe(model, pending, outputs=outputs, observed=observed)

    dist = {"x": FloatDistribution(0.0, 1.0)}
    asked = {}
    for name, liar in (("none", PendingStrategy()), ("worst", Recording())):
        study = optuna.create_study(sampler=sampler(seed=0, liar=liar, trust_region=False))
        assert study.sampler.pending_strategy is liar and study.sampler.liar == liar.name
        for x in np.linspace(0.05, 0.95, 7):
            study.add_trial(create_trial(params={"x": float(x)}, distributions=dist, value=float((x - 0.42) ** 2)))
        asked[name] = [study.ask().suggest_float("x", 0.0, 1.0) for _ in range(2)]  # the first left running
    first, second = asked["worst"]
    assert asked["none"][0] == first  # no trial was running yet: the same proposal
    assert [p.squeeze(-1).tolist() for p in liar.pending] == [[pytest.approx(first, abs=1e-12)]]
    assert abs(asked["none"][1] - first) < 1e-3 and abs(second - first) > 0.05
    for wrong in (ConstantLiar, 3, None):
        with pytest.raises(ValueError, match="liar must be one of .* or a PendingStrategy"):
            NPSampler(liar=wrong)


def test_the_np_sees_the_trials_in_the_trust_region_the_study_has_earned(monkeypatch):
    import npbandit.acquisition.proposal as bo  # the trust-region step is optimize's (propose_in_region)

    seen = []
    monkeypatch.setattr(bo, "propose", lambda model, acquisition, **kw: seen.append(
        (model.train_X.clone(), kw["observed"].clone())) or np.full(1, 0.5))
    dist = {"x": FloatDistribution(0.0, 10.0)}
    study = optuna.create_study(sampler=sampler(seed=0))
    for x in (1.0, 2.0, 3.0, 4.0) + (9.0,) * 8:  # the 4 start-up trials, then 8 that never improve
        study.add_trial(create_trial(params={"x": x}, distributions=dist, value=x))
    x = study.ask().suggest_float("x", 0.0, 10.0)
    # two halvings (4 failures each for d = 1) from the whole cube: side 0.4 around x = 1 (0.1), cut at 0;
    # the model sees the box twice as wide ([0, 0.5]: x = 1..4), and its proposal (0.5 of that) is x = 2.5
    (train_X, observed), = seen
    assert torch.allclose(train_X.squeeze(-1), torch.tensor([0.2, 0.4, 0.6, 0.8], dtype=torch.float64))
    # the repeat check compares with every trial in the model's frame (x = 9 at 1.8, outside its cube)
    assert torch.allclose(observed.squeeze(-1), torch.tensor([0.2, 0.4, 0.6, 0.8] + [1.8] * 8, dtype=torch.float64))
    assert x == pytest.approx(2.5)
    region = TrustRegion.replay(1, [-v for v in (1.0, 2.0, 3.0, 4.0) + (9.0,) * 8], 4)
    assert region.length == pytest.approx(0.4)
    with pytest.raises(TypeError, match="trust_region"):
        NPSampler(trust_region=1)


@pytest.mark.parametrize("checkpoint", ["cmanp-bo", "tnpd-bo"])
@pytest.mark.parametrize("liar", ["mean", "believer"])
@pytest.mark.slow
def test_running_trials_push_the_next_proposal_away(checkpoint, liar):
    # four workers ask one after another while none has finished: without the running trials
    # believed, each would get the same LogEI maximiser (checked: the first's, to 1e-3). Believed
    # at a constant (the mean liar) they push the next proposal well away. Believed at the model's
    # own mean (the kriging believer, the default) they push less, since neither checkpoint
    # collapses its spread at a point it is conditioned on: on this 1-D problem the four land
    # within 2e-3 of each other, never closer than the repeat distance (pending points count as
    # evaluated)
    study = optuna.create_study(sampler=sampler(seed=0, checkpoint=checkpoint, liar=liar))
    dist = {"x": FloatDistribution(0.0, 1.0)}
    for x in np.linspace(0.05, 0.95, 7):
        study.add_trial(create_trial(params={"x": float(x)}, distributions=dist, value=float((x - 0.42) ** 2)))
    xs = [study.ask().suggest_float("x", 0.0, 1.0) for _ in range(4)]
    closest = min(abs(a - b) for i, a in enumerate(xs) for b in xs[:i])
    assert closest > (0.05 if liar == "mean" else 1e-3), xs
    failed = study.ask()
    x_again = failed.suggest_float("x", 0.0, 1.0)
    for t in study.get_trials(states=(TrialState.RUNNING,)):
        study.tell(t.number, state=TrialState.FAIL)
    # failed trials are observations at the worst value now: the next proposal avoids every one of them
    x_next = study.ask().suggest_float("x", 0.0, 1.0)
    assert x_again not in xs and min(abs(x_next - x) for x in [*xs, x_again]) > 1e-3


def two_floats(trial) -> float:
    return (trial.suggest_float("x", 0, 10) - 3) ** 2 + (trial.suggest_float("y", 0, 10) - 4) ** 2


@pytest.mark.parametrize("trust_region", [False, True])
def test_an_enqueued_trial_outside_the_range_is_left_out(trust_region):
    # Optuna runs an enqueued out-of-range value (with a warning); the NP has no model there
    study = optuna.create_study(sampler=sampler(seed=0, n_startup_trials=3, trust_region=trust_region))
    study.enqueue_trial({"x": 10.5, "y": 5.0})
    with pytest.warns(RuntimeWarning, match=r"leaves out trial\(s\) \[0\]: a parameter lies outside"):
        study.optimize(two_floats, n_trials=5)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


def test_one_sampler_serves_several_studies():
    # every in-memory study has id 0: a search space cached for the first must not empty the second's
    shared = sampler(seed=0, n_startup_trials=3)
    optuna.create_study(sampler=shared).optimize(lambda t: t.suggest_float("a", 0, 1) ** 2, n_trials=4)
    second = optuna.create_study(sampler=shared)
    second.optimize(two_floats, n_trials=4)
    assert set(shared.infer_relative_search_space(second, second.trials[-1])) == {"x", "y"}


def test_grid_parameters_are_not_proposed_again():
    # the repeat check compares points where they are evaluated: on a stepped parameter's grid
    study = optuna.create_study(sampler=sampler(seed=0, n_startup_trials=3))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1, step=0.1) - 0.33) ** 2, n_trials=9)
    values = [t.params["x"] for t in study.trials]
    assert all(v not in values[:i] for i, v in enumerate(values) if i >= 3), values  # the NP's, after 3 start-up


def test_int_log_float_and_categorical_parameters_are_proposed_by_the_np(monkeypatch, caplog):
    calls = []
    original = NPSampler._propose

    def spy(self, X, Y, pending, seed, region=None, space=None, search=None, *rest):
        calls.append((X.shape, list(space)))
        return original(self, X, Y, pending, seed, region, space, search, *rest)

    monkeypatch.setattr(NPSampler, "_propose", spy)

    def run(seed, trials=5):
        study = optuna.create_study(sampler=sampler(seed=seed, n_startup_trials=3))
        study.optimize(typed, n_trials=trials)
        return params(study)

    optuna.logging.enable_propagation()
    try:
        first = run(0)
    finally:
        optuna.logging.disable_propagation()
    assert "independently" not in caplog.text
    # trials 3 and 4 from the NP, over 5 columns: act's three one-hot columns, lr and n
    assert calls == [((3, 5), ["act", "lr", "n"]), ((4, 5), ["act", "lr", "n"])]
    for p in first:
        assert type(p["n"]) is int and 1 <= p["n"] <= 6 and 1e-4 <= p["lr"] <= 1e-1
        assert any(p["act"] is c for c in CHOICES)  # the choice itself, not an equal copy or an index
    assert len({tuple(sorted(p.items(), key=str)) for p in first}) == 5  # no trial repeated
    assert run(0) == first and run(1, trials=3) != first[:3]


def test_more_parameters_than_the_checkpoint_takes_are_proposed_by_the_np_in_a_subspace():
    from npbandit.acquisition.wide_spaces import default_subspace

    np_sampler = sampler(seed=3)
    study = optuna.create_study(sampler=np_sampler)
    names = [f"x{i}" for i in range(8)]
    objective = lambda t: sum((t.suggest_float(n, 0, 1) - 0.3) ** 2 for n in names)  # noqa: E731
    study.optimize(objective, n_trials=6)
    search = default_subspace().bind(8, 6, np_sampler.seed)
    # every trial but the first (the independent sampler's: no relative search space is known before
    # a trial completes) lies in the embedding of the sampler's seed: the start-up draws, then the NP's proposals
    for trial in study.trials[1:]:
        u = torch.tensor([[trial.params[n] for n in sorted(names)]], dtype=torch.float64)
        assert torch.allclose(search.lift(search.project(u)), u, atol=1e-9)
    u = torch.tensor([[study.trials[0].params[n] for n in sorted(names)]], dtype=torch.float64)
    assert not torch.allclose(search.lift(search.project(u)), u, atol=1e-9)
    assert len({tuple(t.params.values()) for t in study.trials[:4]}) == 4  # the start-up draws differ


def test_a_mixed_space_wider_than_the_checkpoint_is_proposed_in_a_subspace_with_valid_values():
    study = optuna.create_study(sampler=sampler(seed=1, n_startup_trials=3))
    # four floats and a three-choice categorical: five parameters in seven columns of the unit cube
    objective = lambda t: sum(t.suggest_float(f"x{i}", 0, 1) for i in range(4)) + len(  # noqa: E731
        t.suggest_categorical("c", ["a", "bb", "ccc"]))
    study.optimize(objective, n_trials=5)
    assert all(t.params["c"] in ("a", "bb", "ccc") for t in study.trials)
    assert all(0 <= t.params[f"x{i}"] <= 1 for t in study.trials for i in range(4))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"checkpoint": "cmanp-wheel"}, CheckpointError, "NPSampler needs a 'bo' checkpoint"),
    ({"checkpoint": "gp"}, ValueError, "GPSampler"),
    ({"checkpoint": 3}, TypeError, "checkpoint"),
    ({"acquisition": "ei"}, ValueError, "acquisition"),
    ({"acquisition": "qlognei"}, ValueError, "one per trial"),
    ({"checkpoint": ""}, ValueError, "checkpoint must be a checkpoint name or path, got ''"),
    ({"n_startup_trials": -1}, ValueError, "n_startup_trials"),
    ({"seed": 1.5}, ValueError, "seed"),
    ({"independent_sampler": "random"}, TypeError, "independent_sampler"),
    ({"liar": "kriging"}, ValueError, "liar must be one of"),
    ({"liar": "penalty", "acquisition": "ucb"}, ValueError, "'penalty' needs acquisition 'logei'"),
    ({"liar": "kriging"}, ValueError, "or a PendingStrategy, got 'kriging'"),
    ({"beta": -1.0}, ValueError, "beta"),
    ({"beta": float("nan")}, ValueError, "beta"),
    ({"warn_independent_sampling": "yes"}, TypeError, "warn_independent_sampling"),
    ({"max_encoded_spaces": 0}, ValueError, "max_encoded_spaces must be an int >= 1, got 0"),
    ({"max_encoded_spaces": True}, ValueError, "max_encoded_spaces must be an int >= 1, got True"),
])
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        NPSampler(**kwargs)


@pytest.mark.slow
def test_sqlite_storage_with_processes_and_threads(tmp_path):
    # two processes share a fresh study and a seed (so the start-up trials run concurrently),
    # then two threads of this one carry on
    url = f"sqlite:///{tmp_path / 'study.db'}"
    optuna.create_study(study_name="s", storage=url)
    worker = textwrap.dedent(f"""
        import sys, torch, optuna
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        torch.set_num_threads(1)
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        from test_optuna import mixed, sampler
        study = optuna.load_study(study_name="s", storage={url!r}, sampler=sampler(seed=0))
        study.optimize(mixed, n_trials=3)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", worker], cwd=ROOT, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    study = optuna.load_study(study_name="s", storage=url, sampler=sampler(seed=0))
    study.optimize(mixed, n_trials=6, n_jobs=2)
    trials = study.trials
    assert len(trials) == 12 and all(t.state == TrialState.COMPLETE for t in trials)
    # trials 0-3 were asked before 4 trials had completed: start-up draws, two processes' among
    # them; sharing a seed, the processes still drew different points (draws are keyed by trial)
    assert len({t.params["x"] for t in trials[:4]}) == 4


@pytest.mark.slow
def test_example_study_runs_with_two_worker_processes(tmp_path):
    url = f"sqlite:///{tmp_path / 'example.db'}"
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "optuna_study.py"), "--trials", "4", "--workers",
                           "2", "--storage", url], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "4 completed trials, 2 worker(s)" in done.stdout
    (summary,) = optuna.get_all_study_summaries(url)
    assert summary.n_trials == 4


@pytest.fixture(scope="module")
def tiny_card(tmp_path_factory):
    """A tiny random-weight CMANP card: for the plumbing of constraints, not their optimisation."""
    from helpers import tiny_checkpoint

    return str(tiny_checkpoint(tmp_path_factory.mktemp("tiny")))


def _on_the_disc(trial) -> float:
    """Minimise x + y on the disc of radius 0.3 around (0.5, 0.5): the constraint's value is kept
    in a user attribute for constraints_func (Optuna's pattern for values the objective computes)."""
    x, y = trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)
    trial.set_user_attr("c", (x - 0.5) ** 2 + (y - 0.5) ** 2 - 0.09)
    return x + y


def test_constraints_func_values_are_stored_and_modelled(monkeypatch, tiny_card):
    calls = []
    original = NPSampler._propose

    def spy(self, X, Y, pending, seed, *rest):
        calls.append((Y.clone(), rest[3]))  # rest: region, space, search, constraints, objectives
        return original(self, X, Y, pending, seed, *rest)

    monkeypatch.setattr(NPSampler, "_propose", spy)
    seen = []

    def constraints(trial):
        seen.append(trial.number)
        return [trial.user_attrs["c"]]

    study = optuna.create_study(sampler=sampler(checkpoint=tiny_card, seed=0, constraints_func=constraints))
    study.optimize(_on_the_disc, n_trials=7)
    trials = study.trials
    assert seen == list(range(7))  # after every completed trial
    assert all(t.system_attrs["constraints"] == (t.user_attrs["c"],) for t in trials)
    # trials 4..6 from the NP: objective (maximised) and constraint, one constraint column
    assert len(calls) == 3 and all(k == 1 and Y.shape[-1] == 2 for Y, k in calls)
    Y, _ = calls[-1]
    assert torch.allclose(Y, torch.tensor([[-t.value, t.user_attrs["c"]] for t in trials[:6]], dtype=torch.float64))
    # Optuna's own best trial reads the stored values: the best feasible trial
    feasible = [t for t in trials if t.user_attrs["c"] <= 0]
    if feasible:
        assert study.best_trial.number == min(feasible, key=lambda t: t.value).number


def test_constraints_are_modelled_without_the_trust_region(tiny_card):
    # one model of every completed trial (trust_region=False) proposes through propose itself, which needs the
    # objective and constraint values (outputs) beside the model: the NP's trials complete, inside the box
    study = optuna.create_study(sampler=sampler(checkpoint=tiny_card, seed=0, trust_region=False,
                                                constraints_func=lambda t: [t.user_attrs["c"]]))
    study.optimize(_on_the_disc, n_trials=6)
    assert [t.state for t in study.trials] == [TrialState.COMPLETE] * 6
    assert all(0.0 <= t.params[n] <= 1.0 for t in study.trials for n in ("x", "y"))


def test_trials_that_set_their_own_constraints_are_modelled_too(monkeypatch, tiny_card):
    if not hasattr(optuna.trial.Trial, "set_constraint"):
        pytest.skip("trial.set_constraint arrived with Optuna 5")
    calls = []
    original = NPSampler._propose

    def spy(self, X, Y, pending, seed, *rest):
        calls.append(Y.shape)
        return original(self, X, Y, pending, seed, *rest)

    monkeypatch.setattr(NPSampler, "_propose", spy)

    def objective(trial):
        value = _on_the_disc(trial)
        trial.set_constraint("disc", trial.user_attrs["c"])
        trial.set_constraint("left", trial.params["x"] - 0.9)
        return value

    study = optuna.create_study(sampler=sampler(checkpoint=tiny_card, seed=0))
    study.optimize(objective, n_trials=5)
    assert calls == [(4, 3)]


def test_constraints_func_values_are_checked(tiny_card):
    for returned, error, match in ((["x"], TypeError, r"constraints_func must return a non-empty sequence of real "
                                                      r"numbers"),
                                   (0.5, TypeError, r"constraints_func must return a sequence of floats, got float"),
                                   ([float("nan")], ValueError, r"constraints_func returned NaN for trial 0")):
        study = optuna.create_study(sampler=sampler(checkpoint=tiny_card, constraints_func=lambda t, r=returned: r))
        with pytest.raises(error, match=match):
            study.optimize(_on_the_disc, n_trials=1)
        assert study.trials[0].system_attrs["constraints"] is None
    with pytest.raises(TypeError, match="constraints_func must be callable"):
        NPSampler(tiny_card, constraints_func=[0.0])
    with pytest.raises(ValueError, match=r"constraints_func needs acquisition 'logei'.*'ucb'"):
        NPSampler(tiny_card, acquisition="ucb", constraints_func=lambda t: [0.0])


def test_a_completed_trial_without_constraint_values_is_left_out(tiny_card):
    dist = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}
    study = optuna.create_study(sampler=sampler(checkpoint=tiny_card, seed=0, constraints_func=lambda t: [0.0]))
    for i, x in enumerate(np.linspace(0.1, 0.9, 5)):
        attrs = {} if i == 0 else {"constraints": (float(x) - 0.5,)}
        study.add_trial(create_trial(params={"x": float(x), "y": 0.5}, distributions=dist, value=float(x),
                                     system_attrs=attrs))
    with pytest.warns(RuntimeWarning, match=r"leaves out trial\(s\) \[0\]: they have no constraint values"):
        trial = study.ask()
        trial.suggest_float("x", 0.0, 1.0)


def test_trials_holding_different_numbers_of_constraint_values_are_refused(tiny_card):
    dist = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}
    study = optuna.create_study(sampler=sampler(checkpoint=tiny_card, seed=0, constraints_func=lambda t: [0.0]))
    for i, x in enumerate(np.linspace(0.1, 0.9, 5)):
        constraints = (float(x) - 0.5,) if i < 3 else (float(x) - 0.5, 0.0)
        study.add_trial(create_trial(params={"x": float(x), "y": 0.5}, distributions=dist, value=float(x),
                                     system_attrs={"constraints": constraints}))
    with pytest.raises(ValueError, match=r"^study: each earlier completed trial carries 1 constraint value, but "
                                         r"trial 3 holds 2 \(every trial needs the same number"):
        trial = study.ask()
        trial.suggest_float("x", 0.0, 1.0)


# -- the recommendation -----------------------------------------------------------------

def _recorded(values, failed=()):
    """A minimised study of ``x, y`` in [0, 1]^2 whose trials were recorded (``add_trial``),
    values in order and failed trials at the positions ``failed``."""
    rng = np.random.default_rng(3)
    dists = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}
    study = optuna.create_study()
    for i, value in enumerate(values):
        point = dict(zip("xy", rng.random(2).tolist()))
        state = TrialState.FAIL if i in failed else TrialState.COMPLETE
        study.add_trial(create_trial(params=point, distributions=dists, state=state,
                                     value=None if i in failed else value))
    return study


def test_the_recommended_trial_has_the_best_posterior_mean_of_the_completed_ones(tiny_card):
    from npbandit.models import NPModel
    from npbandit.surrogates.pretrained import load_surrogate

    study = _recorded([0.3, 0.9, 0.1, 0.5, None, 0.7, 0.2], failed={4})
    rec = NPSampler(tiny_card, seed=0, trust_region=False).recommended_trial(study)
    completed = [t for t in study.trials if t.state == TrialState.COMPLETE]
    # the model a proposal builds: completed trials at their maximised values, the failed one at the worst
    rows = completed + [study.trials[4]]
    X = torch.tensor([[t.params["x"], t.params["y"]] for t in rows], dtype=torch.float64)
    Y = torch.tensor([[-t.value] for t in completed] + [[-0.9]], dtype=torch.float64)
    model = NPModel.from_pretrained(load_surrogate(tiny_card), X, Y)
    with torch.no_grad():
        mean = model.posterior(X[:len(completed)].unsqueeze(-2)).mean.reshape(-1)
    assert rec.state == TrialState.COMPLETE and rec.number == completed[int(torch.argmax(mean))].number
    # nothing is proposed or changed
    assert len(study.trials) == 7


def test_no_recommendation_before_two_completed_trials(tiny_card):
    assert NPSampler(tiny_card, seed=0).recommended_trial(_recorded([0.4])) is None
    assert NPSampler(tiny_card, seed=0).recommended_trial(_recorded([0.4, None], failed={1})) is None
    rec = NPSampler(tiny_card, seed=0).recommended_trial(_recorded([0.4, 0.2, 0.6, 0.1, 0.5]))
    assert rec is not None and rec.state == TrialState.COMPLETE  # in the trust region's box


def test_a_sampler_pickles_as_optuna_s_recipe_for_saving_a_study_needs():
    import pickle

    study = optuna.create_study(sampler=sampler(seed=0, max_encoded_spaces=2))
    study.optimize(lambda t: (t.suggest_float("x", 0, 1) - 0.3) ** 2 + t.suggest_int("n", 1, 4), n_trials=6)
    saved = pickle.loads(pickle.dumps(study))  # the sampler with it
    assert isinstance(saved.sampler, NPSampler) and saved.sampler.seed == study.sampler.seed
    assert saved.sampler.max_encoded_spaces == saved.sampler._encoded.max_spaces == 2  # the rows' cache rebuilt so
    original, restored = study.ask(), saved.ask()
    assert original.number == restored.number
    assert original.suggest_float("x", 0, 1) == restored.suggest_float("x", 0, 1)  # the same proposal


def test_a_categorical_the_np_cannot_hold_is_said_once_with_the_reason():
    def objective(t):
        return t.suggest_float("x", 0, 1) + (t.suggest_categorical("c", [1.0, float("nan")]) == 1.0)

    study = optuna.create_study(sampler=sampler(seed=0, n_startup_trials=2))
    with pytest.warns(RuntimeWarning, match=r"cannot model parameter 'c' \(.*\); the independent sampler draws it") \
            as caught:
        study.optimize(objective, n_trials=5)
    assert len([w for w in caught if "cannot model parameter 'c'" in str(w.message)]) == 1


def test_the_acquisition_error_lists_only_what_the_sampler_offers():
    with pytest.raises(ValueError, match="acquisition must be one of") as err:
        NPSampler(acquisition="ei")
    assert "qlognei" not in str(err.value)


def test_a_proposal_encodes_only_the_trials_no_earlier_proposal_encoded(monkeypatch):
    # every proposal reads every trial; encoding them all again made a proposal's cost grow with
    # the study (the model's own cost is bounded by its context), so each trial is encoded once
    from npbandit.space import SearchSpace

    encoded = []
    real = SearchSpace.encode
    monkeypatch.setattr(SearchSpace, "encode", lambda self, params: encoded.append(dict(params)) or real(self, params))
    dist = {"x": FloatDistribution(0.0, 1.0), "n": IntDistribution(0, 4)}
    study = optuna.create_study(sampler=sampler(seed=0))
    for i in range(8):
        study.add_trial(create_trial(params={"x": i / 8, "n": i % 5}, distributions=dist, value=float(i)))
    first = study.ask(dist)
    assert len(encoded) == 8  # the completed trials, once each
    study.tell(first, 0.5)
    encoded.clear()
    study.ask(dist)
    assert encoded == [first.params]  # only the trial told since


def test_the_encoded_rows_are_kept_for_the_most_recently_read_spaces_alone():
    # a define-by-run study (or a sampler serving study after study) meets new spaces without end:
    # the rows of every space it ever read were kept, and memory grew with the number of spaces
    from npbandit.integrations.optuna_observations import MAX_ENCODED_SPACES, EncodedParams
    from npbandit.space import Float, SearchSpace

    encoded = EncodedParams()
    spaces = [SearchSpace({"x": Float(0.0, 1.0 + i)}) for i in range(3 * MAX_ENCODED_SPACES)]
    first = encoded.encoder(spaces[0])
    for i, space in enumerate(spaces):
        assert encoded.encoder(space)({"x": 0.5}).tolist() == [0.5 / (1.0 + i)]
        first = encoded.encoder(spaces[0])  # read at every step: the most recently read, never let go
        assert len(encoded._tables) == min(i + 1, MAX_ENCODED_SPACES)
    assert spaces[0] in encoded._tables and spaces[1] not in encoded._tables
    assert list(encoded._tables)[-2:] == [spaces[-1], spaces[0]]
    assert first({"x": 0.25}).tolist() == [0.25]
    with pytest.raises(ValueError, match="max_spaces must be an int >= 1"):
        EncodedParams(max_spaces=0)


def test_the_sampler_takes_a_checkpoint_path_as_a_path(tmp_path):
    # what train() returns (TrainResult.card, a Path) goes straight to the sampler, as to optimize
    from helpers import tiny_checkpoint

    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    assert NPSampler(card).checkpoint == NPSampler(str(card)).checkpoint == "cmanp-bo"
