import subprocess
import sys

import pytest

from npbandit.cli import main
from npbandit.demo import run_demo


def test_demo_streams_exactly_and_keeps_state_constant():
    report = run_demo(n_initial=200, n_updates=40, size="tiny", verbose=False)
    assert report.max_abs_diff < 1e-4
    small = run_demo(n_initial=10, n_updates=40, size="tiny", verbose=False)
    assert report.state_floats == small.state_floats
    assert report.data_floats == 480


def test_cli_demo_prints_what_happened(capsys):
    assert main(["demo", "--streaming", "--n-initial", "50", "--n-updates", "20", "--size", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "single-point updates" in out and "max |difference|" in out


def test_cli_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--n-updates", "0"])
    assert main(["demo", "--streaming", "--n-updates", "5", "--size", "tiny"]) == 2


def test_console_script_is_installed():
    out = subprocess.run([sys.executable, "-m", "npbandit.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("npbandit ")
