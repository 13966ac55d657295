"""experiments/benchmarks/bo.py (and prior_bayes.py, its bayes-gp columns' model): the Optuna rows'
wiring, the GP row's configuration, how columns name their acquisition, warp or checkpoint, and
the paired table under the main one."""

import sys

import numpy as np
import pytest
import torch

from npbandit.envs import BlackBoxEnv
from npbandit.policies import BOPolicy
from npbandit.storage import list_runs, run_steps

from .helpers import load_benchmark, tiny_checkpoint

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bo")


@pytest.mark.parametrize("method,sampler", [("optuna-tpe", "TPESampler"), ("optuna-gp", "GPSampler"),
                                            ("optuna-np", "NPSampler")])
@pytest.mark.integration
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


@pytest.mark.slow
def test_benchmark_card_path_columns_are_collected_and_repeats_counted(bench, tmp_path, keep_threads):
    """A column may name a checkpoint card (a training run's export): its runs count while the
    card holds the weights they ran with; repeat_share counts proposals on an earlier point."""
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))  # a tiny random-weight card: a training run's export
    db = str(tmp_path / "bo.db")
    bench._one(card, "branin", 0, 7, db)
    assert set(bench.collect(db, 7)) == {("branin", card)}
    assert bench.repeat_share([[0.1, 0.1], [0.5, 0.5], [0.5, 0.5005], [0.9, 0.2]], 1) == pytest.approx(1 / 3)
    assert bench.repeat_share([[0.1, 0.1]], 1) == 0.0


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


def test_the_benchmark_reads_the_warp_from_the_column_name(bench):
    assert bench.split_warp("cmanp-bo-yeo-johnson") == ("cmanp-bo", "yeo-johnson")
    assert bench.split_warp("tnpd-bo") == ("tnpd-bo", None)
    model, acquisition = bench.split_method(bench._method_of("tnpd-bo-yeo-johnson-logei"))
    assert (bench.split_warp(model), acquisition) == (("tnpd-bo", "yeo-johnson"), "logei")


def test_a_columns_optimiser_suffix_names_the_optimiser_when_it_is_not_the_models_default(bench):
    from npbandit.acquisition import CandidateSearch, GradientRestarts
    from npbandit.envs import BlackBoxEnv

    env = BlackBoxEnv(function="branin", budget=8)
    assert bench.make_policy("tnpd-bo-tr", env).acq_optimizer == CandidateSearch()  # an NP's default
    assert bench.make_policy("tnpd-bo-tr-gr", env).acq_optimizer == GradientRestarts()
    assert bench.make_policy("gp-cs", env).acq_optimizer == CandidateSearch()
    assert bench.make_policy("cmanp-bo-tr", env).acq_optimizer == GradientRestarts()  # its card is silent
    assert bench.make_policy("cmanp-bo-tr-cs", env).acq_optimizer == CandidateSearch()
    assert bench.split_method("tnpd-bo-tr-ucb-gr") == ("tnpd-bo-tr", "ucb")
    # a stored run is labelled by what it logged; a run logged without an optimiser ran optimize_acqf
    cs, gr = {"acq_optimizer": CandidateSearch().params()}, {"acq_optimizer": GradientRestarts().params()}
    assert bench._method_of("tnpd-bo-tr-logei", cs) == "tnpd-bo-tr"
    assert bench._method_of("tnpd-bo-tr-logei", gr) == bench._method_of("tnpd-bo-tr-logei", {}) == "tnpd-bo-tr-gr"
    assert bench._method_of("gp-logei", {}) == "gp" and bench._method_of("gp-logei", cs) == "gp-cs"
    assert bench._method_of("cmanp-bo-tr-logei", {}) == "cmanp-bo-tr"
    assert bench._method_of("cmanp-bo-tr-logei", cs) == "cmanp-bo-tr-cs"


def test_against_names_the_paired_references(bench, tmp_path, capsys):
    db = str(tmp_path / "bo.db")
    with pytest.raises(SystemExit):  # a reference must be one of the columns
        bench.main(["--methods", "sobol", "--against", "gp", "--functions", "branin", "--seeds", "1",
                    "--budget", "3", "--db", db, "--no-write", "--no-run"])
    assert "--against: gp not among --methods" in capsys.readouterr().err
    bench._one("sobol", "branin", 0, 3, db)
    bench.main(["--methods", "sobol", "gp", "--paired", "sobol", "--against", "gp",
                "--functions", "branin", "--seeds", "1", "--budget", "3", "--db", db, "--no-write", "--no-run"])
    out = capsys.readouterr().out
    assert "| sobol against | branin |" in out and "| gp | - |" in out  # gp has no runs here
