import torch
from botorch.models import SingleTaskGP

from npbandit import optimize
from npbandit.acquisition import proposal
from npbandit.policies.trust_region import TrustRegion
from npbandit.space import Choice, Int


def test_a_region_with_every_point_evaluated_proposes_outside_it():
    # 24 points in all: once the trust region's points are all evaluated, the repeat check is
    # kept by searching the whole cube, so the budget visits every point once
    space = {"x": Int(0, 2), "c": Choice(["a", "b"]), "y": Int(0, 3)}

    def objective(p):
        return (p["x"] - 1) ** 2 + (p["c"] == "a") * 0.5 + p["y"] * 0.1

    result = optimize(objective, space, surrogate="tnpd", budget=24, seed=0, db=None, progress=False)
    points = [(h["x"]["x"], h["x"]["c"], h["x"]["y"]) for h in result.history]
    assert len(set(points)) == 24


class _Fixed:
    """An acquisition optimiser that returns the points it was given (in the box it is handed),
    best first, whatever the acquisition: the repeat check is then all that decides."""

    def __init__(self, points):
        self.points = torch.tensor(points, dtype=torch.float64)

    def maximise(self, acq, bounds, seed):
        return self.points.to(bounds), -torch.arange(len(self.points), dtype=torch.float64)

    def params(self):
        return {"name": "fixed"}


def _gp(X, Y):
    return SingleTaskGP(X, Y)


def test_an_observation_is_not_snapped_again_by_the_repeat_check():
    # a snap that moves a point halfway to its grid value is no projection (a count sketch's
    # grid seen in its embedding is such a map): the observation 0.95 (0.9 snapped) must stay
    # where it was evaluated, so that the candidate 0.9, which snaps onto it, is a repeat
    def halfway(points):
        return (points + torch.round(points * 4) / 4) / 2

    X = torch.tensor([[0.95], [0.1]], dtype=torch.float64)
    Y = torch.tensor([[1.0], [0.0]], dtype=torch.float64)
    point = proposal.propose(_gp(X, Y), "logei", dim=1, best_f=Y.max(), seed=0, observed=X, snap=halfway,
                             acq_optimizer=_Fixed([[0.9], [0.4]]))
    assert point.tolist() == [0.4]


def test_a_region_and_its_repeat_check_agree_on_the_distance_of_a_repeat():
    # a small region on a mixed cube (a grid on the second column): the point the region
    # proposes is 3e-4 from an observation in the whole cube, 0.015 of the model's cube; the
    # region searched it at its own scale, so the check after it keeps it rather than throwing
    # it away for a proposal over the whole cube
    def grid(points):
        return torch.stack([points[:, 0], torch.round(points[:, 1] * 4) / 4], dim=-1)

    region = TrustRegion(2)
    region.length = 0.01  # context box: side 0.02 around the incumbent, (0.49, 0.49)..(0.51, 0.51)
    X = torch.tensor([[0.5, 0.5], [0.5005, 0.5], [0.9, 0.25]], dtype=torch.float64)
    Y = torch.tensor([[1.0], [0.5], [0.0]], dtype=torch.float64)
    local = [[(0.5003 - 0.49) / 0.02, 0.5]]  # (0.5003, 0.5) in the model's cube
    point = proposal.propose_in_region(region, X, Y, _gp, "logei", seed=0, snap=grid,
                                       acq_optimizer=_Fixed(local))
    assert abs(point[0] - 0.5003) < 1e-12 and point[1] == 0.5
