"""Run NPModel's tests against several BoTorch releases, each in a throwaway venv.

``make botorch-compat`` runs it for the lowest and the newest release that the range
pinned in ``pyproject.toml`` admits. Each venv (``/tmp/npbandit-botorch-<version>``,
reused on later runs) gets the pinned torch, that BoTorch (which brings the gpytorch
and linear_operator it asks for) and the project's other dependencies from
``pyproject.toml``; the project itself is imported from this checkout, not installed.

Usage:  python3 tools/botorch_compat.py [VERSION ...] [--torch torch==2.13.0] [--tests tests/test_botorch.py]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the ends of the range in pyproject.toml (botorch>=0.17,<0.19); move them with it
DEFAULT_VERSIONS = ("0.17.0", "0.18.1")


def project_dependencies() -> tuple[str, list[str]]:
    """``(botorch requirement, every other requirement except torch)`` from pyproject.toml."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    botorch = [d for d in deps if d.startswith("botorch")]
    if len(botorch) != 1:
        raise SystemExit(f"pyproject.toml must name botorch once among the dependencies, found {botorch}")
    return botorch[0], [d for d in deps if not d.startswith(("botorch", "torch"))]


def check_in_range(requirement: str, version: str) -> None:
    try:
        from packaging.requirements import Requirement
    except ImportError:  # only a courtesy check; pip would install the version anyway
        return
    if version not in Requirement(requirement).specifier:
        raise SystemExit(f"botorch {version} is outside the range pyproject.toml supports ({requirement})")


def run(cmd: list[str], **kwargs) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", default=list(DEFAULT_VERSIONS), help="BoTorch releases to test")
    parser.add_argument("--torch", default="torch==2.13.0", help="torch requirement (the Makefile's pin)")
    parser.add_argument("--tests", nargs="+", default=["tests/test_botorch.py"], help="test files to run")
    args = parser.parse_args()
    requirement, others = project_dependencies()
    failed = []
    for version in args.versions:
        check_in_range(requirement, version)
        env = Path(f"/tmp/npbandit-botorch-{version}")
        python = env / "bin" / "python"
        if not python.exists():
            run([sys.executable, "-m", "venv", str(env)])
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        run(pip + [args.torch])
        run(pip + [f"botorch=={version}", *others, "pytest>=8"])
        run([str(python), "-c", "import botorch, gpytorch, linear_operator, torch; "
             "print('botorch', botorch.__version__, '| gpytorch', gpytorch.__version__, "
             "'| linear_operator', linear_operator.__version__, '| torch', torch.__version__)"])
        # `python -m pytest` from the checkout puts it first on sys.path: npbandit comes from here
        result = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.tests],
                                cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")})
        if result.returncode:
            failed.append(version)
    print("botorch-compat:", "all passed" if not failed else f"FAILED on botorch {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
