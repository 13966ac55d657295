"""A continued run conditions on everything the run it continues saw: the points that run was
given (followed back through a chain of continuations) and its own evaluations, by the API
(``optimize(initial=run_id)``) as by the CLI (``--initial-from``); a broken chain is refused
naming the argument."""

import dataclasses
import json
import re
import sqlite3

import numpy as np
import pytest
import torch

from npbandit import optimize
from npbandit.cli import main
from npbandit.storage import list_runs, run_evaluations, run_steps

BOX = [[-1.0, 0.0], [1.0, 2.0]]


def _sphere(x):
    return float(np.sum((np.asarray(x) - 0.5) ** 2))


def _run(db, budget, initial=None, **kwargs):
    return optimize(_sphere, BOX, surrogate="random", budget=budget, seed=0, db=db, progress=False,
                    initial=initial, **kwargs)


def _chain(db):
    """Run 1 (3 evaluations), run 2 continuing it (2), run 3 continuing run 2 (2)."""
    first = _run(db, 3)
    second = _run(db, 2, initial=first.run_id)
    third = _run(db, 2, initial=second.run_id)
    return first, second, third


def _set_policy_params(db, run_id, **params):
    """Rewrite a run's recorded policy settings (what a damaged or hand-edited database holds)."""
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT policy_params FROM runs WHERE id = ?", (run_id,)).fetchone()
        conn.execute("UPDATE runs SET policy_params = ? WHERE id = ?",
                     (json.dumps({**json.loads(text), **params}), run_id))


def test_a_run_continuing_a_continuation_sees_the_whole_chain(tmp_path):
    db = str(tmp_path / "runs.db")
    first, second, third = _chain(db)
    runs = {r.id: r for r in list_runs(db)}
    assert runs[second.run_id].policy_params["initial"] == 3
    assert runs[third.run_id].policy_params["initial"] == 5  # run 1's three and run 2's two
    assert runs[third.run_id].policy_params["initial_from"] == second.run_id
    seen = run_evaluations(db, third.run_id)
    assert [s["run_id"] for s in seen] == [1, 1, 1, 2, 2, 3, 3] and seen.run_id == third.run_id
    assert [s["t"] for s in seen] == [0, 1, 2, 0, 1, 0, 1]
    # none of run 1's points was evaluated again by run 3's design (it was, when run 3 saw run 2's only)
    assert not {tuple(np.asarray(h["x"]).tolist()) for h in first.history} & {
        tuple(np.asarray(h["x"]).tolist()) for h in third.history}
    # a RunRow is the same as its id; run_steps stays a run's own steps
    assert [s["run_id"] for s in run_evaluations(db, runs[third.run_id])] == [s["run_id"] for s in seen]
    assert [s["run_id"] for s in run_steps(db, third.run_id)] == [3, 3]


def test_a_continued_run_keeps_its_policy_s_name(tmp_path):
    """The run's policy is recorded by its own name whatever form ``initial`` took (not by what
    the evaluations were given as), so the report's rows and labels keep policies apart."""
    db = str(tmp_path / "runs.db")
    first = _run(db, 3)
    _run(db, 2, initial=first.run_id)
    _run(db, 2, initial=first.history)
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "2", "--db", db]) == 0
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "2", "--db", db,
                 "--initial-from", "4"]) == 0
    assert [r.policy for r in list_runs(db)] == ["sobol"] * 5


def test_the_cli_follows_the_chain_as_the_api_does(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    base = ["optimize", "--function", "branin", "--surrogate", "random", "--budget", "2", "--db", db]
    assert main([*base]) == 0
    assert main([*base, "--initial-from", "1"]) == 0
    assert main([*base, "--initial-from", "2"]) == 0
    third = list_runs(db)[-1]
    assert third.policy_params["initial"] == 4 and third.policy_params["initial_from"] == 2
    assert [s["run_id"] for s in run_evaluations(db, third.id)] == [1, 1, 2, 2, 3, 3]
    capsys.readouterr()
    _set_policy_params(db, 1, initial=2, initial_from=3)  # a cycle: 3 -> 2 -> 1 -> 3
    assert main([*base, "--initial-from", "3"]) == 2
    assert ("--initial-from 3: the runs' records go round in a cycle: run 3, which continues run 2, which "
            "continues run 1, which continues run 3 again") in capsys.readouterr().err


def test_a_broken_chain_is_refused_naming_the_argument(tmp_path):
    db = str(tmp_path / "runs.db")
    first, second, third = _chain(db)
    with pytest.raises(ValueError, match="initial=9: .* holds no black-box run 9"):
        _run(db, 1, initial=9)
    with pytest.raises(ValueError, match="initial=3: that run's minimize is True, this one's False"):
        _run(db, 1, initial=third.run_id, minimize=False)
    with pytest.raises(ValueError, match="initial=3 names a run of db, but db is None"):
        _run(None, 1, initial=third.run_id)
    with pytest.raises(TypeError, match="run must be a run's id"):
        run_evaluations(db, "3")
    _set_policy_params(db, second.run_id, initial_from=7)
    with pytest.raises(ValueError, match="initial=3: run 3, which continues run 2, which continues run 7, but .* "
                                         "holds no black-box run 7: the 3 points run 2 was given cannot be read"):
        _run(db, 1, initial=third.run_id)
    _set_policy_params(db, second.run_id, initial_from=1, initial=4)  # more than run 1 holds
    with pytest.raises(ValueError, match="run=3: run 2 was given 4 evaluations of run 1, which holds 3 now"):
        run_evaluations(db, third.run_id)
    _set_policy_params(db, second.run_id, initial_from=second.run_id, initial=3)
    with pytest.raises(ValueError, match="cycle: run 3, which continues run 2, which continues run 2 again"):
        run_evaluations(db, third.run_id)


def test_a_run_given_pairs_is_continued_from_its_own_evaluations_with_a_warning(tmp_path):
    db = str(tmp_path / "runs.db")
    pairs = [([0.0, 1.0], 0.5), ([0.5, 0.5], 0.0)]
    earlier = _run(db, 2, initial=pairs)
    assert "initial_from" not in list_runs(db)[0].policy_params
    with pytest.warns(UserWarning, match="initial=1: run 1 was given 2 points in a form no run holds"):
        later = _run(db, 1, initial=earlier.run_id)
    assert list_runs(db)[-1].policy_params["initial"] == 2  # run 1's own two; the pairs are not in the database
    assert later.run_id == 2


def _inside(x):
    return [float(np.sum((np.asarray(x) - 0.5) ** 2) - 0.5)]


def _two(x):
    return [float(x[0]), float(x[1]) - 1.0]


def test_a_constrained_run_is_continued_only_with_the_same_constraints(tmp_path):
    db = str(tmp_path / "runs.db")
    constrained = _run(db, 3, constraints=_inside)
    plain = _run(db, 3)
    label = f"'{__name__}:_inside'"
    for given, theirs, mine in ((_two, label, f"'{__name__}:_two'"), (None, label, "none")):
        with pytest.raises(ValueError, match=f"initial=1: that run's constraints are {theirs}, this one's {mine} "
                                             r"\(a run continues only a run of the same problem\)"):
            _run(db, 1, initial=constrained.run_id, constraints=given)
    with pytest.raises(ValueError, match=f"initial=2: that run's constraints are none, this one's {label}"):
        _run(db, 1, initial=plain.run_id, constraints=_inside)
    later = _run(db, 1, initial=constrained.run_id, constraints=_inside)  # the same constraints go on
    assert list_runs(db)[-1].policy_params["initial"] == 3 and len(later.history) == 1
    # a history or a run's steps say whether their run had constraints: the other kind is refused
    for steps in (constrained.history, run_steps(db, constrained.run_id)):
        with pytest.raises(ValueError, match=r"initial\[0\]: the entry holds constraint values \[.*\] \(its run had "
                                             "constraints\\), this run has none .*give them as \\(x, value\\) pairs"):
            _run(None, 1, initial=steps)
    for steps in (plain.history, run_steps(db, plain.run_id)):
        with pytest.raises(ValueError, match=r"initial\[0\]: the entry holds no constraint values \(its run had no "
                                             r"constraints\), this run has constraints .*\(x, value, constraints\)"):
            _run(None, 1, initial=steps, constraints=_inside)


def test_the_cli_continues_a_constrained_run_only_with_its_constraints(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    base = ["optimize", "--objective", f"{__name__}:_sphere", "--bounds", json.dumps(BOX), "--surrogate", "random",
            "--db", db]
    assert main([*base, "--budget", "3", "--constraints", f"{__name__}:_inside"]) == 0
    capsys.readouterr()
    assert main([*base, "--budget", "1", "--initial-from", "1"]) == 2
    assert (f"--initial-from 1: that run's --constraints are '{__name__}:_inside', this one's none"
            in capsys.readouterr().err)
    assert main([*base, "--budget", "1", "--initial-from", "1", "--constraints", f"{__name__}:_inside"]) == 0


_CALLS = []


def _later_is_better(x):
    """Each call lower than the one before (whatever the point): a continuation's evaluations
    beat those of the run it continues."""
    _CALLS.append(x)
    return -float(len(_CALLS))


def test_the_cli_says_when_the_run_it_continues_found_better(tmp_path, capsys):
    """A continued run's result line is its own evaluations' best; when an evaluation it
    continues (its given points) was better, the next line says so, with where it was."""
    db = str(tmp_path / "runs.db")
    base = ["optimize", "--objective", f"{__name__}:_sphere", "--bounds", json.dumps(BOX), "--surrogate", "random",
            "--db", db]
    assert main([*base, "--budget", "6"]) == 0
    capsys.readouterr()
    assert main([*base, "--budget", "1", "--initial-from", "1"]) == 0
    out = capsys.readouterr().out
    best = min(run_steps(db, 1), key=lambda s: s["value"])
    assert run_steps(db, 2)[0]["value"] > best["value"]  # the one new evaluation did not improve
    point = ", ".join(f"{k}={v:.4g}" for k, v in best["params"].items())
    assert (f"better among the 6 evaluations it continues: value {best['value']:.6g} at {point} (run 1, evaluation "
            f"{best['t']})") in out
    # a continuation that found the best itself says nothing more
    later = [*base[:2], f"{__name__}:_later_is_better", *base[3:]]
    assert main([*later, "--budget", "3"]) == 0
    assert main([*later, "--budget", "1", "--initial-from", "3"]) == 0
    assert "better among" not in capsys.readouterr().out


class _Limits:
    """Constraints returning ``k`` values: every instance's label is its class's, so two counts
    pass for the same constraints in a run's record."""

    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return [float(np.sum(x)) - 1.0] * self.k


_one_limit, _two_limits = _Limits(1), _Limits(2)


def test_a_continued_run_whose_constraints_return_another_count_is_refused(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    earlier = _run(db, 3, constraints=_one_limit)
    triples = [(h["x"], h["value"], [*h["constraints"], 0.0]) for h in earlier.history]  # two values each
    for initial, given, returned in ((earlier.history, "1 constraint value", 2), (triples, "2 constraint values", 1),
                                     (earlier.run_id, "1 constraint value", 2)):
        k = 2 if returned == 2 else 1
        named = f"initial={initial}" if isinstance(initial, int) else "initial"
        with pytest.raises(ValueError, match=rf"^{named}: each earlier evaluation carries {given}, but this run's "
                                             rf"constraints returned {returned} \(a run continues only a run of the "
                                             r"same problem\)"):
            _run(db if isinstance(initial, int) else None, 2, initial=initial, constraints=_Limits(k))
    # the evaluation that told is saved, and the run recorded as failed
    refused = list_runs(db)[-1]
    assert refused.status == "failed" and len(run_steps(db, refused.id)) == 1
    assert len(_run(None, 1, initial=earlier.history, constraints=_Limits(1)).history) == 1  # the same count goes on
    # the command line names its option
    base = ["optimize", "--objective", f"{__name__}:_sphere", "--bounds", json.dumps(BOX), "--surrogate", "random",
            "--db", db, "--budget", "1", "--initial-from", str(earlier.run_id)]
    capsys.readouterr()
    assert main([*base, "--constraints", f"{__name__}:_two_limits"]) == 2
    assert (f"--initial-from {earlier.run_id}: each earlier evaluation carries 1 constraint value, but this run's "
            "constraints returned 2" in capsys.readouterr().err)
    assert main([*base, "--constraints", f"{__name__}:_one_limit"]) == 0


def test_a_run_row_of_another_database_is_refused(tmp_path):
    one, other = str(tmp_path / "one.db"), str(tmp_path / "other.db")
    _run(one, 3)
    _run(other, 2)
    with pytest.raises(ValueError, match=r"initial=1: the RunRow given is not run 1 of .*other\.db: its "
                                         r"(started_at|env_params\['budget'\]) is .*, that run's .* \(was it read "
                                         r"from another database\?"):
        _run(other, 1, initial=list_runs(one)[0])
    _run(one, 1, initial=list_runs(one)[0])  # its own database's row goes on
    assert list_runs(one)[-1].policy_params["initial_from"] == 1
    with pytest.raises(ValueError, match=r"initial=3: .*one\.db holds no black-box run 3 \(was the RunRow read from "
                                         "another database"):
        _run(one, 1, initial=dataclasses.replace(list_runs(other)[0], id=3))


def test_a_lambda_s_run_whose_line_moved_says_how_to_go_on(tmp_path):
    db = str(tmp_path / "runs.db")
    first = optimize(lambda x: float(np.sum(x)), BOX, surrogate="random", budget=3, db=db, progress=False)
    label = list_runs(db)[0].env_params["objective"]
    assert "<lambda>@test_warm_start.py:" in label

    def moved(**kwargs):
        return optimize(lambda x: float(np.sum(x)), BOX, surrogate="random", budget=1, db=db, progress=False,
                        **kwargs)

    with pytest.raises(ValueError, match=r"a lambda's label holds its file and line, .*pass name='.*<lambda>@.*' "
                                         r".*initial=run_evaluations\(db, 1\)"):
        moved(initial=first.run_id)
    moved(initial=first.run_id, name=label)  # named as that run was, it goes on
    moved(initial=run_evaluations(db, first.run_id))  # its evaluations, not its id, are checked as pairs are
    assert [r.policy_params.get("initial_from") for r in list_runs(db)] == [None, 1, 1]


def test_run_evaluations_names_its_run_and_the_warning_points_at_the_caller(tmp_path):
    db = str(tmp_path / "runs.db")
    _run(db, 1)
    with pytest.raises(ValueError, match="^run=6: .* holds no black-box run 6"):
        run_evaluations(db, 6)
    _run(db, 1, initial=[([0.0, 1.0], 0.5)])  # run 2: given a pair, which no run holds
    with pytest.warns(UserWarning, match="run 2 was given 1 point in a form no run holds") as caught:
        _run(db, 1, initial=2)
    assert [w.filename for w in caught if "no run holds" in str(w.message)] == [__file__]


def test_a_result_continues_its_run_in_its_database_and_gives_its_history_elsewhere(tmp_path):
    db = str(tmp_path / "runs.db")
    first, second, _ = _chain(db)
    assert second.db == db and "runs.db" not in repr(second)  # a URL can hold a password: not printed
    by_result = _run(db, 2, initial=second)  # as initial=second.run_id: the whole chain, and the link recorded
    row = {r.id: r for r in list_runs(db)}[by_result.run_id]
    assert row.policy_params["initial_from"] == second.run_id and row.policy_params["initial"] == 5
    other = str(tmp_path / "other.db")  # another database holds no run of it: its own history, no link
    elsewhere = _run(other, 2, initial=second)
    row = {r.id: r for r in list_runs(other)}[elsewhere.run_id]
    assert "initial_from" not in row.policy_params and row.policy_params["initial"] == 2
    unrecorded = optimize(_sphere, BOX, surrogate="random", budget=3, seed=1, db=None, progress=False)
    assert unrecorded.db is None and unrecorded.run_id is None
    given = _run(db, 2, initial=unrecorded)  # no run of it anywhere: its history
    row = {r.id: r for r in list_runs(db)}[given.run_id]
    assert "initial_from" not in row.policy_params and row.policy_params["initial"] == 3


def test_a_warm_start_value_may_be_a_one_element_array_and_a_point_may_not_hold_bools():
    from npbandit.warm_start import initial_points

    box = np.array([[0.0, 0.0], [1.0, 1.0]])
    read = initial_points([([0.1, 0.2], np.array([0.5])), ([0.3, 0.4], torch.tensor(0.25))], box, None, True)
    assert [reward for _, reward, _, _ in read] == [-0.5, -0.25]
    for value in (np.array([0.5, 0.6]), "0.5", np.array([np.nan])):
        with pytest.raises(ValueError, match=r"initial\[0\]: the value must be a finite real number"):
            initial_points([([0.1, 0.2], value)], box, None, True)
    for point, where in (([True, 0.2], "x[0]"), ({"x0": 0.1, "x1": False}, "x['x1']")):
        with pytest.raises(ValueError, match=rf"initial\[0\]: x must be a point of real numbers, got a bool at "
                                             rf"{re.escape(where)}"):
            initial_points([(point, 1.0)], box, None, True)


def test_x_and_y_given_as_lists_are_refused_saying_that_arrays_are_needed():
    from npbandit.warm_start import initial_points

    box = np.array([[0.0, 0.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match=r"initial=\(X, Y\) reads X and Y as arrays: give numpy arrays or tensors"):
        initial_points(([[0.1, 0.2], [0.3, 0.4]], [0.5, 0.6]), box, None, True)
    pairs = initial_points((([0.1, 0.2], 0.5), ([0.3, 0.4], 0.6)), box, None, True)  # two pairs, as a tuple
    assert [reward for _, reward, _, _ in pairs] == [-0.5, -0.6]
