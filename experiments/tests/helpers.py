"""The lab's scripts as modules, and the library suite's tiny checkpoints.

The scripts of ``experiments/benchmarks`` and ``experiments/probes`` are not packages: each
puts its own folder on ``sys.path`` and imports its neighbours by bare name, so a test runs
one by executing its file as a fresh module."""

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

LAB = Path(__file__).resolve().parent.parent
ROOT = LAB.parent

# tests/helpers.py holds no fixtures (it is no pytest plugin): the lab imports its tiny checkpoints,
# run comparison, Dask cluster and process check under the name the library suite uses, ``helpers``
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))
from helpers import (  # noqa: E402, F401
    KNOWN,
    KnownRelevance,
    bowl_history,
    check_recorded,
    completed_runs,
    cyclic,
    dask_client,
    restored_registries,
    running,
    tiny_checkpoint,
)


def load_script(folder: str, name: str):
    """``experiments/<folder>/<name>.py`` (``benchmarks`` or ``probes``) as a fresh module, run
    with the ``sys.path`` set-up the script makes for itself."""
    path = LAB / folder / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no lab script {path}: folder must be 'benchmarks' or 'probes' and name a .py in it")
    spec = importlib.util.spec_from_file_location(f"{folder}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import does: dataclasses and pickle look a class's module up there
    spec.loader.exec_module(module)
    return module


def load_benchmark(name: str):
    """``experiments/benchmarks/<name>.py`` as a fresh module."""
    return load_script("benchmarks", name)


def left_in_session(session: int, wait_s: float = 60.0) -> list[int]:
    """The live processes of session ``session`` (a subprocess started with
    ``start_new_session=True``: its pid), polled until there are none or ``wait_s`` seconds
    have passed: a process of a script may take a moment to end after the script, which a
    fixed sleep raced on a loaded machine. An ended one left a zombie (for PID 1 to reap,
    which a container's may never do) counts as ended."""
    deadline = time.monotonic() + wait_s
    while True:
        members = subprocess.run(["pgrep", "-s", str(session)], capture_output=True, text=True).stdout.split()
        alive = running(int(pid) for pid in members)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)
