"""experiments/benchmarks/classification_bandits.py and its lab peers (bandit_peers.py): a tiny
end-to-end run, what counts as done, the normalisation, the bars, the NP's principal components."""

import numpy as np
import pytest

from .helpers import load_benchmark

pytestmark = pytest.mark.lab


def test_runs_are_logged_resumed_and_normalised_per_seed_by_uniform(tmp_path, keep_threads):
    bench = load_benchmark("classification_bandits")
    db = f"sqlite:///{tmp_path / 'clf.db'}"
    for column in ("uniform", "linucb"):
        for seed in (0, 1):
            bench._one("iris", column, seed, 60, db)
    bench._one("iris", "linucb", 2, 60, db)  # a column ahead of the others: its seed 2 waits for them
    assert bench._done(db, 60) == {("iris", c, s) for c in ("uniform", "linucb") for s in (0, 1)} | {
        ("iris", "linucb", 2)}
    assert bench._done(db, 61) == set()  # another round count is another protocol
    summary = bench.summarise(db, 60, ["iris"], ["uniform", "linucb"], 2)
    assert summary["iris/uniform"]["normalised"] == [100.0, 100.0]
    assert summary["iris/uniform"]["seeds"] == summary["iris/linucb"]["seeds"] == [0, 1]
    from npbandit.storage import list_runs, run_steps

    final = {(r.policy, r.seed): run_steps(db, r.id)[-1]["cumulative_regret"] for r in list_runs(db)}
    expected = [100 * final[("linucb", s)] / final[("uniform", s)] for s in (0, 1)]
    assert summary["iris/linucb"]["normalised"] == pytest.approx(expected)
    assert summary["iris/linucb"]["median"] == pytest.approx(np.median(expected))
    assert len(summary["iris/linucb"]["curve"]) == 60 // bench.CURVE_EVERY
    text = bench.render(summary, ["iris"], ["uniform", "linucb"], 60, 2, "cmd")
    assert "| iris | 2 | 100.0 [100.0, 100.0] |" in text


def test_bars_count_tasks_where_the_np_median_is_below_linucb_and_below_the_best_peer():
    bench = load_benchmark("classification_bandits")
    medians = {"a": {"uniform": 100, "linucb": 50, "neural-linear": 30, "np-ucb": 40},
               "b": {"uniform": 100, "linucb": 50, "neural-linear": 60, "np-ucb": 20},
               "c": {"uniform": 100, "linucb": 10, "neural-linear": 60, "np-ucb": 20},
               "d": {"uniform": 100, "linucb": 50}}  # no NP run: not counted
    summary = {f"{t}/{p}": {"median": m, "seeds": [0, 1, 2]} for t, row in medians.items() for p, m in row.items()}
    b = bench.bars(summary, ["a", "b", "c", "d"], ["uniform", "linucb", "neural-linear", "np-ucb"])
    assert b["tasks"] == ["a", "b", "c"] and b["below_linucb"] == ["a", "b"] and b["below_best_peer"] == ["b"]
    assert (b["bar_linucb"], b["bar_best_peer"], b["seeds"]) == (False, False, (3, 3))


def test_the_np_reads_the_first_principal_components_of_a_wide_data_set_on_the_same_rows():
    bench = load_benchmark("classification_bandits")
    env, _, _ = bench.make_env("wine", 5)
    wrapped = bench.PrincipalComponents(env, 6)
    assert wrapped.observation_space.shape == (6,)
    obs, _ = wrapped.reset(seed=2)
    full, _ = env.reset(seed=2)
    np.testing.assert_allclose(obs, (full - wrapped.center) @ wrapped.components.T, rtol=1e-5, atol=1e-6)
    for _ in range(5):
        assert obs in wrapped.observation_space
        obs, *_ = wrapped.step(0)
    # the components are orthonormal and ordered by the variance they explain
    np.testing.assert_allclose(wrapped.components @ wrapped.components.T, np.eye(6), atol=1e-10)
    variance = (((env.features - wrapped.center) @ wrapped.components.T) ** 2).mean(0)
    assert (np.diff(variance) <= 1e-6).all()
    with pytest.raises(ValueError, match="k must be in"):
        bench.PrincipalComponents(env, 13)


def test_neural_linear_is_seeded_and_learns_a_separable_bandit(keep_threads):
    import sys

    peers = sys.modules.get("bandit_peers") or load_benchmark("bandit_peers")
    from npbandit.envs import ClassificationBanditEnv
    from npbandit.loop import run_episode

    rng = np.random.default_rng(0)
    y = rng.integers(2, size=200)
    X = y[:, None] * 3.0 + rng.standard_normal((200, 2)) * 0.3
    env = ClassificationBanditEnv(X, y, horizon=150)
    policy = peers.NeuralLinearPolicy(2, 2, train_every=25, train_steps=30)
    first = [s["action"] for s in run_episode(env, policy, seed=3).steps]
    result = run_episode(env, policy, seed=3)
    assert [s["action"] for s in result.steps] == first
    assert sum(s["regret"] for s in result.steps[-50:]) <= 10  # uniform: 25 expected in 50 rounds


def test_the_np_column_is_the_library_default_and_the_candidates_name_their_projection():
    bench = load_benchmark("classification_bandits")
    env, _, _ = bench.make_env("wine", 5)
    policy, played, features = bench.make_policy("np-ucb", "wine", env)
    assert played is env and features == "all" and policy.params()["projection"]["width"] == 6
    for column, name in bench.PROJECTION_COLUMNS.items():
        policy, played, _ = bench.make_policy(column, "wine", env)
        assert played is env and policy.params()["projection"]["name"] == name
    policy, played, features = bench.make_policy("np-ucb-whole-data-pca", "wine", env)
    assert isinstance(played, bench.PrincipalComponents) and features == "pca6"
    assert policy.params()["projection"]["name"] == "identity"  # 6 features: read as they are
    choosing, _, params = bench.make_env("choose-30x4", 5)
    assert choosing.observation_space.shape == (30,) and choosing.action_space.n == 4 and params == {
        "dataset": "choose-30x4"}
    assert not set(bench.CHOOSING) & set(bench.TASKS)


def test_the_choice_rule_counts_medians_and_paired_seeds():
    bench = load_benchmark("classification_bandits")
    a, b = bench.PROJECTION_COLUMNS

    def cell(values):
        return {"seeds": [0, 1, 2], "normalised": values, "median": float(np.median(values))}

    summary = {f"t1/{a}": cell([10, 20, 30]), f"t1/{b}": cell([11, 21, 29]),  # medians 20 / 21; pairs 2 / 1
               f"t2/{a}": cell([50, 50, 50]), f"t2/{b}": cell([50.05, 49, 51]),  # medians level; pairs 2 / 1
               f"t3/{a}": cell([5, 6, 7]), f"t3/{b}": cell([4, 5, 9])}  # medians 6 / 5; pairs 1 / 2
    rule = bench.choice_rule(summary, ["t1", "t2", "t3"], a, b)
    assert rule["medians_lower_higher"] == (1, 1) and rule["pairs_lower_higher"] == (5, 4) and rule["winner"] is None
    summary[f"t3/{a}"] = cell([3, 4, 7])  # now lower on t3's median and on all its pairs
    rule = bench.choice_rule(summary, ["t1", "t2", "t3"], a, b)
    assert rule["medians_lower_higher"] == (2, 0) and rule["pairs_lower_higher"] == (7, 2) and rule["winner"] == a
    summary[f"t1/{a}"] = cell([30, 40, 50])  # t1's median higher again: (a) level, whatever the pairs
    assert bench.choice_rule(summary, ["t1", "t2", "t3"], a, b)["winner"] is None
    assert "Meets both: `np-ucb-principal-components`" in bench.render_choice(rule)


def test_stored_cells_fill_only_columns_not_run_and_only_on_the_same_rows():
    bench = load_benchmark("classification_bandits")
    uniform = {"seeds": [0, 1], "raw_mean": 400.0}
    summary = {"iris/uniform": uniform, "iris/np-ucb": {"seeds": [0, 1], "median": 9.0}}
    stored = {"iris/uniform": dict(uniform), "iris/np-ucb": {"median": 8.0}, "iris/linucb": {"median": 14.7}}
    filled = bench.add_stored(summary, stored, ["iris"], ["uniform", "linucb", "np-ucb"], "db", 500)
    assert filled == ["iris/linucb"] and summary["iris/np-ucb"]["median"] == 9.0
    stored["iris/uniform"]["raw_mean"] = 401.0
    with pytest.raises(SystemExit, match="not the same rows"):
        bench.add_stored({"iris/uniform": uniform}, stored, ["iris"], ["uniform", "linucb"], "db", 500)


def test_a_column_without_runs_is_left_out_of_the_summary(tmp_path, keep_threads):
    bench = load_benchmark("classification_bandits")
    db = f"sqlite:///{tmp_path / 'clf.db'}"
    bench._one("iris", "uniform", 0, 20, db)
    summary = bench.summarise(db, 20, ["iris"], ["uniform", "linucb"], 1)
    assert set(summary) == {"iris/uniform"}


def test_with_stored_cells_uniform_and_the_columns_they_lack_run():
    bench = load_benchmark("classification_bandits")
    stored = {"iris/uniform": {}, "wine/uniform": {}, "iris/linucb": {}, "wine/linucb": {}, "iris/np-ucb": {}}
    policies = ["uniform", "linucb", "np-ucb", "lin-ts"]
    assert bench.columns_to_run(policies, ["iris", "wine"], None) == policies
    # linucb is stored on both tasks; np-ucb on one only, so it runs; lin-ts is not stored
    assert bench.columns_to_run(policies, ["iris", "wine"], stored) == ["uniform", "np-ucb", "lin-ts"]
    assert bench.columns_to_run(policies, ["iris"], stored) == ["uniform", "lin-ts"]
