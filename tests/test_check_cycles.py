"""tools/check_cycles.py on small synthetic packages (the real package is checked in CI)."""

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "check_cycles.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("check_cycles", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


check_cycles = _load_tool()


def make_package(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path inside the package -> source) under ``root/pkg``; returns the package dir."""
    for name, source in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return root / "pkg"


def cycles_of(package: Path) -> list[list[str]]:
    return check_cycles.find_cycles(check_cycles.find_imports(check_cycles.find_modules(package)))


def run_tool(package: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), str(package)], capture_output=True, text=True, timeout=60)


CLEAN = {
    "__init__.py": "from pkg._version import __version__\nfrom pkg.a import f\n",
    "_version.py": "__version__ = '1'\n",
    "a.py": "import pkg.b\nfrom pkg._version import __version__\ndef f():\n    from pkg.sub.c import g\n",
    "b.py": "import os\n",
    "sub/__init__.py": "from .c import g\n",
    "sub/c.py": "from ..b import os\ndef g():\n    pass\n",
}


def test_a_package_without_cycles_exits_0(tmp_path):
    package = make_package(tmp_path, CLEAN)
    assert cycles_of(package) == []
    result = run_tool(package)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no import cycles" in result.stdout


def test_a_module_taking_a_name_from_its_package_init_is_a_cycle(tmp_path):
    # the __version__ pattern: pkg/__init__ imports pkg.a, and pkg.a reads a name from pkg
    package = make_package(tmp_path, {**CLEAN, "b.py": "def h():\n    from pkg import __version__\n"})
    # pkg.a reaches pkg.b directly and through pkg.sub.c: both ways back to pkg are listed
    assert cycles_of(package) == [["pkg", "pkg.a", "pkg.b"], ["pkg", "pkg.a", "pkg.sub.c", "pkg.b"]]
    result = run_tool(package)
    assert result.returncode == 1
    assert "pkg -> pkg.a -> pkg.b -> pkg" in result.stdout
    assert "b.py:2 (in h): from pkg import __version__" in result.stdout


def test_imports_inside_functions_and_relative_imports_count(tmp_path):
    package = make_package(tmp_path, {**CLEAN, "b.py": "def h():\n    from .sub import c\n",
                                      "sub/c.py": "from ..b import h\ndef g():\n    pass\n"})
    assert cycles_of(package) == [["pkg.b", "pkg.sub.c"]]


def test_a_sibling_reached_through_its_own_package_is_a_cycle(tmp_path):
    # ``from pkg import b`` in pkg/a.py reads b from pkg's namespace, which pkg/__init__ fills by importing pkg.a
    package = make_package(tmp_path, {**CLEAN, "a.py": "def f():\n    from pkg import b\n"})
    assert cycles_of(package) == [["pkg", "pkg.a"]]


def test_a_module_importing_itself_and_type_checking_imports(tmp_path):
    package = make_package(tmp_path, {**CLEAN, "b.py": """\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from pkg.sub.c import g  # never runs: not counted
        import importlib
        def h():
            return importlib.import_module("pkg.b")
        """, "sub/c.py": "import pkg.b\ndef g():\n    pass\n"})
    assert cycles_of(package) == [["pkg.b"]]


def test_every_import_on_a_cycle_is_listed(tmp_path):
    # two cycles through pkg.a: a <-> b and a -> c -> a
    package = make_package(tmp_path, {
        "__init__.py": "", "a.py": "import pkg.b\nimport pkg.c\n", "b.py": "import pkg.a\n",
        "c.py": "def f():\n    import pkg.a\n"})
    assert cycles_of(package) == [["pkg.a", "pkg.b"], ["pkg.a", "pkg.c"]]
    out = run_tool(package).stdout
    assert out.startswith("2 import cycle(s):") and "c.py:2 (in f): import pkg.a" in out


def test_a_directory_that_is_not_a_package_is_refused(tmp_path):
    with pytest.raises(ValueError, match="package_dir must be a package directory"):
        check_cycles.find_modules(tmp_path)
    result = run_tool(tmp_path)
    assert result.returncode == 2 and "package_dir must be a package directory" in result.stderr
