"""Writes experiments/constraints-bench.txt, the pip constraints `make bench-env` installs the benchmarks'
environment under: the exact versions this environment holds of the packages a benchmark's numbers depend on
(``BENCH_PACKAGES`` of common.py), of npbandit's own requirements, and of what each of those requires directly
(markers evaluated here, extras left out). A package not installed here is not pinned, and the file's header
names it. Run it with the Python that measured the published tables, after the install they were measured with:

    .venv/bin/python experiments/benchmarks/bench_constraints.py          # (re)write the file
    .venv/bin/python experiments/benchmarks/bench_constraints.py --check  # exit 1 where this environment differs
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BENCH_PACKAGES, ROOT  # noqa: E402

CONSTRAINTS = ROOT / "experiments" / "constraints-bench.txt"
#: the project itself: its requirements are roots, it is never pinned (`make bench-env` installs it editable)
PROJECT = "npbandit"


def _installed_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _direct_requirements(name: str) -> list[str]:
    return importlib.metadata.requires(name) or []


def pins(roots: Iterable[str], version: Callable[[str], str | None] = _installed_version,
         requires: Callable[[str], list[str]] = _direct_requirements) -> tuple[dict[str, str], list[str]]:
    """``({name: version}, absent)``: each of ``roots`` and of what each installed root requires directly
    (its requirement strings whose markers hold here with no extra chosen) pinned to its installed public
    version (``2.13.0+cpu`` -> ``2.13.0``: the local label names a build, and ``==2.13.0`` admits it), by
    canonical name, :data:`PROJECT` left out; ``absent``: the roots not installed, sorted. ``version(name)``
    gives an installed version or ``None``, ``requires(name)`` its requirement strings (injectable for tests;
    default: this environment's metadata)."""
    roots = [roots] if isinstance(roots, str) else list(roots)
    if not roots or not all(isinstance(r, str) and r for r in roots):
        raise TypeError(f"roots: expected distribution names (non-empty strings), got {roots!r}")
    pinned: dict[str, str] = {}
    absent: list[str] = []

    def pin(name: str) -> bool:
        """Pin ``name`` where it is installed (the project never); whether it is installed."""
        key = canonicalize_name(name)
        if key not in pinned and key != PROJECT and (found := version(name)) is not None:
            pinned[key] = Version(found).public
        return key in pinned

    for root in roots:
        if canonicalize_name(root) != PROJECT and not pin(root):
            absent.append(canonicalize_name(root))
            continue
        for text in requires(root):
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pin(requirement.name)
    return dict(sorted(pinned.items())), sorted(set(absent))


def render(pinned: dict[str, str], absent: list[str]) -> str:
    """The constraints file: a header saying what it pins and where it was made, then one ``name==version`` a line."""
    lines = ["# The benchmarks' environment as pip constraints (`make bench-env` installs `.[bench]` under them):",
             "# the exact versions of the packages a benchmark's numbers depend on (BENCH_PACKAGES of",
             "# experiments/benchmarks/common.py), of npbandit's own requirements, and of what each requires",
             f"# directly, as installed where it was written (Python {platform.python_version()}, "
             f"{platform.machine()}).",
             "# Written by `python experiments/benchmarks/bench_constraints.py`; do not edit by hand."]
    if absent:
        lines.append(f"# Not installed there, so not pinned: {', '.join(absent)}.")
    return "\n".join(lines + [f"{name}=={v}" for name, v in pinned.items()]) + "\n"


def read_pins(text: str) -> dict[str, str]:
    """``{canonical name: version}`` of a constraints file's ``name==version`` lines (comments and blank lines
    skipped); ValueError for a line that pins no single exact version or pins a name twice."""
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        specs = list(requirement.specifier)
        key = canonicalize_name(requirement.name)
        if len(specs) != 1 or specs[0].operator != "==" or requirement.marker or requirement.extras:
            raise ValueError(f"line {number}: {line!r} is not one `name==version` pin")
        if key in found:
            raise ValueError(f"line {number}: {key} is pinned twice")
        found[key] = specs[0].version
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CONSTRAINTS)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; list the pins this environment does not match and exit 1 if any")
    args = parser.parse_args(argv)
    if args.check:
        wanted = read_pins(args.out.read_text())
        here = {name: (v := _installed_version(name)) and Version(v).public for name in wanted}
        differ = [f"{name}: {v} pinned, {here[name] or 'not installed'} here"
                  for name, v in wanted.items() if here[name] != v]
        print("\n".join(differ) or f"this environment matches every pin of {args.out}")
        raise SystemExit(1 if differ else 0)
    pinned, absent = pins((PROJECT, *BENCH_PACKAGES))
    args.out.write_text(render(pinned, absent))
    print(f"wrote {len(pinned)} pins to {args.out}" + (f"; not installed: {', '.join(absent)}" if absent else ""))


if __name__ == "__main__":
    main()
