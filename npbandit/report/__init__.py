"""`npbandit report`: tables of runs and regret from a database, and regret figures.

A row of a table (a line of a figure) only puts together runs that are comparable:

- bandits: one *setting* -- the environment and the parameters that define its task
  (:class:`BanditSetting`: the wheel's ``delta``, a classification data set's name, a
  linear bandit's width, arms and noise, every recorded parameter of an environment of
  one's own) -- and one run length. *Simple regret* is the mean per-round regret over
  the last quarter of each run (:data:`SIMPLE_REGRET_SHARE`).
- black-box optimisation: one *problem* -- objective name, input dimension, bounds and
  direction (:class:`Problem`) -- and one budget; *simple regret* is the gap between the
  best value found and the optimum the runs recorded, when they did. A problem of several
  objectives (each objective's direction recorded, ``minimize`` a list) has no best value:
  its runs are measured by the *hypervolume* of their feasible Pareto fronts, against one
  reference point for every run of the problem (:mod:`~npbandit.report.hypervolume`).

Within one of these, a row is one policy *with one setting*: runs of one policy whose
logged settings differ are separate rows, labelled with the settings that tell them apart
(``gp-ucb  beta=2``, ``gp-ucb  beta=4``; ``?`` where a run logged before a setting was
recorded; nothing for a setting logged only when used, as ``initial`` or ``subspace``:
``gp-logei`` beside ``gp-logei  initial=4``). A run that continued another
(``optimize(initial=RUN_ID)``) is listed with the run it continues and how many points it
was given, and its figure line counts its evaluations from those points, starting at their
best (:mod:`~npbandit.report.curves`).

Modules: :mod:`~npbandit.report.grouping` (what is comparable), :mod:`~npbandit.report.labels`
(how a row is named in tables and legends), :mod:`~npbandit.report.summary` (the tables),
:mod:`~npbandit.report.hypervolume` (how runs of several objectives are measured),
:mod:`~npbandit.report.curves` (the figures' data) and :mod:`~npbandit.report.figures`
(the figures; matplotlib is imported only when one is drawn).
"""

from npbandit.report.figures import (
                                     FIGURE_FORMATS,
                                     LINESTYLES,
                                     check_figure_path,
                                     figure_paths,
                                     plot_regret,
                                     regret_figure,
                                     regret_figures,
)
from npbandit.report.grouping import SIMPLE_REGRET_SHARE, BanditSetting, Problem, bandit_setting
from npbandit.report.labels import policy_label
from npbandit.report.summary import bandit_summary, bo_summary, report_text

__all__ = ["report_text", "bandit_summary", "bo_summary", "plot_regret", "regret_figure", "regret_figures",
           "figure_paths", "check_figure_path", "policy_label", "Problem", "BanditSetting", "bandit_setting",
           "SIMPLE_REGRET_SHARE", "FIGURE_FORMATS", "LINESTYLES"]
