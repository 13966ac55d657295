"""Every script of experiments/benchmarks/ and experiments/probes/ still imports: compiled and run
as a module with the sys.path set-up it makes for itself, so a library name it imports that moved
or went away fails here, not on the next benchmark run. (A ``--help`` subprocess per script would
also build each parser, at about 3 s of interpreter start each.)"""

import pytest

from .helpers import LAB, load_script

pytestmark = pytest.mark.lab

SCRIPTS = sorted(p.relative_to(LAB).as_posix() for folder in ("benchmarks", "probes")
                 for p in (LAB / folder).glob("*.py"))


def test_the_lab_has_scripts_to_import():
    assert len([s for s in SCRIPTS if s.startswith("benchmarks/")]) > 20
    assert len([s for s in SCRIPTS if s.startswith("probes/")]) > 3


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_lab_script_imports_cleanly(script, keep_threads, keep_registries):
    folder, name = script.removesuffix(".py").split("/")
    module = load_script(folder, name)
    assert module.__file__ == str(LAB / script)
    if 'if __name__ == "__main__":' in (LAB / script).read_text(encoding="utf-8"):
        assert callable(getattr(module, "main", None)), f"{script} runs as a script but defines no main()"
