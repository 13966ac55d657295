"""A point on a face of the box is inside it: ``low + u * (high - low)`` rounds past ``high``
for some bounds (``-3.3 + 1.0 * 4.0 == 0.7000000000000002``), so the objective would get a
point outside its bounds and a run's own history would be refused as ``initial=``; and a
point given within rounding of a face (``0.1 + 0.2`` for a bound of ``0.3``) is taken as on it."""

import numpy as np
import pytest

import npbandit
from npbandit import Optimizer
from npbandit.envs import BlackBoxEnv

LOW, HIGH = [-3.3, 0.3, -0.7], [0.7, 0.9, 0.9]


def test_the_unit_cubes_faces_map_onto_the_bounds_faces_exactly():
    env = BlackBoxEnv(objective=lambda x: float(np.sum(x)), bounds=[LOW, HIGH], budget=2)
    np.testing.assert_array_equal(env.to_bounds(np.ones(3)), HIGH)
    np.testing.assert_array_equal(env.to_bounds(np.zeros(3)), LOW)
    assert (env.to_bounds(np.full(3, 0.999999999)) <= HIGH).all()


def test_a_runs_own_points_on_a_face_are_inside_and_can_start_another_run():
    seen = []

    def objective(x):
        assert ((np.array(LOW) <= x) & (x <= np.array(HIGH))).all(), x  # a strict objective
        seen.append(x)
        return float(np.sum(x))

    opt = Optimizer([LOW, HIGH], surrogate="random", budget=3, db=None)
    for point in (HIGH, LOW):
        trial = opt.attach(point)
        np.testing.assert_array_equal(trial.x, point)
        opt.tell(trial, objective(trial.x))
    trial = opt.ask()
    opt.tell(trial, objective(trial.x))
    result = opt.close()
    again = npbandit.optimize(objective, [LOW, HIGH], surrogate="random", budget=2, db=None, progress=False,
                              initial=result.history)
    assert len(again.history) == 2


def test_a_point_within_rounding_of_a_face_is_on_it_and_one_beyond_is_refused():
    opt = Optimizer([[0.0, 0.0], [0.3, 0.7]], surrogate="random", budget=3, db=None)
    trial = opt.attach([0.1 + 0.2, -1e-17])  # 0.30000000000000004 and a rounding below 0
    np.testing.assert_array_equal(trial.x, [0.3, 0.0])
    for outside in ([0.3000001, 0.5], [0.1, -1e-9]):
        with pytest.raises(ValueError, match="outside the bounds"):
            opt.attach(outside)


def test_float32_points_on_a_face_are_on_it():
    """``torch.tensor([[0.3, 0.7]])`` is float32 by default, and float32's 0.3 is 0.30000001192..."""
    import torch

    X = torch.tensor([[0.3, 0.7], [0.1, 0.2]])
    Y = torch.tensor([1.0, 0.3])
    box = [[0.0, 0.0], [0.3, 0.7]]
    for initial in [(X, Y), (X.numpy(), Y.numpy()), [(X[0], 1.0)], [([np.float32(0.3), np.float32(0.7)], 1.0)]]:
        result = npbandit.optimize(lambda x: float(np.sum(x)), box, surrogate="random", budget=1, db=None,
                                   progress=False, initial=initial)
        assert len(result.history) == 1
    opt = Optimizer(box, surrogate="random", budget=2, db=None)
    np.testing.assert_array_equal(opt.attach(X[0]).x, [0.3, float(np.float32(0.7))])  # on the face; inside as given
    with pytest.raises(ValueError, match="outside the bounds"):  # a float32 rounding is all it allows
        opt.attach(torch.tensor([0.3001, 0.7]))


def test_a_float_parameters_value_within_rounding_of_an_end_is_on_it():
    from npbandit.space import Float

    opt = Optimizer(space={"x": Float(0.0, 0.3), "y": Float(1e-3, 0.3, log=True)}, surrogate="random", budget=3,
                    db=None)
    assert opt.attach({"x": np.float32(0.3), "y": 0.1 + 0.2}).x == {"x": 0.3, "y": 0.3}
    assert opt.attach({"x": 0.1 + 0.2, "y": np.float32(0.3)}).x == {"x": 0.3, "y": 0.3}
    with pytest.raises(ValueError, match=r"must lie in \[0.0, 0.3\]"):
        opt.attach({"x": 0.3000001, "y": 0.1})
