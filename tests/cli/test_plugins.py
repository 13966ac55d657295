"""``--plugin MODULE``: the commands that name surrogate families, priors or checkpoints
import the user's modules first, so that what they register can be named there."""

import json
import sys
import textwrap

import pytest
from helpers import restored_registries

import npbandit.surrogates as surrogates
from npbandit.cli import main
from npbandit.priors import PRIORS
from npbandit.storage import list_runs

#: a plugin registering a family (TNP-D under another name) and a prior (tests/helpers.py's Lines, renamed)
PLUGIN = textwrap.dedent('''
    from helpers import Lines

    from npbandit.priors import register_prior
    from npbandit.surrogates import TNPD, register_model


    @register_model
    class PluginTNPD(TNPD):
        name = "plugin-tnpd"


    @register_prior
    class PluginLines(Lines):
        name = "plugin-lines"
''')


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The plugin written as ``tmp_path/npbandit_test_plugin.py`` (importable by that name
    too); the registries and ``sys.modules`` as they were once the test is over."""
    path = tmp_path / "npbandit_test_plugin.py"
    path.write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    with restored_registries():
        yield path
    sys.modules.pop(path.stem, None)


def _train(out, *plugins):
    return main(["train", *plugins, "--model", "plugin-tnpd", "--prior", "plugin-lines", "--size", "tiny",
                 "--steps", "2", "--eval-every", "2", "--eval-batches", "1", "--final-eval-batches", "1",
                 "--out", str(out), "--threads", "1"])


@pytest.mark.parametrize("by", ["path", "name"])
def test_train_takes_the_family_and_the_prior_a_plugin_registers(plugin, tmp_path, capsys, by):
    assert _train(tmp_path / "none") == 2  # not registered without it
    assert "plugin-tnpd" in capsys.readouterr().err
    given = str(plugin) if by == "path" else plugin.stem
    assert _train(tmp_path / "run", "--plugin", given) == 0
    card = json.loads((tmp_path / "run" / "plugin-tnpd-plugin-lines.json").read_text())
    assert card["model"] == "plugin-tnpd" and card["prior"]["name"] == "plugin-lines"
    # given twice, and by path after by name: imported once, nothing registered a second time
    assert _train(tmp_path / "again", "--plugin", plugin.stem, "--plugin", str(plugin)) == 0


def test_optimize_loads_a_checkpoint_of_the_family_a_plugin_registers(plugin, tmp_path, capsys):
    from helpers import tiny_checkpoint

    from npbandit.cli.options import import_plugins

    (module,) = import_plugins([plugin.stem])  # the family, to save a checkpoint of it
    card = tiny_checkpoint(tmp_path, "plugin-tnpd", "bo")
    del sys.modules[plugin.stem]
    surrogates._MODELS.pop("plugin-tnpd")
    PRIORS.pop("plugin-lines")
    db = str(tmp_path / "runs.db")
    base = ["optimize", "--function", "branin", "--surrogate", str(card), "--budget", "6", "--db", db]
    assert main(base) == 2
    assert "--plugin MODULE" in capsys.readouterr().err
    assert main([*base, "--plugin", str(plugin)]) == 0
    (run,) = list_runs(db)
    assert run.status == "completed" and run.policy.startswith("plugin-tnpd-bo")
    assert sys.modules[plugin.stem] is not module  # imported again, from the file


@pytest.mark.parametrize("given, message", [
    ("npbandit_no_such_plugin", "--plugin npbandit_no_such_plugin: cannot import 'npbandit_no_such_plugin'"),
    ("missing/plugin.py", "--plugin missing/plugin.py: no such file"),
    ("raises.py", "--plugin raises.py: importing it raised RuntimeError: broken plugin"),
    ("needs_missing", "--plugin needs_missing: importing 'needs_missing' raised ModuleNotFoundError: No module named "
                      "'npbandit_no_such_dependency'"),
    ("json.py", "--plugin json.py: a module named 'json' is already imported"),
    ("my-plugin.py", "--plugin my-plugin.py: 'my-plugin' is not a module name"),
])
def test_a_plugin_that_cannot_be_imported_is_one_line_naming_the_option(tmp_path, monkeypatch, capsys, given,
                                                                        message):
    monkeypatch.chdir(tmp_path)
    for name in ("raises.py", "json.py", "my-plugin.py"):
        (tmp_path / name).write_text("raise RuntimeError('broken plugin')\n" if name == "raises.py" else "x = 1\n")
    (tmp_path / "needs_missing.py").write_text("import npbandit_no_such_dependency\n")  # found; its import is not
    before = set(sys.modules)
    assert main(["train", "--plugin", given, "--model", "tnpd", "--prior", "gp1d", "--steps", "1",
                 "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"npbandit train: {message}") and "\n" not in err, err
    # a failed import leaves no module behind
    assert not {"raises", "my-plugin", "needs_missing"} & (set(sys.modules) - before)
    assert not (tmp_path / "run").exists()  # refused before anything ran


def test_the_commands_that_name_models_take_plugins_and_say_so():
    from npbandit.cli import build_parser

    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    taking = {name for name, sub in commands.items() if any("--plugin" in a.option_strings for a in sub._actions)}
    # models: a checkpoint named is scored on its prior's suite, which a plugin may register
    assert {"train", "optimize", "models"} <= taking and "report" not in taking
    action = next(a for a in commands["train"]._actions if "--plugin" in a.option_strings)
    assert action.default == [] and "register_model" in action.help and "register_prior" in action.help

