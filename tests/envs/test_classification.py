"""ClassificationBandit-v0: the features it shows, what it pays, its data sets and its errors
(the Env contract itself is checked with every registered env in test_envs.py)."""

import sys

import gymnasium as gym
import numpy as np
import pytest
from helpers import tiny_checkpoint

import npbandit.envs  # registers the environments
from npbandit.envs import ClassificationBanditEnv
from npbandit.envs.classification import load_dataset
from npbandit.loop import run_episode
from npbandit.policies import make_bandit_policy

X = np.array([[0.0, 5.0, 1.0], [2.0, 5.0, 3.0], [4.0, 5.0, 2.0], [6.0, 5.0, 2.0]])
Y = np.array([10, 30, 20, 10])


def test_features_are_standardised_by_the_data_sets_mean_and_std_and_bounded_by_its_extremes():
    env = ClassificationBanditEnv(X, Y, horizon=4)
    mean, std = X.mean(0), np.array([X[:, 0].std(), 1.0, X[:, 2].std()])  # the constant feature keeps std 1
    np.testing.assert_allclose(env.mean, mean)
    np.testing.assert_allclose(env.std, std)
    np.testing.assert_allclose(env.features, (X - mean) / std, rtol=1e-6)
    assert env.features.dtype == np.float32
    np.testing.assert_array_equal(env.observation_space.low, [env.features[:, 0].min(), -1.0, env.features[:, 2].min()])
    np.testing.assert_array_equal(env.observation_space.high, [env.features[:, 0].max(), 1.0, env.features[:, 2].max()])
    np.testing.assert_array_equal(env.classes, [10, 20, 30])  # arm a is the a-th class in sorted order
    np.testing.assert_array_equal(env.labels, [0, 2, 1, 0])


def test_each_round_shows_its_rows_features_and_pays_one_for_its_class_alone():
    env = ClassificationBanditEnv(X, Y, horizon=6)
    obs, info = env.reset(seed=5)
    for t in range(6):
        row = int(env.rows[t])
        np.testing.assert_array_equal(obs, env.features[row])
        arm = t % 3
        obs, reward, terminated, truncated, info = env.step(arm)
        right = int(env.labels[row])
        assert (info["row"], info["optimal_action"], info["t"]) == (row, right, t)
        assert reward == (1.0 if arm == right else 0.0)
        assert info["regret"] == info["expected_regret"] == 1.0 - reward
        assert truncated is (t == 5) and terminated is False


def test_a_uniform_policy_seeded_like_the_env_is_not_correlated_with_the_rows_classes():
    """run_episode seeds the env and the policy with one seed; on iris (150 rows sorted by class, 50
    each, as here) rows drawn from np_random itself made uniform's draws the rows' classes: zero regret."""
    env = ClassificationBanditEnv(np.arange(150.0)[:, None], np.repeat([0, 1, 2], 50), horizon=300)
    result = run_episode(env, make_bandit_policy("uniform", env=env), seed=0)
    assert 150 < result.cumulative_regret < 250  # 2/3 of 300 expected; the binomial's sd is 8.2


@pytest.mark.parametrize("name, shape, arms", [("iris", (150, 4), 3), ("wine", (178, 13), 3),
                                               ("breast-cancer", (569, 30), 2), ("digits", (1797, 64), 10)])
def test_bundled_data_sets_load_offline_with_their_shapes(name, shape, arms):
    Xd, yd = load_dataset(name)
    assert Xd.shape == shape and len(np.unique(yd)) == arms
    env = gym.make("npbandit/ClassificationBandit-v0", dataset=name, horizon=3)
    assert env.observation_space.shape == (shape[1],) and env.action_space.n == arms


def test_the_synthetic_data_set_is_fixed():
    (X1, y1), (X2, y2) = load_dataset("synthetic"), load_dataset("synthetic")
    assert X1.shape == (10000, 20) and len(np.unique(y1)) == 5
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)


def test_a_named_data_set_without_scikit_learn_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now raises ImportError
    with pytest.raises(ImportError, match=r"pip install -e '\.\[bench\]'"):
        ClassificationBanditEnv(dataset="iris")
    ClassificationBanditEnv(X, Y)  # data of one's own needs no scikit-learn


@pytest.mark.parametrize("args, kwargs, match", [
    ((), {}, "either X and y or dataset"),
    ((X, Y), {"dataset": "iris"}, "either X and y or dataset"),
    ((X,), {}, "X and y must be given together"),
    ((), {"dataset": "mnist"}, "dataset must be one of"),
    ((X[0], Y), {}, "X must be a 2-D array"),
    ((np.where(X == 2.0, np.nan, X), Y), {}, r"X must be finite; 3 value\(s\) are NaN or infinite "
                                              r"\(X\[1, 0\] = nan, X\[2, 2\] = nan, X\[3, 2\] = nan\)"),
    # more than five: the first five, in row order, then ...
    ((np.where(X != 5.0, np.inf, X), Y), {}, r"8 value\(s\) are NaN or infinite \(X\[0, 0\] = inf, X\[0, 2\] = inf, "
                                            r"X\[1, 0\] = inf, X\[1, 2\] = inf, X\[2, 0\] = inf, \.\.\.\)"),
    ((X, Y[:3]), {}, "y must be 1-D with one label per row"),
    ((X, np.zeros(4)), {}, "at least 2 classes"),
    # a missing label became a class (NaN) or raised numpy's sort error, naming nothing (None, mixed kinds)
    ((X, [0.0, 1.0, np.nan, 1.0]), {}, r"y must hold a label for every row; 1 are NaN or None \(rows \[2\]\)"),
    ((X, np.array(["a", None, "b", None], dtype=object)), {}, r"2 are NaN or None \(rows \[1, 3\]\)"),
    ((X, np.array([1, "a", 1, "a"], dtype=object)), {}, "y's labels must be values that sort together"),
    ((X, Y), {"horizon": 0}, "horizon"),
])
def test_bad_data_and_arguments_are_refused_by_name(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ClassificationBanditEnv(*args, **kwargs)


def test_actions_outside_the_arms_and_steps_before_reset_are_refused():
    env = ClassificationBanditEnv(X, Y, horizon=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    for bad in (3, -1):
        with pytest.raises(ValueError, match=r"action must be an arm index \(int\) in \[0, 3\)"):
            env.step(bad)


def test_the_np_policy_plays_a_data_set_within_its_checkpoints_width(tmp_path):
    env = ClassificationBanditEnv(dataset="iris", horizon=8)
    card = tiny_checkpoint(tmp_path)  # a cmanp-bo of tiny random weights: the pairing, not the decisions
    result = run_episode(env, make_bandit_policy(f"{card}-thompson", env=env), seed=0)
    assert len(result.steps) == 8 and all(0 <= s["action"] < 3 for s in result.steps)
    assert result.cumulative_regret == sum(1.0 - s["reward"] for s in result.steps)


def test_the_task_is_a_named_data_sets_name_or_a_fingerprint_of_what_the_policy_sees():
    env = ClassificationBanditEnv(X, Y, horizon=2)
    task = env.task_params()
    assert set(task) == {"data", "context_dim", "n_arms"} and (task["context_dim"], task["n_arms"]) == (3, 3)
    assert ClassificationBanditEnv(X.copy(), Y.copy(), horizon=9).task_params() == task  # the run length is no part
    # rescaled features (by a power of two, exactly) are standardised to the same observations: the same task
    assert ClassificationBanditEnv(2 * X + 4, Y, horizon=2).task_params() == task
    assert ClassificationBanditEnv(X, Y[::-1], horizon=2).task_params()["data"] != task["data"]
    assert ClassificationBanditEnv(dataset="iris", horizon=2).task_params() == {"dataset": "iris"}


# -- a data set of one's own from a CSV file (read_csv) -------------------------------------------------------------


def test_read_csv_and_its_result_are_importable_from_npbandit_envs_as_the_env_is():
    from npbandit.envs import classification

    for name in ("ClassificationBanditEnv", "read_csv", "CsvData"):
        assert name in npbandit.envs.__all__ and getattr(npbandit.envs, name) is getattr(classification, name)


def test_a_csv_file_is_read_as_features_and_labels_with_the_hash_of_its_bytes(tmp_path):
    import hashlib

    from npbandit.envs import read_csv

    text = '\ufeffx, "y" ,kind\n0.5,1e3,b\n\n-2, 7 ,a\n3,0,"b"\n'  # a byte-order mark, spaces, a blank line
    path = tmp_path / "own.csv"
    path.write_text(text, encoding="utf-8")
    data = read_csv(path, "kind")
    np.testing.assert_array_equal(data.X, [[0.5, 1000.0], [-2.0, 7.0], [3.0, 0.0]])
    assert data.X.dtype == np.float64 and data.y.tolist() == ["b", "a", "b"]
    assert data.features == ("x", "y") and data.label_column == "kind" and data.path == path.resolve()
    assert data.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    # a str path too; the env numbers its arms by the labels' sorted text
    env = ClassificationBanditEnv(read_csv(str(path), "kind").X, data.y, horizon=2)
    assert env.classes.tolist() == ["a", "b"] and env.labels.tolist() == [1, 0, 1]
    # the label column anywhere, numbers too: every other column is a feature
    (tmp_path / "numbers.csv").write_text("class,p,q\n1,0.1,2\n2,0.2,3\n", encoding="utf-8")
    numbers = read_csv(tmp_path / "numbers.csv", "class")
    assert numbers.features == ("p", "q") and numbers.y.tolist() == ["1", "2"]
    np.testing.assert_array_equal(numbers.X, [[0.1, 2.0], [0.2, 3.0]])


@pytest.mark.parametrize("text,label,error,match", [
    (None, "kind", FileNotFoundError, "no such file"),
    ("", "kind", ValueError, "is empty: a CSV file of a data set starts with a header row"),
    ("x,kind\n", "kind", ValueError, "has a header and no rows"),
    ("x,y,kind\n1,2,a\n", "label", ValueError, r"label_column 'label' is not a column of .*; its columns: x, y, kind$"),
    # a file without a header row: its first row of data is read as the header, and the error says so
    ("0.5,2,a\n1,2,b\n", "kind", ValueError,
     r"its columns: 0\.5, 2, a \(the first line is the header row naming the columns; this one holds numbers: "
     r"add a header row\)"),
    # a file of semicolons: one column, the whole header, and the error says commas separate the fields
    ("x;y;kind\n1;2;a\n", "kind", ValueError, r"its columns: x;y;kind \(fields are separated by commas\)"),
    ("kind\na\nb\n", "kind", ValueError, "the label column 'kind' alone: no feature column"),
    ("x,x,kind\n1,2,a\n", "kind", ValueError, "names column\\(s\\) 'x' more than once"),
    ("x,y,kind\n1,2,a\n1,b\n", "kind", ValueError, r"line 3: 2 fields, but the header names 3 columns"),
    ("x,colour,kind\n1,2,a\n1,red,b\n", "kind", ValueError,
     r"feature column 'colour' .* is not numeric: line 3 holds 'red'"),
    ("x,y,kind\n1,,a\n2,nan,b\n3,inf,a\n4,1,b\n", "kind", ValueError,
     r"feature column 'y' .* has 3 missing, NaN or infinite value\(s\) \(line\(s\) 2, 3, 4\)"),
    ("x,kind\n1,a\n2,\n", "kind", ValueError, r"label column 'kind' .* is empty on 1 line\(s\) \(3\)"),
    ("x,kind\n1,a\n2,a\n", "kind", ValueError,
     r"label column 'kind' .* holds 1 class \('a'\); a bandit needs at least 2"),
])
def test_a_csv_file_that_is_no_labelled_numeric_table_is_refused_saying_where(tmp_path, text, label, error, match):
    from npbandit.envs.classification import read_csv

    path = tmp_path / "data.csv"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(error, match=match):
        read_csv(path, label)


def test_read_csv_refuses_arguments_of_other_types_and_bytes_that_are_not_utf8(tmp_path):
    from npbandit.envs.classification import read_csv

    path = tmp_path / "latin.csv"
    path.write_bytes("x,kind\n1,caf\u00e9\n2,b\n".encode("latin-1"))
    with pytest.raises(ValueError, match="is not UTF-8 text"):
        read_csv(path, "kind")
    with pytest.raises(TypeError, match="path must be a str or os.PathLike"):
        read_csv(3, "kind")
    with pytest.raises(TypeError, match="label_column must be a str"):
        read_csv(path, 0)
