"""List the import cycles among the modules of a package; exit 1 if there is one.

Reads the source (never imports it) and records every import a module makes, at its
top, inside functions and methods, in ``try`` blocks and in ``importlib.import_module("...")``
calls with a literal name alike, since any of them can run while the other module is
half-initialised. Imports under ``if TYPE_CHECKING:`` never run and are skipped.

What an import depends on:

- ``import pkg.a.b`` -> ``pkg.a.b``; ``import pkg`` -> ``pkg`` (its ``__init__``);
- ``from pkg.a import b`` -> ``pkg.a.b`` when that is a module, else ``pkg.a``, the module
  (or package ``__init__``) that holds the name ``b``; relative imports likewise. So a
  module taking names from its own package's ``__init__`` (``from pkg import __version__``
  in ``pkg/a.py`` while ``pkg/__init__.py`` imports ``pkg.a``) is a cycle;
- ``from pkg import b`` in a module inside ``pkg`` (``pkg/a.py`` or deeper), ``b`` a module:
  -> ``pkg.b`` and also ``pkg``, whose namespace the name is read from (write
  ``import pkg.b`` or ``from pkg.b import ...`` instead);
- the parent packages that Python initialises on the way (``pkg`` for ``import pkg.a``)
  are not counted: that initialisation is implicit and a package's ``__init__`` importing
  its own submodules is the normal layout.

Every import that lies on a cycle is shown, each cycle with the lines that make it up.

Usage:  python3 tools/check_cycles.py [PACKAGE_DIR]   (default: npbandit/ of this checkout)
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Import:
    """One import statement of ``source`` that makes it depend on ``target``."""

    source: str
    target: str
    path: Path
    line: int
    function: str | None  # the enclosing function, or None at module or class level
    text: str

    def describe(self, root: Path) -> str:
        try:
            where = self.path.relative_to(root)
        except ValueError:
            where = self.path
        inside = f" (in {self.function})" if self.function else ""
        return f"{where}:{self.line}{inside}: {self.text}"


def find_modules(package_dir: Path) -> dict[str, Path]:
    """Every module of the package at ``package_dir`` by dotted name (a package by the
    name of its ``__init__``); sub-directories without ``__init__.py`` are not packages."""
    package_dir = Path(package_dir).resolve()
    if not (package_dir / "__init__.py").is_file():
        raise ValueError(f"package_dir must be a package directory (with __init__.py), got {str(package_dir)!r}")
    modules: dict[str, Path] = {}

    def walk(directory: Path, name: str) -> None:
        modules[name] = directory / "__init__.py"
        for child in sorted(directory.iterdir()):
            if child.is_dir() and (child / "__init__.py").is_file():
                walk(child, f"{name}.{child.name}")
            elif child.suffix == ".py" and child.name != "__init__.py" and child.stem.isidentifier():
                modules[f"{name}.{child.stem}"] = child

    walk(package_dir, package_dir.name)
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _ImportVisitor(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, path: Path, modules: dict[str, Path], source: str) -> None:
        self.module, self.is_package, self.path = module, is_package, path
        self.modules, self.source = modules, source
        self.functions: list[str] = []
        self.found: list[Import] = []
        self._seen: set[tuple[int, str]] = set()

    def _add(self, node: ast.AST, target: str) -> None:
        # the longest known module that the dotted name starts with (``pkg.a.Name`` -> ``pkg.a``)
        while target and target not in self.modules:
            target = target.rpartition(".")[0]
        if target and (id(node), target) not in self._seen:  # one record per statement and target
            self._seen.add((id(node), target))
            text = " ".join((ast.get_source_segment(self.source, node) or "").split())
            self.found.append(Import(self.module, target, self.path, node.lineno,
                                     ".".join(self.functions) or None, text))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.functions.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.functions.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for statement in node.orelse:
                self.visit(statement)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            # a package's __init__ is its own level-1 anchor; a plain module's is its parent
            parts = self.module.split(".")
            keep = len(parts) - node.level + (1 if self.is_package else 0)
            if keep < 1:
                return  # above the package: not one of its modules
            base = ".".join(parts[:keep] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        package = self.module if self.is_package else self.module.rpartition(".")[0]
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if alias.name == "*" or submodule not in self.modules:
                self._add(node, base)
                continue
            self._add(node, submodule)
            if base != self.module and (package == base or package.startswith(base + ".")):
                # a sibling reached through the module's own package (``from pkg import b`` in pkg/a.py)
                # is read from that package's namespace, which its __init__ fills by importing pkg.a
                self._add(node, base)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if (name == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str) and not node.args[0].value.startswith(".")):
            self._add(node, node.args[0].value)
        self.generic_visit(node)


def find_imports(modules: dict[str, Path]) -> list[Import]:
    """Every import among ``modules`` (as :func:`find_modules` returns them), in file order."""
    found: list[Import] = []
    for name, path in modules.items():
        source = path.read_text(encoding="utf-8")
        visitor = _ImportVisitor(name, path.name == "__init__.py", path, modules, source)
        visitor.visit(ast.parse(source, filename=str(path)))
        found += visitor.found
    return found


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out


def _shortest_path(graph: dict[str, set[str]], start: str, goal: str, allowed: set[str]) -> list[str]:
    previous: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            path = [node]
            while previous[path[-1]] is not None:
                path.append(previous[path[-1]])
            return path[::-1]
        for child in sorted(graph[node] & allowed):
            if child not in previous:
                previous[child] = node
                queue.append(child)
    raise AssertionError(f"{goal} not reachable from {start} within its component")


def find_cycles(imports: list[Import]) -> list[list[str]]:
    """Import cycles, each as its modules in import order (``[a, b]``: ``a`` imports ``b``
    imports ``a``; ``[a]``: ``a`` imports itself). Every import that lies on some cycle
    lies on one listed: for each such import ``u -> v`` the shortest way back from ``v``
    to ``u``; the same cycle found from several imports is listed once."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        graph.setdefault(imp.source, set()).add(imp.target)
        graph.setdefault(imp.target, set())
    cycles: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for component in _components(graph):
        members = set(component)
        for source in component:
            for target in sorted(graph[source] & members):
                cycle = [source] if source == target else [source] + _shortest_path(graph, target, source, members)[:-1]
                first = cycle.index(min(cycle))  # one rotation per cycle
                key = tuple(cycle[first:] + cycle[:first])
                if key not in seen:
                    seen.add(key)
                    cycles.append(list(key))
    return sorted(cycles, key=lambda c: (len(c), c))


def report(cycles: list[list[str]], imports: list[Import], root: Path) -> str:
    """The cycles in words, each followed by the import lines that make it up."""
    by_edge: dict[tuple[str, str], list[Import]] = {}
    for imp in imports:
        by_edge.setdefault((imp.source, imp.target), []).append(imp)
    lines = [f"{len(cycles)} import cycle(s):"]
    for number, cycle in enumerate(cycles, 1):
        lines.append(f"{number}. " + " -> ".join(cycle + [cycle[0]]))
        for source, target in zip(cycle, cycle[1:] + cycle[:1]):
            lines += [f"     {imp.describe(root)}" for imp in by_edge[(source, target)]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package_dir", nargs="?", type=Path, default=ROOT / "npbandit",
                        help="the package's directory (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        modules = find_modules(args.package_dir)
    except ValueError as err:
        parser.error(str(err))
    imports = find_imports(modules)
    cycles = find_cycles(imports)
    if not cycles:
        print(f"no import cycles among the {len(modules)} modules of {args.package_dir.resolve().name}")
        return 0
    print(report(cycles, imports, args.package_dir.resolve().parent))
    return 1


if __name__ == "__main__":
    sys.exit(main())
