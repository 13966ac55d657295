"""experiments/probes/compare_runs.py pairs the runs of two databases and finds their first differing step."""

import importlib.util
import io
from pathlib import Path

import pytest

from npbandit.storage import RunLogger

pytestmark = pytest.mark.lab

SCRIPT = Path(__file__).resolve().parents[1] / "probes" / "compare_runs.py"


@pytest.fixture(scope="module")
def probe():
    spec = importlib.util.spec_from_file_location("probes_compare_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _log_run(db, *, seed, values, policy="gp", kind="bo", env_params=None, actions=None):
    """One run of ``len(values)`` steps: action [0.1 t, 0.5], the value, reward -value."""
    with RunLogger(str(db)) as logger:
        logger.start(kind=kind, env_id="branin", env_params=env_params or {"dim": 2}, policy=policy,
                     policy_params={"n_init": 2}, seed=seed)
        best = float("inf")
        for t, value in enumerate(values):
            best = min(best, value)
            action = [0.1 * t, 0.5] if actions is None else actions[t]
            logger.log_step(t=t, action=action, value=value, reward=-value, best_value=best, act_s=0.01 * t)


def _two_dbs(tmp_path, runs_a, runs_b):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for db, runs in ((a, runs_a), (b, runs_b)):
        for run in runs:
            _log_run(db, **run)
    return str(a), str(b)


def _compare(probe, a, b, rtol=0.0):
    out = io.StringIO()
    status = probe.compare(a, b, rtol, out=out)
    return status, out.getvalue().splitlines()


VALUES = [3.0, 1.0 / 3.0, 2.5e-7, 0.1 + 0.2]


def test_identical_runs_are_paired_by_seed_and_policy_whatever_their_order(probe, tmp_path):
    runs = [dict(seed=0, values=VALUES), dict(seed=1, values=VALUES[::-1]), dict(seed=0, values=VALUES, policy="sobol")]
    a, b = _two_dbs(tmp_path, runs, runs[::-1])  # B's run ids are in the opposite order
    status, lines = _compare(probe, a, b)
    assert status == 0
    assert sum(line.startswith("identical") for line in lines) == 3
    assert lines[-1] == "3 of 3 identical (exactly); 0 unpaired"


def test_the_first_differing_step_is_reported_and_exits_1(probe, tmp_path):
    changed = VALUES[:2] + [VALUES[2] * (1 + 1e-15)] + VALUES[3:]  # one ulp-scale change at t=2
    a, b = _two_dbs(tmp_path, [dict(seed=0, values=VALUES), dict(seed=1, values=VALUES)],
                    [dict(seed=0, values=VALUES), dict(seed=1, values=changed)])
    status, lines = _compare(probe, a, b)
    assert status == 1
    differs = [line for line in lines if line.startswith("DIFFERS")]
    assert len(differs) == 1 and "seed=1" in differs[0]
    assert "first differing step t=2: value" in differs[0]
    assert lines[-1] == "1 of 2 identical (exactly); 0 unpaired"
    # within a relative tolerance the same pair counts as identical
    status, lines = _compare(probe, a, b, rtol=1e-12)
    assert status == 0 and lines[-1] == "2 of 2 identical (to rtol=1e-12); 0 unpaired"


def test_a_differing_action_and_a_shorter_run_are_differences(probe, tmp_path):
    actions = [[0.1 * t, 0.5] for t in range(4)]
    actions[1] = [0.1, 0.5000001]
    a, b = _two_dbs(tmp_path, [dict(seed=0, values=VALUES), dict(seed=1, values=VALUES)],
                    [dict(seed=0, values=VALUES, actions=actions), dict(seed=1, values=VALUES[:3])])
    status, lines = _compare(probe, a, b)
    assert status == 1
    assert any("seed=0" in line and "first differing step t=1: action" in line for line in lines)
    assert any("seed=1" in line and "A has 4 steps, B 3" in line for line in lines)
    assert lines[-1].startswith("0 of 2 identical")


def test_a_run_without_partner_fails_the_comparison(probe, tmp_path):
    a, b = _two_dbs(tmp_path, [dict(seed=0, values=VALUES), dict(seed=1, values=VALUES)],
                    [dict(seed=0, values=VALUES), dict(seed=0, values=VALUES, env_params={"dim": 3})])
    status, lines = _compare(probe, a, b)
    assert status == 1
    assert sum(line.startswith("unpaired in A") for line in lines) == 1
    assert sum(line.startswith("unpaired in B") for line in lines) == 1
    assert lines[-1] == "1 of 1 identical (exactly); 2 unpaired"


def test_equal_treats_nan_as_equal_and_bools_apart_from_numbers(probe):
    nan = float("nan")
    assert probe.equal([1.0, nan, {"a": nan}], [1.0, nan, {"a": nan}])
    assert not probe.equal(True, 1.0)
    assert not probe.equal(None, 0.0)
    assert not probe.equal([1.0], [1.0, 2.0])
    assert probe.equal(1.0, 1.0 + 1e-13, rtol=1e-12) and not probe.equal(1.0, 1.0 + 1e-13)


def test_the_command_line_exits_with_the_status(probe, tmp_path, capsys):
    a, b = _two_dbs(tmp_path, [dict(seed=0, values=VALUES)], [dict(seed=0, values=VALUES)])
    assert probe.main([a, b]) == 0
    assert "1 of 1 identical" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        probe.main([a, b, "--rtol", "-1"])


def test_runs_of_two_versions_pair_without_a_new_env_parameter_and_compare_by_their_steps(probe, tmp_path):
    # a later version records env parameter "space" and more policy settings: paired and identical
    # only when told to leave the parameter out and to compare the steps alone
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    _log_run(a, seed=0, values=VALUES)
    with RunLogger(str(b)) as logger:
        logger.start(kind="bo", env_id="branin", env_params={"dim": 2, "space": {"x0": "float"}}, policy="gp",
                     policy_params={"n_init": 2, "constrained": False}, seed=0)
        best = float("inf")
        for t, value in enumerate(VALUES):
            best = min(best, value)
            logger.log_step(t=t, action=[0.1 * t, 0.5], value=value, reward=-value, best_value=best, act_s=0.0)
    assert _compare(probe, str(a), str(b))[1][-1] == "0 of 0 identical (exactly); 2 unpaired"
    out = io.StringIO()
    assert probe.compare(str(a), str(b), ignore_env=("space",), out=out) == 1  # the settings differ
    out = io.StringIO()
    assert probe.compare(str(a), str(b), ignore_env=("space",), steps_only=True, out=out) == 0
    assert out.getvalue().splitlines()[-1] == "1 of 1 identical (exactly); 0 unpaired"
    assert probe.main([str(a), str(b), "--ignore-env", "space", "--steps-only"]) == 0
