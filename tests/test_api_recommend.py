"""The model's recommendation beside the best observed point: ``optimize``'s result, the run's
record in the database, ``npbandit report``, and the run loop around ``Policy.recommend``."""

import warnings

import numpy as np
import pytest
import torch
from helpers import tiny_checkpoint

from npbandit import NPModel, load_surrogate, optimize
from npbandit.envs import BlackBoxEnv
from npbandit.loop import run_episode
from npbandit.policies import SobolPolicy
from npbandit.policies.base import Recommendation
from npbandit.report import bo_summary, report_text
from npbandit.storage import RunLogger, list_runs, run_steps

BOUNDS = [[-1.0, 0.0], [1.0, 2.0]]


def noisy_sphere(seed=0, scale=1.0):
    rng = np.random.default_rng(seed)

    def f(x):
        return float(((np.asarray(x) - np.array([0.3, 1.2])) ** 2).sum() + scale * rng.standard_normal())

    return f


def test_a_noisy_run_recommends_the_evaluated_point_of_the_best_de_noised_mean(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = str(tmp_path / "runs.db")
    # the global model, streamed while the run proposes; the recommendation's is built on every observation
    result = optimize(noisy_sphere(), BOUNDS, surrogate=str(card), budget=9, trust_region=False, db=db,
                      progress=False, avoid_repeats=False)
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    # recomputed apart: a model on every evaluation (in the unit cube the run searches)
    X = torch.tensor([s["action"] for s in steps], dtype=torch.float64)
    Y = -torch.tensor([[s["value"]] for s in steps], dtype=torch.float64)  # minimised: rewards are -values
    model = NPModel.from_pretrained(load_surrogate(str(card)), X, Y)
    mean = model.observed_mean().reshape(-1)  # its means at the observations, de-noised
    t = int(torch.argmax(mean))
    assert result.recommended_by == "model"
    # an evaluated point, exactly as the objective received it
    assert np.array_equal(result.recommended_x, result.history[t]["x"])
    assert result.recommended_value == pytest.approx(-float(mean[t]), rel=1e-6)  # float32 network
    # best_x / best_value stay the best observation
    assert result.best_value == min(h["value"] for h in result.history)
    # the database holds the same recommendation, and the report prints it
    assert run.recommended == {"t": t, "params": {"x0": float(result.recommended_x[0]),
                                                  "x1": float(result.recommended_x[1])},
                               "value": result.recommended_value}
    assert "recommended" not in run.policy_params  # read back apart from the settings
    (row,) = bo_summary(db)
    assert row["recommended"] == {"run": run.id, "t": t, "value": result.recommended_value,
                                  "params": run.recommended["params"]}
    text = report_text(db)
    assert (f"  recommended: run {run.id}, evaluation {t}, posterior mean {result.recommended_value:.6g}: "
            f"x0={result.recommended_x[0]:.4g}, x1={result.recommended_x[1]:.4g}") in text
    assert text.index("  best point:") < text.index("  recommended:")


@pytest.mark.parametrize("kwargs", [{}, {"surrogate": "gp"}, {"d": 9}, {"space": True}],
                         ids=["trust-region", "gp", "subspace", "space"])
def test_every_model_route_recommends_one_of_its_evaluated_points(tmp_path, kwargs):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = str(tmp_path / "runs.db")
    d = kwargs.pop("d", 2)
    noise = np.random.default_rng(0)
    if kwargs.pop("space", False):
        from npbandit.space import Choice, Int
        where = {"bounds": {"n": Int(0, 5), "act": Choice(["a", "b", "c"])}}
        objective = lambda p: float((p["n"] - 2) ** 2 + (p["act"] == "b") + noise.random())  # noqa: E731
    else:
        where = {"bounds": [[-1.0] * d, [1.0] * d]}
        objective = lambda x: float((x ** 2).sum() + noise.random())  # noqa: E731
    surrogate = kwargs.pop("surrogate", str(card))
    result = optimize(objective, **where, surrogate=surrogate, budget=max(2 * min(d, 6) + 4, 8), db=db,
                      progress=False)
    (run,) = list_runs(db)
    assert result.recommended_by == "model"
    t = run.recommended["t"]
    same = (result.recommended_x == result.history[t]["x"] if isinstance(result.recommended_x, dict)
            else np.array_equal(result.recommended_x, result.history[t]["x"]))
    assert same and run.recommended["value"] == result.recommended_value
    assert np.isfinite(result.recommended_value)


def test_a_sobol_run_recommends_its_best_observed_point_and_records_none(tmp_path):
    db = str(tmp_path / "runs.db")
    result = optimize(noisy_sphere(), BOUNDS, surrogate="random", budget=5, db=db, progress=False)
    assert result.recommended_by == "observed"
    assert np.array_equal(result.recommended_x, result.best_x) and result.recommended_value == result.best_value
    (run,) = list_runs(db)
    assert run.recommended is None
    assert bo_summary(db)[0]["recommended"] is None and "recommended:" not in report_text(db)


def test_too_few_values_for_a_model_fall_back_to_the_best_observed(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    result = optimize(noisy_sphere(), BOUNDS, surrogate=str(card), budget=1, db=None, progress=False)
    assert result.recommended_by == "observed" and result.recommended_value == result.best_value


def test_a_warm_start_s_points_are_candidates_too(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = str(tmp_path / "runs.db")
    initial = [(np.array([0.3, 1.2]), -5.0), (np.array([-1.0, 0.0]), 3.0), (np.array([1.0, 2.0]), 3.0)]
    result = optimize(noisy_sphere(scale=0.01), BOUNDS, surrogate=str(card), budget=2, trust_region=False, db=db,
                      progress=False, initial=initial)
    (run,) = list_runs(db)
    assert result.recommended_by == "model"
    seen = [x for x, _ in initial] + [h["x"] for h in result.history]
    assert any(np.allclose(result.recommended_x, x, rtol=0, atol=1e-12) for x in seen)
    t = run.recommended["t"]
    assert t is None or np.array_equal(result.recommended_x, result.history[t]["x"])


class _Recommends(SobolPolicy):
    """Sobol points, and a recommendation that fails, names the first observed point, or
    (``given``) a point the run never evaluated (as a warm start's)."""

    def __init__(self, dim, fail=False, given=False):
        super().__init__(dim)
        self.fail, self.given = fail, given

    def reset(self, seed=None):
        super().reset(seed)
        self.seen = []

    def observe(self, obs, action, reward, info):
        self.seen.append((np.asarray(action), reward))

    def recommend(self):
        if self.fail:
            raise RuntimeError("no model today")
        action, reward = self.seen[0]
        if self.given:
            return Recommendation(np.full(len(action), 0.5), reward + 2.0)
        return Recommendation(action, reward + 1.0)


def test_the_loop_records_a_recommendation_and_survives_one_that_fails(tmp_path):
    db = str(tmp_path / "runs.db")
    env = BlackBoxEnv(objective=lambda x: float(x.sum()), bounds=[[0.0, 0.0], [2.0, 2.0]], budget=3, minimize=False)
    result = run_episode(env, _Recommends(2, fail=False), seed=0, logger=RunLogger(db),
                         run_info={"kind": "bo", "env_params": {"objective": "sum"}})
    first = result.steps[0]
    assert result.recommended == {"t": 0, "params": env.params(first["action"]), "value": first["value"] + 1.0}
    with pytest.warns(RuntimeWarning, match="recommendation failed .*no model today"):
        failed = run_episode(env, _Recommends(2, fail=True), seed=0, logger=RunLogger(db),
                             run_info={"kind": "bo", "env_params": {"objective": "sum"}})
    assert failed.recommendation is None and failed.recommended is None
    given = run_episode(env, _Recommends(2, given=True), seed=0, logger=RunLogger(db),
                        run_info={"kind": "bo", "env_params": {"objective": "sum"}})
    assert given.recommended == {"t": None, "params": {"x0": 1.0, "x1": 1.0}, "value": first["value"] + 2.0}
    runs = list_runs(db)
    assert [r.status for r in runs] == ["completed"] * 3
    assert runs[0].recommended == result.recommended and runs[1].recommended is None
    # maximised: the block's recommendation is the run's whose model puts the highest mean there
    assert "recommended: run 3, a point given to the run, posterior mean" in report_text(db)


def test_the_logger_keeps_the_recommendation_apart_from_the_settings(tmp_path):
    db = str(tmp_path / "runs.db")
    logger = RunLogger(db)
    with pytest.raises(ValueError, match="policy_params must not hold 'recommended'"):
        logger.start(kind="bo", env_id="e", env_params={}, policy="p", policy_params={"recommended": 1})
    logger.start(kind="bo", env_id="e", env_params={}, policy="p", policy_params={"n_init": 3})
    with pytest.raises(ValueError, match="recommended goes with status 'completed'"):
        logger.finish("failed", "boom", recommended={"t": 0})
    logger.finish("completed", recommended={"t": 0, "params": {"x0": 1.0}, "value": np.float64(2.5)})
    (run,) = list_runs(db)
    assert run.policy_params == {"n_init": 3}
    assert run.recommended == {"t": 0, "params": {"x0": 1.0}, "value": 2.5}


def test_npbandit_optimize_prints_the_recommendation_beside_the_best_value(tmp_path, capsys):
    from npbandit.cli import main

    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = str(tmp_path / "runs.db")
    assert main(["optimize", "--function", "branin", "--surrogate", str(card), "--budget", "6", "--db", db]) == 0
    out = capsys.readouterr().out
    (run,) = list_runs(db)
    rec = run.recommended
    assert f"recommended by the model: x0={rec['params']['x0']:.4g}, x1={rec['params']['x1']:.4g} " in out
    observed = next(s["value"] for s in run_steps(db, run.id) if s["t"] == rec["t"])
    assert f"(observed {observed:.6g}, posterior mean {rec['value']:.6g})" in out
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "3", "--db", db]) == 0
    assert "recommended" not in capsys.readouterr().out


@pytest.mark.parametrize("limit,by", [(-1.0, "model"), (1.0, "observed")], ids=["feasible", "infeasible"])
def test_with_constraints_the_recommendation_is_a_point_the_model_predicts_feasible(tmp_path, limit, by):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = str(tmp_path / "runs.db")
    # a constraint everywhere satisfied (-1) or everywhere violated (+1): the model, which saw only
    # that value, predicts it everywhere
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no feasible evaluation: optimize warns
        result = optimize(noisy_sphere(), BOUNDS, surrogate=str(card), budget=8, trust_region=False, db=db,
                          progress=False, constraints=lambda x: [limit])
    (run,) = list_runs(db)
    assert result.recommended_by == by
    if by == "model":
        assert np.array_equal(result.recommended_x, result.history[run.recommended["t"]]["x"])
    else:  # none predicted feasible: the best observed point (here the least violating) stands in
        assert run.recommended is None and np.array_equal(result.recommended_x, result.best_x)
