"""A bandit process that plays only the classical policies (uniform, LinUCB, linear Thompson
sampling) loads neither torch nor BoTorch: ``import npbandit.policies``, the policies built by
name, the wheel bandit and a CSV data set, the run loop and the SQL storage are NumPy, SciPy
and SQLAlchemy only, so each such run of a sweep starts without paying torch's import."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_SWEEP = """
import json, pathlib, sys
import npbandit.policies
from npbandit.loop import csv_task, run_bandit_sweep, wheel_task
from npbandit.storage import list_runs

here = pathlib.Path(sys.argv[1])
csv = here / "data.csv"
rows = ["x,y,kind"] + [f"{i % 7 / 7:.3f},{i % 5 / 5:.3f},{'abc'[i % 3]}" for i in range(30)]
csv.write_text("\\n".join(rows) + "\\n")
db = f"sqlite:///{here / 'runs.db'}"
results = run_bandit_sweep(["uniform", "linucb", "lin-ts"], [wheel_task(0.9), csv_task(csv, "kind")], [0], 12,
                           db=db, say=None)
print(json.dumps({"steps": [r.n_steps for r in results],
                  "statuses": sorted(run.status for run in list_runs(db)),
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "botorch"))}))
"""


@pytest.mark.integration
def test_a_sweep_of_classical_policies_on_the_wheel_and_a_csv_file_loads_no_torch(tmp_path):
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-c", _SWEEP, str(tmp_path)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": path})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["steps"] == [12] * 6
    assert result["statuses"] == ["completed"] * 6
    assert result["loaded"] == []
