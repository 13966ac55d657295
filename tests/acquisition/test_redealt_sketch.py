"""A count sketch re-dealt around the incumbent (npbandit.acquisition.redealt_sketch)."""

import numpy as np
import pytest
import torch
from helpers import KNOWN, KnownRelevance, bowl_history, check_recorded, cyclic, tiny_checkpoint

from npbandit import load_surrogate
from npbandit.acquisition.redealt_sketch import (
    SLICE_TOLERANCE,
    AnchoredSketch,
    FixedPhases,
    PhaseSchedule,
    RedealtSketch,
    RedealtSketchSearch,
)
from npbandit.acquisition.subspace import CountSketch, check_subspace, deal
from npbandit.models import NPModel
from npbandit.policies.bo import BOPolicy
from npbandit.policies.trust_region import TrustRegion

FAST = {"num_restarts": 2, "raw_samples": 32}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(tiny_checkpoint(tmp_path_factory.mktemp("tiny"), "cmanp", "bo"))


def test_phase_zero_is_the_count_sketch():
    search = RedealtSketch(phase_start=10, phase_length=5).bind(20, 6, seed=3)
    sketch = CountSketch().bind(20, 6, seed=3)
    assert isinstance(search, RedealtSketchSearch) and search.search_dim == search.active_dim == 6
    Z = torch.rand(4, 6, dtype=torch.float64)
    assert torch.equal(search.lift(Z), sketch.lift(Z))  # the design's map
    X = search.lift(Z)
    assert torch.equal(search.project(X), sketch.project(X))
    assert [len(search.phase_starts(torch.zeros(n, 1))) for n in (0, 9, 10, 14, 15, 19, 20)] == [0, 0, 1, 1, 2, 2, 3]
    assert search.phase_starts(torch.zeros(20, 1)) == [10, 15, 20]
    X, Y = bowl_history(9, dim=20)
    assert search.phase_sketch(X, Y) is None  # phase 0: the count sketch's own search


def test_a_phase_zero_proposal_is_the_count_sketch_s(tiny):
    surrogate = load_surrogate(tiny)
    X, Y = bowl_history(8)

    def build(Xs, Ys):
        return NPModel.from_pretrained(surrogate, Xs, Ys)

    first = RedealtSketch().bind(12, 6, seed=1).propose(TrustRegion(6), X, Y, build, "logei", seed=4, **FAST)
    plain = CountSketch().bind(12, 6, seed=1).propose(TrustRegion(6), X, Y, build, "logei", seed=4, **FAST)
    np.testing.assert_array_equal(first, plain)


def test_a_later_phase_passes_through_the_anchor_and_spans_every_input_monotonically():
    search = RedealtSketch(phase_start=10, phase_length=5).bind(12, 6, seed=0)
    X, Y = bowl_history(12)
    sketch = search.phase_sketch(X, Y)
    assert isinstance(sketch, AnchoredSketch)
    best = int(torch.argmax(Y[:10, 0]))  # the best before phase 1 began
    assert torch.equal(sketch.anchor, X[best])
    half = torch.full((1, 6), 0.5, dtype=torch.float64)
    assert torch.equal(sketch.lift(half)[0], X[best])  # z = 0.5 is the anchor, exactly
    assert torch.equal(sketch.project(X[best][None]), half)
    assert bool(sketch.on_slice(X[best][None])) and not sketch.on_slice(X[:best]).any()
    # each input reaches 0 and 1 at its bin's ends (which end: its sign)
    ends = sketch.lift(torch.stack([torch.zeros(6), torch.ones(6)]).to(torch.float64))
    assert torch.equal(ends[0], torch.where(sketch.signs > 0, 0.0, 1.0).to(torch.float64))
    assert torch.equal(ends[1], torch.where(sketch.signs > 0, 1.0, 0.0).to(torch.float64))
    # along one bin's z, its inputs move monotonically (up with sign +1, down with -1), the others stay
    line = half.repeat(21, 1)
    line[:, 2] = torch.linspace(0, 1, 21, dtype=torch.float64)
    path = sketch.lift(line)
    steps = torch.diff(path, dim=0) * sketch.signs
    assert (steps[:, sketch.bins == 2] > 0).all() and (steps[:, sketch.bins != 2] == 0).all()
    assert torch.allclose(sketch.project(path), line, atol=1e-12)


def test_phases_deal_new_bins_reproducibly_from_seed_andbowl_history():
    X, Y = bowl_history(40)
    search = RedealtSketch(phase_start=10, phase_length=5).bind(12, 6, seed=7)
    one, two = search.phase_sketch(X[:12], Y[:12]), search.phase_sketch(X[:16], Y[:16])
    again = RedealtSketch(phase_start=10, phase_length=5).bind(12, 6, seed=7).phase_sketch(X[:12], Y[:12])
    assert torch.equal(one.bins, again.bins) and torch.equal(one.signs, again.signs)
    assert torch.equal(one.anchor, again.anchor)
    assert not (torch.equal(one.bins, two.bins) and torch.equal(one.signs, two.signs))
    first = CountSketch().bind(12, 6, seed=7)
    assert not (torch.equal(one.bins, first.bins) and torch.equal(one.signs, first.signs))
    counts = torch.bincount(one.bins, minlength=6)
    assert counts.min() == counts.max() == 2  # balanced, as the count sketch's
    other = RedealtSketch(phase_start=10, phase_length=5).bind(12, 6, seed=8).phase_sketch(X[:12], Y[:12])
    assert not (torch.equal(one.bins, other.bins) and torch.equal(one.signs, other.signs))


def test_an_anchor_on_the_cube_s_faces_keeps_the_slice_exact():
    anchor = torch.tensor([0.0, 1.0, 0.4, 0.0, 1.0, 0.7], dtype=torch.float64)
    sketch = AnchoredSketch(torch.tensor([0, 0, 1, 1, 2, 2]), torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, 1.0]),
                            anchor, 3)
    Z = torch.rand(50, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Z[0] = 0.5
    X = sketch.lift(Z)
    assert torch.equal(X[0], anchor) and torch.equal(sketch.project(anchor[None])[0], Z[0])
    assert sketch.on_slice(X).all()
    assert ((sketch.lift(sketch.project(X)) - X).abs().max() <= SLICE_TOLERANCE)


def test_the_model_sees_only_the_points_on_the_phase_s_slice(tiny):
    surrogate = load_surrogate(tiny)
    search = RedealtSketch(phase_start=10, phase_length=5).bind(12, 6, seed=2)
    X, Y = bowl_history(10)
    sketch = search.phase_sketch(torch.cat([X, X[:1]]), torch.cat([Y, Y[:1]]))
    on = sketch.lift(torch.rand(2, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1)))
    X = torch.cat([X, on])  # 10 off the slice (the anchor among them), 2 on it: phase 1
    Y = torch.cat([Y, -((on - 0.3) ** 2).sum(dim=-1, keepdim=True)])
    assert torch.equal(search.phase_sketch(X, Y).bins, sketch.bins)
    seen = []

    def build(Xs, Ys):
        seen.append((Xs, Ys))
        return NPModel.from_pretrained(surrogate, Xs, Ys)

    anchor = int(torch.argmax(Y[:10, 0]))
    off_pending = torch.rand(1, 12, dtype=torch.float64)
    x = search.propose(None, X, Y, build, "logei", seed=0, pending=off_pending, **FAST)
    (Zs, Ys), = seen
    assert torch.allclose(Zs, sketch.project(X[[anchor, 10, 11]]), atol=1e-12) and torch.equal(Ys, Y[[anchor, 10, 11]])
    assert torch.equal(Zs[0], torch.full((6,), 0.5, dtype=torch.float64))
    assert bool(sketch.on_slice(torch.as_tensor(x)[None]))  # the proposal lies on the slice
    found = search.recommend(None, X, Y, build, n_observed=len(X), seed=0)
    assert found is not None and found[0] in (anchor, 10, 11)


def test_a_bo_policy_run_re_deals_reproducibly_and_logs_its_params(tiny):
    strategy = RedealtSketch(phase_start=8, phase_length=4)
    assert check_subspace(strategy) is strategy
    policy = BOPolicy(9, model=tiny, subspace=strategy, n_init=5, budget=16, **FAST)
    runs = []
    for _ in range(2):
        policy.reset(0)
        for _ in range(16):
            x = policy.act(None)
            assert x.shape == (9,) and ((x >= 0) & (x <= 1)).all()
            policy.observe(None, x, -float(((x - 0.3) ** 2).sum()), {})
        runs.append(np.array(policy.X))
    np.testing.assert_array_equal(runs[0], runs[1])  # a run depends on its seed alone
    search, X = policy._search, torch.as_tensor(runs[0])
    Y = torch.tensor(policy.Y, dtype=torch.float64)[:, None]
    for n in range(8, 16):  # each later proposal lies on the slice of the phase it was made in
        assert bool(search.phase_sketch(X[:n], Y[:n]).on_slice(X[n:n + 1]))
    assert policy.recommend() is not None
    params = policy.params()
    assert (params["subspace"], params["subspace_d_e"], params["subspace_phase_start"],
            params["subspace_phase_length"]) == ("redealt-sketch", 6, 8, 4)
    assert params["trust_region_failure_tolerance"] == 6


def test_npsampler_searches_through_the_re_dealt_slices(tiny):
    optuna = pytest.importorskip("optuna")
    from npbandit.integrations.optuna import NPSampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = NPSampler(checkpoint=tiny, seed=0, n_startup_trials=4,
                        subspace=RedealtSketch(phase_start=5, phase_length=3), **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(lambda t: sum((t.suggest_float(f"x{i}", 0.0, 1.0) - 0.3) ** 2 for i in range(8)), n_trials=11)
    space, search = sampler._space(study.trials[-1].distributions)
    assert isinstance(search, RedealtSketchSearch)
    X = torch.tensor([[t.params[f"x{i}"] for i in range(8)] for t in study.trials], dtype=torch.float64)
    Y = -torch.tensor([t.value for t in study.trials], dtype=torch.float64)[:, None]
    for n in range(5, 11):  # the sampler keeps no state: each proposal on the slice its history makes
        assert bool(search.phase_sketch(X[:n], Y[:n]).on_slice(X[n:n + 1]))


def test_a_relevance_s_top_inputs_lead_different_bins_at_each_later_phase():
    relevance = KnownRelevance()
    search = RedealtSketch(phase_start=10, phase_length=5, relevance=relevance).bind(24, 6, seed=4)
    X, Y = bowl_history(30, dim=24)
    Y = torch.cat([Y, torch.zeros_like(Y)], dim=-1)  # a constraint column, feasible everywhere
    assert search.phase_sketch(X[:9], Y[:9], constraints=1) is None and not relevance.calls  # phase 0
    assert search.leaders(X[:10], Y[:10, :1]).tolist() == KNOWN[::-1]  # highest first
    for n in (10, 12, 15, 21, 29):  # phases 1, 1, 2, 3, 4
        sketch = search.phase_sketch(X[:n], Y[:n], constraints=1)
        began = {10: 10, 12: 10, 15: 15, 21: 20, 29: 25}[n]  # where the phase began
        assert len(set(sketch.bins[KNOWN].tolist())) == 6  # one leader per bin
        counts = torch.bincount(sketch.bins, minlength=6)
        assert counts.min() == counts.max() == 4  # balanced, as without a relevance
        Xs, Ys = relevance.calls[-1]  # the rows before the phase, the objective's column
        assert torch.equal(Xs, X[:began]) and torch.equal(Ys, Y[:began, :1])
    assert len(relevance.calls) == 4  # one call per phase (the phase's rows kept)
    plain = RedealtSketch(phase_start=10, phase_length=5).bind(24, 6, seed=4).phase_sketch(X[:12], Y[:12], 1)
    led = search.phase_sketch(X[:12], Y[:12], constraints=1)
    assert torch.equal(plain.anchor, led.anchor) and not torch.equal(plain.bins, led.bins)
    again = RedealtSketch(phase_start=10, phase_length=5, relevance=KnownRelevance()).bind(24, 6, seed=4)
    for n in (12, 21):  # from the seed and the history alone
        one, two = search.phase_sketch(X[:n], Y[:n], 1), again.phase_sketch(X[:n], Y[:n], 1)
        assert torch.equal(one.bins, two.bins) and torch.equal(one.signs, two.signs)
    assert search.params()["subspace_relevance"] == "known"
    assert "subspace_relevance" not in RedealtSketch().bind(24, 6, seed=4).params()


def test_without_a_relevance_or_a_positive_score_the_deal_is_the_random_one():
    rng, reference = np.random.default_rng([5, 24, 6, 2]), np.empty(24, dtype=np.int64)
    reference[rng.permutation(24)] = np.arange(24) % 6  # the random deal, written out
    reference_signs = rng.choice([-1.0, 1.0], size=24)
    for leaders in (None, []):
        bins, signs = deal(24, 6, np.random.default_rng([5, 24, 6, 2]), leaders)
        np.testing.assert_array_equal(bins.numpy(), reference)
        np.testing.assert_array_equal(signs.numpy(), reference_signs)
    X, Y = bowl_history(16, dim=24)
    plain = RedealtSketch(phase_start=10, phase_length=5).bind(24, 6, seed=5).phase_sketch(X, Y)
    assert torch.equal(plain.bins, torch.as_tensor(reference))
    assert torch.equal(plain.signs, torch.as_tensor(reference_signs))
    zero = RedealtSketch(phase_start=10, phase_length=5, relevance=lambda X, Y: torch.zeros(X.shape[1]))
    unled = zero.bind(24, 6, seed=5).phase_sketch(X, Y)
    assert torch.equal(unled.bins, plain.bins) and torch.equal(unled.signs, plain.signs)


def test_a_relevance_that_scores_few_inputs_leads_only_those():
    def two(X, Y):
        score = torch.zeros(X.shape[1], dtype=torch.float64)
        score[[2, 9]] = 1.0  # a tie: the lower index first
        return score

    search = RedealtSketch(phase_start=10, phase_length=5, relevance=two).bind(12, 6, seed=0)
    X, Y = bowl_history(12)
    assert search.leaders(X[:10], Y[:10]).tolist() == [2, 9]
    sketch = search.phase_sketch(X, Y)
    assert sketch.bins[2] != sketch.bins[9]


@pytest.mark.parametrize("bad, match", [(lambda: RedealtSketch(phase_start=0), "phase_start"),
                                        (lambda: RedealtSketch(relevance="ard"), "relevance"),
                                        (lambda: RedealtSketch(phase_start=2, relevance=lambda X, Y: torch.ones(3))
                                         .bind(8, 6, seed=0).phase_sketch(*bowl_history(3, dim=8)), "relevance"),
                                        (lambda: RedealtSketch(phase_start=2, relevance=lambda X, Y: -torch.ones(8))
                                         .bind(8, 6, seed=0).phase_sketch(*bowl_history(3, dim=8)), "relevance"),
                                        (lambda: deal(8, 2, np.random.default_rng(0), [0, 1, 2]), "leaders"),
                                        (lambda: deal(8, 3, np.random.default_rng(0), [1, 1]), "leaders"),
                                        (lambda: deal(8, 3, np.random.default_rng(0), [8]), "leaders"),
                                        (lambda: RedealtSketch(phase_length=True), "phase_length"),
                                        (lambda: RedealtSketch(phase_length=2.5), "phase_length"),
                                        (lambda: RedealtSketch(d_e=0), "d_e"),
                                        (lambda: RedealtSketch().bind(8, 6, seed=-1), "seed"),
                                        (lambda: AnchoredSketch(torch.tensor([0, 1]), torch.ones(2),
                                                                torch.tensor([0.5, 1.5]), 2), "anchor")])
def test_bad_arguments_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        bad()


class Listed(PhaseSchedule):
    """Phases at the listed numbers of observations (those reached), the ones in ``unled`` not led."""

    def __init__(self, listed, unled=()):
        self.listed, self.unled = list(listed), set(unled)

    def starts(self, Y, constraints=0):
        return [c for c in self.listed if c <= len(Y)]

    def led(self, start):
        return start not in self.unled

    def params(self):
        return {"subspace_listed": self.listed}

    def __repr__(self):
        return f"Listed({self.listed})"


def test_an_injected_schedule_decides_where_phases_begin_and_which_are_led():
    relevance = KnownRelevance()
    strategy = RedealtSketch(phase_start=10, phase_length=5, relevance=relevance,
                             schedule=lambda start, length: Listed([4, 9, 13], unled={9}))
    search = strategy.bind(24, 6, seed=1)
    X, Y = bowl_history(16, dim=24)
    assert search.phase_starts(Y) == [4, 9, 13] and search.phase_starts(Y[:8]) == [4]
    assert search.phase_sketch(X[:3], Y[:3]) is None  # before the first start: phase 0
    for n, k, began in ((6, 1, 4), (11, 2, 9), (15, 3, 13)):
        sketch = search.phase_sketch(X[:n], Y[:n])
        assert torch.equal(sketch.anchor, X[int(torch.argmax(Y[:began, 0]))])  # the incumbent at the start
        rng = np.random.default_rng([1, 24, 6, k])  # phase k's deal, whichever schedule numbered it
        leaders = None if began == 9 else KNOWN[::-1]  # the relevance's top six, highest first
        bins, signs = deal(24, 6, rng, leaders)
        assert torch.equal(sketch.bins, bins) and torch.equal(sketch.signs, signs)
    assert [len(Xs) for Xs, _ in relevance.calls] == [4, 13]  # the unled phase asks no relevance
    assert search.params() == {"subspace": "redealt-sketch", "subspace_d_e": 6, "subspace_listed": [4, 9, 13],
                               "subspace_relevance": "known"}
    assert "schedule=Listed([4, 9, 13])" in repr(strategy) and "schedule" not in repr(RedealtSketch())
    assert isinstance(RedealtSketch().schedule, FixedPhases) and isinstance(search.schedule, Listed)


class Verbatim(Listed):
    """Names every listed start, reached or not."""

    def starts(self, Y, constraints=0):
        return self.listed


@pytest.mark.parametrize("listed", [[0], [5, 5], [6, 5], [3.0], [True], [17]])
def test_a_schedule_naming_other_than_ascending_rows_is_refused(listed):
    search = RedealtSketch(schedule=lambda start, length: Verbatim(listed)).bind(12, 6, seed=0)
    with pytest.raises(ValueError, match="schedule.starts"):
        search.phase_sketch(*bowl_history(16))


@pytest.mark.parametrize("schedule", ["fixed", lambda start, length: [start], FixedPhases(40, 20)])
def test_a_schedule_that_makes_no_phase_schedule_is_refused(schedule):
    with pytest.raises(TypeError, match="schedule"):
        RedealtSketch(schedule=schedule)


#: the phases of the fixed schedule, recorded from the search as it was before schedules were
#: injected: every later change must deal the default's phases as it did
FIXED = {0: [(10, 6, "524520430131", "-+++--++--+-"), (15, 6, "351042304512", "++---+---+--"),
             (20, 6, "421354251030", "++++-++--++-"), (25, 6, "504412150323", "-+---+-++---"),
             (30, 6, "413253040152", "-+++++++-+-+"), (35, 6, "200354153421", "--+++-+--+++"),
             (40, 6, "213054135204", "-+++-++-+-+-")],
         2: [(10, 2, "005341213524", "--+++-++++++"), (15, 2, "414353052102", "+---+-------"),
             (20, 16, "240110253534", "++++--------"), (25, 16, "054105223143", "-+-+++----++"),
             (30, 16, "312321405450", "-+-++-+-+-+-"), (35, 34, "204435123051", "-+-+++++--+-"),
             (40, 34, "530152324401", "+----++++-++")]}
FIXED_LED = [(10, 4, "345400252311", "-+--++--+-+-"), (15, 12, "015244310532", "---+-+-+++++"),
             (20, 12, "225100513434", "------++++--"), (25, 12, "234401531520", "----+--+--++"),
             (30, 12, "241153532400", "+----+----++"), (35, 12, "524154210330", "+-+-+-+-+---"),
             (40, 12, "413125002435", "++-+++++--+-")]


@pytest.mark.parametrize("seed", sorted(FIXED))
def test_the_fixed_schedule_deals_the_recorded_phases(seed):
    check_recorded(RedealtSketch(phase_start=10, phase_length=5), 12, seed, 40, False, FIXED[seed])


def test_the_fixed_schedule_with_a_relevance_and_a_constraint_deals_the_recorded_phases():
    check_recorded(RedealtSketch(phase_start=10, phase_length=5, relevance=cyclic), 12, 3, 40, True, FIXED_LED)


class _RecordingSearch(RedealtSketchSearch):
    """The re-dealt search, keeping the rows each proposal is handed."""

    def propose(self, region, X, Y, *args, **kwargs):
        self.handed.append((X.clone(), Y.clone()))
        return super().propose(region, X, Y, *args, **kwargs)


class _Recording(RedealtSketch):
    def bind(self, dim, width, seed):
        base = super().bind(dim, width, seed)
        self.search = _RecordingSearch(base.first, base.seed, base.phase_start, base.phase_length)
        self.search.handed = []
        return self.search


def test_a_policy_hands_its_search_the_history_in_evaluation_order_so_failures_keep_the_anchor(tmp_path):
    """BOPolicy keeps failures after the observations; its search gets every row in the order
    it was evaluated, so a phase's anchor (the best row before the phase began) stays fixed
    while the phase's better observations arrive after a failure."""
    from helpers import tiny_checkpoint

    from npbandit.policies.bo import BOPolicy

    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    strategy = _Recording(phase_start=6, phase_length=10)
    policy = BOPolicy(8, model=card, subspace=strategy, n_init=4, num_restarts=2, raw_samples=32)
    policy.reset(0)
    rng = np.random.default_rng(0)
    evaluated = []
    for t in range(12):
        x = rng.random(8)
        if t in (2, 7):  # two failures: one before the phase began, one during it
            policy.observe_failure(None, x, "boom")
        else:  # row 0 the best before the phase began, the phase's own observations better still
            policy.observe(None, x, float(-t if t < 6 else 10 + t), {})
        evaluated.append(x)
        if t in (5, 11):
            policy.act(None)
    (X_then, Y_then), (X, Y) = strategy.search.handed
    np.testing.assert_array_equal(X.numpy(), np.array(evaluated))  # the rows in evaluation order
    anchors = [strategy.search.phase_sketch(X_then, Y_then).anchor, strategy.search.phase_sketch(X, Y).anchor]
    assert torch.equal(anchors[0], anchors[1]) and torch.equal(anchors[0], torch.as_tensor(evaluated[0]))
