"""`npbandit report --plot` with runs of several lengths in one panel (a demo's 300 rounds and a
sweep's 2000 at one delta; two budgets on one problem): a policy keeps its colour, each run
length has a dash of its own in every panel, and the legend names the policies once and the
lengths apart, never a bare name beside the same name with a length."""

import numpy as np

from npbandit import optimize
from npbandit.envs import WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.report import regret_figures
from npbandit.storage import RunLogger


class _FirstArm(UniformPolicy):
    name = "first-arm"

    def act(self, obs):
        return 0


def _styles(fig):
    """``{panel title: [(label, colour, dash)]}`` of a figure's drawn curves (markers and
    the dotted initial-design lines aside)."""
    return {ax.get_title(): [(line.get_label(), line.get_color(), line.get_linestyle()) for line in ax.get_lines()
                             if line.get_linestyle() not in ("None", ":")]
            for ax in fig.axes if ax.get_visible()}


def _legend(fig):
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def test_bandit_runs_of_two_lengths_differ_by_dash_and_keep_their_policys_colour(tmp_path):
    db = str(tmp_path / "runs.db")
    for delta, horizon in ((0.5, 12), (0.5, 20), (0.9, 20)):
        for policy in (UniformPolicy(), _FirstArm()):
            run_episode(WheelBanditEnv(delta=delta, horizon=horizon), policy, seed=0, logger=RunLogger(db),
                        run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                  "env_params": {"delta": delta, "horizon": horizon}})
    fig = regret_figures(db)["bandit"]
    assert _legend(fig) == ["first-arm", "Uniform", "12 rounds", "20 rounds"]
    both, longer = _styles(fig).values()
    colour = {label.split(",")[0]: c for label, c, _ in both}
    assert len(set(colour.values())) == 2
    dash = {label.split(", ")[1]: d for label, _, d in both}
    assert len(set(dash.values())) == 2 and set(dash) == {"12 rounds", "20 rounds"}
    for label, c, d in both:
        assert (c, d) == (colour[label.split(",")[0]], dash[label.split(", ")[1]])
    # the panel of one length draws its 20 rounds with the 20 rounds' dash, as the legend says
    assert [(label, c, d) for label, c, d in longer] == [
        ("first-arm", colour["first-arm"], dash["20 rounds"]), ("Uniform", colour["Uniform"], dash["20 rounds"])]
    # the legend's samples are as drawn: a policy's colour (solid), a length's dash (grey)
    (legend,) = fig.legends
    handles = dict(zip(_legend(fig), legend.legend_handles))
    assert handles["Uniform"].get_color() == colour["Uniform"]
    assert handles["12 rounds"].get_linestyle() == dash["12 rounds"]


def test_runs_of_one_length_per_panel_keep_a_colour_and_dash_per_policy(tmp_path):
    db = str(tmp_path / "runs.db")
    for delta, horizon in ((0.5, 12), (0.9, 20)):
        for policy in (UniformPolicy(), _FirstArm()):
            run_episode(WheelBanditEnv(delta=delta, horizon=horizon), policy, seed=0, logger=RunLogger(db),
                        run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                  "env_params": {"delta": delta, "horizon": horizon}})
    fig = regret_figures(db)["bandit"]
    assert _legend(fig) == ["first-arm", "Uniform"]  # each panel's title names its length
    first, second = _styles(fig).values()
    assert first == second and len({d for _, _, d in first}) == 2


def test_black_box_runs_of_two_budgets_differ_by_dash(tmp_path):
    db = str(tmp_path / "runs.db")
    for budget in (3, 5):
        for surrogate in ("random", "gp"):
            optimize(lambda x: float(np.sum(np.asarray(x) ** 2)), [[-1.0], [1.0]], surrogate=surrogate,
                     budget=budget, db=db, progress=False, name="sphere", n_init=2)
    fig = regret_figures(db)["bo-value"]
    assert _legend(fig) == ["GP (LogEI)", "Sobol search", "budget 3", "budget 5", "end of initial design"]
    (lines,) = _styles(fig).values()
    assert len({(c, d) for _, c, d in lines}) == 4
    assert len({c for _, c, _ in lines}) == 2 and len({d for _, _, d in lines}) == 2
