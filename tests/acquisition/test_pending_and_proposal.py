"""npbandit.acquisition: the pending-point strategies, the penalised acquisition and how
propose takes a strategy (the proposal step itself is tested with the policies that use it)."""

import numpy as np
import pytest
import torch

from npbandit.acquisition import pending as pending_module
from npbandit.acquisition import proposal
from npbandit.acquisition.pending import (
    LIARS,
    ConstantLiar,
    KrigingBeliever,
    LocalPenalisation,
    PendingStrategy,
    pending_strategy,
)
from npbandit.policies.gp import fit_single_task_gp

X = torch.tensor([[0.1], [0.45], [0.9]], dtype=torch.float64)
Y = -(X - 0.5) ** 2
PENDING = torch.tensor([[0.3], [0.7]], dtype=torch.float64)


@pytest.fixture
def gp():
    return fit_single_task_gp(X, Y)


@pytest.fixture
def conditioned(monkeypatch):
    """The (points, values) every strategy conditions a model on, in order."""
    seen = []
    real = pending_module.condition
    monkeypatch.setattr(pending_module, "condition", lambda model, X, Y: seen.append((X, Y)) or real(model, X, Y))
    return seen


def test_the_names_resolve_to_the_strategies_and_objects_pass_through():
    assert [pending_strategy(name) for name in LIARS] == [
        ConstantLiar("worst"), ConstantLiar("mean"), ConstantLiar("best"), KrigingBeliever(), LocalPenalisation()]
    assert [pending_strategy(name).name for name in LIARS] == list(LIARS)  # what a run logs as its liar
    custom = ConstantLiar(-3.0)
    assert pending_strategy(custom) is custom and custom.name == "constant"
    with pytest.raises(ValueError, match="liar must be one of"):
        pending_strategy("kriging")
    with pytest.raises(ValueError, match="liar must be one of"):
        pending_strategy(None)
    with pytest.raises(ValueError, match="'penalty' needs acquisition 'logei'"):
        pending_strategy("penalty", "ucb")
    assert pending_strategy("penalty", "logei") == LocalPenalisation()
    assert pending_strategy("believer", "qlognei") == KrigingBeliever()  # the others serve every acquisition


def test_a_constant_liar_conditions_every_pending_point_at_its_constant(gp, conditioned):
    for rule, expected in (("worst", Y.min()), ("mean", Y.mean()), ("best", Y.max()), (0.25, 0.25)):
        conditioned.clear()
        model, observed = ConstantLiar(rule).believe(gp, PENDING, outputs=Y, observed=X)
        (at, values), = conditioned
        assert torch.equal(at, PENDING)
        assert torch.equal(values, torch.full((2, 1), float(expected), dtype=torch.float64))
        assert model is not gp and observed is X  # pending points are not counted as evaluated
        assert model.train_inputs[0].shape[-2] == 5
    assert float(ConstantLiar(2.0).value(None)) == 2.0  # a number needs no outputs
    with pytest.raises(ValueError, match="needs the outputs"):
        ConstantLiar("mean").value(None)
    with pytest.raises(ValueError, match="at least one"):
        ConstantLiar("mean").value(Y[:0])
    for bad in ("median", float("nan"), True, None):
        with pytest.raises(ValueError, match="rule must be one of"):
            ConstantLiar(bad)


def test_the_kriging_believer_conditions_each_point_at_the_models_mean_and_counts_it_as_evaluated(gp, conditioned):
    with torch.no_grad():
        expected = gp.posterior(PENDING).mean
    model, observed = KrigingBeliever().believe(gp, PENDING, outputs=None, observed=X)
    (at, values), = conditioned
    assert torch.equal(at, PENDING)
    torch.testing.assert_close(values, expected.reshape(2, 1))  # its own mean at each, not one constant
    assert torch.equal(observed, torch.cat([X, PENDING])) and model is not gp
    assert KrigingBeliever().believe(gp, PENDING, outputs=None, observed=None)[1] is None


def test_local_penalisation_leaves_the_model_and_damps_logei_around_the_pending_points(gp, conditioned):
    from botorch.acquisition import AcquisitionFunction, LogExpectedImprovement

    from npbandit.acquisition.penalty import LocalPenalty, PenalisedAcquisition

    strategy = LocalPenalisation()
    model, observed = strategy.believe(gp, PENDING, outputs=Y, observed=X)
    assert model is gp and observed is X and not conditioned  # believed at no value
    bounds = torch.tensor([[0.0], [1.0]], dtype=torch.float64)
    penalty = strategy.penalise(gp, PENDING, best_f=Y.max(), bounds=bounds, seed=0)
    assert isinstance(penalty, LocalPenalty) and torch.equal(penalty.pending, PENDING)
    assert ConstantLiar("mean").penalise(gp, PENDING, best_f=Y.max(), bounds=bounds, seed=0) is None
    assert KrigingBeliever().penalise(gp, PENDING, best_f=Y.max(), bounds=bounds, seed=0) is None
    # the penalised acquisition: a module-level BoTorch acquisition, LogEI plus the log penalty
    logei = LogExpectedImprovement(gp, best_f=Y.max())
    damped = penalty.wrap(logei)
    assert type(damped) is PenalisedAcquisition and isinstance(damped, AcquisitionFunction)
    assert damped.model is gp and damped.base is logei
    points = torch.linspace(0, 1, 11, dtype=torch.float64).reshape(-1, 1, 1)
    with torch.no_grad():
        torch.testing.assert_close(damped(points), logei(points) + penalty.log_penalty(points))
        assert damped(PENDING.unsqueeze(-2)).lt(logei(PENDING.unsqueeze(-2))).all()  # most damped where in flight
    with pytest.raises(TypeError, match="base"):
        PenalisedAcquisition(lambda X: X, penalty)
    with pytest.raises(TypeError, match="penalty"):
        PenalisedAcquisition(logei, None)
    with pytest.raises(ValueError, match="'penalty' needs acquisition 'logei'"):
        strategy.check("ucb")


def test_propose_takes_a_strategy_as_its_keyword_form_did(gp):
    """The strategy objects and propose's keyword form (pending_value / believe_pending /
    penalise_pending) give the same point; both at once is refused."""
    pending = PENDING[:1]
    for strategy, keywords in ((ConstantLiar("mean"), {"pending_value": Y.mean()}),
                               (KrigingBeliever(), {"believe_pending": True}),
                               (LocalPenalisation(), {"penalise_pending": True})):
        ours = proposal.propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, pending_strategy=strategy,
                                outputs=Y, observed=X, num_restarts=2, raw_samples=32)
        theirs = proposal.propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, observed=X,
                                  num_restarts=2, raw_samples=32, **keywords)
        assert np.array_equal(ours, theirs), strategy
        with pytest.raises(ValueError, match="not both"):
            proposal.propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, pending_strategy=strategy,
                             outputs=Y, **keywords)
    with pytest.raises(TypeError, match="pending_strategy"):
        proposal.propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending, pending_strategy="mean")
    with pytest.raises(ValueError, match="needs the outputs"):
        proposal.propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, pending=pending,
                         pending_strategy=ConstantLiar("mean"))
    with pytest.raises(ValueError, match="'penalty' needs acquisition 'logei'"):
        proposal.propose(gp, "ucb", dim=1, best_f=Y.max(), seed=0, pending=pending,
                         pending_strategy=LocalPenalisation())
    # nothing in flight: the strategy is not consulted
    assert np.array_equal(proposal.propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, num_restarts=2, raw_samples=32,
                                           pending=PENDING[:0], pending_strategy=ConstantLiar("mean")),
                          proposal.propose(gp, "logei", dim=1, best_f=Y.max(), seed=0, num_restarts=2, raw_samples=32))


class _Recorder(PendingStrategy):
    """A strategy of one's own: the model left alone, the points it was shown recorded."""

    name = "recorder"

    def __init__(self):
        self.seen = []

    def believe(self, model, pending, *, outputs, observed):
        self.seen.append((pending.clone(), outputs.clone()))
        return model, observed


def test_a_policy_takes_a_strategy_of_its_own_and_logs_its_name():
    from npbandit.policies import BOPolicy

    strategy = _Recorder()
    policy = BOPolicy(2, model="gp", liar=strategy, n_init=3, num_restarts=2, raw_samples=32)
    assert policy.pending_strategy is strategy and policy.params()["liar"] == "recorder"
    policy.reset(0)
    for _ in range(3):
        x = policy.act(None)
        policy.observe(None, x, float(-np.sum((x - 0.4) ** 2)), {})
    policy.act(None, pending=np.array([[0.5, 0.5]]))
    (points, outputs), = strategy.seen
    assert points.tolist() == [[0.5, 0.5]] and outputs.reshape(-1).tolist() == policy.Y
    assert BOPolicy(2, model="gp", liar=ConstantLiar(-1.0)).params()["liar_value"] == -1.0
    with pytest.raises(ValueError, match="'penalty' needs acquisition 'logei'"):
        BOPolicy(2, model="gp", liar=LocalPenalisation(), acquisition="ucb")
