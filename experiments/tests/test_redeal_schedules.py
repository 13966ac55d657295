"""experiments/benchmarks/redeal_schedules.py: the phase schedules of ``RedealtSketch`` the library
does not carry (a stalled slice re-dealt, early phases) deal the phases recorded from the search
as it was when it carried them, so the logged columns of highd_subspace.py re-run as they ran."""

import numpy as np
import pytest
import torch

from npbandit.acquisition.redealt_sketch import FixedPhases, RedealtSketch
from npbandit.acquisition.subspace import CountSketch, deal

from .helpers import KNOWN, KnownRelevance, bowl_history, check_recorded, cyclic, load_benchmark, tiny_checkpoint

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def lab():
    return load_benchmark("redeal_schedules")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(tiny_checkpoint(tmp_path_factory.mktemp("tiny"), "cmanp", "bo"))


def test_stalled_reads_whether_the_last_rows_improved_the_incumbent(lab):
    stalled, tolerance = lab.stalled, lab.STALL_TOLERANCE
    Y = torch.tensor([[1.0], [2.0], [1.5], [0.0]], dtype=torch.float64)
    assert stalled(Y, 2)  # rows 2-3 left the best (2.0) where it was
    assert not stalled(Y, 3)  # row 1 improved on row 0
    assert not stalled(Y, 4)  # no rows before the last four: a fresh run is not stalled
    tiny = torch.tensor([[2.0], [2.0 * (1 + tolerance / 2)]], dtype=torch.float64)
    assert stalled(tiny, 1)  # a gain below the tolerance is no improvement
    assert not stalled(torch.tensor([[2.0], [2.0 * (1 + 2 * tolerance)]], dtype=torch.float64), 1)
    # constraints: a first feasible row after infeasible ones improves; an infeasible best does not count
    C = torch.tensor([[5.0, 1.0], [1.0, -1.0]], dtype=torch.float64)
    assert not stalled(C, 1, constraints=1)
    assert stalled(torch.tensor([[1.0, -1.0], [9.0, 1.0]], dtype=torch.float64), 1, constraints=1)


def test_only_a_stalled_boundary_re_deals_and_the_phase_keeps_its_slice_until_then(lab):
    search = RedealtSketch(phase_start=10, phase_length=5, schedule=lab.StalledPhases).bind(12, 6, seed=0)
    always = RedealtSketch(phase_start=10, phase_length=5).bind(12, 6, seed=0)
    X = torch.rand(22, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = torch.arange(22, dtype=torch.float64)[:, None]  # every row improves: no boundary stalls
    assert search.phase_starts(Y) == [] and search.phase_sketch(X, Y) is None
    assert always.phase_starts(Y) == [10, 15, 20]
    Y[5:] = -1.0  # from row 5 on nothing improves: every boundary (10, 15, 20) stalls
    assert search.phase_starts(Y) == [10, 15, 20]
    Y[12] = 100.0  # phase 1 (began at 10) improved in rows 10-14: boundary 15 keeps its slice
    assert search.phase_starts(Y) == [10, 20]
    kept, again = search.phase_sketch(X[:19], Y[:19]), always.phase_sketch(X[:14], Y[:14])
    assert torch.equal(kept.bins, again.bins) and torch.equal(kept.anchor, again.anchor)  # phase 1's slice
    later = search.phase_sketch(X, Y)  # phase 2 began at 20, anchored at the best of rows 0-19 (row 12)
    assert torch.equal(later.anchor, X[12]) and torch.equal(later.bins, always.phase_sketch(X[:16], Y[:16]).bins)
    assert search.params()["subspace_redeal"] == "when-stalled" and "subspace_redeal" not in always.params()
    assert "schedule=StalledPhases(phase_start=40" in repr(RedealtSketch(schedule=lab.StalledPhases))


def test_early_phases_re_deal_at_random_before_the_led_boundaries(lab):
    relevance = KnownRelevance()
    early = RedealtSketch(phase_start=20, phase_length=10, relevance=relevance,
                          schedule=lab.early_phases(5, 6)).bind(24, 6, seed=2)
    X, Y = bowl_history(40, dim=24)
    assert early.phase_starts(Y) == [5, 11, 17, 20, 30, 40]  # 17 + 6 = 23 is past phase_start
    assert early.phase_starts(Y[:16]) == [5, 11] and early.phase_sketch(X[:4], Y[:4]) is None
    Z = torch.full((1, 6), 0.3, dtype=torch.float64)
    assert torch.equal(early.lift(Z), CountSketch().bind(24, 6, seed=2).lift(Z))  # the design's slice
    for n, k, began in ((5, 1, 5), (16, 2, 11), (19, 3, 17)):  # early phases: random deals, no fit
        sketch = early.phase_sketch(X[:n], Y[:n])
        bins, signs = deal(24, 6, np.random.default_rng([2, 24, 6, k]))
        assert torch.equal(sketch.bins, bins) and torch.equal(sketch.signs, signs)
        assert torch.equal(sketch.anchor, X[int(torch.argmax(Y[:began, 0]))])  # through the incumbent then
        assert sketch.on_slice(sketch.lift(torch.rand(3, 6, dtype=torch.float64))).all()
    assert not relevance.calls  # no early phase asks the relevance
    led = early.phase_sketch(X[:25], Y[:25])  # phase 4, from 20: led, numbered after the early ones
    assert len(set(led.bins[KNOWN].tolist())) == 6
    assert len(relevance.calls) == 1 and torch.equal(relevance.calls[0][0], X[:20])
    late = RedealtSketch(phase_start=20, phase_length=10, relevance=KnownRelevance()).bind(24, 6, seed=2)
    assert late.phase_starts(Y) == [20, 30, 40]  # without early phases: the led boundaries alone
    params = early.params()
    assert params["subspace_early_start"] == 5 and params["subspace_early_length"] == 6
    assert "subspace_early_start" not in late.params()
    assert "early_start=5, early_length=6" in repr(RedealtSketch(schedule=lab.early_phases(5, 6)))
    stall = RedealtSketch(phase_start=20, phase_length=10,
                          schedule=lab.early_phases(5, 6, lab.StalledPhases)).bind(24, 6, seed=2)
    rising = torch.arange(40, dtype=torch.float64)[:, None]  # no later boundary stalls; early ones re-deal
    assert stall.phase_starts(rising) == [5, 11, 17]


def test_a_policy_with_early_phases_proposes_on_each_early_slice(lab, tiny):
    from npbandit.policies.bo import BOPolicy

    strategy = RedealtSketch(phase_start=20, phase_length=10, schedule=lab.early_phases(7, 5))
    policy = BOPolicy(18, model=tiny, subspace=strategy, n_init=5, budget=24, num_restarts=2, raw_samples=32)
    policy.reset(3)
    for _ in range(22):
        x = policy.act(None)
        policy.observe(None, x, -float(((x - 0.3) ** 2).sum()), {})
    search, X = policy._search, torch.as_tensor(np.array(policy.X))
    Y = torch.tensor(policy.Y, dtype=torch.float64)[:, None]
    assert search.phase_starts(Y) == [7, 12, 17, 20]
    first = search.phase_sketch(X[:7], Y[:7])
    for n in range(7, 22):  # each proposal lies on the slice of the phase it was made in
        assert bool(search.phase_sketch(X[:n], Y[:n]).on_slice(X[n:n + 1]))
    assert not first.on_slice(X[12:17]).any()  # the next early phase's points lie off the first's slice


@pytest.mark.parametrize("early_start, early_length, match", [(0, 9, "early_start"), (13, 1.5, "early_length"),
                                                               (13, False, "early_length"),
                                                               (40, 9, "below phase_start")])
def test_bad_early_phases_are_named(lab, early_start, early_length, match):
    with pytest.raises(ValueError, match=match):
        RedealtSketch(phase_start=40, schedule=lab.early_phases(early_start, early_length))


#: the phases recorded from RedealtSketch as it was when it carried these schedules itself
#: (``only_when_stalled=True``; ``early_start``, ``early_length``), on the histories of
#: ``check_recorded``: name -> (strategy's arguments, D, seed, rows, constrained, phases); the
#: schedule named as :func:`schedule_of` reads it
RECORDED = {
    "stalled, seed 0": (dict(phase_start=10, phase_length=5, schedule="stalled"), 12, 0, 40, False, [
        (15, 6, "524520430131", "-+++--++--+-"), (20, 6, "351042304512", "++---+---+--"),
        (25, 6, "421354251030", "++++-++--++-"), (30, 6, "504412150323", "-+---+-++---"),
        (35, 6, "413253040152", "-+++++++-+-+"), (40, 6, "200354153421", "--+++-+--+++")]),
    "stalled, seed 2": (dict(phase_start=10, phase_length=5, schedule="stalled"), 12, 2, 40, False, [
        (10, 2, "005341213524", "--+++-++++++"), (15, 2, "414353052102", "+---+-------"),
        (25, 16, "240110253534", "++++--------"), (30, 16, "054105223143", "-+-+++----++"),
        (40, 34, "312321405450", "-+-++-+-+-+-")]),
    "stalled, led, constrained": (dict(phase_start=10, phase_length=5, relevance=cyclic, schedule="stalled"),
                                  12, 3, 40, True, [
        (10, 4, "345400252311", "-+--++--+-+-"), (20, 12, "201524431053", "---+-+-+++++"),
        (25, 12, "221505031443", "------++++--"), (30, 12, "023440153152", "----+--+--++"),
        (35, 12, "024115353240", "+----+----++"), (40, 12, "452512413003", "+-+-+-+-+---")]),
    "early, led": (dict(phase_start=20, phase_length=10, relevance=cyclic, schedule=("early", 5, 6)),
                   24, 0, 45, False, [
        (5, 3, "354131032301515042254024", "+++-++++--+-+-+----+--+-"),
        (11, 3, "055421135512040023421334", "-++-+--+++----+---++-+--"),
        (17, 3, "155031542042543323411020", "--+--++++-+-+-+----+-++-"),
        (20, 3, "434234234103512201005515", "++--+-+-++-++++-+-+-++-+"),
        (30, 3, "024241110145232004335355", "--+----+---+--+---+++---"),
        (40, 3, "250034124401332351452051", "+--++-+++--+++++-+-++-+-")]),
    "early, constrained": (dict(phase_start=20, phase_length=10, schedule=("early", 7, 5)), 24, 2, 45, True, [
        (7, 1, "110355123521530234424004", "-+-+-++++--+-++-+-+-++-+"),
        (12, 1, "531510314231252004435204", "------++---+-+----+++---"),
        (17, 1, "302001125325443215041534", "--++-++++--+++----+-+--+"),
        (20, 1, "222103044241035350145531", "---+-----+-+--+++---+---"),
        (30, 1, "123540302230115344154520", "+++----+--++-+-+-++-+++-"),
        (40, 1, "342202043250315151034145", "+-+---+--++-+-+-+--++-+-")]),
    "early and stalled, led": (dict(phase_start=20, phase_length=5, relevance=cyclic,
                                    schedule=("early", 5, 6, "stalled")), 24, 1, 50, False, [
        (5, 2, "144412010412330235052355", "----++-++---++---+-++-++"),
        (11, 6, "443241230045221153015035", "+---++-++-++++--+++--+--"),
        (17, 6, "221431521405544330021503", "+-+---+--+++++--+-++--++"),
        (20, 6, "340434351311022554012052", "---+++-+--++---++-+--++-"),
        (25, 6, "223314001220411055355434", "-++-++-++----+++++----+-"),
        (30, 6, "201315354524205443001213", "+---+--++----++--+++--+-"),
        (35, 6, "433452150232442100015153", "-+++++++++--+-----++-+++"),
        (40, 6, "402432005455104531113223", "++-+--++-+-+--++--++++++"),
        (45, 6, "013502040424431513552321", "+--+--+--+-++--+-++--++-"),
        (50, 6, "233152041015051430524432", "++--+-+-+---+-++--+-++++")]),
    "highd_subspace's stalled (40, 20), led": (dict(relevance=cyclic, schedule="stalled"), 24, 1, 100, False, [
        (40, 6, "224502445211504303501313", "-----+--+----++-++---++-"),
        (60, 6, "444350315200045222311513", "+---++-++-++++--+++--+--"),
        (100, 66, "223543411051450513234002", "+-+---+--+++++--+-++--++")]),
    "highd_subspace's early (27, 13), led": (dict(relevance=cyclic, schedule=("early", 27, 13)), 24, 2, 100, False, [
        (27, 1, "110355123521530234424004", "-+-+-++++--+-++-+-+-++-+"),
        (40, 1, "451405223303512410452130", "-+--+-+-------++---+-+--"),
        (60, 42, "034545314452052231001312", "-++--++-++++--+++----+-+"),
        (80, 42, "224111035034343002455521", "---+-----+-+--+++---+---"),
        (100, 42, "223130130413524400415525", "-++-+++-+++----+--++-+-+")]),
}


def schedule_of(lab, named):
    """``"stalled"``: :class:`StalledPhases`; ``("early", s, m)``: early phases before the fixed
    boundaries; ``("early", s, m, "stalled")``: before the stalled ones."""
    if named == "stalled":
        return lab.StalledPhases
    later = lab.StalledPhases if named[3:] == ("stalled",) else FixedPhases
    return lab.early_phases(named[1], named[2], later)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_the_lab_s_schedules_deal_the_recorded_phases(lab, name):
    arguments, dim, seed, n, constrained, recorded = RECORDED[name]
    strategy = RedealtSketch(**{**arguments, "schedule": schedule_of(lab, arguments["schedule"])})
    check_recorded(strategy, dim, seed, n, constrained, recorded)
