"""Classification bandits from real data (Riquelme et al. 2018) and the wheel: NP policies and peers side by side.

Tasks: the data sets scikit-learn bundles and a synthetic one as
``npbandit/ClassificationBandit-v0`` (each class an arm, reward 1 for the row's class,
features standardised by the data set's mean / std), and the wheel bandit at
``WHEEL_DELTA``. Policies (columns):

- ``np-ucb`` / ``np-thompson``: the NP policy. On a classification task,
  ``cmanp-bo-ucb`` / ``cmanp-bo-thompson`` (:class:`~npbandit.policies.PerArmNPPolicy`,
  one ``cmanp-bo`` regression per arm) as ``make_bandit_policy`` builds it: its
  checkpoints take at most ``NP_WIDTH`` features, so on a wider data set it reads the
  library's default context projection, fitted on the rounds seen
  (:mod:`npbandit.policies.context_projection`). On the wheel, the wheel's own
  checkpoint (``cmanp-wheel``, UCB with beta = 1, or ``cmanp-wheel-thompson``).
- the projection's candidates, ``cmanp-bo-ucb`` with ``projection=`` each of
  :data:`PROJECTION_COLUMNS` (``np-ucb-principal-components``, ``np-ucb-reward-directions``),
  and ``np-ucb-whole-data-pca``, the lab's earlier view: the first ``NP_WIDTH`` principal
  components fitted on the whole data set (:class:`PrincipalComponents`, information a
  bandit does not have).
- ``linucb`` (the library's, alpha = 1), ``lin-ts`` (the library's linear Thompson sampling,
  Riquelme et al.'s LinFullPost defaults; not a default column), ``uniform``;
- ``neural-linear``: NeuralLinear Thompson sampling (bandit_peers.py, a lab baseline);
- ``vw-cb-explore-adf``: Vowpal Wabbit's ``--cb_explore_adf`` (bandit_peers.py), when
  the ``vowpalwabbit`` package is installed (otherwise the column is left out).

Every (task, policy, seed) is one run of ``--steps`` rounds (default 500: the per-arm NP's
rounds cost ~0.1-0.4 s on one shared core, growing with each arm's rounds, so 2000 rounds x 20
seeds x 5 data sets would take days there; ``--steps 2000`` is the longer protocol) on the rows (or wheel table)
the seed draws, the same for every policy, logged through ``npbandit.storage`` (readable
by ``npbandit report``); runs already completed in ``--db`` are not repeated. Cumulative
regret is normalised per seed by uniform's on the same seed (uniform = 100); the table
shows the median and quartiles over seeds. The bars of issue 48: the NP policy's median
below LinUCB's on at least 3/4 of the tasks, and below the best other peer's on at least 1/2.

    nice -n 19 python experiments/benchmarks/classification_bandits.py           # 20 seeds, 500 rounds
    nice -n 19 python experiments/benchmarks/classification_bandits.py --tasks choosing --seeds 10 \
        --policies uniform np-ucb-principal-components np-ucb-reward-directions   # the projection's choosing tasks

``--tasks choosing`` is :data:`CHOOSING` (``make_classification`` data sets of other shapes
than the reporting tasks', where the default projection is chosen; their table and the
choice rule's counts go to their own section). ``--stored-peers JSON`` fills the cells of
the columns an earlier run's results JSON holds on every task (its per-seed normalised
regrets) instead of running them, after checking that uniform, always run, has the stored
mean raw regret on each task (the same rows); the other columns run.
    python experiments/benchmarks/classification_bandits.py --seeds 2 --steps 200 --no-write   # quick look
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    ROOT,
    add_cluster_arguments,
    is_current,
    machine_line,
    new_figure,
    prepare_db,
    publish,
    run_jobs,
    save_figure,
)

RUN_THREADS = 1
BENCHMARK = "classification-bandits"
COMMAND = "python experiments/benchmarks/classification_bandits.py"
DATASET_TASKS = ["iris", "wine", "breast-cancer", "digits", "synthetic"]
WHEEL_DELTA = 0.9
TASKS = [*DATASET_TASKS, "wheel"]
#: the choosing tasks of the default context projection: make_classification's arguments (n_samples 5000)
CHOOSING = {"choose-12x3": {"n_features": 12, "n_informative": 6, "n_redundant": 2, "n_classes": 3,
                            "n_clusters_per_class": 2, "random_state": 11},
            "choose-30x4": {"n_features": 30, "n_informative": 4, "n_redundant": 2, "n_classes": 4,
                            "n_clusters_per_class": 1, "random_state": 12},
            "choose-16x6": {"n_features": 16, "n_informative": 8, "n_redundant": 0, "n_classes": 6,
                            "n_clusters_per_class": 1, "random_state": 13},
            # contexts the checkpoint reads as they are (5 <= its width): added in session 38 for the
            # reward-scale rule, before any run of it
            "choose-5x4": {"n_features": 5, "n_informative": 4, "n_redundant": 1, "n_classes": 4,
                           "n_clusters_per_class": 1, "random_state": 14}}
POLICIES = ["uniform", "linucb", "neural-linear", "vw-cb-explore-adf", "np-ucb"]
PROJECTION_COLUMNS = {"np-ucb-principal-components": "principal-components",
                      "np-ucb-reward-directions": "reward-directions"}
NP_COLUMNS = ("np-ucb", "np-thompson", *PROJECTION_COLUMNS, "np-ucb-whole-data-pca")
ALL_COLUMNS = [*POLICIES, "lin-ts", "np-thompson", *PROJECTION_COLUMNS, "np-ucb-whole-data-pca"]
NP_WIDTH = 6  # the shipped bo checkpoints' width
CURVE_EVERY = 10


class PrincipalComponents(gym.ObservationWrapper):
    """The first ``k`` principal components of a classification bandit's standardised
    features: the context an NP policy narrower than the data set reads.

    The components are fitted on the whole data set (``env.unwrapped.features``, centred
    by their mean, by SVD). The observation is the centred context's coordinates on them
    (float32), in a ``Box`` spanning the data set's projections (widened by 1e-5 of each
    range, so that rounding never puts a context outside). Rows, rewards and ``info`` are
    the wrapped env's: the same seed plays the same rows as the peers see in full.
    """

    def __init__(self, env: gym.Env, k: int = NP_WIDTH) -> None:
        super().__init__(env)
        features = env.unwrapped.features.astype(np.float64)
        if not 1 <= k < features.shape[1]:
            raise ValueError(f"k must be in [1, {features.shape[1]}) for {features.shape[1]} features, got {k}")
        self.center = features.mean(0)
        _, _, vt = np.linalg.svd(features - self.center, full_matrices=False)
        self.components = vt[:k]
        z = (features - self.center) @ self.components.T
        pad = 1e-5 * (z.max(0) - z.min(0))
        self.observation_space = gym.spaces.Box((z.min(0) - pad).astype(np.float32),
                                                (z.max(0) + pad).astype(np.float32), dtype=np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return ((np.asarray(observation, np.float64) - self.center) @ self.components.T).astype(np.float32)


def make_env(task: str, steps: int) -> tuple[gym.Env, str, dict]:
    """``(env, env_id, env_params)`` of a task (``env_params`` as logged, without the policy's view)."""
    if task == "wheel":
        from npbandit.envs import WheelBanditEnv

        return WheelBanditEnv(delta=WHEEL_DELTA, horizon=steps), "npbandit/WheelBandit-v0", {"delta": WHEEL_DELTA}
    from npbandit.envs import ClassificationBanditEnv

    if task in CHOOSING:
        from sklearn.datasets import make_classification

        X, y = make_classification(n_samples=5000, **CHOOSING[task])
        return ClassificationBanditEnv(X, y, horizon=steps), "npbandit/ClassificationBandit-v0", {"dataset": task}
    if task not in DATASET_TASKS:
        raise ValueError(f"task must be one of {[*TASKS, *CHOOSING]}, got {task!r}")

    return (ClassificationBanditEnv(dataset=task, horizon=steps), "npbandit/ClassificationBandit-v0",
            {"dataset": task})


def make_policy(column: str, task: str, env: gym.Env):
    """``(policy, env the policy plays, features)`` for a column on a task; ``features`` is
    ``"all"`` (every feature, read as it is or through the library's projection, which the
    policy's params log), or ``"pca6"`` where the NP reads :class:`PrincipalComponents` of a
    wider data set fitted on all of it (``np-ucb-whole-data-pca``)."""
    from npbandit.policies import make_bandit_policy

    base = env.unwrapped
    n_arms, width = env.action_space.n, env.observation_space.shape[0]
    if column in NP_COLUMNS:
        rule = "thompson" if column == "np-thompson" else "ucb"
        if task == "wheel":
            return make_bandit_policy(f"cmanp-wheel-{rule}", env=env), env, "all"
        if column == "np-ucb-whole-data-pca" and width > NP_WIDTH:
            env = PrincipalComponents(base, NP_WIDTH)
            return make_bandit_policy(f"cmanp-bo-{rule}", env=env), env, f"pca{NP_WIDTH}"
        return (make_bandit_policy(f"cmanp-bo-{rule}", env=env, projection=PROJECTION_COLUMNS.get(column)), env,
                "all")
    if column in ("uniform", "linucb", "lin-ts"):
        return make_bandit_policy(column, env=env), env, "all"
    from bandit_peers import NeuralLinearPolicy, VowpalWabbitPolicy

    if column == "neural-linear":
        return NeuralLinearPolicy(n_arms, width), env, "all"
    if column == "vw-cb-explore-adf":
        return VowpalWabbitPolicy(n_arms, width), env, "all"
    raise ValueError(f"column must be one of {ALL_COLUMNS}, got {column!r}")


def column_of(run) -> str:
    """The column a stored run belongs to: the one it logged (``env_params["column"]``), or for
    runs logged before columns were, by its policy name (``cmanp-bo-ucb`` -> ``np-ucb``)."""
    if "column" in run.env_params:
        return run.env_params["column"]
    if run.policy.startswith("cmanp-"):
        return "np-thompson" if run.policy.endswith("-thompson") else "np-ucb"
    return run.policy


def _one(task: str, column: str, seed: int, steps: int, db: str) -> tuple[str, str, int]:
    """One logged run."""
    import torch

    torch.set_num_threads(RUN_THREADS)
    from npbandit.loop import run_episode
    from npbandit.storage import RunLogger

    env, env_id, params = make_env(task, steps)
    policy, played, features = make_policy(column, task, env)
    run_episode(played, policy, seed=seed, logger=RunLogger(db, commit_every=200),
                run_info={"kind": "bandit", "env_id": env_id,
                          "env_params": {**params, "horizon": steps, "benchmark": BENCHMARK, "task": task,
                                         "features": features, "column": column}})
    return task, column, seed


def _runs(db: str, steps: int):
    from npbandit.storage import list_runs

    return [r for r in list_runs(db, kind="bandit")
            if r.status == "completed" and r.n_steps == steps and r.env_params.get("benchmark") == BENCHMARK
            and is_current(r)]


def _done(db: str, steps: int) -> set[tuple[str, str, int]]:
    return {(r.env_params["task"], column_of(r), r.seed) for r in _runs(db, steps)}


def summarise(db: str, steps: int, tasks: list[str], policies: list[str], seeds: int) -> dict:
    """Per task and column: the per-seed normalised cumulative regret (uniform of the same seed = 100),
    its median and quartiles, and the mean normalised curve, over the seeds every column with runs on
    the task has completed (a column ahead of the others waits for them)."""
    from npbandit.storage import run_steps

    final: dict[tuple[str, str], dict[int, float]] = {}
    curves: dict[tuple[str, str], dict[int, list[float]]] = {}
    for r in _runs(db, steps):
        key = (r.env_params["task"], column_of(r))
        if r.seed >= seeds or key[0] not in tasks or key[1] not in policies:
            continue
        rows = run_steps(db, r.id)
        final.setdefault(key, {})[r.seed] = rows[-1]["cumulative_regret"]
        curves.setdefault(key, {})[r.seed] = [rows[t]["cumulative_regret"] for t in range(CURVE_EVERY - 1, steps,
                                                                                            CURVE_EVERY)]
    out: dict = {}
    for task in tasks:
        uniform = final.get((task, "uniform"), {})
        # the seeds every column with runs on this task has: medians of one set of rows and seeds
        ran = [set(final[(task, c)]) for c in policies if (task, c) in final]
        common = set.intersection(*ran) if ran else set()
        for column in policies:
            runs = final.get((task, column), {})
            paired = sorted(s for s in common if s in uniform and uniform[s] > 0)
            if not paired or not runs:  # a column with no runs on the task (its cells may come from --stored-peers)
                continue
            norm = [100 * runs[s] / uniform[s] for s in paired]
            q1, med, q3 = np.percentile(norm, [25, 50, 75]).tolist()
            curve = [100 * statistics.fmean(curves[(task, column)][s][i] / uniform[s] for s in paired)
                     for i in range(len(curves[(task, column)][paired[0]]))]
            out[f"{task}/{column}"] = {"seeds": paired, "normalised": norm, "median": med, "q1": q1, "q3": q3,
                                       "raw_mean": statistics.fmean(runs[s] for s in paired), "curve": curve}
    return out


def bars(summary: dict, tasks: list[str], policies: list[str], np_column: str = "np-ucb") -> dict:
    """Issue 48's two counts for ``np_column``, on the tasks where every column has paired seeds: its
    median below LinUCB's, and below the best other column's (uniform included)."""
    peers = [p for p in policies if p not in NP_COLUMNS]
    below_linucb, below_best, counted, seeds, wins = [], [], [], [], {}
    for task in tasks:
        cells = {p: summary.get(f"{task}/{p}") for p in [np_column, *peers]}
        if any(c is None for c in cells.values()):
            continue
        counted.append(task)
        seeds.append(len(cells[np_column]["seeds"]))
        ours = cells[np_column]["median"]
        best = min(peers, key=lambda p: cells[p]["median"])
        if "linucb" in cells and ours < cells["linucb"]["median"]:
            below_linucb.append(task)
        if ours < cells[best]["median"]:
            below_best.append(task)
        if "normalised" in cells[np_column]:  # seed by seed: the NP's regret below the best peer's (by median)
            mine = dict(zip(cells[np_column]["seeds"], cells[np_column]["normalised"]))
            theirs = dict(zip(cells[best]["seeds"], cells[best]["normalised"]))
            common = sorted(set(mine) & set(theirs))
            wins[task] = (best, sum(mine[s] < theirs[s] for s in common), len(common))
    return {"tasks": counted, "below_linucb": below_linucb, "below_best_peer": below_best, "seed_wins": wins,
            "seeds": (min(seeds), max(seeds)) if seeds else (0, 0),
            "bar_linucb": bool(counted) and len(below_linucb) >= 0.75 * len(counted),
            "bar_best_peer": bool(counted) and len(below_best) >= 0.5 * len(counted)}


def choice_rule(summary: dict, tasks: list[str], a: str, b: str, level: float = 0.1, tie: float = 1e-9) -> dict:
    """The choosing rule of the default projection (experiments/log/benchmarks.md) for column
    ``a`` against ``b``: per task, the medians and the paired seeds where ``a``'s normalised
    regret is lower / higher (differences within ``tie`` are ties); (a) tasks where ``a``'s
    median is lower / higher by more than ``level``; (b) pairs lower / higher in all; and
    which column meets both (``None``: neither)."""
    per_task, lower_tasks, higher_tasks, lower_pairs, higher_pairs = {}, 0, 0, 0, 0
    for task in tasks:
        ca, cb = summary.get(f"{task}/{a}"), summary.get(f"{task}/{b}")
        if ca is None or cb is None:
            continue
        ra, rb = dict(zip(ca["seeds"], ca["normalised"])), dict(zip(cb["seeds"], cb["normalised"]))
        common = sorted(set(ra) & set(rb))
        lo = sum(ra[s] < rb[s] - tie for s in common)
        hi = sum(ra[s] > rb[s] + tie for s in common)
        per_task[task] = {"median": (ca["median"], cb["median"]), "pairs": (lo, hi, len(common))}
        lower_tasks += ca["median"] < cb["median"] - level
        higher_tasks += ca["median"] > cb["median"] + level
        lower_pairs += lo
        higher_pairs += hi
    winner = (a if lower_tasks > higher_tasks and lower_pairs > higher_pairs else
              b if higher_tasks > lower_tasks and higher_pairs > lower_pairs else None)
    return {"a": a, "b": b, "tasks": per_task, "medians_lower_higher": (lower_tasks, higher_tasks),
            "pairs_lower_higher": (lower_pairs, higher_pairs), "winner": winner}


def render_choice(rule: dict) -> str:
    """The rule's counts as a paragraph."""
    a, b = rule["a"], rule["b"]
    per = "; ".join(f"{t} medians {ma:.1f} / {mb:.1f}, pairs lower / higher {lo} / {hi} of {n}"
                    for t, d in rule["tasks"].items() for (ma, mb), (lo, hi, n) in [(d["median"], d["pairs"])])
    (lt, ht), (lp, hp) = rule["medians_lower_higher"], rule["pairs_lower_higher"]
    return (f"The choosing rule, `{a}` against `{b}`: {per}. (a) medians lower / higher (by more than 0.1): "
            f"{lt} / {ht}; (b) pairs lower / higher: {lp} / {hp}. Meets both: "
            f"{('`' + rule['winner'] + '`') if rule['winner'] else 'neither'}.")


FIGURE = "classification_bandits_regret"


def plot(summary: dict, tasks: list[str], policies: list[str], figure: str = FIGURE) -> None:
    """Mean normalised cumulative regret (uniform's final = 100 per seed) vs rounds, one panel per task."""
    fig, axes = new_figure(len(tasks))
    for ax, task in zip(axes, tasks):
        for p in policies:
            cell = summary.get(f"{task}/{p}")
            if cell:
                ax.plot([CURVE_EVERY * (i + 1) for i in range(len(cell["curve"]))], cell["curve"], label=p)
        ax.set_title(task if task != "wheel" else f"wheel δ = {WHEEL_DELTA}")
        ax.set_xlabel("round")
        ax.set_ylabel("cumulative regret (uniform at T = 100)")
    axes[0].legend(fontsize=7)
    save_figure(fig, figure)


def table_rows(summary: dict, tasks: list[str], policies: list[str]) -> list[str]:
    """One markdown row per task: its seed count and each policy's median [quartiles] ("-" for none)."""
    out = []
    for task in tasks:
        cells = [summary.get(f"{task}/{p}") for p in policies]
        n = max((len(c["seeds"]) for c in cells if c), default=0)
        out.append(f"| {task} | {n} | " + " | ".join(
            "-" if c is None else f"{c['median']:.1f} [{c['q1']:.1f}, {c['q3']:.1f}]" for c in cells) + " |")
    return out


def render_choosing(summary: dict, tasks: list[str], policies: list[str], steps: int, seeds: int,
                    command: str) -> str:
    """The choosing tasks' table and the rule's counts (its own section)."""
    lines = ["### The choosing tasks: the per-arm NP policy's context projection", "",
             f"Command: `{command}` (CPU: {machine_line(RUN_THREADS)}, one process). {steps} rounds per run; seeds "
             f"0..{seeds - 1}. Tasks: {', '.join(f'`{t}`' for t in tasks)} (`make_classification`, arguments in "
             "`CHOOSING`). Cumulative regret normalised per seed by uniform's (= 100): median [quartiles].", "",
             "| task | seeds | " + " | ".join(policies) + " |", "|---|---:|" + "---:|" * len(policies)]
    lines += table_rows(summary, tasks, policies)
    a, b = PROJECTION_COLUMNS
    if a in policies and b in policies:
        lines += ["", render_choice(choice_rule(summary, tasks, a, b))]
    return "\n".join(lines) + "\n"


def columns_to_run(policies: list[str], tasks: list[str], stored: dict | None) -> list[str]:
    """The columns a run makes: all of ``policies`` without a stored results JSON; with one
    (``stored``, its ``summary``), uniform (the check that the stored cells are of the same
    rows) and every column the JSON does not hold on all of ``tasks``."""
    if stored is None:
        return list(policies)
    return [p for p in policies if p == "uniform" or not all(f"{t}/{p}" in stored for t in tasks)]


def add_stored(summary: dict, stored: dict, tasks: list[str], policies: list[str], db: str, steps: int) -> list[str]:
    """Fill the cells of ``summary`` that ``db`` has no runs for from ``stored`` (an earlier results JSON's
    ``summary``), once uniform's mean raw regret on each such task is the stored one (the same rows);
    returns the cells filled."""
    filled = []
    for task in tasks:
        ours, theirs = summary.get(f"{task}/uniform"), stored.get(f"{task}/uniform")
        if ours is None or theirs is None:
            continue
        if ours["seeds"] != theirs["seeds"] or abs(ours["raw_mean"] - theirs["raw_mean"]) > 1e-9:
            raise SystemExit(f"{task}: uniform's runs differ from the stored ones (seeds {ours['seeds']} vs "
                             f"{theirs['seeds']}, mean raw regret {ours['raw_mean']} vs {theirs['raw_mean']}): "
                             "not the same rows, the stored cells cannot be reused")
        for column in policies:
            key = f"{task}/{column}"
            if key not in summary and key in stored:
                summary[key] = stored[key]
                filled.append(key)
    return filled


def _default_projection() -> str:
    from npbandit.policies.context_projection import default_projection

    return default_projection().name


def render(summary: dict, tasks: list[str], policies: list[str], steps: int, seeds: int, command: str) -> str:
    lines = ["## Classification bandits and the wheel: NP policies and peers (issue 48)", "",
             f"Command: `{command}` (CPU: {machine_line(RUN_THREADS)}, one process). {steps} rounds per run; "
             f"seeds 0..{seeds - 1} asked for. Tasks: scikit-learn's bundled data sets and `make_classification` "
             "(10,000 rows, 20 features, 5 classes, seed 0) as `npbandit/ClassificationBandit-v0` (each class an "
             "arm, reward 1 for the row's class, rows drawn with replacement by the seed, features standardised by "
             f"the data set's mean / std), and the wheel (δ = {WHEEL_DELTA}). Cumulative regret over the run, "
             "normalised per seed by uniform's on the same seed (= 100): median [quartiles] over the seeds every "
             "column has. The NP column is `cmanp-bo` (one regression per arm) on the data sets and the wheel's "
             "own `cmanp-wheel` on the wheel, built by `make_bandit_policy` as a user gets it. The `cmanp-bo` "
             f"checkpoints read at most {NP_WIDTH} features, so on wine (13), breast-cancer (30), digits (64) and "
             f"synthetic (20) the NP reads the library's default context projection (`{_default_projection()}`), "
             "fitted on the rounds seen so far and refitted when they double "
             "(`npbandit/policies/context_projection.py`); LinUCB, "
             "NeuralLinear and VW read every feature. NeuralLinear: an MLP (50, 50) trained "
             "every 50 rounds, Thompson sampling on a Bayesian linear last layer per arm (lab baseline). VW: "
             "`--cb_explore_adf -q sa` (epsilon-greedy, 0.05)."
             + (" lin-ts: the library's `LinearTSPolicy`, per arm a Bayesian linear regression on the features "
                "and an intercept under a Normal-Inverse-Gamma prior (Riquelme et al.'s LinFullPost defaults: "
                "a0 = b0 = 6, lambda = 0.25), Thompson sampling; every feature." if "lin-ts" in policies else ""),
             "",
             f"![Normalised cumulative regret vs rounds](figures/{FIGURE}.png)", "",
             "| task | seeds | " + " | ".join(policies) + " |", "|---|---:|" + "---:|" * len(policies)]
    lines += table_rows(summary, tasks, policies)
    for np_column in [p for p in policies if p in NP_COLUMNS]:
        b = bars(summary, tasks, policies, np_column)
        if not b["tasks"]:
            continue
        lo, hi = b["seeds"]
        k = len(b["tasks"])
        lines += ["", f"Bars ({np_column}, medians, {lo}{'' if lo == hi else f' to {hi}'} paired seeds per task, "
                  f"{k} tasks with every column): below LinUCB on {len(b['below_linucb'])}/{k} "
                  f"({', '.join(b['below_linucb']) or 'none'}; bar >= 3/4: "
                  f"{'met' if b['bar_linucb'] else 'not met'}); below the best other peer on "
                  f"{len(b['below_best_peer'])}/{k} ({', '.join(b['below_best_peer']) or 'none'}; bar >= 1/2: "
                  f"{'met' if b['bar_best_peer'] else 'not met'}). Seed by seed, {np_column} below the best "
                  "other peer: " + "; ".join(f"{t} {w}/{n} ({p})" for t, (p, w, n) in b["seed_wins"].items()) + "."]
    counts = [len(c["seeds"]) for c in summary.values()]
    if counts and min(counts) < seeds:
        lines += ["", f"**Incomplete:** {min(counts)} to {max(counts)} of the {seeds} seeds per cell so far (the "
                  "script resumes where it stopped); 20 seeds are the issue's bar."]
    return "\n".join(lines) + "\n"


def available_policies(policies: list[str], stored: list[str] = ()) -> list[str]:
    """``policies`` without the VW column when ``vowpalwabbit`` is not installed (said on stdout),
    unless it is among ``stored`` (columns whose cells come from a stored results JSON)."""
    if "vw-cb-explore-adf" in policies and "vw-cb-explore-adf" not in stored:
        try:
            import vowpalwabbit  # noqa: F401
        except ImportError:
            print("vowpalwabbit is not installed: the vw-cb-explore-adf column is left out")
            return [p for p in policies if p != "vw-cb-explore-adf"]
    return policies


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--tasks", nargs="+", default=TASKS, choices=[*TASKS, *CHOOSING, "choosing"])
    parser.add_argument("--policies", nargs="+", default=POLICIES, choices=ALL_COLUMNS)
    parser.add_argument("--stored-peers", default=None,
                        help="a results JSON whose cells fill the columns not run in --db (after a uniform check)")
    add_cluster_arguments(parser)
    parser.add_argument("--db", default=str(ROOT / "runs" / "bench_classification_bandits.db"))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true", help="only summarise the completed runs in --db")
    args = parser.parse_args(argv)
    choosing = args.tasks == ["choosing"]
    tasks = list(CHOOSING) if choosing else args.tasks
    args.db = prepare_db(args.db)
    stored = None if args.stored_peers is None else json.loads(Path(args.stored_peers).read_text())
    held = [] if stored is None else [p for p in args.policies if p not in columns_to_run(args.policies, tasks,
                                                                                         stored["summary"])]
    policies = available_policies(args.policies, held)
    from npbandit.storage import display_url, open_db

    open_db(args.db)
    done = _done(args.db, args.steps)
    # seed-major: an interrupted run leaves the first k seeds of every task and column
    ran = columns_to_run(policies, tasks, None if stored is None else stored["summary"])
    todo = [(t, p, s) for s in range(args.seeds) for t in tasks for p in ran if (t, p, s) not in done]
    print(f"{len(done)} runs already in {display_url(args.db)}; {len(todo)} to go", flush=True)
    if not args.no_run:
        run_jobs(_one, [(t, p, s, args.steps, args.db) for t, p, s in todo], args.workers, "classification runs",
                 args.dask_scheduler)
    summary = summarise(args.db, args.steps, tasks, policies, args.seeds)
    tabulated = [r.versions for r in _runs(args.db, args.steps)
                 if r.seed < args.seeds and r.env_params["task"] in tasks and column_of(r) in policies]
    stored_note = ""
    if stored is not None:
        filled = add_stored(summary, stored["summary"], tasks, policies, args.db, args.steps)
        print(f"from {args.stored_peers}: {', '.join(filled) or 'nothing'}")
        columns = sorted({key.split("/", 1)[1] for key in filled})
        stored_note = (f"\nCells of {', '.join(columns) or 'no column'} are the per-seed values stored in "
                       f"`{args.stored_peers}` (command `{stored['command']}`, {stored['machine']}), not re-run: "
                       "uniform, re-run here, reproduces its stored mean raw regret on every task (the same rows "
                       "per seed), which the script checks before reusing a cell.\n")
    command = COMMAND + "".join(f" --{k} {v}" for k, v in (("seeds", args.seeds), ("steps", args.steps))
                                if v != parser.get_default(k))
    if args.policies != POLICIES:
        command += f" --policies {' '.join(args.policies)}"
    if args.tasks != TASKS:
        command += f" --tasks {' '.join(args.tasks)}"
    if args.stored_peers is not None:
        command += f" --stored-peers {args.stored_peers}"
    if choosing:
        text = render_choosing(summary, tasks, policies, args.steps, args.seeds, command)
        print(text)
        if not args.no_write:
            a, b = PROJECTION_COLUMNS
            publish(f"{BENCHMARK}-choosing", text, "classification_bandits_choosing.json", command,
                    {"steps": args.steps, "seeds": args.seeds, "summary": summary,
                     "rule": choice_rule(summary, tasks, a, b) if a in policies and b in policies else None},
                    threads=RUN_THREADS, packages=("scikit-learn",), runs=tabulated)
        return
    text = render(summary, tasks, policies, args.steps, args.seeds, command) + stored_note
    print(text)
    if not args.no_write:
        plot(summary, tasks, policies)
        publish(BENCHMARK, text, "classification_bandits.json", command,
                {"steps": args.steps, "seeds": args.seeds, "summary": summary,
                 "bars": {p: bars(summary, tasks, policies, p) for p in policies if p in NP_COLUMNS}},
                threads=RUN_THREADS, packages=("scikit-learn", "vowpalwabbit"), runs=tabulated)


if __name__ == "__main__":
    main()
