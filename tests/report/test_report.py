"""`npbandit report`: rows compare like with like (the full problem, the run length),
regret is labelled for what it is, and the plot shows spread and the initial design."""

import json
import math
import sqlite3
import statistics

import numpy as np
import pytest

from npbandit import optimize
from npbandit.cli import main
from npbandit.envs import ObjectiveError, WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.report import bandit_summary, bo_summary, regret_figure, report_text
from npbandit.report.curves import panels
from npbandit.storage import RunLogger, list_runs, run_steps


def _sphere(x):
    return float(np.sum(np.asarray(x) ** 2))


def test_hartmann_3d_min_6d_min_and_6d_max_are_three_problems(tmp_path):
    db = str(tmp_path / "runs.db")
    for args in (["--dim", "3"], ["--dim", "6"], ["--dim", "6", "--maximize"]):
        assert main(["optimize", "--function", "hartmann", *args, "--surrogate", "random", "--budget", "3",
                     "--db", db]) == 0
    assert len(bo_summary(db)) == 3
    text = report_text(db)
    section = text[text.index("Black-box optimisation"):]
    for label in ("hartmann  d=3  [0, 1]^3  minimise", "hartmann  d=6  [0, 1]^6  minimise",
                  "hartmann  d=6  [0, 1]^6  maximise"):
        assert section.count(label) == 1, label


def test_different_lambdas_and_different_bounds_are_different_problems(tmp_path):
    db = str(tmp_path / "runs.db")
    box = [[-1.0, -1.0], [1.0, 1.0]]
    first = lambda x: float(x[0])  # noqa: E731 - two lambdas are the case in point
    second = lambda x: float(x[1])  # noqa: E731
    for objective in (first, second):
        optimize(objective, box, surrogate="random", budget=3, db=db, progress=False)
    optimize(first, [[-2.0, -2.0], [2.0, 2.0]], surrogate="random", budget=3, db=db, progress=False)
    rows = bo_summary(db)
    assert len(rows) == 3
    names = {r["objective"] for r in rows}
    assert len(names) == 2 and all("<lambda>@test_report.py:" in n for n in names)
    assert "d=2  [-2, 2]^2  minimise" in report_text(db)


def test_a_given_name_is_what_the_run_records(tmp_path):
    db = str(tmp_path / "runs.db")
    optimize(lambda x: float(x[0]), [[-1.0], [1.0]], surrogate="random", budget=3, db=db, progress=False,
             name="shifted x0")
    (run,) = list_runs(db)
    assert run.env_params["objective"] == "shifted x0"
    assert "shifted x0  d=1  [-1, 1]^1  minimise" in report_text(db)


def test_simple_regret_is_reported_when_the_optimum_is_known(tmp_path):
    db = str(tmp_path / "runs.db")
    box = [[-1.0, -1.0], [1.0, 1.0]]
    results = [optimize(_sphere, box, surrogate="random", budget=5, seed=s, db=db, progress=False,
                        optimal_value=0.0) for s in range(3)]
    (row,) = bo_summary(db)
    assert row["problem"].optimal_value == 0.0
    assert row["simple_regret"] == pytest.approx([r.best_value for r in results])
    assert "simple regret" in report_text(db)
    # the known optimum of a named test function is recorded by the CLI
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "3", "--db", db]) == 0
    branin = next(r for r in bo_summary(db) if r["problem"].name == "branin")
    assert branin["problem"].optimal_value == pytest.approx(0.397887, abs=1e-5)
    assert branin["simple_regret"][0] == pytest.approx(branin["best"][0] - 0.397887, abs=1e-5)


@pytest.mark.parametrize("kwargs,error,match", [
    ({"name": ""}, ValueError, "name"), ({"name": "two\nlines"}, ValueError, "name"), ({"name": 3}, TypeError, "name"),
    ({"optimal_value": "0"}, TypeError, "optimal_value"), ({"optimal_value": math.nan}, ValueError, "optimal_value"),
    ({"optimal_value": True}, TypeError, "optimal_value")])
def test_optimize_checks_name_and_optimal_value(kwargs, error, match):
    with pytest.raises(error, match=match):
        optimize(_sphere, [[0.0], [1.0]], surrogate="random", budget=2, db=None, progress=False, **kwargs)


def test_bandit_simple_regret_is_a_share_of_the_run_and_says_which(tmp_path):
    db = str(tmp_path / "runs.db")
    for seed in (0, 1):
        run_episode(WheelBanditEnv(delta=0.5, horizon=300), UniformPolicy(), seed=seed, logger=RunLogger(db),
                    run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                              "env_params": {"delta": 0.5, "horizon": 300}})
    (row,) = bandit_summary(db)
    assert row["simple_regret_rounds"] == 75  # the last quarter, as 500 is of the protocol's 2000
    expected = [statistics.fmean(s["regret"] for s in run_steps(db, run.id)[-75:]) for run in list_runs(db)]
    assert row["simple_regret"] == pytest.approx(expected)
    text = report_text(db).split("\n", 1)[1]  # past the "database: <path>" line (pytest-500/... is no claim)
    assert "500" not in text  # the protocol's 500 of 2000 rounds is not what this run's report says
    assert "last 75 of 300 rounds" in text


def _texts(fig):
    """Every piece of text a reader sees in ``fig`` (drawn first, so that the ticks exist)."""
    from matplotlib.text import Text

    fig.draw_without_rendering()
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


@pytest.mark.slow
def test_plot_one_panel_per_problem_with_quartiles_log_regret_and_the_initial_design(tmp_path):
    db = str(tmp_path / "runs.db")
    for seed in range(3):
        for dim in (2, 3):
            # regret of a quadratic spans decades: the first point is far off, the best ones close
            optimize(_sphere, [[-1.0] * dim, [1.0] * dim], surrogate="gp", budget=2 * dim + 2, seed=seed, db=db,
                     progress=False, optimal_value=0.0, name="sphere")
        optimize(_sphere, [[-1.0] * 2, [1.0] * 2], surrogate="random", budget=6, seed=seed, db=db,
                 progress=False, optimal_value=0.0, name="sphere")
    fig = regret_figure(db)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2
    titles = sorted(ax.get_title() for ax in axes)
    assert "d=2" in titles[0] and "d=3" in titles[1] and all("sphere" in t for t in titles)
    assert all("3 runs per line" in t for t in titles)
    for ax in axes:
        assert ax.get_yscale() == "log"
        assert len(ax.collections) >= 1  # the quartile band(s)
        assert ax.get_xlabel() == "evaluation"
        # one dotted line where the (2d + 1)-point design ends, however many runs and policies had it
        assert len([line for line in ax.get_lines() if line.get_linestyle() == ":"]) == 1
    # one y label for the figure, the quantity it plots; the legend names policies for a reader
    assert fig.get_supylabel().startswith("simple regret") and not any(ax.get_ylabel() for ax in axes)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["GP (LogEI)", "Sobol search", "end of initial design"]
    assert "median" in fig.get_suptitle() and "25th to 75th percentile" in fig.get_suptitle()
    assert min(t.get_fontsize() for t in _texts(fig)) >= 10
    path = tmp_path / "regret.png"
    assert main(["report", "--db", db, "--plot", str(path)]) == 0 and path.read_bytes()[:4] == b"\x89PNG"


def _uniform_runs(db, deltas=(0.5,), seeds=(0, 1), horizon=30):
    for delta in deltas:
        for seed in seeds:
            run_episode(WheelBanditEnv(delta=delta, horizon=horizon), UniformPolicy(), seed=seed,
                        logger=RunLogger(db), run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                                        "env_params": {"delta": delta, "horizon": horizon}})


def test_each_quantity_is_a_figure_of_its_own_written_in_the_suffixs_format(tmp_path):
    from npbandit.report import plot_regret, regret_figures

    db = str(tmp_path / "runs.db")
    _uniform_runs(db, deltas=(0.5, 0.9))
    optimize(_sphere, [[-1.0], [1.0]], surrogate="random", budget=4, db=db, progress=False, optimal_value=0.0)
    optimize(_sphere, [[-1.0], [1.0]], surrogate="random", budget=4, db=db, progress=False, name="no optimum")
    with pytest.raises(ValueError, match="must end in .png, .pdf, .svg"):
        plot_regret(str(tmp_path / "missing.db"), tmp_path / "regret.jpg")  # before the database is read
    figures = regret_figures(db)
    assert list(figures) == ["bandit", "bo-regret", "bo-value"]
    assert [f.get_supylabel().split("\n")[0].split(" (")[0] for f in figures.values()] == [
        "cumulative regret", "simple regret", "best value found"]
    # one scale in every panel of a figure: the two deltas' panels both logarithmic (or both not)
    assert len({ax.get_yscale() for ax in figures["bandit"].axes if ax.get_visible()}) == 1
    with pytest.raises(ValueError, match="bandit, bo-regret, bo-value"):
        regret_figure(db)
    assert regret_figure(db, "bandit").get_supylabel().startswith("cumulative regret")
    with pytest.raises(ValueError, match="quantity must be None or one of"):
        regret_figure(db, "regret")
    for suffix, magic in ((".pdf", b"%PDF"), (".svg", b"<?xml"), (".PNG", b"\x89PNG")):
        paths = plot_regret(db, tmp_path / f"regret{suffix}")
        # the kind of run, and what is plotted where it is not a regret: regret-bo, not regret-bo-regret
        assert [p.name for p in paths] == [f"regret-{q}{suffix}" for q in ("bandit", "bo", "bo-value")]
        assert all(p.read_bytes()[:len(magic)] == magic for p in paths)
    one = str(tmp_path / "one.db")
    _uniform_runs(one)
    assert plot_regret(one, tmp_path / "one.svg") == [tmp_path / "one.svg"]  # one quantity: the path as given


def test_the_users_names_replace_the_derived_ones_in_the_legend(tmp_path, capsys):
    from npbandit.report import plot_regret

    db = str(tmp_path / "runs.db")
    _uniform_runs(db)
    fig = regret_figure(db, labels={"uniform": "Uniform random arm"})
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["Uniform random arm"]
    with pytest.raises(ValueError, match="no plotted run used; the plotted policies are uniform"):
        regret_figure(db, labels={"unifrom": "typo"})
    # one name for two rows: each also shows its id, so that neither line goes unnamed
    from npbandit.policies import LinUCBPolicy

    run_episode(WheelBanditEnv(delta=0.5, horizon=30), LinUCBPolicy(), seed=0, logger=RunLogger(db),
                run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                          "env_params": {"delta": 0.5, "horizon": 30}})
    fig = regret_figure(db, labels={"uniform": "baseline", "linucb": "baseline"})
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["baseline [linucb]", "baseline [uniform]"]
    path = tmp_path / "r.png"
    assert main(["report", "--db", db, "--plot", str(path), "--label", "uniform=Uniform (baseline)"]) == 0
    assert f"wrote {path}" in capsys.readouterr().out
    assert main(["report", "--db", db, "--plot", str(path), "--label", "uniform"]) == 2
    assert "--label expects POLICY=TEXT" in capsys.readouterr().err
    assert main(["report", "--db", db, "--label", "uniform=U"]) == 2
    assert "it needs --plot" in capsys.readouterr().err
    assert main(["report", "--db", db, "--plot", str(tmp_path / "r.jpg")]) == 2
    out, err = capsys.readouterr()
    assert "--plot must end in .png, .pdf, .svg" in err and out == ""  # refused before the report is printed
    assert main(["report", "--db", db, "--plot", str(tmp_path / "missing" / "r.png")]) == 2
    out, err = capsys.readouterr()
    assert "--plot" in err and "does not exist" in err and len(err.strip().splitlines()) == 1 and out == ""
    with pytest.raises(TypeError, match="path must be a str or path"):
        plot_regret(db, 3)


def test_one_dotted_line_per_distinct_initial_design_size(tmp_path):
    db = str(tmp_path / "runs.db")
    for n_init in (3, 3, 4):
        optimize(_sphere, [[-1.0], [1.0]], surrogate="gp", budget=6, n_init=n_init, db=db, progress=False,
                 optimal_value=0.0)
    fig = regret_figure(db)
    (ax,) = [ax for ax in fig.axes if ax.get_visible()]
    assert sorted(line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == ":") == [3, 4]
    # the two settings are two rows, named by the setting that tells them apart
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "GP (LogEI), initial design 3", "GP (LogEI), initial design 4", "end of initial design"]


@pytest.mark.parametrize("policy,kind,label", [
    ("tnpd-bo-tr-logei", "bo", "TNP-D (trust region, LogEI)"),
    ("cmanp-and-bo-yeo-johnson-tr-qlognei", "bo", "CMANP-AND (Yeo-Johnson warp, trust region, qLogNEI)"),
    ("cmanp-bo-marginal-thompson", "bo", "CMANP (marginal Thompson sampling)"),
    ("gp-ucb", "bo", "GP (UCB)"), ("gp-tr-logei", "bo", "GP (trust region, LogEI)"), ("sobol", "bo", "Sobol search"),
    ("gp-ucb", "bandit", "GP-UCB"), ("uniform", "bandit", "Uniform"), ("linucb", "bandit", "LinUCB"),
    ("lin-ts", "bandit", "Linear TS"),
    ("cmanp-wheel-ucb", "bandit", "CMANP (UCB)"), ("tnpd-wheel-thompson", "bandit", "TNP-D (Thompson sampling)"),
    ("cmanp-gp1d-ucb", "bandit", "CMANP (gp1d prior, UCB)"),
    ("/runs/ft/cmanp-bo-ft.json-logei", "bo", "cmanp-bo-ft (LogEI)"),  # a checkpoint path: its file's stem
    ("tnpd-bo-ft-logei", "bo", "tnpd-bo-ft (LogEI)"),  # a checkpoint of its own name: kept
    ("something-else", "bo", "something-else"), ("-logei", "bo", "-logei"),
])
def test_policy_label_reads_the_parts_of_the_id(policy, kind, label):
    from npbandit.report import policy_label

    assert policy_label(policy, kind) == label


def test_every_model_acquisition_rule_and_warp_has_a_readable_name():
    from npbandit.acquisition.proposal import ACQUISITIONS
    from npbandit.policies.bandit import BASELINES, RULES
    from npbandit.policies.bo import OUTPUT_WARPS
    from npbandit.report.labels import ACQUISITION_NAMES, BASELINE_NAMES, MODEL_NAMES, WARP_NAMES, policy_label
    from npbandit.surrogates import available_models

    assert set(available_models()) <= set(MODEL_NAMES)
    assert set(ACQUISITIONS) | set(RULES) <= set(ACQUISITION_NAMES)
    assert set(OUTPUT_WARPS) <= set(WARP_NAMES)
    assert set(BASELINES) == set(BASELINE_NAMES["bandit"])
    with pytest.raises(ValueError, match="kind must be one of"):
        policy_label("sobol", "optuna")
    with pytest.raises(TypeError, match="policy must be a str"):
        policy_label(3)


def test_importing_the_report_does_not_load_matplotlib():
    import subprocess
    import sys

    code = "import sys, npbandit.report; assert 'matplotlib' not in sys.modules, 'matplotlib loaded'"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_the_report_and_the_cli_s_help_start_without_torch():
    # reading runs needs SQL and numpy; torch loads only for a command that models
    import subprocess
    import sys

    code = ("import sys, npbandit.report, npbandit.storage, npbandit.envs, npbandit.space\n"
            "from npbandit.cli import build_parser, main\n"
            "build_parser(only='report')\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'torch loaded'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "optimize" in out.stdout and "report" in out.stdout  # every command listed


def test_runs_with_env_params_of_the_caller_s_own_shape_are_listed(tmp_path):
    # run_info's env_params are the caller's: a space or bounds in another form is shown as given
    db = str(tmp_path / "runs.db")
    for params in ({"space": [{"name": "lr", "kind": "float"}], "dim": "six"}, {"bounds": "the unit square"},
                   {"bounds": [[0, 0], [1]]}):
        logger = RunLogger(db)
        logger.start(kind="bo", env_id="npbandit/BlackBox-v0", env_params=params, policy="sobol", seed=0)
        logger.log_step(t=0, action=[0.5, 0.5], reward=-1.0)
        logger.finish()
    text = report_text(db)
    assert "the unit square" in text and "'name': 'lr'" in text
    assert len([line for line in text.splitlines() if "sobol" in line]) >= 3


def test_models_prints_a_baseline_under_every_checkpoint_and_one_scale_per_table(capsys):
    from npbandit.surrogates.pretrained import available_checkpoints

    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    tables: list[list[tuple[str, list[float]]]] = []
    for i, line in enumerate(lines):
        if line.startswith("prior "):
            tables.append([])
        name = line.split(" ", 1)[0]
        if name in available_checkpoints():
            baseline = lines[i + 2] if lines[i + 1].startswith("  joint") else lines[i + 1]
            assert baseline.startswith("  N(0, 1)"), (name, baseline)
            tables[-1].append((name, [float(v) for v in baseline.split()[2:]]))
    assert sorted(n for t in tables for n, _ in t) == sorted(available_checkpoints())
    for table in tables:  # one scale per column: the baselines down a column agree
        for column in zip(*(values for _, values in table)):
            assert max(column) - min(column) < 0.01, table
    # one table per prior, output encoding and evaluation tasks: every shipped wheel checkpoint sees symlog
    # rewards, but cmanp-wheel and lbanp-wheel were scored on decision-time (played) histories, tnpd-wheel and
    # cmanp-and-wheel on random drops: their scores must not share a column
    where = {name: i for i, t in enumerate(tables) for name, _ in t}
    assert where["lbanp-wheel"] == where["cmanp-wheel"] != where["tnpd-wheel"] == where["cmanp-and-wheel"]
    assert where["cmanp-bo"] != where["cmanp-wheel"] and where["cmanp-gp1d"] != where["cmanp-bo"]
    # cmanp-bo's card names a default value (near_context_frac=0.0): the same tasks as the other bo cards
    assert where["cmanp-bo"] == where["tnpd-bo"]
    titles = [line for line in lines if line.startswith("prior wheel")]
    assert len(titles) == 2 and sum("evaluated on history=played" in t for t in titles) == 1


def test_models_shows_a_joint_models_joint_score_and_a_partial_runs_schedule():
    from npbandit.cli import models_text
    from npbandit.surrogates.pretrained import read_card

    joint = read_card("cmanp-and-gp1d")
    partial = read_card("tnpd-gp1d")
    partial["training"].update({"steps": 1234, "schedule_steps": 200000})
    lines = models_text([joint, partial]).splitlines()
    row = lines.index(next(line for line in lines if line.startswith("cmanp-and-gp1d")))
    assert lines[row + 1].split()[1:] == [f"{v:.3f}" for v in joint["evaluation"]["joint_log_likelihood"].values()]
    assert lines[row + 1].startswith("  joint") and lines[row + 2].startswith("  N(0, 1)")
    assert "1,234 of 200,000" in next(line for line in lines if line.startswith("tnpd-gp1d"))


def test_models_says_when_a_card_has_no_baseline():
    from npbandit.cli import models_text
    from npbandit.surrogates.pretrained import read_card

    card = read_card("tnpd-gp1d")
    del card["evaluation"]["baseline_log_likelihood"]
    text = models_text([card])
    assert "  N(0, 1)" in text and "predates the baseline" in text
    row = next(line for line in text.splitlines() if line.startswith("  N(0, 1)"))
    assert row.split()[2:] == ["-", "-"]


def test_the_baseline_is_the_standard_normal_log_density_summed_over_outputs():
    import torch

    from npbandit.priors import TaskBatch
    from npbandit.training.evaluation import baseline_log_likelihood

    zeros = TaskBatch(torch.zeros(2, 3, 1), torch.zeros(2, 3, 5), torch.zeros(2, 4, 1), torch.zeros(2, 4, 5), {})
    assert baseline_log_likelihood([zeros]) == pytest.approx(-5 * 0.5 * math.log(2 * math.pi))
    ones = TaskBatch(zeros.xc, zeros.yc, zeros.xt, torch.ones(2, 4, 5), {})
    assert baseline_log_likelihood([zeros, ones]) == pytest.approx(-5 * 0.5 * math.log(2 * math.pi) - 5 * 0.25)
    with pytest.raises(ValueError, match="no evaluation batches"):
        baseline_log_likelihood([])


class _TunedUniform(UniformPolicy):
    """Uniform with a logged setting that does not change what it does: rows must still
    keep its settings apart, as they would for a UCB beta."""

    def __init__(self, beta: float | None) -> None:
        super().__init__()
        self.beta = beta

    def params(self):
        return {**super().params(), **({} if self.beta is None else {"beta": self.beta})}


def test_runs_of_one_policy_with_different_settings_are_different_rows_and_lines(tmp_path):
    db = str(tmp_path / "runs.db")
    info = {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": 0.5, "horizon": 40}}
    for policy in (UniformPolicy(), _TunedUniform(1.0), _TunedUniform(1.0), _TunedUniform(4.0), _TunedUniform(None)):
        run_episode(WheelBanditEnv(delta=0.5, horizon=40), policy, seed=0, logger=RunLogger(db), run_info=info)
    rows = bandit_summary(db)
    # beta=? : the run that logged no beta (as runs logged before a setting was recorded)
    assert {r["label"]: r["runs"] for r in rows} == {"uniform  beta=1": 2, "uniform  beta=4": 1,
                                                     "uniform  beta=?": 2}
    # three Uniform settings: no single normaliser
    assert not any("normalised" in r for r in rows)
    text = report_text(db)
    assert "uniform  beta=4" in text and "uniform  beta=1" in text
    (panel,) = panels(db)
    assert sorted(line.key.text() for line in panel.lines) == sorted(r["label"] for r in rows)


def test_sequential_and_asynchronous_runs_are_different_rows_and_one_setting_is_one_row(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    db = str(tmp_path / "runs.db")
    box = [[-1.0, -1.0], [1.0, 1.0]]
    for seed in (0, 1):
        optimize(_sphere, box, surrogate="random", budget=4, seed=seed, db=db, progress=False)
    with ThreadPoolExecutor(2) as pool:
        optimize(_sphere, box, surrogate="random", budget=4, db=db, progress=False, batch_size=2, executor=pool)
    assert list_runs(db)[-1].env_params["batch_size"] == 2
    rows = bo_summary(db)
    assert {r["label"]: r["runs"] for r in rows} == {"sobol  batch_size=1": 2, "sobol  batch_size=2": 1}
    assert "sobol  batch_size=2" in report_text(db)
    # one setting only: the bare policy name
    db2 = str(tmp_path / "one.db")
    optimize(_sphere, box, surrogate="random", budget=4, db=db2, progress=False)
    assert [r["label"] for r in bo_summary(db2)] == ["sobol"]


def test_stored_text_is_printed_escaped_one_line_per_run(tmp_path):
    from npbandit.storage import RunLogger

    db = str(tmp_path / "runs.db")
    logger = RunLogger(db)
    logger.start(kind="bo", env_id="npbandit/BlackBox-v0", env_params={"function": "branin"},
                 policy="sobol\x1b[2J", seed=0)
    logger.finish("failed", error="boom\n\x1b[31mred")
    text = report_text(db)
    assert "\x1b" not in text
    rows = [line for line in text.splitlines() if line.lstrip().startswith("1 ")]
    assert len(rows) == 1 and "boom\\n\\x1b[31mred" in rows[0] and "sobol\\x1b[2J" in rows[0]


def test_a_run_over_a_search_space_is_its_own_problem_and_its_best_point_is_shown_by_name(tmp_path):
    from npbandit.space import Choice, Float, Int

    db = str(tmp_path / "runs.db")
    space = {"lr": Float(1e-4, 1e-1, log=True), "layers": Int(1, 4), "act": Choice(["relu", "tanh\nx"])}

    def loss(p):
        return abs(math.log10(p["lr"]) + 2) + abs(p["layers"] - 3) + (p["act"] == "relu")

    results = [optimize(loss, space, surrogate="random", budget=6, seed=s, db=db, progress=False, name="tune")
               for s in (0, 1)]
    optimize(loss, {**space, "layers": Int(1, 8)}, surrogate="random", budget=6, db=db, progress=False, name="tune")
    rows = bo_summary(db)
    assert len(rows) == 2  # another range of one parameter is another problem
    best = min(results, key=lambda r: r.best_value)
    assert rows[0]["best_point"]["params"] == best.best_x
    text = report_text(db)
    assert "tune  d=3  lr: float [0.0001, 0.1] log, layers: int [1, 4], act: choice {relu, tanh\\nx}  minimise" in text
    shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v!r}" for k, v in best.best_x.items())
    assert f"best point: run {rows[0]['best_point']['run']}, evaluation" in text and shown.replace("\n", "\\n") in text
    assert all(line.isprintable() for line in text.split("\n"))


def test_panels_of_search_spaces_side_by_side_keep_their_titles_apart(tmp_path):
    """A search space's description is long; each panel's title wraps it within the panel's
    width, whole, rather than running across its neighbours' titles."""
    from npbandit.space import Choice, Float, Int

    db = str(tmp_path / "runs.db")
    space = {"learning_rate": Float(1e-3, 0.5, log=True), "max_iter": Int(20, 200),
             "l2_regularization": Float(1e-6, 10.0, log=True), "max_features": Choice([0.3, 0.6, 1.0])}
    for name in ("first", "second"):
        optimize(lambda p: p["learning_rate"], space, surrogate="random", budget=3, db=db, progress=False, name=name)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = regret_figure(db)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)  # the constrained layout places the titles
    left, right = sorted((ax for ax in fig.axes if ax.get_visible()), key=lambda ax: ax.get_position().x0)
    assert left.title.get_window_extent(renderer).x1 < right.title.get_window_extent(renderer).x0
    described = "learning_rate: float [0.001, 0.5] log, max_iter: int [20, 200], l2_regularization: float " \
                "[1e-06, 10] log, max_features: choice {0.3, 0.6, 1.0}"
    assert described in " ".join(left.get_title().split("\n"))


def test_a_component_logged_with_its_name_is_labelled_by_its_name_and_what_differs(tmp_path):
    """``acq_optimizer`` is logged as ``{"name": ..., <settings>}``: a row shows its name,
    and its settings only where runs of the same name differ in them."""
    from npbandit.acquisition.optimizers import CandidateSearch, GradientRestarts
    from npbandit.report.labels import row_keys

    db = str(tmp_path / "runs.db")
    for acq_optimizer in (GradientRestarts(), CandidateSearch(), CandidateSearch(rounds=2, scale=0.25)):
        optimize(_sphere, [[-1.0], [1.0]], surrogate="gp", budget=4, n_init=3, db=db, progress=False,
                 optimal_value=0.0, acq_optimizer=acq_optimizer)
    assert list_runs(db)[0].policy_params["acq_optimizer"] == GradientRestarts().params()
    assert sorted(r["label"] for r in bo_summary(db)) == [
        "gp-logei  acq_optimizer=candidate-search(rounds=2, scale=0.25)",
        "gp-logei  acq_optimizer=candidate-search(rounds=8, scale=0.1)",
        "gp-logei  acq_optimizer=gradient-restarts"]
    legends = {key.legend() for key in row_keys(list_runs(db)).values()}
    assert "GP (LogEI), acq optimizer gradient-restarts" in legends


def test_a_named_component_absent_from_some_runs_or_of_one_name_throughout():
    from npbandit.report.labels import row_keys
    from npbandit.storage import RunRow

    def run(i, **params):
        return RunRow(id=i, kind="bo", env_id="e", env_params={}, policy="p", surrogate=None,
                      checkpoint_sha256=None, seed=0, status="completed", n_steps=0, started_at=None,
                      finished_at=None, error=None, policy_params=params)

    # same name, settings differ: only the differing one is named; a run that logged none: "?"
    keys = row_keys([run(1, opt={"name": "a", "k": 1, "j": 0}), run(2, opt={"name": "a", "k": 2, "j": 0}),
                     run(3, opt={"name": "b", "k": 1}), run(4)])
    assert [keys[i].text() for i in (1, 2, 3, 4)] == ["p  opt=a(k=1)", "p  opt=a(k=2)", "p  opt=b", "p  opt=?"]
    # one setting throughout: the bare policy id
    keys = row_keys([run(1, opt={"name": "a", "k": 1}), run(2, opt={"name": "a", "k": 1})])
    assert {k.text() for k in keys.values()} == {"p"}


def test_a_subspace_strategy_s_flat_settings_read_as_one_component():
    from npbandit.report.labels import row_keys
    from npbandit.storage import RunRow

    def run(i, **params):
        return RunRow(id=i, kind="bo", env_id="e", env_params={}, policy="p", surrogate=None,
                      checkpoint_sha256=None, seed=0, status="completed", n_steps=0, started_at=None,
                      finished_at=None, error=None, policy_params=params)

    sketch = {"subspace": "count-sketch", "subspace_d_e": 6, "subspace_width": 6}
    redealt = {"subspace": "redealt-sketch", "subspace_d_e": 6, "subspace_phase_start": 40, "subspace_width": 6}
    keys = row_keys([run(1, **sketch), run(2, **redealt), run(3, **redealt, subspace_relevance="concentrated_ard"),
                     run(4)])
    # the strategies by name (not "subspace_phase_start=?" for the count sketch); within one
    # name, the setting that differs; a run without a subspace says nothing of one
    assert [keys[i].text() for i in (1, 2, 3, 4)] == [
        "p  subspace=count-sketch", "p  subspace=redealt-sketch(relevance=?)",
        "p  subspace=redealt-sketch(relevance=concentrated_ard)", "p"]
    assert len({keys[i] for i in (1, 2, 3, 4)}) == 4  # four rows apart



def test_a_component_logged_without_a_name_shows_the_entries_that_differ():
    from npbandit.report.labels import row_keys
    from npbandit.storage import RunRow

    def run(i, **params):
        return RunRow(id=i, kind="bo", env_id="e", env_params={}, policy="branches-p", surrogate=None,
                      checkpoint_sha256=None, seed=0, status="completed", n_steps=0, started_at=None,
                      finished_at=None, error=None, policy_params=params)

    # BranchBOPolicy logs its branches' policy as one dict ("branch"): a row names what differs in it, not all of it
    optimizer = {"name": "candidate-search", "rounds": 8, "scale": 0.1}
    branch = {"acquisition": "logei", "acq_optimizer": optimizer, "n_init": 5, "trust_region_budget": 12}
    keys = row_keys([run(1, branches="model", branch=branch),
                     run(2, branches="model", branch={**branch, "trust_region_budget": 17}),
                     run(3, branches="model", branch={**branch, "acq_optimizer": {**optimizer, "rounds": 2}})])
    assert [keys[i].text() for i in (1, 2, 3)] == [
        "branches-p  branch=(acq_optimizer=candidate-search(rounds=8), trust_region_budget=12)",
        "branches-p  branch=(acq_optimizer=candidate-search(rounds=8), trust_region_budget=17)",
        "branches-p  branch=(acq_optimizer=candidate-search(rounds=2), trust_region_budget=12)"]


def test_a_run_without_a_warm_start_shows_nothing_of_it_and_stays_a_row_apart():
    from npbandit.report.labels import row_keys
    from npbandit.storage import RunRow

    def run(i, **params):
        return RunRow(id=i, kind="bo", env_id="e", env_params={}, policy="p", surrogate=None,
                      checkpoint_sha256=None, seed=0, status="completed", n_steps=0, started_at=None,
                      finished_at=None, error=None, policy_params=params)

    # optimize(initial=...) logs "initial" (how many earlier evaluations) only when given: not "initial=?"
    keys = row_keys([run(1, n_init=3, initial=4), run(2, n_init=3), run(3, n_init=3), run(4, n_init=5, initial=4),
                     run(5, n_init=5)])
    assert [keys[i].text() for i in range(1, 6)] == ["p  initial=4  n_init=3", "p  n_init=3", "p  n_init=3",
                                                     "p  initial=4  n_init=5", "p  n_init=5"]
    assert len(set(keys.values())) == 4  # as before: the runs with and without a warm start are rows apart
    assert [keys[i].legend() for i in (1, 2)] == ["p, warm start 4, initial design 3", "p, initial design 3"]
    # a setting any run logs stays "?" where one did not log it (a run from before it was recorded)
    keys = row_keys([run(1, beta=2.0, initial=4), run(2)])
    assert [keys[i].text() for i in (1, 2)] == ["p  beta=2  initial=4", "p  beta=?"]


def test_a_block_with_failed_evaluations_counts_them(tmp_path):
    db = str(tmp_path / "runs.db")

    def half_fails(x):
        return float("nan") if x[0] > 0 else _sphere(x)

    optimize(half_fails, [[-1.0, -1.0], [1.0, 1.0]], surrogate="random", budget=8, db=db, on_error="skip",
             progress=False, name="half")
    optimize(_sphere, [[-1.0, -1.0], [1.0, 1.0]], surrogate="random", budget=8, db=db, progress=False, name="clean")
    (run,) = [r for r in list_runs(db) if r.env_params["objective"] == "half"]
    failed = sum(s["failed"] for s in run_steps(db, run.id))
    (row,) = [r for r in bo_summary(db) if r["objective"] == "half"]
    assert 0 < failed == row["failed"] and row["steps"] == 8
    text = report_text(db)
    half = text[text.index("half  d=2"):]
    assert "failed" in half.splitlines()[1] and f"{failed}/8" in half.splitlines()[2]
    clean = text[text.index("clean  d=2"):].splitlines()
    assert "failed" not in clean[1]  # no failure in the block: no column


def test_a_space_whose_choices_take_several_columns_says_both_counts(tmp_path):
    from npbandit.space import Choice, Float

    db = str(tmp_path / "runs.db")
    space = {"x": Float(0.0, 1.0), "k": Choice(["a", "b", "c"])}  # 2 parameters, 1 + 3 one-hot columns

    def f(p):
        return p["x"] + (p["k"] == "a")

    optimize(f, space, surrogate="random", budget=3, db=db, progress=False, name="mixed")
    assert "mixed  2 parameters (4 columns)  x: float [0, 1], k: choice {a, b, c}  minimise" in report_text(db)


def test_a_row_with_failed_evaluations_says_why_and_the_runs_list_cuts_an_error_at_a_word(tmp_path):
    db = str(tmp_path / "runs.db")

    def fails(x):
        if x[0] > 0.2:
            raise RuntimeError("simulator crashed: mesh became degenerate near the boundary layer")
        return float("nan") if x[1] > 0.5 else _sphere(x)

    optimize(fails, [[-1.0, -1.0], [1.0, 1.0]], surrogate="random", budget=12, db=db, on_error="skip",
             progress=False, name="fails")
    steps = run_steps(db, list_runs(db)[0].id)
    crashed = sum(s["error_kind"] == "raised" for s in steps)
    returned = sum(s["error_kind"] == "nonfinite" for s in steps)
    assert crashed > 1 and returned > 0  # several points: the point each error names is not part of its reason
    (row,) = bo_summary(db)
    reasons = dict(row["failures"])
    assert reasons == {"objective raised RuntimeError: simulator crashed: mesh became degenerate near the boundary "
                       "layer": crashed, "objective returned nan": returned}
    text = report_text(db)
    assert f"    {crashed} failed: objective raised RuntimeError: simulator crashed: mesh became" in text
    assert f"    {returned} failed: objective returned nan" in text
    with pytest.raises(ObjectiveError):
        optimize(fails, [[0.5, -1.0], [1.0, 1.0]], surrogate="random", budget=2, db=db, progress=False, name="crash")
    (run,) = [r for r in list_runs(db) if r.status == "failed"]
    (line,) = [line for line in report_text(db).splitlines() if line.startswith(f"{run.id:>4}  bo")]
    shown = line[line.index("  (") + 3:-1]  # the run's error, shortened at a word's end
    assert len(shown) <= 72 and shown.endswith("…") and run.error.startswith(shown[:-1])
    assert run.error[len(shown) - 1] in " :,;" and "simulator crashed" in shown


def test_shorten_cuts_after_the_last_whole_word_that_fits():
    from npbandit.text import shorten

    text = "objective raised RuntimeError: simulator crashed"
    assert shorten(text, len(text)) == text
    assert shorten(text, 40) == "objective raised RuntimeError…"
    assert shorten(text, 45) == "objective raised RuntimeError: simulator…"
    assert shorten("abcdefgh", 4) == "abc…"  # one long word: cut inside it
    assert all(len(shorten(text, w)) <= w for w in range(2, 60))
    with pytest.raises(ValueError, match="width must be an int >= 2"):
        shorten(text, 1)


def test_a_run_beating_the_recorded_optimum_is_said_to_mean_a_wrong_optimum_or_noise(tmp_path):
    # on a noisy objective the optimum one records is the noise-free one, which a lucky draw beats
    db = str(tmp_path / "runs.db")
    result = optimize(_sphere, [[-1.0], [1.0]], surrogate="random", budget=4, db=db, progress=False,
                      optimal_value=0.5)
    assert result.best_value < 0.5
    assert ("beat the recorded optimum 0.5: it is not the optimum, or the objective is noisy and an observation "
            "beat it by its noise") in report_text(db)


def test_the_report_says_which_versions_made_its_runs_and_where_they_differ(tmp_path):
    db = str(tmp_path / "runs.db")
    for seed in range(3):
        run_episode(WheelBanditEnv(delta=0.5, horizon=3), UniformPolicy(), seed=seed, logger=RunLogger(db),
                    run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": 0.5}})
    versions = list_runs(db)[0].versions
    assert {"npbandit", "torch", "python", "numpy"} <= set(versions)
    made_with = [line for line in report_text(db).splitlines() if line.startswith("made with")]
    assert made_with == ["made with: " + ", ".join(f"{name} {version}" for name, version in versions.items())]
    with sqlite3.connect(db) as conn:  # run 2 as an older torch made it, run 3 as a run that recorded no versions
        conn.execute("UPDATE runs SET versions = ? WHERE id = 2", (json.dumps({**versions, "torch": "2.0.0"}),))
        conn.execute("UPDATE runs SET versions = '{}' WHERE id = 3")
    lines = report_text(db).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("made with"))
    alike = ", ".join(f"{name} {version}" for name, version in versions.items() if name != "torch")
    assert lines[at:at + 4] == [f"made with (versions differ between runs; alike where recorded: {alike}):",
                                f"  run 1: torch {versions['torch']}", "  run 2: torch 2.0.0",
                                "  run 3: no versions recorded"]
