"""A continued run conditions on everything the run it continues saw: the points that run was
given (followed back through a chain of continuations) and its own evaluations, by the API
(``optimize(initial=run_id)``) as by the CLI (``--initial-from``); a broken chain is refused
naming the argument."""

import json
import sqlite3

import numpy as np
import pytest

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
    with pytest.raises(TypeError, match="initial must be a run's id"):
        run_evaluations(db, "3")
    _set_policy_params(db, second.run_id, initial_from=7)
    with pytest.raises(ValueError, match="initial=3: run 3, which continues run 2, which continues run 7, but .* "
                                         "holds no black-box run 7: the 3 points run 2 was given cannot be read"):
        _run(db, 1, initial=third.run_id)
    _set_policy_params(db, second.run_id, initial_from=1, initial=4)  # more than run 1 holds
    with pytest.raises(ValueError, match="initial=3: run 2 was given 4 evaluations of run 1, which holds 3 now"):
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
