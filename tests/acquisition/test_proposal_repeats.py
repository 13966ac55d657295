from npbandit import optimize
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
