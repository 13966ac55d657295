"""``npbandit bandit`` and ``npbandit optimize`` end with one line naming the database their
runs went to (its password hidden) and the command that shows them, as ``npbandit demo``
ends with the report: always, on stdout, the last line."""

from npbandit.cli import main
from npbandit.cli.options import results_line


def test_a_bandit_sweep_ends_naming_its_database_and_the_report_command(tmp_path, capsys):
    db = str(tmp_path / "my runs.db")
    assert main(["bandit", "--policies", "uniform", "--steps", "2", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run 1: uniform") and len(lines) == 2
    assert lines[-1] == f"runs saved in {db}; see them with: npbandit report --db '{db}'"
    # all skipped (the database holds them): still where they are
    assert main(["bandit", "--policies", "uniform", "--steps", "2", "--db", db]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == lines[-1]


def test_an_optimize_run_ends_naming_its_database_and_the_default_one_is_not_repeated(tmp_path, capsys,
                                                                                      monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "2", "--seed", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run 1: best value ")
    assert lines[-1] == "runs saved in sqlite:///npbandit.db; see them with: npbandit report"


def test_a_password_is_never_shown():
    line = results_line("postgresql+psycopg://me:secret@host/runs")
    assert "secret" not in line
    assert line == ("runs saved in postgresql+psycopg://me:***@host/runs; see them with: npbandit report --db "
                    "'postgresql+psycopg://me:***@host/runs'")
