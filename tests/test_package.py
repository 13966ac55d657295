"""``import npbandit``: cheap (no torch, BoTorch, SQLAlchemy, plotting or SciPy), yet the
Gymnasium environments are registered and the top-level names resolve on first use."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "botorch", "gpytorch", "linear_operator", "sqlalchemy", "matplotlib", "scipy")


def _run(code: str) -> dict:
    """Run ``code`` in a fresh interpreter importing this checkout; it prints one JSON object."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": path})
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_npbandit_loads_no_heavy_module_and_registers_the_environments():
    result = _run(f"""
import json, sys
import gymnasium as gym
import npbandit
heavy = [m for m in sys.modules if m.split('.')[0] in {HEAVY!r}]
envs = sorted(m for m in sys.modules if m.startswith('npbandit.envs.'))
spec = {{i: gym.spec(i).entry_point for i in ('npbandit/WheelBandit-v0', 'npbandit/BlackBox-v0')}}
print(json.dumps({{'heavy': heavy, 'env_modules': envs, 'specs': spec, 'file': npbandit.__file__,
                  'version': npbandit.__version__}}))
""")
    assert result["file"] == str(ROOT / "npbandit" / "__init__.py")
    assert result["heavy"] == []
    assert result["env_modules"] == []  # registered by entry point: no environment module loaded yet
    assert result["specs"] == {"npbandit/WheelBandit-v0": "npbandit.envs.wheel:WheelBanditEnv",
                               "npbandit/BlackBox-v0": "npbandit.envs.blackbox:BlackBoxEnv"}
    from npbandit._version import __version__

    assert result["version"] == __version__


def test_the_lazy_names_resolve_to_the_objects_of_their_modules():
    result = _run("""
import json
import npbandit
names = {name: getattr(npbandit, name) for name in ('optimize', 'OptimizeResult', 'build', 'load_surrogate',
                                                    'NPModel')}
import npbandit.api, npbandit.surrogates, npbandit.surrogates.pretrained, npbandit.surrogates.npmodel
homes = {'optimize': npbandit.api, 'OptimizeResult': npbandit.api, 'build': npbandit.surrogates,
         'load_surrogate': npbandit.surrogates.pretrained, 'NPModel': npbandit.surrogates.npmodel}
from npbandit import optimize
print(json.dumps({'same': {n: v is getattr(homes[n], n) for n, v in names.items()},
                  'from_import': optimize is npbandit.api.optimize,
                  'listed': sorted(set(npbandit.__all__) - set(dir(npbandit)))}))
""")
    assert all(result["same"].values()), result["same"]
    assert result["from_import"] and result["listed"] == []


def test_an_environment_module_loads_when_the_environment_is_made():
    result = _run("""
import json, sys
import gymnasium as gym
import npbandit
before = 'npbandit.envs.wheel' in sys.modules
env = gym.make('npbandit/WheelBandit-v0', horizon=5)
from npbandit.envs import WheelBanditEnv
print(json.dumps({'before': before, 'after': 'npbandit.envs.wheel' in sys.modules,
                  'type': isinstance(env.unwrapped, WheelBanditEnv)}))
""")
    assert result == {"before": False, "after": True, "type": True}


def test_unknown_names_raise_attribute_error():
    import npbandit
    import npbandit.envs

    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        npbandit.nonexistent  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        npbandit.envs.nonexistent  # noqa: B018


def test_the_environment_entry_points_name_the_classes_exported_by_npbandit_envs():
    import npbandit.envs

    assert set(npbandit.envs.ENTRY_POINTS) == {"npbandit/WheelBandit-v0", "npbandit/LinearBandit-v0",
                                               "npbandit/ClassificationBandit-v0", "npbandit/BlackBox-v0"}
    for env_id, entry in npbandit.envs.ENTRY_POINTS.items():
        module, name = entry.split(":")
        assert getattr(importlib.import_module(module), name) is getattr(npbandit.envs, name), env_id
