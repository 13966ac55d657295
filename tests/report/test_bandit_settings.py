"""`npbandit report` on bandit runs: a row (a panel) puts together runs of one *setting* --
the environment and the parameters that define its task -- and the wheel's own table
stays what it was."""

import gymnasium as gym
import numpy as np
import pytest

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.envs import ClassificationBanditEnv, LinearBanditEnv, WheelBanditEnv, task_param_names
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.report import BanditSetting, bandit_summary, report_text
from npbandit.report.curves import figure_title, panels
from npbandit.storage import RunLogger, list_runs


class _FirstArm(UniformPolicy):
    """Always arm 0: a second policy whose regret needs no linear algebra (the text below is exact)."""

    name = "first-arm"

    def act(self, obs):
        return 0


# the wheel report as it was before bandit settings (made with that code from the runs below);
# the line "database: ..." (the path) aside
WHEEL_TEXT = """\
runs: 12 (completed 12, running 0, interrupted 0, failed 0)

  id  kind    policy                    setting                               seed   steps  status
  10  bandit  uniform                   delta=0.5                                1      12  completed
  11  bandit  first-arm                 delta=0.5                                0      12  completed
  12  bandit  first-arm                 delta=0.5                                1      12  completed
  ... 9 older runs not shown

Wheel bandit (completed runs, one row per delta, run length and policy; mean ± sd over runs):
cumulative regret at the last round (normalised: Uniform's mean = 100, when Uniform ran); simple regret = mean \
per-round regret over the last 25% of the rounds (the last 3 of 12 rounds; the last 5 of 20 rounds)
 delta  rounds  policy                    runs        normalised          cumulative        simple
   0.5      12  first-arm                    2     118.20 ± 8.81      463.59 ± 34.54  32.54 ± 0.01
   0.5      12  uniform                      2    100.00 ± 17.67      392.22 ± 69.32  24.59 ± 11.49
   0.5      20  first-arm                    2     118.68 ± 5.35      756.33 ± 34.10  34.15 ± 6.92
   0.5      20  uniform                      2    100.00 ± 10.87      637.29 ± 69.27  34.34 ± 6.91
   0.9      20  first-arm                    2    146.90 ± 69.28     219.54 ± 103.54   4.88 ± 6.90
   0.9      20  uniform                      2    100.00 ± 92.12     149.45 ± 137.68   5.06 ± 6.88"""


def _wheel_runs(db):
    for delta, horizon in ((0.9, 20), (0.5, 20), (0.5, 12)):
        for policy in (UniformPolicy(), _FirstArm()):
            for seed in (0, 1):
                run_episode(WheelBanditEnv(delta=delta, horizon=horizon), policy, seed=seed, logger=RunLogger(db),
                            run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                      "env_params": {"delta": delta, "horizon": horizon}})


def test_a_report_of_wheel_runs_alone_is_the_wheel_report_it_was(tmp_path):
    db = str(tmp_path / "runs.db")
    _wheel_runs(db)
    lines = report_text(db, limit=3).split("\n")[1:]
    # the tables are as they were; the line naming the versions that made the runs depends on the install
    assert sum(line.startswith("made with: npbandit ") for line in lines) == 1
    assert "\n".join(line for line in lines if not line.startswith("made with")) == WHEEL_TEXT
    found = panels(db)
    assert [p.title for p in found] == ["δ = 0.5\n2 runs per line", "δ = 0.9, 20 rounds\n2 runs per line"]
    assert [[(line.key.text(), line.suffix) for line in p.lines] for p in found] == [
        [("first-arm", ", 12 rounds"), ("first-arm", ", 20 rounds"), ("uniform", ", 12 rounds"),
         ("uniform", ", 20 rounds")], [("first-arm", ""), ("uniform", "")]]
    assert figure_title("bandit", found) == "Wheel bandit: cumulative regret"
    assert [r["delta"] for r in bandit_summary(db)] == [0.5, 0.5, 0.5, 0.5, 0.9, 0.9]


def test_two_classification_tasks_are_separate_rows_and_panels(tmp_path):
    pytest.importorskip("sklearn")
    db = str(tmp_path / "runs.db")
    for dataset in ("iris", "wine"):
        for seed in (0, 1):  # no run_info: run_episode records the data set (task_params)
            run_episode(gym.make("npbandit/ClassificationBandit-v0", dataset=dataset, horizon=8), UniformPolicy(3),
                        seed=seed, logger=RunLogger(db))
    # a run logged with its own bookkeeping keys beside the task's (a benchmark's name, the policy's
    # view of the features): they are not the task, so the run joins iris's row
    run_episode(ClassificationBanditEnv(dataset="iris", horizon=8), UniformPolicy(3), seed=2, logger=RunLogger(db),
                run_info={"kind": "bandit", "env_id": "npbandit/ClassificationBandit-v0",
                          "env_params": {"dataset": "iris", "horizon": 8, "benchmark": "b", "task": "iris",
                                         "features": "all"}})
    run_episode(WheelBanditEnv(delta=0.7, horizon=8), UniformPolicy(), seed=0, logger=RunLogger(db))
    assert [r.env_params for r in list_runs(db)][:2] == [{"dataset": "iris"}] * 2
    rows = bandit_summary(db)
    assert [(r["setting"].label(), r["runs"], r["delta"]) for r in rows] == [
        ("wheel δ=0.7", 1, 0.7), ("ClassificationBandit-v0 dataset=iris", 3, None),
        ("ClassificationBandit-v0 dataset=wine", 2, None)]
    # each task is normalised by its own Uniform
    assert all(np.mean(r["normalised"]) == pytest.approx(100.0) for r in rows)
    text = report_text(db)
    table = text[text.index("Bandits (completed runs, one row per setting"):].splitlines()
    assert table[2].startswith("setting  ") and "rounds  policy" in table[2]
    assert [line.split("  ")[0] for line in table[3:]] == [r["setting"].label() for r in rows]
    found = panels(db)
    assert [p.title.replace("\n", " ").split(", 8 rounds")[0] for p in found] == [
        "δ = 0.7", "ClassificationBandit-v0 dataset=iris", "ClassificationBandit-v0 dataset=wine"]
    # each title line fits its panel, the run length on it too (it ran past the panel's edge)
    assert all(len(line) <= 36 for p in found for line in p.title.splitlines()), [p.title for p in found]
    assert [p.lines[0].runs for p in found] == [1, 3, 2]
    assert figure_title("bandit", found) == "Bandits: cumulative regret"


class _Levels(gym.Env):
    """A bandit of one's own: one context, two arms, ``level`` the better arm's edge."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        regret = 0.0 if action == 1 else 1.0
        return np.zeros(1, np.float32), 1.0 - regret, False, self.t >= 4, {"regret": regret,
                                                                            "expected_regret": regret}


def test_linear_bandits_own_data_and_own_environments_are_told_apart_by_what_defines_them(tmp_path):
    db = str(tmp_path / "runs.db")
    for arms in (3, 4, 4):
        run_episode(LinearBanditEnv(n_arms=arms, horizon=6), UniformPolicy(arms), seed=0, logger=RunLogger(db))
    X = np.arange(12.0).reshape(6, 2)
    for y in ([0, 1, 0, 1, 2, 2], [0, 1, 0, 1, 2, 2], [2, 1, 0, 1, 0, 2]):  # two data sets of one shape
        run_episode(ClassificationBanditEnv(X, y, horizon=6), UniformPolicy(3), seed=0, logger=RunLogger(db))
    for level, horizon in ((1, 4), (1, 8), (2, 4)):  # the run length is no part of the setting
        run_episode(_Levels(), UniformPolicy(2), seed=0, steps=4, logger=RunLogger(db),
                    run_info={"kind": "bandit", "env_id": "levels", "env_params": {"level": level,
                                                                                   "horizon": horizon}})
    runs = list_runs(db)
    # npbandit's envs made without gymnasium.make are recorded by their registered id
    assert [r.env_id for r in runs[:6]] == ["npbandit/LinearBandit-v0"] * 3 + ["npbandit/ClassificationBandit-v0"] * 3
    assert runs[0].env_params == {"context_dim": 3, "n_arms": 3, "noise_std": 0.1}
    assert runs[3].env_params == runs[4].env_params != runs[5].env_params
    rows = bandit_summary(db)
    assert [(r["setting"].label(), r["runs"]) for r in rows] == sorted([  # other settings than the wheel's by label
        (f"ClassificationBandit-v0 data={runs[3].env_params['data']} context_dim=2 n_arms=3", 2),
        (f"ClassificationBandit-v0 data={runs[5].env_params['data']} context_dim=2 n_arms=3", 1),
        ("LinearBandit-v0 context_dim=3 n_arms=3 noise_std=0.1", 1),
        ("LinearBandit-v0 context_dim=3 n_arms=4 noise_std=0.1", 2),
        ("levels context_dim=1 level=1 n_arms=2", 2), ("levels context_dim=1 level=2 n_arms=2", 1)])
    assert len(panels(db)) == 6
    assert rows[-1]["setting"] == BanditSetting("levels", (("context_dim", 1), ("level", 2), ("n_arms", 2)))


class _Shaped(gym.Env):
    """A bandit of one's own with no ``task_params()``: ``d``-D contexts, ``k`` arms, arm 0 the best."""

    def __init__(self, d, k):
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (d,), np.float32)
        self.action_space = gym.spaces.Discrete(k)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action):
        regret = float(action != 0)
        return np.zeros(self.observation_space.shape, np.float32), 1.0 - regret, False, False, {"regret": regret}


def test_runs_of_one_env_class_at_other_shapes_are_separate_settings(tmp_path):
    """Issue 48's review: runs of one env class without task_params() at d=3/k=4, d=8/k=4 and
    d=8/k=12 shared a row; run_episode now records each run's context width and arm count."""
    db = str(tmp_path / "runs.db")
    for d, k in ((3, 4), (8, 4), (8, 12), (3, 4)):
        run_episode(_Shaped(d, k), UniformPolicy(k), seed=0, steps=3, logger=RunLogger(db))
    # a run's own record wins (run_info), and what the env's task_params() says
    run_episode(_Shaped(3, 4), UniformPolicy(4), seed=1, steps=3, logger=RunLogger(db),
                run_info={"env_params": {"context_dim": "three"}})
    runs = list_runs(db)
    assert [r.env_params for r in runs[:3]] == [{"context_dim": 3, "n_arms": 4}, {"context_dim": 8, "n_arms": 4},
                                               {"context_dim": 8, "n_arms": 12}]
    assert runs[-1].env_params == {"context_dim": "three", "n_arms": 4}
    # a database written before: a run without them is read, as a setting of its own
    logger = RunLogger(db)
    logger.start(kind="bandit", env_id="_Shaped", env_params={}, policy="uniform", policy_params={}, checkpoint=None,
                 seed=0)
    logger.log_step(t=0, action=0, reward=1.0, regret=0.0, cumulative_regret=0.0, failed=False, act_s=0.0, env_s=0.0,
                    observe_s=0.0)
    logger.finish("completed")
    rows = bandit_summary(db)
    assert [(r["setting"].label(), r["runs"]) for r in rows] == [
        ("_Shaped", 1), ("_Shaped context_dim=3 n_arms=4", 2), ("_Shaped context_dim=8 n_arms=12", 1),
        ("_Shaped context_dim=8 n_arms=4", 1), ("_Shaped context_dim=three n_arms=4", 1)]


def test_a_task_params_that_is_no_dict_is_refused_by_name(tmp_path):
    class Odd(_Levels):
        def task_params(self):
            return ["level", 1]

    with pytest.raises(TypeError, match=r"Odd.task_params\(\) must return a dict, got list"):
        run_episode(Odd(), UniformPolicy(2), seed=0, steps=2, logger=RunLogger(str(tmp_path / "runs.db")))


def test_each_bandit_environment_names_the_parameters_of_its_task():
    assert task_param_names("npbandit/WheelBandit-v0") == ("delta",)
    assert task_param_names("npbandit/LinearBandit-v0") == ("context_dim", "n_arms", "noise_std")
    assert task_param_names("npbandit/ClassificationBandit-v0") == ("dataset", "data", "context_dim", "n_arms",
                                                                    "csv")
    assert task_param_names("npbandit/BlackBox-v0") is None and task_param_names("levels") is None
    with pytest.raises(TypeError, match="env_id must be a str"):
        task_param_names(3)
    for env in (WheelBanditEnv(delta=0.3, horizon=2), LinearBanditEnv(horizon=2),
                ClassificationBanditEnv(np.eye(3), [0, 1, 1], horizon=2)):
        assert set(env.task_params()) <= set(env.TASK_PARAMS)


class _NoRegret(_Shaped):
    """A bandit of one's own that does not know its regret: its ``info`` has none."""

    def step(self, action):
        obs, reward, terminated, truncated, _ = super().step(action)
        return obs, reward, terminated, truncated, {}


def test_runs_whose_environment_gave_no_regret_are_reported_without_one(tmp_path):
    """info["regret"] is optional for an environment of one's own (the bandits guide): the
    report read every step's regret and failed on the whole database ("must be real
    number, not NoneType") once one such run was in it."""
    db = str(tmp_path / "runs.db")
    for policy in (UniformPolicy(4), _FirstArm(4)):
        result = run_episode(_NoRegret(3, 4), policy, seed=0, steps=4, logger=RunLogger(db))
        assert result.cumulative_regret is None  # unknown, not 0
    run_episode(_Shaped(3, 4), _FirstArm(4), seed=1, steps=4, logger=RunLogger(db),
                run_info={"env_id": "_NoRegret"})  # one run of the row that knows it: 0 regret
    rows = bandit_summary(db)
    assert [(r["label"], r["runs"], r["no_regret"], r["cumulative_regret"], r["simple_regret"]) for r in rows] == [
        ("first-arm", 2, 1, [0.0], [0.0]), ("uniform", 1, 1, [], [])]
    assert "normalised" not in rows[0]  # Uniform has no regret to normalise by
    text = report_text(db)
    assert "(1 of its 2 runs recorded no regret" in text and "(1 of its 1 run recorded no regret" in text
    [panel] = panels(db)  # the curve of the run that has one
    assert [(line.key.text(), len(line.curves)) for line in panel.lines] == [("first-arm", 1)]


def test_a_figure_of_runs_without_regret_says_why_there_is_nothing_to_draw(tmp_path):
    pytest.importorskip("matplotlib")
    from npbandit.report import plot_regret

    db = str(tmp_path / "runs.db")
    run_episode(_NoRegret(3, 4), UniformPolicy(4), seed=0, steps=4, logger=RunLogger(db))
    with pytest.raises(ValueError, match=r"to plot \(its completed bandit runs recorded no regret"):
        plot_regret(db, tmp_path / "regret.png")


def test_a_seed_run_twice_is_said_under_its_row(tmp_path):
    """A sweep run again (after an interruption, say) repeats its completed runs: the row
    counted the same run twice without a word, narrowing its spread."""
    db = str(tmp_path / "runs.db")
    for seed in (0, 10, 2, 10, 2, 10):
        run_episode(_Shaped(3, 4), UniformPolicy(4), seed=seed, steps=3, logger=RunLogger(db))
    run_episode(_Shaped(3, 4), _FirstArm(4), seed=0, steps=3, logger=RunLogger(db))
    rows = bandit_summary(db)
    assert [(r["label"], r["runs"], r["repeated_seeds"]) for r in rows] == [("first-arm", 1, {}),
                                                                          ("uniform", 6, {2: 2, 10: 3})]
    text = report_text(db)
    assert text.count("seeds run more than once") == 1
    assert "(seeds run more than once, each run counted: seed 2 x2, seed 10 x3)" in text
