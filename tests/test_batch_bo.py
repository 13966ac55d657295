"""optimize(batch_size=q, executor=...): asynchronous BO on a concurrent.futures executor."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
from helpers import forget_engines, tiny_checkpoint

from npbandit import optimize
from npbandit.acquisition.proposal import propose
from npbandit.envs import ObjectiveError
from npbandit.storage import SCHEMA_VERSION, list_runs, run_steps

BOUNDS = [[-1.0, 0.0], [1.0, 2.0]]


def sphere(x):
    return float(((np.asarray(x) - np.array([0.3, 1.2])) ** 2).sum())


def slow_sphere(x):
    time.sleep(0.2)
    return sphere(x)


def _points(result):
    return np.array([h["x"] for h in result.history])


def test_batch_size_one_is_the_sequential_loop(tmp_path):
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    today = optimize(sphere, BOUNDS, surrogate=card, budget=8, seed=2, db=None, progress=False)
    same = optimize(sphere, BOUNDS, surrogate=card, budget=8, seed=2, db=None, progress=False, batch_size=1)
    np.testing.assert_array_equal(_points(today), _points(same))
    assert "worker" not in today.history[0]
    # one evaluation in flight on an executor proposes the very same points (nothing is pending)
    with ThreadPoolExecutor(1) as ex:
        pooled = optimize(sphere, BOUNDS, surrogate=card, budget=8, seed=2, db=None, progress=False, executor=ex)
    np.testing.assert_array_equal(_points(today), _points(pooled))


@pytest.mark.slow
def test_four_in_flight_overlap_and_storage_records_workers(tmp_path):
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    db = str(tmp_path / "async.db")
    with ThreadPoolExecutor(4) as ex:
        result = optimize(slow_sphere, BOUNDS, surrogate=card, budget=10, n_init=3, seed=0, db=db, progress=False,
                          batch_size=4, executor=ex)
    assert len(result.history) == 10 and not any(h["failed"] for h in result.history)
    spans = [(h["submitted_at"], h["finished_at"]) for h in result.history]
    # with q=1 every evaluation is submitted after the previous one finished; with q=4 the
    # first four are all submitted before the first finishes
    first_finish = min(f for _, f in spans)
    assert sum(s < first_finish for s, _ in spans) == 4
    assert len({h["worker"] for h in result.history}) > 1
    # completion order: finish times never go backwards as t grows
    finishes = [f for _, f in spans]
    assert finishes == sorted(finishes)
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert [s["t"] for s in steps] == list(range(10))
    assert all(s["worker"] and s["submitted_at"] <= s["finished_at"] for s in steps)
    assert [s["worker"] for s in steps] == [h["worker"] for h in result.history]
    assert SCHEMA_VERSION >= 2  # the version that added the worker columns


class _RecordingPool(ThreadPoolExecutor):
    """A thread pool that keeps every future it hands out, so a test can wait for them."""

    def __init__(self, workers):
        super().__init__(workers)
        self.futures = []

    def submit(self, fn, /, *args, **kwargs):
        future = super().submit(fn, *args, **kwargs)
        self.futures.append(future)
        return future


def test_a_stop_keeps_the_evaluations_that_came_back_while_a_point_was_proposed(tmp_path, monkeypatch):
    # Ctrl-C while the driver proposes: the evaluations finished meanwhile are results too. The
    # stop comes in a proposal made with evaluations in flight (not yet observed by the loop),
    # after every evaluation submitted so far has finished: whatever the threads' schedule, they
    # all came back while the point was proposed, and all must be kept
    import concurrent.futures as cf
    import signal

    from npbandit.loop import RunInterrupted
    from npbandit.policies import SobolPolicy

    calls = []
    stop = {}

    def counted(x):
        calls.append(1)
        return sphere(x)

    real_act = SobolPolicy.act
    pool = _RecordingPool(3)

    def act(self, obs, pending=None):
        if len(pool.futures) >= 6 and pending is not None and len(pending):
            cf.wait(pool.futures)  # the evaluations in flight come back while this point is proposed
            stop.update(submitted=len(pool.futures), in_flight=len(pending))
            raise RunInterrupted(signal.SIGINT)
        return real_act(self, obs, pending=pending)

    monkeypatch.setattr(SobolPolicy, "act", act)
    db = f"sqlite:///{tmp_path / 'stop.db'}"
    with pool, pytest.raises(RunInterrupted, match="saved all"):
        optimize(counted, BOUNDS, surrogate="random", budget=20, seed=0, db=db, progress=False, executor=pool,
                 batch_size=3)
    run = list_runs(db)[0]
    assert stop["submitted"] >= 6 and stop["in_flight"] >= 1
    # every evaluation submitted is kept, those in flight at the stop among them
    assert run.status == "interrupted" and len(run_steps(db, run.id)) == len(calls) == stop["submitted"]


def test_sequential_run_overlaps_nothing(tmp_path):
    with ThreadPoolExecutor(4) as ex:
        result = optimize(slow_sphere, BOUNDS, surrogate="random", budget=4, seed=0, db=None, progress=False,
                          batch_size=1, executor=ex)
    spans = [(h["submitted_at"], h["finished_at"]) for h in result.history]
    assert all(spans[i + 1][0] >= spans[i][1] for i in range(3))


def test_a_failing_evaluation_is_skipped_and_the_run_goes_on(tmp_path):
    calls = []

    def flaky(x):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return sphere(x)

    db = str(tmp_path / "fail.db")
    with ThreadPoolExecutor(2) as ex:
        result = optimize(flaky, BOUNDS, surrogate="random", budget=6, seed=0, db=db, progress=False,
                          batch_size=2, executor=ex, on_error="skip")
    assert len(result.history) == 6 and sum(h["failed"] for h in result.history) == 1
    (run,) = list_runs(db)
    assert run.status == "completed" and sum(s["failed"] for s in run_steps(db, run.id)) == 1
    assert [s["error"] for s in run_steps(db, run.id) if s["failed"]] == ["objective raised RuntimeError: boom at x="
                                                                         + s["error"].split("at x=")[1]
                                                                         for s in run_steps(db, run.id) if s["failed"]]
    assert [s["error_kind"] for s in run_steps(db, run.id) if s["failed"]] == ["raised"]


def _hang_first(release):
    """An objective whose first call hangs until the ``release`` event is set (a minute at most).
    The count is taken under a lock: two calls starting at once on two threads must not both
    see themselves second (or first)."""
    calls, lock = [], threading.Lock()

    def f(x):
        with lock:
            calls.append(1)
            first = len(calls) == 1
        if first:
            release.wait(60.0)
        return sphere(x)
    return f


@pytest.mark.slow
def test_a_timeout_is_recorded_as_failed(tmp_path):
    # the hang ends when the timeout is recorded (a callback sees it) or the run ends, so the
    # timeout can be generous: only the hung evaluation can reach it, however slow the machine
    db, release = str(tmp_path / "timeout.db"), threading.Event()
    with ThreadPoolExecutor(3) as ex:
        try:
            result = optimize(_hang_first(release), BOUNDS, surrogate="random", budget=5, seed=0, db=db,
                              progress=False, batch_size=2, executor=ex, eval_timeout=2.0, on_error="skip",
                              callbacks=lambda history: any(h["failed"] for h in history) and release.set())
        finally:
            release.set()
    failed = [h for h in result.history if h["failed"]]
    assert len(result.history) == 5 and len(failed) == 1 and failed[0]["worker"] is None
    assert failed[0]["error_kind"] == "timeout"
    (run,) = list_runs(db)
    assert run.status == "completed" and [s["failed"] for s in run_steps(db, run.id)].count(True) == 1
    assert [s["error_kind"] for s in run_steps(db, run.id) if s["failed"]] == ["timeout"]
    release = threading.Event()
    with ThreadPoolExecutor(2) as ex, pytest.raises(ObjectiveError, match="still running after 2.0 s") as caught:
        try:
            optimize(_hang_first(release), BOUNDS, surrogate="random", budget=3, seed=0, db=None, progress=False,
                     batch_size=2, executor=ex, eval_timeout=2.0)
        finally:
            release.set()
    assert caught.value.kind == "timeout"


def test_pending_points_are_believed_in_propose(tmp_path, monkeypatch):
    from npbandit.models import NPModel
    from npbandit.surrogates.pretrained import load_surrogate

    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    X = torch.rand(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = -((X - 0.4) ** 2).sum(-1, keepdim=True)
    model = NPModel.from_pretrained(load_surrogate(str(card)), X, Y)
    seen = []
    real = NPModel.condition_on_observations

    def spy(self, X, Y, **kw):
        seen.append((X, Y))
        return real(self, X, Y, **kw)

    monkeypatch.setattr(NPModel, "condition_on_observations", spy)
    propose(model, "ucb", dim=2, best_f=Y.max(), seed=1)
    assert not seen  # nothing pending: the model as it is
    pending = torch.tensor([[0.2, 0.7], [0.9, 0.1]], dtype=torch.float64)
    propose(model, "ucb", dim=2, best_f=Y.max(), seed=1, pending=pending, pending_value=Y.min())
    (cx, cy), = seen  # one conditioning on the points in flight, at the worst observed value (a constant liar)
    torch.testing.assert_close(cx, pending)
    torch.testing.assert_close(cy, Y.min().expand(2, 1))
    with pytest.raises(ValueError, match="pending"):
        propose(model, "ucb", dim=2, best_f=Y.max(), seed=1, pending=torch.zeros(3), pending_value=0.0)
    with pytest.raises(ValueError, match="pending_value is required"):
        propose(model, "ucb", dim=2, best_f=Y.max(), seed=1, pending=pending)
    with pytest.raises(ValueError, match="pending_value must be one finite number"):
        propose(model, "ucb", dim=2, best_f=Y.max(), seed=1, pending=pending, pending_value=float("nan"))


def _gp_policy_asked_with_one_in_flight(liar: str):
    """A GP ``BOPolicy`` under ``liar`` through its initial design on a quadratic, then asked
    for a point while [0.5, 0.5] is still being evaluated."""
    from npbandit.policies import BOPolicy

    policy = BOPolicy(2, model="gp", liar=liar)
    policy.reset(0)
    for _ in range(policy.n_init):
        x = policy.act(None)
        policy.observe(None, x, float(-np.sum((x - 0.4) ** 2)), {})
    policy.act(None, pending=np.array([[0.5, 0.5]]))
    return policy


@pytest.mark.parametrize("liar,expected", [("worst", min), ("mean", lambda y: sum(y) / len(y)), ("best", max)])
def test_the_policy_believes_points_in_flight_at_its_liar(monkeypatch, liar, expected):
    from npbandit.acquisition import proposal
    from npbandit.acquisition.pending import ConstantLiar

    seen = {}
    real = proposal.propose

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(proposal, "propose", spy)
    policy = _gp_policy_asked_with_one_in_flight(liar)
    assert seen["pending_strategy"] == ConstantLiar(liar)
    assert float(seen["pending_strategy"].value(seen["outputs"])) == pytest.approx(expected(policy.Y))
    torch.testing.assert_close(seen["pending"], torch.tensor([[0.5, 0.5]], dtype=torch.float64))
    assert policy.params()["liar"] == liar  # runs with other liars stay apart in the benchmarks


def test_liar_values_and_their_validation():
    from npbandit.acquisition.pending import liar_value
    from npbandit.policies import BOPolicy

    Y = torch.tensor([[1.0], [-2.0], [4.0]], dtype=torch.float64)
    assert [float(liar_value(Y, rule)) for rule in ("worst", "mean", "best")] == [-2.0, 1.0, 4.0]
    with pytest.raises(ValueError, match="liar must be one of"):
        liar_value(Y, "median")
    with pytest.raises(ValueError, match="at least one"):
        liar_value(Y[:0], "mean")
    with pytest.raises(ValueError, match="liar must be one of"):
        BOPolicy(2, model="gp", liar="kriging")


def test_the_trust_region_believes_pending_points_at_the_liar_of_its_box(monkeypatch):
    from npbandit.acquisition import proposal
    from npbandit.policies.trust_region import TrustRegion

    seen = {}
    monkeypatch.setattr(proposal, "propose", lambda *a, **kw: seen.update(kw) or np.full(2, 0.5))
    region = TrustRegion(2)
    region.length = 0.2  # the model's box: side 0.4 around the best point
    X = torch.tensor([[0.5, 0.5], [0.55, 0.45], [0.05, 0.95]], dtype=torch.float64)
    Y = torch.tensor([[3.0], [1.0], [-10.0]], dtype=torch.float64)  # the last point lies outside the box
    proposal.propose_in_region(region, X, Y, lambda X_box, Y_box: None, "logei", seed=0,
                               pending=torch.tensor([[0.52, 0.5]], dtype=torch.float64), liar="mean")
    assert float(seen["pending_strategy"].value(seen["outputs"])) == 2.0  # the mean of the box's outputs, not of all


def test_the_local_penalty_damps_the_acquisition_around_pending_points_only(monkeypatch):
    """liar="penalty": the model is not conditioned on pending points; LogEI gets González et
    al.'s log penalty, log Phi((L |x - x_j| - M + mu_j) / sigma_j), which is most negative at
    the pending point and vanishes beyond the ball where f(x_j) = mu_j leaves no room to beat M."""
    from torch.special import log_ndtr

    from npbandit.acquisition.penalty import LocalPenalty
    from npbandit.policies.gp import fit_single_task_gp

    X = torch.linspace(0, 1, 7, dtype=torch.float64).unsqueeze(-1)
    Y = torch.sin(6 * X)  # a maximum near x = 0.26, a minimum near 0.79
    gp = fit_single_task_gp(X, Y, noise_free=True)
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    pending = torch.tensor([[0.6]], dtype=torch.float64)  # sin(3.6) = -0.44
    penalty = LocalPenalty.build(gp, pending, Y.max(), bounds, seed=0)
    assert 3.0 < penalty.lipschitz < 9.0  # the mean's slope, |6 cos(6x)| <= 6, from 256 Sobol points
    # M: the model's idea of the maximum (its mean near 0.26 lies above every observation)
    assert penalty.best_f > Y.max()
    with torch.no_grad():
        post = gp.posterior(pending)
        at = penalty.log_penalty(pending.unsqueeze(-2))
        expected = log_ndtr((post.mean.reshape(-1) - penalty.best_f) / post.variance.sqrt().reshape(-1))
        torch.testing.assert_close(at, expected.reshape(1))
        # radius (M - mu_j) / L is about 1.45 / 6 = 0.24
        near, far = penalty.log_penalty(torch.tensor([[[0.65]], [[0.1]]], dtype=torch.float64))
    assert at < near < -1.0 and far > -1e-3
    x = pending.unsqueeze(-2).clone().requires_grad_(True)  # finite gradients at the pending point itself
    penalty.log_penalty(x).sum().backward()
    assert torch.isfinite(x.grad).all()

    X, Y = X[[0, 3, 6]], Y[[0, 3, 6]]  # three points: the model is unsure between them
    gp = fit_single_task_gp(X, Y, noise_free=True)
    seen = []
    real = type(gp).condition_on_observations
    monkeypatch.setattr(type(gp), "condition_on_observations", lambda self, *a, **kw: seen.append(a) or real(
        self, *a, **kw))
    alone = propose(gp, "logei", dim=1, best_f=Y.max(), seed=0)
    damped = propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=torch.as_tensor(alone[None]),
                     penalise_pending=True)
    assert not seen  # believed at no value: the model as it is
    assert abs(float(damped[0] - alone[0])) > 0.1  # the next point moves away from the one in flight
    with pytest.raises(ValueError, match="penalise_pending needs acquisition 'logei'"):
        propose(gp, "ucb", dim=1, best_f=Y.max(), seed=0, pending=pending, penalise_pending=True)
    with pytest.raises(ValueError, match="pending_value is not used"):
        propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, pending_value=0.0,
                penalise_pending=True)


def test_the_policy_penalises_points_in_flight_with_the_penalty_liar(monkeypatch):
    from npbandit.acquisition import proposal
    from npbandit.acquisition.pending import LocalPenalisation, liar_value
    from npbandit.policies import BOPolicy

    seen = {}
    real = proposal.propose
    monkeypatch.setattr(proposal, "propose", lambda *a, **kw: seen.update(kw) or real(*a, **kw))
    _gp_policy_asked_with_one_in_flight("penalty")
    assert seen["pending_strategy"] == LocalPenalisation() and "pending_value" not in seen
    with pytest.raises(ValueError, match="believes pending points at no value"):
        liar_value(torch.ones(2, 1, dtype=torch.float64), "penalty")
    with pytest.raises(ValueError, match="'penalty' needs acquisition 'logei'"):
        BOPolicy(2, model="gp", liar="penalty", acquisition="ucb")


@pytest.mark.parametrize("kwargs,err,match", [
    ({"batch_size": 0}, ValueError, "batch_size"),
    ({"batch_size": 2.0}, ValueError, "batch_size"),
    ({"batch_size": True}, ValueError, "batch_size"),
    ({"batch_size": 2}, ValueError, "needs an executor"),
    ({"executor": object()}, TypeError, "executor"),
    ({"eval_timeout": 1.0}, ValueError, "eval_timeout"),
    ({"liar": "kriging"}, ValueError, "liar must be one of"),
])
def test_argument_validation(kwargs, err, match):
    with pytest.raises(err, match=match):
        optimize(sphere, BOUNDS, surrogate="random", budget=3, db=None, progress=False, **kwargs)


def test_eval_timeout_must_be_positive():
    with ThreadPoolExecutor(1) as ex, pytest.raises(ValueError, match="eval_timeout"):
        optimize(sphere, BOUNDS, surrogate="random", budget=3, db=None, progress=False, executor=ex,
                 eval_timeout=0)


def test_a_version_1_database_is_refused(tmp_path):
    # schema 2 added steps.worker / submitted_at / finished_at: a version-1 file is not misread
    from sqlalchemy import update

    from npbandit.storage import Meta, RunLogger, SchemaVersionError, open_db

    db = str(tmp_path / "old.db")
    RunLogger(db)
    with open_db(db).begin() as conn:
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="1"))
    forget_engines()  # open_db caches engines: open the file afresh
    with pytest.raises(SchemaVersionError, match="schema version 1.*older npbandit"):
        RunLogger(db)


def test_the_initial_design_counts_points_handed_out_not_observed():
    # with 4 evaluations in flight, counting observations would hand out 3 Sobol points beyond n_init
    from npbandit.policies import BOPolicy
    from npbandit.policies.design import SobolDesign

    policy = BOPolicy(2, model="gp", n_init=5)
    policy.reset(0)
    sobol = SobolDesign(2, 0)
    design = [sobol.next() for _ in range(6)]
    handed: list = []
    for _ in range(4):  # four in flight, none back
        handed.append(policy.act(None, pending=np.array(handed).reshape(-1, 2)))
    for x in handed[:2]:
        policy.observe(None, x, float(-np.sum((x - 0.4) ** 2)), {})
    handed.append(policy.act(None, pending=np.array(handed[2:])))
    handed.append(policy.act(None, pending=np.array(handed[2:])))
    np.testing.assert_array_equal(np.array(handed[:5]), np.array(design[:5]))  # the design, once
    assert not np.allclose(handed[5], design[5])  # then the model, with two points observed
    # a design point observed late does not resize the trust region; a proposal's outcome does
    region_policy = BOPolicy(2, model="gp", n_init=3, trust_region=True)
    region_policy.reset(0)
    first: list = []
    for _ in range(3):
        first.append(region_policy.act(None, pending=np.array(first).reshape(-1, 2)))
    region_policy.observe(None, first[0], -1.0, {})
    region_policy.observe(None, first[1], -2.0, {})
    proposal = region_policy.act(None, pending=np.array(first[2:]))
    region_policy.observe(None, first[2], -3.0, {})  # the late design point
    assert region_policy.region.failures == 0
    region_policy.observe(None, proposal, -4.0, {})
    assert region_policy.region.failures == 1


def test_a_proposals_outcome_is_judged_against_the_best_it_knew():
    # two points proposed from the same state come back in turn, both better than the best
    # observed when they were proposed: two successes for the trust region, although the
    # second is worse than the first (judged against the best at observation, a failure)
    from npbandit.policies import BOPolicy

    policy = BOPolicy(2, model="gp", n_init=3, trust_region=True)
    policy.reset(0)
    for _ in range(3):
        x = policy.act(None)
        policy.observe(None, x, -1.0, {})
    a = policy.act(None)
    b = policy.act(None, pending=a[None])
    policy.observe(None, a, 1.0, {})
    policy.observe(None, b, 0.5, {})
    assert (policy.region.successes, policy.region.failures) == (2, 0)
    c = policy.act(None)
    policy.observe(None, c, 0.9, {})  # proposed knowing 1.0: no improvement
    assert (policy.region.successes, policy.region.failures) == (0, 1)


def test_the_cli_passes_the_liar_on(tmp_path):
    from npbandit.cli import main
    from npbandit.storage import list_runs

    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["optimize", "--function", "branin", "--surrogate", str(card), "--budget", "6", "--liar", "best",
                 "--db", db]) == 0
    (run,) = list_runs(db)
    assert run.policy_params["liar"] == "best"


def test_the_believer_conditions_each_pending_point_at_the_models_own_mean(monkeypatch):
    from npbandit.acquisition import proposal
    from npbandit.acquisition.pending import KrigingBeliever, liar_value
    from npbandit.policies.gp import fit_single_task_gp

    X = torch.tensor([[0.1], [0.45], [0.9]], dtype=torch.float64)
    Y = -(X - 0.5) ** 2
    gp = fit_single_task_gp(X, Y, noise_free=True)
    alone = propose(gp, "logei", dim=1, best_f=Y.max(), seed=0)
    pending = torch.as_tensor(alone[None])
    with torch.no_grad():
        expected = gp.posterior(pending).mean
    seen = []
    real = type(gp).condition_on_observations
    monkeypatch.setattr(type(gp), "condition_on_observations", lambda self, *a, **kw: seen.append(a) or real(
        self, *a, **kw))
    believed = propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, believe_pending=True,
                       observed=X)
    (at, value), = seen
    torch.testing.assert_close(at, pending)
    # a GP told the objective is noise-free conditions at its own tiny noise (a constant liar too:
    # condition_on_observations alone raises for a fixed-noise likelihood)
    propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, pending_value=float(Y.mean()))
    seen.clear()
    believed = propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, believe_pending=True,
                       observed=X)
    (at, value), = seen
    torch.testing.assert_close(value, expected.reshape(1, 1))  # the model's mean, not a constant of the data
    assert abs(float(believed[0] - alone[0])) >= 1e-3  # never the point in flight again
    with pytest.raises(ValueError, match="pending_value is not used with believe_pending"):
        propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, pending_value=0.0,
                believe_pending=True)
    with pytest.raises(ValueError, match="exclude each other"):
        propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, penalise_pending=True,
                believe_pending=True)
    with pytest.raises(ValueError, match="not at one constant"):
        liar_value(Y, "believer")

    kwargs = {}
    real_propose = proposal.propose
    monkeypatch.setattr(proposal, "propose", lambda *a, **kw: kwargs.update(kw) or real_propose(*a, **kw))
    _gp_policy_asked_with_one_in_flight("believer")
    assert kwargs["pending_strategy"] == KrigingBeliever() and "pending_value" not in kwargs
    assert "believe_pending" not in kwargs and "penalise_pending" not in kwargs  # the strategy, not its keyword form


def test_an_np_believes_points_in_flight_at_its_own_mean_through_optimize(tmp_path, monkeypatch):
    from npbandit.acquisition import pending

    believed = []
    real = pending.condition
    monkeypatch.setattr(pending, "condition", lambda model, X, Y: believed.append((model, X, Y)) or real(model, X, Y))
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    with ThreadPoolExecutor(2) as ex:
        result = optimize(slow_sphere, BOUNDS, surrogate=card, budget=8, n_init=3, seed=0, db=None, progress=False,
                          batch_size=2, executor=ex, liar="believer")
    assert len(result.history) == 8 and not any(h["failed"] for h in result.history)
    assert believed  # proposals were made with a point in flight
    for model, X, Y in believed:
        with torch.no_grad():
            torch.testing.assert_close(Y, model.posterior(X).mean.reshape(Y.shape))


def test_optimize_takes_a_pending_strategy_of_ones_own(tmp_path):
    # liar takes a PendingStrategy object, as BOPolicy and NPSampler do: with two evaluations in flight it is
    # handed the points still running, and the run records its name
    from npbandit.acquisition.pending import KrigingBeliever

    class Recording(KrigingBeliever):
        name = "recording-believer"

        def __init__(self):
            self.pending = []

        def believe(self, model, pending, *, outputs, observed):
            self.pending.append(pending.shape[0])
            return super().believe(model, pending, outputs=outputs, observed=observed)

    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    db = f"sqlite:///{tmp_path / 'liar.db'}"
    liar = Recording()
    with ThreadPoolExecutor(2) as ex:
        result = optimize(sphere, BOUNDS, surrogate=card, budget=9, n_init=3, seed=0, db=db, progress=False,
                          batch_size=2, executor=ex, liar=liar)
    assert len(result.history) == 9
    assert liar.pending and all(n >= 1 for n in liar.pending)  # every model proposal with a point in flight
    (run,) = list_runs(db)
    assert run.policy_params["liar"] == "recording-believer"
    for wrong in (KrigingBeliever, 3, "liar"):
        with pytest.raises(ValueError, match="liar must be one of .* or a PendingStrategy"):
            optimize(sphere, BOUNDS, surrogate=card, budget=4, db=None, progress=False, liar=wrong)
