"""npbandit.threads: the thread count npbandit's inference runs with, scoped to it, and where it applies
(optimize, BOPolicy, NPSampler, NPModel's network calls, the bandit policies, every CLI command)."""

import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from npbandit import cli
from npbandit.threads import THREADS_ENV, check_threads, resolve_threads, torch_threads

#: the count the "caller" (this test process) runs with: neither npbandit's default (1) nor a count a test asks for
CALLER = 3


@pytest.fixture(autouse=True)
def caller_threads(monkeypatch):
    """Every test starts with no thread variables set and torch at CALLER threads; the count is put back after."""
    for variable in (THREADS_ENV, "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(variable, raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(CALLER)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def set_calls(monkeypatch):
    """The counts passed to torch.set_num_threads (which still sets them)."""
    calls, real = [], torch.set_num_threads

    def record(n):
        calls.append(n)
        real(n)

    monkeypatch.setattr(torch, "set_num_threads", record)
    return calls


# -- which count -----------------------------------------------------------------------------------------------


def test_precedence_explicit_then_npbandit_threads_then_omp_then_mkl_then_one(monkeypatch):
    assert resolve_threads() == 1
    monkeypatch.setenv("MKL_NUM_THREADS", "5")
    assert resolve_threads() == 5
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    assert resolve_threads() == 4
    monkeypatch.setenv(THREADS_ENV, "2")
    assert resolve_threads() == 2
    assert resolve_threads(7) == 7
    assert resolve_threads("torch") is None


def test_torch_in_the_environment_gives_torch_its_own_count(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    monkeypatch.setenv(THREADS_ENV, "torch")
    assert resolve_threads() is None
    assert resolve_threads(2) == 2  # an explicit count still wins
    with torch_threads():
        assert torch.get_num_threads() == CALLER


def test_omp_nested_form_counts_its_first_level_and_junk_is_skipped(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2,1")
    assert resolve_threads() == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "lots")
    monkeypatch.setenv("MKL_NUM_THREADS", "0")
    assert resolve_threads() == 1  # neither is a count: npbandit's default


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "two", "1"])
def test_a_bad_explicit_count_is_refused_naming_the_argument(bad):
    with pytest.raises(ValueError, match="threads must be a positive int"):
        check_threads("threads", bad)
    with pytest.raises(ValueError, match="threads must be"):
        torch_threads(bad)


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_a_bad_environment_value_is_refused_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv(THREADS_ENV, bad)
    with pytest.raises(ValueError, match=THREADS_ENV):
        resolve_threads()
    with pytest.raises(ValueError, match=THREADS_ENV), torch_threads():
        pass
    assert torch.get_num_threads() == CALLER
    with torch_threads(2):  # the variable is not read when a count is given
        assert torch.get_num_threads() == 2


# -- the block ---------------------------------------------------------------------------------------------------


def test_the_block_sets_the_count_and_gives_the_callers_back():
    with torch_threads():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == CALLER
    with torch_threads(2):
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == CALLER


def test_nested_blocks_keep_the_outer_count_and_the_outer_block_restores():
    with torch_threads(2):
        with torch_threads(1):
            assert torch.get_num_threads() == 2
            with torch_threads():
                assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == CALLER
    with torch_threads("torch"):  # outermost "torch" holds torch's count for the blocks inside too
        with torch_threads(1):
            assert torch.get_num_threads() == CALLER
    assert torch.get_num_threads() == CALLER


def test_the_count_is_restored_after_an_exception_also_from_a_nested_block():
    with pytest.raises(RuntimeError, match="inner"):
        with torch_threads(1):
            with torch_threads(2):
                raise RuntimeError("inner")
    assert torch.get_num_threads() == CALLER
    with torch_threads(2):  # and the next block still sets its own count (the nesting depth is back at 0)
        assert torch.get_num_threads() == 2


def test_the_count_is_set_only_where_it_differs(set_calls):
    torch.set_num_threads(1)
    set_calls.clear()
    with torch_threads(1), torch_threads(1):
        pass
    assert set_calls == []
    torch.set_num_threads(CALLER)
    set_calls.clear()
    with torch_threads(1):
        with torch_threads(2):
            pass
    assert set_calls == [1, CALLER]


def test_a_block_in_a_fresh_worker_thread_holds_its_count_whatever_other_threads_set():
    # torch fixes a thread's count at its first read, to the count last set in any thread: a block
    # that set its count before reading would see another thread's later setting instead
    inside, go_on = threading.Event(), threading.Event()

    def work():
        seen = {}
        with torch_threads(1):
            inside.set()
            go_on.wait(timeout=30)
            seen["inside"] = torch.get_num_threads()
        seen["after"] = torch.get_num_threads()
        return seen

    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(work)
        assert inside.wait(timeout=30)
        torch.set_num_threads(2)  # the main thread changes its own count while the worker's block runs
        go_on.set()
        seen = future.result(timeout=30)
    assert seen["inside"] == 1
    assert seen["after"] == CALLER  # the worker's count before its block (the last set when it first read it)
    assert torch.get_num_threads() == 2  # the worker's block left the main thread's count alone


def test_blocks_in_several_worker_threads_each_get_their_count():
    barrier = threading.Barrier(2, timeout=30)

    def work(n):
        with torch_threads(n):
            barrier.wait()  # both blocks are open at once
            return torch.get_num_threads()

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(work, [1, 2])) == [1, 2]
    assert torch.get_num_threads() == CALLER


# -- where the library applies it ----------------------------------------------------------------------------------


def test_npmodel_network_calls_run_at_npbandits_count_outside_any_block(monkeypatch):
    from npbandit.models import NPModel

    X = torch.rand(6, 2, dtype=torch.float64)
    model = NPModel.from_pretrained("tnpd-bo", X, (X ** 2).sum(-1, keepdim=True))
    seen, predict = [], model.surrogate.predict

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return predict(*args, **kwargs)

    monkeypatch.setattr(model.surrogate, "predict", spy)
    model.posterior(torch.rand(3, 1, 2, dtype=torch.float64))
    assert seen and set(seen) == {1} and torch.get_num_threads() == CALLER
    seen.clear()
    with torch_threads(2):  # a user's block around their loop governs the network calls in it
        model.posterior(torch.rand(3, 1, 2, dtype=torch.float64))
    assert seen and set(seen) == {2}


def test_optimize_proposes_at_its_threads_and_evaluates_at_the_callers_count(set_calls):
    from npbandit.api import optimize

    counts = []

    def objective(x):
        counts.append(torch.get_num_threads())
        return float(np.sum((x - 0.3) ** 2))

    result = optimize(objective, [[0.0], [1.0]], surrogate="tnpd", budget=3, n_init=2, db=None, progress=False,
                      threads=2)
    assert len(result.history) == 3
    assert counts == [CALLER] * 3
    assert set_calls and set(set_calls) == {2, CALLER}  # each proposal at 2, the caller's count back after it
    with pytest.raises(ValueError, match="threads must be"):
        optimize(objective, [[0.0], [1.0]], db=None, threads=0)


def test_bo_policy_refuses_a_bad_count():
    from npbandit.policies.bo import BOPolicy

    with pytest.raises(ValueError, match="threads must be"):
        BOPolicy(2, model="gp", threads="all")


def test_np_bandit_policy_steps_run_at_its_threads(monkeypatch):
    from npbandit.policies.bandit import NPBanditPolicy
    from npbandit.surrogates.pretrained import load_surrogate

    surrogate = load_surrogate("cmanp-wheel")
    seen = []

    def spy(method):
        real = getattr(surrogate, method)

        def call(*args, **kwargs):
            seen.append((method, torch.get_num_threads()))
            return real(*args, **kwargs)

        monkeypatch.setattr(surrogate, method, call)

    for method in ("condition", "update", "predict"):
        spy(method)
    policy = NPBanditPolicy(surrogate, threads=2)
    policy.reset(seed=0)
    context = np.array([0.1, -0.2])
    policy.observe(context, policy.act(context), 1.0, {})
    policy.act(context)
    assert seen == [("condition", 2), ("update", 2), ("predict", 2)]
    assert torch.get_num_threads() == CALLER


def test_gp_ucb_steps_run_at_its_threads(monkeypatch):
    import npbandit.policies.gp as gp
    from npbandit.policies.bandit import GPUCBPolicy

    seen = []

    def fit(X, Y, hyperparameters=None, standardize=True):
        seen.append(torch.get_num_threads())
        posterior = SimpleNamespace(mean=torch.zeros(1), variance=torch.ones(1))
        return SimpleNamespace(posterior=lambda x: posterior)

    monkeypatch.setattr(gp, "fit_single_task_gp", fit)
    monkeypatch.setattr(gp, "gp_hyperparameters", lambda model: {})
    policy = GPUCBPolicy(n_arms=2, threads=2)
    policy.reset(seed=0)
    for arm in (0, 1):
        policy.observe(np.zeros(2), arm, 1.0, {})
    policy.act(np.zeros(2))
    assert seen == [2, 2]


@pytest.mark.integration
def test_np_sampler_proposes_at_its_threads_and_leaves_the_objective_alone(monkeypatch):
    optuna = pytest.importorskip("optuna")
    import npbandit.integrations.optuna_proposals as integration
    from npbandit.integrations.optuna import NPSampler

    proposals = []

    def propose(model, *args, **kwargs):
        proposals.append(torch.get_num_threads())
        return np.full(1, 0.5)

    monkeypatch.setattr(integration, "propose", propose)
    counts = []

    def objective(trial):
        counts.append(torch.get_num_threads())
        return trial.suggest_float("x", 0.0, 1.0) ** 2

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=NPSampler(n_startup_trials=2, seed=0, trust_region=False,
                                                              threads=2))
    study.optimize(objective, n_trials=3)
    assert proposals == [2] and counts == [CALLER] * 3
    with pytest.raises(ValueError, match="threads must be"):
        NPSampler(threads=-1)


# -- the command line ----------------------------------------------------------------------------------------------


def _recording(seen, result=None):
    def stub(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return result

    return stub


@pytest.mark.parametrize("command", ["demo", "bandit", "report", "models", "train"])
def test_every_command_runs_at_its_threads_option(monkeypatch, tmp_path, command):
    import npbandit.demo
    import npbandit.loop
    import npbandit.report
    import npbandit.surrogates.pretrained
    import npbandit.training

    seen = []
    monkeypatch.setattr(npbandit.demo, "run_tour", _recording(seen))
    monkeypatch.setattr(npbandit.loop, "run_bandit_sweep", _recording(seen))
    monkeypatch.setattr(npbandit.report, "report_text", _recording(seen, ""))
    monkeypatch.setattr(npbandit.surrogates.pretrained, "available_checkpoints", _recording(seen, []))
    monkeypatch.setattr(npbandit.training, "train", _recording(seen, SimpleNamespace(stopped_by=None, card="card",
                                                                                    step=1)))
    argv = {"demo": ["demo"], "bandit": ["bandit"], "report": ["report"], "models": ["models"],
            "train": ["train", "--model", "cmanp", "--prior", "gp1d", "--steps", "1", "--out", str(tmp_path)]}[command]
    db = [] if command in ("models", "train") else ["--db", f"sqlite:///{tmp_path / 'runs.db'}"]
    assert cli.main([*argv, *db, "--threads", "2"]) == 0
    monkeypatch.setenv(THREADS_ENV, "1")
    assert cli.main([*argv, *db]) == 0
    assert cli.main([*argv, *db, "--threads", "torch"]) == 0
    # train keeps torch's own count unless told; every other command follows NPBANDIT_THREADS
    assert seen == [2, CALLER if command == "train" else 1, CALLER]
    assert torch.get_num_threads() == CALLER


def test_optimize_command_hands_its_threads_to_optimize(monkeypatch, tmp_path):
    import npbandit.api

    seen = []

    def fake(objective, bounds, **kwargs):
        seen.append((kwargs["threads"], torch.get_num_threads()))
        return SimpleNamespace(run_id=1, best_value=0.0, best_x=np.zeros(2), history=[], recommended_by="observed",
                               recommended_x=np.zeros(2), recommended_value=0.0)

    monkeypatch.setattr(npbandit.api, "optimize", fake)
    db = ["--db", f"sqlite:///{tmp_path / 'runs.db'}"]
    assert cli.main(["optimize", "--function", "branin", *db, "--threads", "2"]) == 0
    assert cli.main(["optimize", "--function", "branin", *db]) == 0
    # scoped to the proposals by optimize itself: the command's own thread (and the objective) keep the count
    assert seen == [(2, CALLER), (None, CALLER)]


def test_a_bad_threads_option_or_variable_is_one_line_naming_it(monkeypatch, capsys):
    with pytest.raises(SystemExit):
        cli.main(["models", "--threads", "0"])
    assert "--threads" in capsys.readouterr().err
    monkeypatch.setenv(THREADS_ENV, "many")
    assert cli.main(["models"]) == 2
    assert THREADS_ENV in capsys.readouterr().err
