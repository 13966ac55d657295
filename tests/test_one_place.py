"""Things that exist once and are used everywhere: the test-function wrapper, the
default database URL, the SingleTaskGP fit, the feasibility rule, the demo and the wheel-bandit sweep."""

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch

import npbandit.cli as cli
import npbandit.demo as demo
import npbandit.envs.blackbox as blackbox
import npbandit.policies.factories as factories
import npbandit.policies.gp as gp
from npbandit import optimize
from npbandit.envs import BlackBoxEnv, make_test_function
from npbandit.feasibility import check_constraint_count, is_feasible
from npbandit.loop import run_episode, run_wheel_bandits
from npbandit.policies import BOPolicy, GPUCBPolicy, SobolPolicy
from npbandit.policies.observations import Observations
from npbandit.report import bo_summary
from npbandit.report.summary import step_feasible
from npbandit.storage import DEFAULT_URL, list_runs, run_steps
from npbandit.warm_start import WarmStart

# -- the test-function wrapper ---------------------------------------------------------------------------------

def test_problem_objective_is_the_noise_free_value_at_one_point():
    problem = make_test_function("hartmann", 3)
    f = blackbox.problem_objective(problem, "hartmann")
    x = np.array([0.1, 0.5, 0.9])
    assert f(x) == float(problem.evaluate_true(torch.tensor(x)[None])[0])
    assert isinstance(f(x), float) and f.__name__ == "hartmann"
    assert blackbox.problem_objective(make_test_function("branin")).__name__ == "branin"
    copy = pickle.loads(pickle.dumps(f))  # plain pickle: a process pool's workers get it (optimize --workers)
    assert copy(x) == f(x) and copy.__name__ == "hartmann"
    with pytest.raises(ValueError, match=r"x must be one point of shape \[3\]"):
        f(np.zeros((1, 3)))
    with pytest.raises(TypeError, match="problem"):
        blackbox.problem_objective(lambda x: 0.0)
    with pytest.raises(TypeError, match="name"):
        blackbox.problem_objective(problem, name=3)


@pytest.fixture
def wrapper_calls(monkeypatch):
    calls = []
    real = blackbox.problem_objective

    def spy(problem, name=None):
        calls.append((type(problem).__name__, name))
        return real(problem, name)

    monkeypatch.setattr(blackbox, "problem_objective", spy)
    return calls


def test_the_environment_and_the_cli_wrap_test_functions_the_same_way(wrapper_calls, tmp_path, capsys):
    env = BlackBoxEnv(function="Branin", budget=1)
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([0.5, 0.5]))
    assert info["value"] == pytest.approx(float(make_test_function("branin").evaluate_true(
        torch.tensor(env.to_bounds([0.5, 0.5]))[None])[0]))
    assert cli.main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "3",
                     "--db", str(tmp_path / "o.db")]) == 0
    assert wrapper_calls == [("Branin", "branin"), ("Branin", "branin")]
    (run,) = list_runs(str(tmp_path / "o.db"))
    assert run.env_params["objective"] == "branin"


# -- one default database URL ----------------------------------------------------------------------------------

def test_every_db_option_defaults_to_the_one_constant(monkeypatch):
    monkeypatch.setattr(cli, "DEFAULT_URL", "sqlite:///elsewhere.db")
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    with_db = {name: [a.default for a in sub._actions if a.dest == "db"] for name, sub in commands.items()}
    with_db = {name: defaults for name, defaults in with_db.items() if defaults}
    assert {"demo", "optimize", "bandit", "report"} <= set(with_db)
    assert all(defaults == ["sqlite:///elsewhere.db"] for defaults in with_db.values()), with_db
    assert DEFAULT_URL == "sqlite:///npbandit.db"


# -- one SingleTaskGP fit --------------------------------------------------------------------------------------

def test_both_gp_baselines_fit_through_the_one_helper(monkeypatch):
    calls = []
    real = gp.fit_single_task_gp

    def spy(X, Y, **kwargs):
        calls.append((X.shape[-1], kwargs))
        return real(X, Y, **kwargs)

    monkeypatch.setattr(gp, "fit_single_task_gp", spy)
    monkeypatch.setattr(factories, "fit_single_task_gp", spy)  # BOPolicy's GP model factory calls it from there
    run_episode(BlackBoxEnv(function="branin", budget=6), BOPolicy(2, model="gp", noise_free=True), seed=0)
    # 5 Sobol points, one fit for the sixth point, and one for the recommendation the completed run asks for
    assert calls == [(2, {"noise_free": True, "kernel": "rbf"})] * 2
    calls.clear()
    env = gym.make("npbandit/WheelBandit-v0", delta=0.5, horizon=12)
    run_episode(env, GPUCBPolicy(refit_every=3), seed=0)
    # on the rewards' pooled scale (GPUCBPolicy standardises them over every arm)
    assert calls and all(d == 2 and set(kw) == {"hyperparameters", "standardize"} and kw["standardize"] is False
                         for d, kw in calls)
    # refits every 3 rounds, the fitted hyperparameters reused in between
    assert any(kw["hyperparameters"] is None for _, kw in calls)
    assert any(kw["hyperparameters"] is not None for _, kw in calls)


def _data(n, d=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    return X, (X.sin().sum(-1, keepdim=True) * 3 + 10)


def test_fit_single_task_gp_standardises_even_one_observation():
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize

    for n in (1, 8):
        X, Y = _data(n)
        model = gp.fit_single_task_gp(X, Y)
        assert isinstance(model, SingleTaskGP) and isinstance(model.outcome_transform, Standardize)
        assert not model.training
        with torch.no_grad():
            mean = model.posterior(X).mean
        assert mean.shape == (n, 1)
        assert torch.allclose(mean, Y, atol=0.5)  # in Y's units, near the data


def test_fit_single_task_gp_noise_free_and_given_hyperparameters(monkeypatch):
    import botorch.fit
    from gpytorch.likelihoods import FixedNoiseGaussianLikelihood

    X, Y = _data(8)
    exact = gp.fit_single_task_gp(X, Y, noise_free=True)
    assert isinstance(exact.likelihood, FixedNoiseGaussianLikelihood)
    assert torch.allclose(exact.likelihood.noise, torch.tensor(gp.NOISE_FREE_VAR, dtype=torch.float64))

    fitted = gp.fit_single_task_gp(X, Y)
    hypers = gp.gp_hyperparameters(fitted)
    assert hypers and not any("outcome_transform" in k for k in hypers)

    def no_fit(*args, **kwargs):
        raise AssertionError("given hyperparameters, nothing is fitted")

    monkeypatch.setattr(botorch.fit, "fit_gpytorch_mll", no_fit)
    X2, Y2 = _data(9, seed=1)
    reused = gp.fit_single_task_gp(X2, Y2, hyperparameters=hypers)
    lengthscale = "covar_module.lengthscale"
    assert torch.equal(reused.covar_module.lengthscale, fitted.covar_module.lengthscale), lengthscale


def test_fit_single_task_gp_hides_only_the_noise_floor_warning():
    from botorch.exceptions import InputDataWarning

    X, Y = _data(6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gp.fit_single_task_gp(X, Y, noise_free=True)
        gp.fit_single_task_gp(X * 4 - 2, Y)  # inputs outside the unit cube: BoTorch's advice reaches the user
    assert not [w for w in caught if "small noise" in str(w.message)]
    assert [w for w in caught if issubclass(w.category, InputDataWarning)]


@pytest.mark.parametrize("X,Y,error,match", [
    (np.zeros((3, 2)), torch.zeros(3, 1), TypeError, "X must be a torch.Tensor"),
    (torch.zeros(3, 2), torch.zeros(3), ValueError, r"Y must have shape \[n, m\]"),
    (torch.zeros(3), torch.zeros(3, 1), ValueError, r"X must have shape \[n, d\]"),
    (torch.zeros(3, 2, dtype=torch.float64), torch.full((3, 1), float("nan"), dtype=torch.float64), ValueError,
     "Y must be finite"),
    (torch.zeros(3, 2, dtype=torch.int64), torch.zeros(3, 1), TypeError, "X must be a floating-point"),
])
def test_fit_single_task_gp_validates_its_data(X, Y, error, match):
    with pytest.raises(error, match=match):
        gp.fit_single_task_gp(X, Y)


# -- one feasibility rule -------------------------------------------------------------------------------------

@pytest.mark.parametrize("values,expected", [
    ([0.0], True), ([-0.0, -1.0], True), ([], True), (np.array([-2.0, 0.0]), True),
    ([5e-324], False), ([-1.0, 5e-324], False), ([float("nan")], False),
    (torch.tensor([0.0, 1e-300], dtype=torch.float64), False),
])
def test_is_feasible_is_every_constraint_value_at_most_zero(values, expected):
    assert is_feasible(values) is expected


@pytest.mark.parametrize("values", [0.0, [[0.0, -1.0]]])
def test_is_feasible_refuses_other_than_one_evaluations_values(values):
    with pytest.raises(ValueError, match=r"values must be one evaluation's constraint values, shape \[k\]"):
        is_feasible(values)


def test_one_rule_for_the_count_of_constraint_values_is_asked_by_the_warm_start_and_by_bopolicy():
    check_constraint_count(2, None, "initial", "this run's constraints returned")  # nothing earlier to compare
    check_constraint_count(2, 2, "initial", "this run's constraints returned")
    with pytest.raises(ValueError, match=r"^initial: each earlier evaluation carries 1 constraint value, but this "
                                         r"run's constraints returned 2; try again$"):
        check_constraint_count(2, 1, "initial", "this run's constraints returned", why="; try again")
    # BOPolicy's observations and the warm start in front of a Sobol design (no BOPolicy behind it) both refuse
    # through it, each naming what the values were given as
    seen = Observations()
    seen.add(np.array([0.1]), 1.0, np.array([0.5, -0.5]))
    with pytest.raises(ValueError, match=r"^info\['constraints'\]: each earlier observation carries 2 constraint "
                                         r"values, but this one holds 1$"):
        seen.constraint_values({"constraints": [0.5]})
    warm = WarmStart(SobolPolicy(1), [(np.array([0.2]), 1.0, [0.5], None)], name="--initial-from 3")
    warm.reset(0)
    with pytest.raises(ValueError, match=r"^--initial-from 3: each earlier evaluation carries 1 constraint value, "
                                         r"but this run's constraints returned 2 \(a run continues"):
        warm.observe(np.array([0.3, 1.0]), np.array([0.3]), 1.0, {"constraints": [0.5, 0.5]})


def _edge(x):
    """On the boundary (0, feasible) left of x0 = 0.5, the smallest float above it right of it."""
    return [0.0 if x[0] < 0.5 else 5e-324, -1.0]


def _total(x):
    return float(x[0] + x[1])


def test_the_env_optimize_and_the_report_judge_the_boundary_alike(tmp_path):
    env = BlackBoxEnv(objective=_total, bounds=[[0.0, 0.0], [1.0, 1.0]], budget=2, constraints=_edge)
    env.reset(seed=0)
    for x, expected in (([0.25, 0.5], True), ([0.75, 0.5], False)):
        *_, info = env.step(np.array(x))
        assert info["feasible"] is expected and info["constraints"] == _edge(x)
    db = str(tmp_path / "f.db")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = optimize(_total, [[0.0, 0.0], [1.0, 1.0]], surrogate="random", budget=8, seed=0, db=db,
                          progress=False, constraints=_edge)
    flags = [h["feasible"] for h in result.history]
    assert flags == [h["x"][0] < 0.5 for h in result.history] and any(flags) and not all(flags)
    assert result.feasible and result.best_value == min(h["value"] for h in result.history if h["feasible"])
    (run,) = list_runs(db)
    assert [step_feasible(s) for s in run_steps(db, run.id)] == flags
    (row,) = bo_summary(db)
    assert (row["feasible"], row["evaluated"]) == (sum(flags), 8)
    # no feasible evaluation: optimize's best is the least violating one, as the incumbent is
    with pytest.warns(RuntimeWarning, match="violates them least"):
        result = optimize(_total, [[0.0, 0.0], [1.0, 1.0]], surrogate="random", budget=5, seed=0, progress=False,
                          db=None, constraints=lambda x: [x[0] - 2.0 + x[1], 1.0 - x[1]])
    violation = [max(1.0 - h["x"][1], 0.0) for h in result.history]
    assert not result.feasible and result.best_x.tolist() == result.history[int(np.argmin(violation))]["x"].tolist()


# -- the demo and the wheel-bandit sweep -----------------------------------------------------------------------

def test_the_demo_command_runs_the_tour_in_demo_py(monkeypatch):
    seen = []
    monkeypatch.setattr(demo, "run_tour", lambda *args, **kwargs: seen.append((args, kwargs)))
    assert cli.main(["demo", "--db", "sqlite:///x.db", "--budget", "7", "--steps", "9", "--seed", "2"]) == 0
    assert [args for args, _ in seen] == [("sqlite:///x.db", 7, 9, 2)]


def test_the_tour_logs_a_bo_run_and_three_bandit_runs_then_reports(tmp_path, wrapper_calls):
    db = str(tmp_path / "demo.db")
    lines = []
    tour = demo.run_tour(db, budget=5, steps=6, seed=1, say=lines.append)
    runs = list_runs(db)
    assert sorted((r.kind, r.policy) for r in runs) == [
        ("bandit", "cmanp-wheel-ucb"), ("bandit", "linucb"), ("bandit", "uniform"), ("bo", "tnpd-bo-tr-logei")]
    bo_run = next(r for r in runs if r.kind == "bo")
    assert bo_run.id == tour.bo_run_id and len(run_steps(db, bo_run.id)) == 5
    assert bo_run.env_params["objective"] == "branin" and wrapper_calls == [("Branin", "branin")]
    # Branin's known minimum is recorded, so the report shows the tour's simple regret
    assert bo_run.env_params["optimal_value"] == pytest.approx(0.397887)
    assert sorted(tour.bandit_run_ids) == sorted(r.id for r in runs if r.kind == "bandit")
    assert lines[0].startswith("1/3") and tour.report in lines
    with pytest.raises(ValueError, match="budget"):
        demo.run_tour(db, budget=0)


def test_run_wheel_bandits_runs_every_combination_in_order(tmp_path):
    db, lines = str(tmp_path / "b.db"), []
    results = run_wheel_bandits(["uniform", "linucb"], [0.5], [0, 1], 5, db=db, say=lines.append)
    assert len(results) == 4 and len(lines) == 4
    runs = {r.id: r for r in list_runs(db)}
    assert [(runs[r.run_id].policy, runs[r.run_id].seed) for r in results] == [
        ("uniform", 0), ("linucb", 0), ("uniform", 1), ("linucb", 1)]
    assert all(len(run_steps(db, r.run_id)) == 5 for r in results)
    assert all(r.steps == [] for r in results)  # in the database, not held for every run of a sweep
    with pytest.raises(TypeError, match="policies"):
        run_wheel_bandits("uniform", [0.5], [0], 5, db=db)
    with pytest.raises(ValueError, match="policy"):
        run_wheel_bandits(["uniform", "no-such-policy"], [0.5], [0], 5, db=db)
    assert len(list_runs(db)) == 4  # a bad name stops the sweep before any run


@pytest.mark.parametrize("args,error,match", [
    ((["uniform"], [0.5, 1.5], [0], 5), ValueError, r"deltas\[1\]"),
    ((["uniform"], [0.5, "0.9"], [0], 5), ValueError, r"deltas\[1\]"),
    ((["uniform"], 0.5, [0], 5), TypeError, "deltas"),
    ((["uniform"], [0.5], [0, -1], 5), ValueError, r"seeds\[1\]"),
    ((["uniform"], [0.5], [0, 1.0], 5), ValueError, r"seeds\[1\]"),
    ((["uniform"], [0.5], range(0), 5), ValueError, "seeds is empty"),
    ((["uniform"], [0.5], [0], 0), ValueError, "steps"),
    ((["uniform"], [0.5], [0], 5, -1.0), ValueError, "beta"),
])
def test_run_wheel_bandits_refuses_a_bad_sweep_before_any_run(tmp_path, args, error, match):
    db = str(tmp_path / "b.db")
    *positional, = args
    beta = positional.pop() if len(positional) == 5 else 1.0
    with pytest.raises(error, match=match):
        run_wheel_bandits(*positional, beta=beta, db=db, say=None)
    assert not (tmp_path / "b.db").exists() or list_runs(db) == []
