"""The BO benchmark's baselines: the Optuna rows' wiring and the GP row's configuration."""

import math
import sys

import numpy as np
import pytest
import torch

from npbandit.envs import BlackBoxEnv
from npbandit.loop import run_episode
from npbandit.policies import BOPolicy
from npbandit.policies.bo import NOISE_FREE_VAR
from npbandit.storage import list_runs, run_steps

from helpers import load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bo")


@pytest.fixture
def keep_threads():
    threads = torch.get_num_threads()  # the benchmark's runs set 1
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("method,sampler", [("optuna-tpe", "TPESampler"), ("optuna-gp", "GPSampler"),
                                            ("optuna-np", "NPSampler")])
@pytest.mark.integration
@pytest.mark.lab
@pytest.mark.slow
def test_optuna_rows_are_optuna_on_the_functions_bounds_logged_like_every_row(bench, tmp_path, keep_threads,
                                                                                method, sampler):
    optuna = pytest.importorskip("optuna")
    db, budget = str(tmp_path / "bo.db"), 12  # 10 random start-up trials, then 2 of the sampler's own
    bench._one(method, "branin", 3, budget, db)
    (run,) = list_runs(db, kind="bo")
    assert (run.policy, run.status, run.seed, run.env_params["objective"]) == (method, "completed", 3, "branin")
    steps = run_steps(db, run.id)
    assert len(steps) == budget

    # the same points as Optuna's own loop on Branin's bounds with the seeded sampler
    env = BlackBoxEnv(function="branin", budget=budget)
    lo, hi = env.bounds
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if sampler == "NPSampler":
        from npbandit.integrations.optuna import NPSampler

        assert run.surrogate == "cmanp-bo"  # logged with its hash, so a retrained checkpoint's runs stay apart
        made = NPSampler("cmanp-bo", seed=3)
    else:
        made = getattr(optuna.samplers, sampler)(seed=3)
    study = optuna.create_study(direction="minimize", sampler=made)
    study.optimize(lambda t: env.objective(np.array([t.suggest_float(f"x{i}", lo[i], hi[i]) for i in range(2)])),
                   n_trials=budget)
    ours = np.array([env.to_bounds(s["action"]) for s in steps])
    theirs = np.array([[t.params["x0"], t.params["x1"]] for t in study.trials])
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    np.testing.assert_allclose([s["value"] for s in steps], [t.value for t in study.trials], rtol=1e-9)

    runs = bench.collect(db, budget)  # the table and the curves see the run
    (cell,) = runs[("branin", method)]
    assert len(cell["curve"]) == budget
    assert cell["curve"][-1] == pytest.approx(np.log10(min(t.value for t in study.trials) - env.optimal_value))


@pytest.mark.lab
def test_optuna_rows_name_the_extra_when_optuna_is_missing(bench, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "optuna", None)  # `import optuna` raises ImportError
    with pytest.raises(ImportError, match=r"\.\[bench\]"):
        bench.OptunaPolicy("optuna-tpe", np.array([[0.0], [1.0]]))
    with pytest.raises(SystemExit):
        bench.main(["--methods", "optuna-gp", "sobol", "--functions", "branin", "--seeds", "1", "--budget", "3",
                    "--db", str(tmp_path / "bo.db"), "--no-write"])
    err = capsys.readouterr().err
    assert "optuna-gp" in err and ".[bench]" in err and "optuna==5.0.0" in err
    assert list_runs(str(tmp_path / "bo.db")) == []  # nothing ran


def test_noise_free_gp_runs_with_a_fixed_tiny_noise(monkeypatch):
    import botorch.optim
    from gpytorch.likelihoods import FixedNoiseGaussianLikelihood

    seen = []
    real = botorch.optim.optimize_acqf

    def spy(acq, bounds, **kwargs):
        seen.append((acq, kwargs))
        return real(acq, bounds, **kwargs)

    monkeypatch.setattr(botorch.optim, "optimize_acqf", spy)
    env = BlackBoxEnv(function="branin", budget=2 * 2 + 3)
    policy = BOPolicy(2, model="gp", noise_free=True)
    result = run_episode(env, policy, seed=0)
    assert len(result.steps) == 7 and len(seen) == 2  # 2d + 1 Sobol points, then two LogEI steps
    for acq, kwargs in seen:
        model = acq.model
        assert isinstance(model.likelihood, FixedNoiseGaussianLikelihood)
        assert torch.allclose(model.likelihood.noise, torch.tensor(NOISE_FREE_VAR, dtype=torch.float64))
        assert (kwargs["num_restarts"], kwargs["raw_samples"]) == (10, 512)
        # LogEI's best_f is the best reward, on the scale the (untransformed) posterior is on
        assert float(acq.best_f) == max(s["reward"] for s in result.steps[:len(model.train_targets)])
    assert policy.params()["noise_free"] is True
    assert BOPolicy(2, model="gp").params()["noise_free"] is False  # BoTorch's inferred noise stays the default
    with pytest.raises(ValueError, match="GP"):
        BOPolicy(2, model="cmanp-bo", noise_free=True)


def test_gp_kernel_builds_a_matern_52_with_the_dimension_scaled_prior():
    from gpytorch.kernels import MaternKernel, RBFKernel

    from npbandit.policies.gp import fit_single_task_gp

    X = torch.rand(8, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = X.sum(-1, keepdim=True)
    rbf = fit_single_task_gp(X, Y, noise_free=True)
    matern = fit_single_task_gp(X, Y, noise_free=True, kernel="matern52")
    assert isinstance(rbf.covar_module, RBFKernel)  # SingleTaskGP's own default stays the default
    assert isinstance(matern.covar_module, MaternKernel) and matern.covar_module.nu == 2.5
    assert matern.covar_module.lengthscale.shape == (1, 3)  # one lengthscale per input (ARD)
    assert torch.equal(matern.covar_module.lengthscale_prior.loc, rbf.covar_module.lengthscale_prior.loc)  # same prior
    with pytest.raises(ValueError, match="kernel must be one of"):
        fit_single_task_gp(X, Y, kernel="matern")
    assert BOPolicy(2, model="gp", gp_kernel="matern52").params()["gp_kernel"] == "matern52"
    assert BOPolicy(2, model="gp").params()["gp_kernel"] == "rbf"
    with pytest.raises(ValueError, match="gp_kernel must be one of"):
        BOPolicy(2, model="gp", gp_kernel="periodic")
    with pytest.raises(ValueError, match="GP"):
        BOPolicy(2, model="cmanp-bo", gp_kernel="matern52")


@pytest.mark.lab
def test_benchmark_gp_row_runs_noise_free_and_skips_older_gp_runs(bench, tmp_path, keep_threads):
    db = str(tmp_path / "bo.db")
    bench._one("gp", "branin", 0, 2 * 2 + 3, db)
    params = bench._policy_params(db)
    assert params[1]["noise_free"] is True and params[1]["gp_kernel"] == "matern52"
    assert len(bench.collect(db, 7)[("branin", "gp")]) == 1
    assert not bench.is_current_config("gp", {"acquisition": "logei", "num_restarts": 10})  # an inferred-noise run
    assert not bench.is_current_config("gp", {"noise_free": True})  # an RBF run, logged before the kernel was
    assert not bench.is_current_config("optuna-tpe", {"optuna": "4.5.0"})
    assert bench.is_current_config("sobol", {})
    from npbandit.policies.trust_region import TrustRegion

    current = BOPolicy(2, model="cmanp-bo", budget=60).params()  # a trust-region run records its settings
    assert current["trust_region_context_factor"] == TrustRegion(2).context_factor
    assert bench.is_current_config("cmanp-bo-tr", current)
    # runs whose region was not told the budget (logged before it was) restarted near the end: not current
    assert not bench.is_current_config("cmanp-bo-tr", BOPolicy(2, model="cmanp-bo").params())
    assert not bench.is_current_config("cmanp-bo-tr", {**current, "trust_region_context_factor": 3.0})
    assert not bench.is_current_config("cmanp-bo-tr", {**current, "trust_region_length_init": 0.8})
    assert bench.is_current_config("cmanp-bo", {"trust_region": False})
    # a joint Thompson draw records its blocks; runs from before (blocks of 25) are not current
    thompson = BOPolicy(2, model="cmanp-and-bo", acquisition="thompson", budget=60).params()
    assert thompson["thompson_block_size"] == "all" and "thompson_block_size" not in current
    assert bench.is_current_config("cmanp-and-bo-tr-thompson", thompson)
    assert not bench.is_current_config("cmanp-and-bo-tr-thompson", {k: v for k, v in thompson.items()
                                                                     if k != "thompson_block_size"})
    assert bench.is_current_config("cmanp-and-bo-tr-marginal-thompson", {**thompson, "acquisition":
                                                                          "marginal-thompson"})


@pytest.mark.lab
def test_benchmark_columns_with_another_acquisition_run_and_are_collected_under_their_name(bench, tmp_path,
                                                                                            keep_threads):
    assert bench.split_method("cmanp-and-bo-marginal-thompson") == ("cmanp-and-bo", "marginal-thompson")
    assert bench.split_method("cmanp-and-bo-tr-qlognei") == ("cmanp-and-bo-tr", "qlognei")
    assert bench.split_method("gp-thompson") == ("gp", "thompson")
    assert bench.split_method("tnpd-bo") == ("tnpd-bo", "logei")
    db = str(tmp_path / "bo.db")
    bench._one("gp-thompson", "branin", 0, 2 * 2 + 3, db)
    bench._one("cmanp-bo-marginal-thompson", "branin", 0, 2 * 2 + 3, db)
    params = bench._policy_params(db)
    assert params[1]["acquisition"] == "thompson" and params[1]["noise_free"] is True  # the GP's options still apply
    assert params[2]["acquisition"] == "marginal-thompson"
    runs = bench.collect(db, 7)
    assert set(runs) == {("branin", "gp-thompson"), ("branin", "cmanp-bo-marginal-thompson")}
    assert all(0.0 <= r["repeats"] <= 1.0 for rs in runs.values() for r in rs)


@pytest.mark.lab
@pytest.mark.slow
def test_benchmark_card_path_columns_are_collected_and_repeats_counted(bench, tmp_path, keep_threads):
    """A column may name a checkpoint card (a training run's export): its runs count while the
    card holds the weights they ran with; repeat_share counts proposals on an earlier point."""
    from npbandit.surrogates.pretrained import read_card

    card = read_card("cmanp-bo")["_path"]
    db = str(tmp_path / "bo.db")
    bench._one(card, "branin", 0, 7, db)
    assert set(bench.collect(db, 7)) == {("branin", card)}
    assert bench.repeat_share([[0.1, 0.1], [0.5, 0.5], [0.5, 0.5005], [0.9, 0.2]], 1) == pytest.approx(1 / 3)
    assert bench.repeat_share([[0.1, 0.1]], 1) == 0.0


@pytest.mark.lab
def test_paired_table_compares_medians_and_counts_seeds_both_ran(bench):
    """The bar check under the main table: median differences and seed-by-seed wins, over
    the seeds both columns ran; a missing cell is '-'."""
    def cell(by_seed):
        values = sorted(by_seed.values())
        return {"final": [values[0], values[len(values) // 2], values[-1]],
                "final_by_seed": {str(k): v for k, v in by_seed.items()}}

    summary = {"branin/np": cell({0: -3.0, 1: -2.0, 2: -1.0}), "branin/gp": cell({0: -4.0, 1: -1.0, 2: 0.0}),
               "branin/sobol": cell({0: 0.0, 1: 0.5}), "levy4/np": cell({0: 1.0})}
    lines = bench.paired_table(summary, ["branin", "levy4"], "np", ["gp", "sobol"])
    assert lines[0] == "| np against | branin | levy4 |"
    assert lines[2] == "| gp | -1.00 (2/3) | - |"  # -2.0 - (-1.0); lower on seeds 1 and 2
    assert lines[3] == "| sobol | -2.50 (2/2) | - |"  # only seeds 0 and 1 ran both


def test_gp_run_depends_on_its_seed_alone():
    """The GP's fit restarts and optimize_acqf's start points draw from torch's global
    generator; the policy seeds it from the run's seed, so earlier work in the process
    (another run, another test) leaves the run unchanged."""

    def actions(global_seed):
        torch.manual_seed(global_seed)
        result = run_episode(BlackBoxEnv(function="branin", budget=2 * 2 + 3), BOPolicy(2, model="gp", noise_free=True),
                             seed=5)
        return [s["action"].tolist() for s in result.steps]

    assert actions(0) == actions(1)


@pytest.mark.slow
def test_propose_depends_on_model_and_seed_alone():
    """optimize_acqf draws from torch's global generator besides its own seed, and so does a
    Thompson draw; the shared proposal step (BOPolicy, optimize, NPSampler) seeds it, so a
    point depends on the model and the seed alone, and the caller's generator is untouched."""
    from npbandit import NPModel
    from npbandit.policies.bo import propose

    g = torch.Generator().manual_seed(0)
    X = torch.rand(9, 2, generator=g, dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    for acquisition in ("logei", "thompson"):
        points = []
        for global_seed in (1, 2):
            torch.manual_seed(global_seed)
            before = torch.random.get_rng_state()
            points.append(propose(model, acquisition, dim=2, best_f=Y.max(), seed=5, num_restarts=2, raw_samples=64))
            assert torch.equal(torch.random.get_rng_state(), before)
        assert np.array_equal(points[0], points[1]), acquisition
        assert points[0].shape == (2,) and np.all((points[0] >= 0) & (points[0] <= 1))
    with pytest.raises(ValueError, match="acquisition"):
        propose(model, "ei", dim=2, best_f=Y.max(), seed=5)


@pytest.mark.slow
def test_propose_never_returns_an_observed_point_when_told_what_was_observed():
    from npbandit import NPModel
    from npbandit.policies.bo import REPEAT_DISTANCE, propose

    g = torch.Generator().manual_seed(0)
    X = torch.rand(9, 2, generator=g, dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    free = propose(model, "logei", dim=2, best_f=Y.max(), seed=5, num_restarts=4, raw_samples=64)
    # every restart lands on the free proposal: then it is the observation to stay away from
    crowded = torch.cat([X, torch.as_tensor(free).unsqueeze(0)])
    point = propose(model, "logei", dim=2, best_f=Y.max(), seed=5, num_restarts=4, raw_samples=64, observed=crowded)
    assert np.linalg.norm(crowded.numpy() - point, axis=1).min() >= REPEAT_DISTANCE
    assert np.array_equal(point, propose(model, "logei", dim=2, best_f=Y.max(), seed=5, num_restarts=4,
                                         raw_samples=64, observed=crowded))  # still seeded
    far = propose(model, "logei", dim=2, best_f=Y.max(), seed=5, num_restarts=4, raw_samples=64,
                  observed=torch.full((1, 2), 5.0, dtype=torch.float64))
    assert np.array_equal(far, free)  # nothing observed nearby: the proposal is unchanged
    with pytest.raises(ValueError, match="observed"):
        propose(model, "logei", dim=2, best_f=Y.max(), seed=5, observed=X[:, :1])


def test_when_every_restart_returns_to_an_observation_the_best_new_sobol_point_is_taken(monkeypatch):
    import botorch.optim
    from botorch.acquisition import LogExpectedImprovement
    from npbandit import NPModel
    from npbandit.policies.bo import REPEAT_DISTANCE, propose

    g = torch.Generator().manual_seed(1)
    X = torch.rand(9, 2, generator=g, dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)
    monkeypatch.setattr(botorch.optim, "optimize_acqf",  # every restart ends on the first observation
                        lambda acq, bounds, q, num_restarts, **kw: (X[:1].expand(num_restarts, 1, 2),
                                                                    torch.zeros(num_restarts)))
    point = propose(model, "logei", dim=2, best_f=Y.max(), seed=3, raw_samples=64, observed=X)
    pool = torch.quasirandom.SobolEngine(2, scramble=True, seed=3).draw(64, dtype=torch.float64)
    pool = pool[torch.cdist(pool, X).amin(-1) >= REPEAT_DISTANCE]
    with torch.no_grad():
        best = pool[int(torch.argmax(LogExpectedImprovement(model, best_f=Y.max())(pool.unsqueeze(-2))))]
    assert np.array_equal(point, best.numpy())


@pytest.mark.slow
def test_gp_thompson_draw_is_one_function_across_the_candidates():
    """A GP Thompson draw is one function (drawn path-wise): nearly identical candidates
    get nearly identical values, and each value follows the posterior. The independent
    per-candidate draw it replaces put them about a posterior std apart, which over
    thousands of candidates makes the argmax an optimistic UCB."""
    from npbandit.policies.bo import propose, thompson_draw
    from npbandit.policies.gp import fit_single_task_gp

    g = torch.Generator().manual_seed(0)
    X = torch.rand(8, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(5 * X).sum(-1, keepdim=True)
    gp = fit_single_task_gp(X, Y)
    base = torch.rand(32, 2, generator=g, dtype=torch.float64)
    candidates = torch.cat([base, base + 1e-5])
    with torch.no_grad():
        posterior = gp.posterior(base)
        draws = []
        for seed in range(60):
            torch.manual_seed(seed)
            draws.append(thompson_draw(gp, candidates, seed))
    draws = torch.stack(draws)
    std = posterior.variance.sqrt().reshape(-1)
    assert ((draws[:, :32] - draws[:, 32:]).abs() < 0.02 * std).all()
    z = (draws[:, :32] - posterior.mean.reshape(-1)) / std
    assert abs(float(z.mean())) < 0.3 and 0.7 < float(z.std()) < 1.3
    point = propose(gp, "thompson", dim=2, best_f=Y.max(), seed=3, thompson_candidates=256)
    assert point.shape == (2,) and np.all((point >= 0) & (point <= 1))


def test_np_thompson_draw_is_the_joint_models_joint_sample(tmp_path, monkeypatch):
    """With a not-diagonal NP (CMANP-AND) a Thompson draw is one joint sample over every
    candidate from the surrogate's sampler; a diagonal NP keeps its independent draw."""
    from helpers import tiny_checkpoint

    from npbandit import NPModel
    from npbandit.policies.bo import THOMPSON_BLOCK_SIZE, propose, thompson_draw

    g = torch.Generator().manual_seed(0)
    X = torch.rand(6, 2, generator=g, dtype=torch.float64)
    Y = -((X - 0.3) ** 2).sum(-1, keepdim=True)
    candidates = torch.rand(50, 2, generator=g, dtype=torch.float64)
    joint = NPModel.from_pretrained(str(tiny_checkpoint(tmp_path, "cmanp-and", "bo")), X, Y)
    calls = []
    sample = type(joint.surrogate).sample

    def spy(self, state, xt, num_samples, generator=None, **kw):
        calls.append(xt.shape)
        # the measured block, not the paper's 5: by default all the candidates in one
        assert kw["block_size"] == (xt.shape[1] if THOMPSON_BLOCK_SIZE is None else THOMPSON_BLOCK_SIZE)
        return sample(self, state, xt, num_samples, generator, **kw)

    monkeypatch.setattr(type(joint.surrogate), "sample", spy)
    with torch.no_grad():
        draw = thompson_draw(joint, candidates, seed=4)
        again = thompson_draw(joint, candidates, seed=4)
    assert calls == [(1, 50, 6), (1, 50, 6)]  # all candidates in one joint draw
    assert draw.shape == (50,) and draw.dtype == torch.float64 and torch.equal(draw, again)
    point = propose(joint, "thompson", dim=2, best_f=Y.max(), seed=4, thompson_candidates=64)
    assert point.shape == (2,) and len(calls) == 3

    diagonal = NPModel.from_pretrained(str(tiny_checkpoint(tmp_path, "cmanp", "bo")), X, Y)
    with torch.no_grad():
        torch.manual_seed(0)
        ours = thompson_draw(diagonal, candidates, seed=4)
        torch.manual_seed(0)
        independent = diagonal.posterior(candidates.unsqueeze(-2)).rsample().reshape(-1)
    assert torch.equal(ours, independent)


def test_thompson_draw_validates_its_inputs():
    from npbandit.policies.bo import thompson_draw
    from npbandit.policies.gp import fit_single_task_gp

    gp = fit_single_task_gp(torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64))
    with pytest.raises(TypeError, match="candidates"):
        thompson_draw(gp, torch.rand(5, dtype=torch.float64), 0)
    with pytest.raises(TypeError, match="seed"):
        thompson_draw(gp, torch.rand(5, 2, dtype=torch.float64), 0.5)


@pytest.mark.lab
@pytest.mark.slow
def test_thompson_block_benchmark_scores_every_block_size(tmp_path):
    """experiments/benchmarks/thompson_blocks.py: the joint log-likelihood per d and the draw time for
    each block size, the table THOMPSON_BLOCK_SIZE is chosen by."""
    from helpers import tiny_checkpoint

    from npbandit import load_surrogate

    bench = load_benchmark("thompson_blocks")
    surrogate = load_surrogate(tiny_checkpoint(tmp_path, "cmanp-and", "bo"))
    blocks = [1, 50, bench.ALL]
    scores = bench.joint_scores(surrogate, blocks, n_batches=1)
    assert set(scores) == set(blocks) and set(scores[1]) == {f"d={d}" for d in range(1, 7)}
    assert all(math.isfinite(v) for row in scores.values() for v in row.values())
    assert scores[1] != scores[50]  # the blocks change the joint being scored
    assert scores[50] == scores[bench.ALL]  # the suite's tasks have 50 targets: one block either way
    times = bench.draw_times(surrogate, blocks, n_candidates=64)
    assert all(t > 0 for t in times.values())
    calib = bench.calibration(surrogate, blocks, n_candidates=64, n_draws=2)
    assert set(calib) == set(blocks) and all(0 < a and 0 < b for a, b in calib.values())
    text = bench.render("tiny", scores, times, calib, 1, 64)
    assert "| 50 |" in text and "| all |" in text and "x b_Q = 5" in text and "mean abs(z)" in text
    with pytest.raises(SystemExit):
        bench.main(["--checkpoint", "cmanp-bo", "--no-write"])  # a diagonal model has no blocks


@pytest.mark.lab
@pytest.mark.slow
def test_benchmark_bayes_row_is_the_priors_bayes_predictive_in_the_trust_region(bench, tmp_path, keep_threads):
    db = str(tmp_path / "bo.db")
    bench._one("bayes-gp-tr", "branin", 0, 2 * 2 + 4, db)
    params = bench._policy_params(db)[1]
    assert params["model"] == "bayes-gp" and params["trust_region"] is True and "gp_kernel" not in params
    assert len(bench.collect(db, 8)[("branin", "bayes-gp-tr")]) == 1
    assert not bench.is_current_config("bayes-gp-tr", {**params, "bayes_samples": 16})
    with pytest.raises(ValueError, match="LogEI only"):
        bench.make_policy("bayes-gp-tr-ucb", BlackBoxEnv(function="branin", budget=8))


@pytest.mark.lab
def test_prior_bayes_model_follows_its_observations_and_serves_logei(bench):
    from botorch.acquisition import LogExpectedImprovement
    from prior_bayes import PriorBayesModel  # experiments/benchmarks/ is on the path once bo.py is loaded

    g = torch.Generator().manual_seed(0)
    X = torch.rand(20, 2, generator=g, dtype=torch.float64)
    Y = (torch.sin(3 * X[:, :1]) + torch.cos(2 * X[:, 1:])) * 5 + 3
    model = PriorBayesModel(X, Y, num_samples=256, generator=torch.Generator().manual_seed(1))
    post = model.posterior(X.unsqueeze(-2))
    assert post.mean.shape == (20, 1, 1) and post.variance.shape == (20, 1, 1)
    assert float((post.mean.reshape(-1) - Y.reshape(-1)).abs().max()) < 0.05 * float(Y.std())  # it interpolates
    far = model.posterior(torch.full((1, 1, 2), 3.0, dtype=torch.float64))  # far outside the data: prior spread
    assert float(far.variance) > 100 * float(post.variance.max())
    x = torch.rand(5, 1, 2, generator=g, dtype=torch.float64).requires_grad_(True)
    LogExpectedImprovement(model, best_f=Y.max())(x).sum().backward()
    assert torch.isfinite(x.grad).all()
    few = PriorBayesModel(X[:2], Y[:2]).posterior(X[:4].unsqueeze(-2))  # too few for the mixture: the prior's
    torch.testing.assert_close(few.mean.reshape(-1), Y[:2].mean().expand(4))
