"""The repository's shape: the library suite cannot reach the lab, the library imports nothing
from it, modules stay small, README stays a front page, and git tracks no training state.

Fast: files are read as text (Python parsed, not imported); the one process started is
``git ls-files``, for the training-state check."""

import ast
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
PACKAGE = ROOT / "npbandit"
# the lab's folder; this module is the one file of the library suite that names it, to keep the others from it
LAB = ROOT / "experiments"
MAX_MODULE_LINES = 600
MAX_README_LINES = 200

# Files of tests/ that still name the lab when this check was written: test_docs.py checks that
# every *.md the repository cites resolves (the lab's scripts cite pages of its log) and that
# docs/contributing.md's Layout names each lab benchmark; test_api.py cites the lab log in a comment.
# Frozen: a file may leave this list (when it stops naming the lab), none may join it.
STILL_NAMING_THE_LAB = frozenset({"test_docs.py", "test_api.py"})

# The most bytes git may track under any folder whose name says it holds training (an exported
# checkpoint or two that a run needs to resume elsewhere fit; optimiser states do not).
MAX_TRAINING_FOLDER_BYTES = 10 * 1024 * 1024


def files_naming(word: str, folder: Path) -> set[str]:
    """Paths (relative to ``folder``) of the files below it whose text contains ``word``."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
            and word in p.read_text(encoding="utf-8", errors="replace")}


def modules_over(limit: int, package: Path) -> dict[str, int]:
    """``{path relative to the package's parent: line count}`` of its ``.py`` files over ``limit`` lines."""
    counts = {p.relative_to(package.parent).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
              for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    return {path: n for path, n in sorted(counts.items()) if n > limit}


def imports_of(names: set[str], package: Path) -> list[str]:
    """``path:line: module`` for every absolute import, at any depth of any module below
    ``package``, whose top-level name is in ``names``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            shown = path.relative_to(package.parent).as_posix()
            found += [f"{shown}:{node.lineno}: {m}" for m in modules if m.split(".")[0] in names]
    return found


def lab_module_names() -> set[str]:
    """What a module would import the lab by: its folder as a package, or a script by its bare
    name once the script's folder is on sys.path (the scripts import each other that way)."""
    return {LAB.name} | {p.stem for p in LAB.rglob("*.py") if "tests" not in p.relative_to(LAB).parts}


def test_no_library_test_names_the_lab():
    """tests/ is the library's suite: it loads no lab script and reads no lab page, so the lab
    can change, or be left out of a checkout, without touching it (the lab's own tests are
    experiments/tests/)."""
    naming = files_naming(LAB.name, TESTS) - {Path(__file__).name}
    assert sorted(naming - STILL_NAMING_THE_LAB) == [], "library tests naming the lab: move them to its tests/"


def test_no_library_module_imports_from_the_lab():
    names = lab_module_names()
    assert {"experiments", "common", "bo"} <= names
    assert imports_of(names, PACKAGE) == []


def names_imported_from(module: str, folders: list[Path]) -> list[tuple[str, str]]:
    """``(path:line, name)`` for each name a ``from {module} import ...`` takes, at any depth,
    in the ``.py`` files below ``folders``."""
    found = []
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            shown = path.relative_to(ROOT).as_posix()
            found += [(f"{shown}:{node.lineno}", alias.name) for node in ast.walk(tree)
                      if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == module
                      for alias in node.names]
    return found


def test_policies_bo_re_exports_only_its_old_public_names_and_nobody_imports_them_there():
    """``npbandit.policies.bo`` keeps, for code written before ``npbandit.acquisition`` existed,
    the public names it had then (its ``__all__``; tests/test_public_names.py checks the old
    addresses); any other name it imports it uses. The library, its tests, the lab and the
    examples import a name from its home, never through that re-export."""
    tree = ast.parse((PACKAGE / "policies" / "bo.py").read_text(encoding="utf-8"))
    own, imported, exported = set(), set(), set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Assign):
            targets = {t.id for t in node.targets if isinstance(t, ast.Name)}
            own |= targets - {"__all__"}
            if "__all__" in targets:
                exported = set(ast.literal_eval(node.value))
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imported |= {alias.asname or alias.name for alias in node.names}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert {"BOPolicy", "OUTPUT_WARPS", "Q_BATCH"} <= own and "propose" in exported
    assert sorted(imported - used - exported) == []
    folders = [PACKAGE, TESTS, LAB, ROOT / "examples", ROOT / "tools"]
    through = [(where, name) for where, name in names_imported_from("npbandit.policies.bo", folders)
               if name not in own]
    assert through == []


def test_no_module_of_the_package_is_over_600_lines():
    assert modules_over(MAX_MODULE_LINES, PACKAGE) == {}, "split these modules by concern"


def test_readme_is_at_most_200_lines():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= MAX_README_LINES


def tracked_files() -> list[str]:
    """Every path git tracks in this checkout (skips the test where git or the checkout is missing)."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed: cannot list the tracked files")
    listed = subprocess.run([git, "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout ({listed.stderr.strip() or 'git ls-files failed'})")
    return list(filter(None, listed.stdout.split("\0")))


def test_git_tracks_no_training_state():
    tracked = [path for path in tracked_files() if path.split("/")[0] in {"training_runs", "runs"}]
    assert tracked == [], "training state is git-ignored: untrack these"


def test_no_training_folder_holds_more_than_10_mb():
    sizes: dict[str, int] = {}
    for path in tracked_files():
        parts = path.split("/")
        for depth, part in enumerate(parts[:-1]):
            if "train" in part.lower():
                folder = "/".join(parts[:depth + 1])
                sizes[folder] = sizes.get(folder, 0) + (ROOT / path).stat().st_size
    assert {folder: size for folder, size in sizes.items() if size > MAX_TRAINING_FOLDER_BYTES} == {}


def test_the_checks_find_what_they_look_for(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("import os\n")
    (package / "sub" / "deep.py").write_text("def f():\n    from lab.bench import x\n    import common as c\n"
                                             "from . import sibling\nfrom pkg import common\n")
    assert imports_of({"lab", "common"}, package) == ["pkg/sub/deep.py:2: lab.bench", "pkg/sub/deep.py:3: common"]
    (package / "big.py").write_text("x = 1\n" * 601)
    (package / "edge.py").write_text("x = 1\n" * 600)
    assert modules_over(600, package) == {"pkg/big.py": 601}
    (tmp_path / "notes.txt").write_text("see the lab folder\n")
    assert files_naming("lab folder", tmp_path) == {"notes.txt"}
