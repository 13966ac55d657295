"""The docs a user can open: every ``*.md`` a file cites exists in the repository, and
README's Layout names every module."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# generated, installed or vendored trees; training_runs/ holds run states, not docs
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "npbandit.egg-info", "training_runs", "runs",
             ".pytest_cache", "build", "dist"}
TEXT_SUFFIXES = {".py", ".md", ".sh", ".toml", ".cfg", ".ini", ".txt", ".yml", ".yaml"}
TEXT_NAMES = {"Makefile", "run"}  # run: .ci/run
MD_REF = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)(?![\w])")


def text_files():
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS for part in rel.parts[:-1]) or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            yield path


def resolves(ref: str, source: Path) -> bool:
    """A reference is good if the file exists relative to the citing file, the
    repository root, or docs/ (benchmark scripts name the pages they write there)."""
    return any((base / ref).is_file() for base in (source.parent, ROOT, ROOT / "docs"))


def dangling_references(files):
    """``path:line: ref`` for every ``*.md`` reference in ``files`` that does not resolve."""
    missing = []
    for path in files:
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for ref in MD_REF.findall(line):
                if "://" in line and f"/{ref}" in line.split("://", 1)[1]:
                    continue  # part of a URL: not a file of this repository
                if not resolves(ref, path):
                    missing.append(f"{shown}:{number}: {ref}")
    return missing


def test_every_cited_markdown_file_is_in_the_repository():
    files = list(text_files())
    assert any(p.name == "README.md" for p in files) and any(p.suffix == ".py" for p in files)
    assert dangling_references(files) == []


def test_the_reference_check_reports_a_file_that_is_not_here(tmp_path):
    gone = "PROTOCOLS" + ".md"  # spelled in two parts so that this file cites nothing missing
    cites = tmp_path / "cites.py"
    cites.write_text(f'"""The wheel bandit of {gone} §3.\n\nSee README.md."""\n')
    assert dangling_references([cites]) == [f"{cites}:1: {gone}"]


def layout_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1].splitlines()


def layout_files() -> set[str]:
    """Repository paths of the files README's Layout names: a line at column 0 whose
    first word ends with ``/`` opens a directory, and the first word of each indented
    line below it is a file (or folder) of that directory; a ``.py`` path at column 0
    names itself."""
    named, directory = set(), None
    for line in layout_block():
        if not line.strip():
            continue
        head = line.split()[0]
        if not line[0].isspace():
            directory = head if head.endswith("/") else None
            if head.endswith(".py"):
                named.add(head)
        elif directory is not None and head.endswith(".py"):
            named.add(directory + head)
    return named


def test_readme_layout_names_every_module_and_only_existing_ones():
    named = layout_files()
    modules = {p.relative_to(ROOT).as_posix() for top in ("npbandit", "experiments/benchmarks")
               for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts}
    assert modules, "no modules found"
    assert sorted(modules - named) == [], "modules missing from README's Layout"
    assert sorted(n for n in named if not (ROOT / n).is_file()) == [], "Layout names files that do not exist"
