"""propose_in_region under linear input constraints: a region that misses them falls back to the whole polytope."""

import torch

from npbandit.acquisition.proposal import propose_in_region
from npbandit.policies.factories import model_factory
from npbandit.policies.trust_region import TrustRegion, TrustRegionSettings
from npbandit.space import SearchSpace
from npbandit.space.linear_constraints import LinearConstraints


def test_a_trust_region_that_misses_the_polytope_proposes_inside_it_over_the_whole_cube():
    polytope = LinearConstraints(["x0 + x1 <= 0.5"], SearchSpace.from_bounds([[0, 0], [1, 1]])).polytope
    # the incumbent (a warm start's, say) lies outside, and the region around it is too small to reach the polytope
    X = torch.tensor([[0.9, 0.9], [0.1, 0.1], [0.2, 0.1], [0.85, 0.95]], dtype=torch.float64)
    Y = torch.tensor([[1.0], [0.0], [0.1], [0.5]], dtype=torch.float64)
    region = TrustRegion.from_settings(2, TrustRegionSettings())
    region.length = 0.1
    point = propose_in_region(region, X, Y, model_factory("gp"), "logei", seed=0, polytope=polytope)
    assert point.shape == (2,) and bool(polytope.holds(torch.as_tensor(point)))
