"""npbandit.acquisition.optimizers: the acquisition optimisers and how the proposal step takes one."""

import numpy as np
import pytest
import torch

from npbandit.acquisition import CandidateSearch, GradientRestarts, proposal
from npbandit.acquisition.optimizers import AcquisitionOptimizer, maximised
from npbandit.policies import BOPolicy
from npbandit.policies.gp import fit_single_task_gp

PEAK = torch.tensor([0.3, 0.8, 0.55], dtype=torch.float64)
BOX = torch.tensor([[0.1, 0.5, 0.2], [0.6, 0.9, 0.7]], dtype=torch.float64)


class Bowl(torch.nn.Module):
    """A stand-in acquisition ``[b, 1, d] -> [b]``: minus the squared distance to ``PEAK``,
    counting the points it scored."""

    def __init__(self) -> None:
        super().__init__()
        self.scored = 0

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        self.scored += X.shape[0]
        return -((X.squeeze(-2) - PEAK) ** 2).sum(dim=-1)


def test_the_candidate_search_climbs_to_the_maximum_inside_the_box_and_scores_what_it_said():
    bowl, search = Bowl(), CandidateSearch()
    points, values = search.maximise(bowl, BOX, seed=3)
    assert bowl.scored == search.raw_samples + search.rounds * search.walkers * search.samples
    assert points.shape == (search.walkers, 3) and values.shape == (search.walkers,)
    assert ((points >= BOX[0]) & (points <= BOX[1])).all()
    torch.testing.assert_close(values, bowl(points.unsqueeze(-2)), rtol=0, atol=0)  # each value is its point's
    # the Sobol screen alone leaves the best point ~0.05 from the peak in 3-D; eight rounds of halving steps
    # from 0.1 of the box bring it far closer
    assert torch.linalg.norm(points[values.argmax()] - PEAK) < 5e-3
    again, _ = CandidateSearch().maximise(Bowl(), BOX, seed=3)
    assert torch.equal(points, again)  # its own generators: the seed decides
    other, _ = CandidateSearch().maximise(Bowl(), BOX, seed=4)
    assert not torch.equal(points, other)


def test_the_candidate_search_stays_in_the_box_when_the_maximum_lies_outside_and_never_picks_nan():
    class Tilted(torch.nn.Module):
        def forward(self, X):
            value = X.squeeze(-2).sum(dim=-1)
            return torch.where(X.squeeze(-2)[:, 0] < 0.12, torch.nan, value)  # NaN near one face

    points, values = CandidateSearch(rounds=4).maximise(Tilted(), BOX, seed=0)
    assert ((points >= BOX[0]) & (points <= BOX[1])).all() and torch.isfinite(values).all()
    best = points[values.argmax()]
    torch.testing.assert_close(best[1:], BOX[1, 1:], rtol=0, atol=0.02)  # pushed onto the upper faces


def test_gradient_restarts_is_optimize_acqf_with_the_proposal_steps_settings():
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim import optimize_acqf

    X = torch.tensor([[0.1, 0.2], [0.45, 0.9], [0.9, 0.4], [0.6, 0.6]], dtype=torch.float64)
    Y = -((X - 0.5) ** 2).sum(dim=-1, keepdim=True)
    acq = LogExpectedImprovement(fit_single_task_gp(X, Y), best_f=Y.max())
    box = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    torch.manual_seed(0)  # optimize_acqf picks its start points with torch's global generator
    points, values = GradientRestarts(num_restarts=3, raw_samples=32).maximise(acq, box, seed=5)
    torch.manual_seed(0)
    expected, expected_values = optimize_acqf(acq, box, q=1, num_restarts=3, raw_samples=32, options={"seed": 5},
                                              return_best_only=False)
    assert torch.equal(points, expected.reshape(-1, 2)) and torch.equal(values, expected_values.reshape(-1))


def test_propose_maximises_with_the_optimiser_it_is_given_and_refuses_anything_else():
    X = torch.tensor([[0.1], [0.45], [0.9]], dtype=torch.float64)
    gp = fit_single_task_gp(X, -(X - 0.5) ** 2)
    calls = []

    class Recording(CandidateSearch):
        def maximise(self, acq, bounds, seed):
            calls.append((bounds.clone(), seed))
            return super().maximise(acq, bounds, seed)

    point = proposal.propose(gp, "logei", dim=1, best_f=0.0, seed=7, acq_optimizer=Recording())
    assert len(calls) == 1 and calls[0][1] == 7 and torch.equal(calls[0][0], torch.tensor([[0.0], [1.0]],
                                                                                          dtype=torch.float64))
    assert point.shape == (1,) and 0.0 <= point[0] <= 1.0
    with pytest.raises(TypeError, match="acq_optimizer must be an acquisition optimiser"):
        proposal.propose(gp, "logei", dim=1, best_f=0.0, seed=7, acq_optimizer="candidates")
    assert isinstance(CandidateSearch(), AcquisitionOptimizer) and isinstance(GradientRestarts(), AcquisitionOptimizer)


@pytest.mark.parametrize("kwargs, match", [
    ({"walkers": 0}, "walkers must be an int >= 1"),
    ({"raw_samples": 1.5}, "raw_samples must be an int"),
    ({"scale": 0.0}, r"scale must be in \(0, 1\]"),
    ({"shrink": 1.0}, r"shrink must be in \(0, 1\)"),
    ({"rounds": -1}, "rounds must be an int >= 0"),
    ({"raw_samples": 4}, r"raw_samples \(4\) must be at least walkers \(8\)"),
    ({"scale": 5.0}, r"scale must be in \(0, 1\]"),
])
def test_the_candidate_search_refuses_bad_settings_naming_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CandidateSearch(**kwargs)


def test_wrong_settings_boxes_and_classes_are_refused_before_anything_runs():
    with pytest.raises(ValueError, match=r"raw_samples \(4\) must be at least num_restarts \(10\)"):
        GradientRestarts(raw_samples=4)
    for optimizer in (CandidateSearch(), GradientRestarts()):
        with pytest.raises(ValueError, match=r"bounds must be a float tensor \[2, d\]"):
            optimizer.maximise(Bowl(), BOX[:, 0], seed=0)
        with pytest.raises(ValueError, match="lower <= upper"):
            optimizer.maximise(Bowl(), BOX.flip(0), seed=0)
    with pytest.raises(TypeError, match=r"got the class CandidateSearch; did you mean CandidateSearch\(\)\?"):
        BOPolicy(2, model="gp", acq_optimizer=CandidateSearch)


def test_a_held_column_stays_where_the_box_holds_it():
    box = BOX.clone()
    box[:, 1] = 0.7  # lower == upper: held
    points, _ = CandidateSearch(rounds=3).maximise(Bowl(), box, seed=0)
    assert (points[:, 1] == 0.7).all()


def test_acquisitions_that_use_no_optimiser_refuse_one_and_log_none():
    for acquisition in ("thompson", "qlognei"):
        with pytest.raises(ValueError, match=f"acquisition '{acquisition}' does not use one"):
            BOPolicy(2, model="gp", acquisition=acquisition, acq_optimizer=CandidateSearch())
    params = BOPolicy(2, model="gp", acquisition="thompson").params()
    assert "acq_optimizer" not in params and "num_restarts" not in params
    assert BOPolicy(2, model="gp", acquisition="qlognei", num_restarts=4).params()["num_restarts"] == 4


def test_a_policy_runs_and_logs_the_optimiser_given_or_the_models_default(tmp_path):
    from tests.helpers import tiny_checkpoint

    policy = BOPolicy(2, model="gp", acq_optimizer=CandidateSearch(rounds=3))
    assert policy.params()["acq_optimizer"] == {**CandidateSearch().params(), "rounds": 3}
    assert BOPolicy(2, model="gp").params()["acq_optimizer"] == GradientRestarts().params()
    # an NP's default is what its card recommends: CandidateSearch for tnpd-bo, optimize_acqf where it is silent
    assert BOPolicy(2, model="tnpd-bo").acq_optimizer == CandidateSearch()
    assert BOPolicy(2, model="cmanp-bo").acq_optimizer == GradientRestarts()
    assert BOPolicy(2, model=str(tiny_checkpoint(tmp_path, "tnpd"))).acq_optimizer == GradientRestarts()
    # optimize_acqf's settings given: the caller asked for it
    assert BOPolicy(2, model="tnpd-bo", num_restarts=4).acq_optimizer == GradientRestarts(4, 512)
    assert BOPolicy(2, model="gp", raw_samples=64).acq_optimizer == GradientRestarts(10, 64)
    with pytest.raises(ValueError, match="num_restarts and raw_samples configure GradientRestarts"):
        BOPolicy(2, model="gp", num_restarts=4, acq_optimizer=CandidateSearch())
    with pytest.raises(TypeError, match="acq_optimizer must be"):
        BOPolicy(2, model="gp", acq_optimizer=np.argmax)


def test_a_recommendation_names_a_known_optimiser():
    from npbandit.acquisition.optimizers import OPTIMIZERS, resolve_acq_optimizer

    assert {name: type(resolve_acq_optimizer(None, name)) for name in OPTIMIZERS} == OPTIMIZERS
    assert all(cls().params()["name"] == name for name, cls in OPTIMIZERS.items())  # what a run logs
    with pytest.raises(ValueError, match="recommends acquisition optimiser 'adam', which this version does not know"):
        resolve_acq_optimizer(None, "adam")


class Returning:
    """A custom optimiser returning what it was built with (a stand-in for a buggy one)."""

    def __init__(self, points, values=None) -> None:
        self.points, self.values = points, values

    def maximise(self, acq, bounds, seed):
        values = torch.zeros(len(self.points), dtype=torch.float64) if self.values is None else self.values
        return self.points, values

    def params(self):
        return {"name": "returning"}


@pytest.mark.parametrize("points, values, match", [
    (torch.tensor([[0.3, 0.8, 1.5]], dtype=torch.float64), None, "outside the box bounds"),
    (torch.tensor([[0.3, 0.8, 0.2 - 1e-9]], dtype=torch.float64), None, "outside the box bounds"),
    (torch.tensor([[0.3, float("nan"), 0.5]], dtype=torch.float64), None, "not finite"),
    (torch.tensor([[[0.3, 0.8, 0.5]]], dtype=torch.float64), None, r"points \[k, 3\].*got points \[1, 1, 3\]"),
    (torch.empty(0, 3, dtype=torch.float64), None, r"k >= 1"),
    (np.array([[0.3, 0.8, 0.5]]), None, "points as a float torch tensor"),
    (torch.tensor([[0.3, 0.8, 0.5]], dtype=torch.float64), torch.tensor([float("nan")]), "NaN or \\+inf"),
    (torch.tensor([[0.3, 0.8, 0.5]], dtype=torch.float64), torch.zeros(2), r"values \[k\]"),
])
def test_a_custom_optimisers_output_outside_the_contract_is_refused_naming_it(points, values, match):
    with pytest.raises(ValueError, match=f"acq_optimizer Returning.maximise.*{match}"):
        maximised(Returning(points, values), Bowl(), BOX, 0)


def test_the_proposal_step_checks_what_a_custom_optimiser_returns():
    # points outside the box were clamped onto it, NaN and [k, 1, d] failed deep in torch
    X = torch.tensor([[0.1], [0.45], [0.9]], dtype=torch.float64)
    gp = fit_single_task_gp(X, -(X - 0.5) ** 2)
    for points in (torch.tensor([[1.5]], dtype=torch.float64), torch.tensor([[[0.5]]], dtype=torch.float64)):
        with pytest.raises(ValueError, match="acq_optimizer Returning.maximise"):
            proposal.propose(gp, "logei", dim=1, best_f=0.0, seed=7, acq_optimizer=Returning(points))


def test_rounding_level_excursions_are_moved_onto_the_box_and_the_built_in_optimisers_pass():
    # a point one float64 ulp past the upper face (what lower + width * u may give) counts as inside
    # and is moved onto the face; BOX_ROUNDING ulps of max(1, |bound|) is the stated allowance
    edge = torch.nextafter(BOX[1], torch.tensor(2.0, dtype=torch.float64)).unsqueeze(0)
    points, _ = maximised(Returning(edge), Bowl(), BOX, 0)
    assert torch.equal(points, BOX[1:])
    for optimizer in (CandidateSearch(rounds=2), GradientRestarts(num_restarts=2, raw_samples=16)):
        points, values = maximised(optimizer, Bowl(), BOX, 0)
        assert ((BOX[0] <= points) & (points <= BOX[1])).all() and points.shape[1] == 3
        assert values.shape == points.shape[:1]


def test_a_refusal_counts_the_bad_entries_and_shows_the_first_few_in_bounded_length():
    # every value or point used to be listed: 4,096 values with one NaN gave an 83 kB message
    k = 4096
    u = torch.rand(k, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    points = BOX[0] + (BOX[1] - BOX[0]) * u
    values = torch.zeros(k, dtype=torch.float64)
    values[[17, 40, 41, 900]] = torch.nan
    with pytest.raises(ValueError) as raised:
        maximised(Returning(points, values), Bowl(), BOX, 0)
    message = str(raised.value)
    assert "4 of 4096 values, the first 3: values[17] = nan; values[40] = nan; values[41] = nan" in message
    assert len(message) < 300
    nan_points = points.clone()
    nan_points[5, 2] = torch.inf
    with pytest.raises(ValueError, match=r"not finite \(NaN or inf\): 1 of 4096 points, points\[5, 2\] = inf$"):
        maximised(Returning(nan_points), Bowl(), BOX, 0)
    outside = points.clone()
    outside[:, 1] = 2.0  # every row outside, in one column
    with pytest.raises(ValueError) as raised:
        maximised(Returning(outside), Bowl(), BOX, 0)
    message = str(raised.value)
    assert "4096 of 4096 points, the first 3: points[0, 1] = 2.0 (the box: [0.5, 0.9]); points[1, 1] = 2.0" in message
    assert len(message) < 400


class Settings(Returning):
    """A custom optimiser whose ``params()`` returns (or raises) what it was built with."""

    def __init__(self, params) -> None:
        super().__init__(BOX[:1])
        self.settings = params

    def params(self):
        if isinstance(self.settings, Exception):
            raise self.settings
        return self.settings


def _circular():
    d = {"name": "loop"}
    d["self"] = d
    return d


@pytest.mark.parametrize("settings, error, match", [
    ("x", TypeError, "must return a dict of its settings.*got str"),
    ({"name": "o", "f": float("nan")}, ValueError, "finite JSON values.*'f': nan"),
    ({"name": "o", "f": [1.0, float("inf")]}, ValueError, "finite JSON values"),
    ({"name": "o", "f": object()}, TypeError, "JSON values.*object is not JSON-serialisable"),
    (_circular(), ValueError, "Circular reference"),
    (ZeroDivisionError("division by zero"), ValueError, r"\(Settings\) raised ZeroDivisionError: division by zero"),
])
def test_an_optimisers_params_are_checked_where_it_is_taken(settings, error, match):
    # recorded silently ("x", NaN), or failing at the run's start as a bare ZeroDivisionError or
    # "Circular reference detected" naming nothing
    from npbandit.acquisition.optimizers import check_acq_optimizer

    with pytest.raises(error, match=rf"acq_optimizer.params\(\).*{match}"):
        check_acq_optimizer("acq_optimizer", Settings(settings))
    with pytest.raises(error, match=r"acq_optimizer.params\(\)"):
        BOPolicy(1, model="gp", acq_optimizer=Settings(settings))
    with pytest.raises(error, match=r"acq_optimizer.params\(\)"):
        proposal.propose(fit_single_task_gp(torch.tensor([[0.2], [0.7]], dtype=torch.float64),
                                            torch.tensor([[0.0], [1.0]], dtype=torch.float64)),
                         "logei", dim=1, best_f=1.0, seed=0, acq_optimizer=Settings(settings))


def test_numpy_and_tensor_settings_pass_as_the_runs_storage_writes_them():
    from npbandit.acquisition.optimizers import check_acq_optimizer

    optimizer = Settings({"name": "o", "n": np.int64(3), "scale": torch.tensor([0.5, 1.0])})
    assert check_acq_optimizer("acq_optimizer", optimizer) is optimizer
