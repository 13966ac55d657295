"""The npbandit.models package itself: its public names, the deprecated alias of its old
home, the construct-inputs hook an integration installs, and the direction of its imports."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from botorch.utils.datasets import SupervisedDataset

import npbandit
from npbandit.models import hooks
from npbandit.models.cache import RowBuffer
from npbandit.transforms.moments import merge_moments, moment_statistics, moments

ROOT = Path(__file__).resolve().parents[2]


def dataset(names=("x1", "x2")):
    X = torch.rand(6, 2, dtype=torch.float64)
    return SupervisedDataset(X, X.sum(-1, keepdim=True), feature_names=list(names), outcome_names=["y"])


def test_the_package_exports_the_model_and_the_facade_is_the_same_class():
    from npbandit.models import NPLikelihood, NPModel, shared_surrogate
    from npbandit.models.likelihood import NPLikelihood as likelihood_home
    from npbandit.models.model import NPModel as model_home

    assert NPModel is model_home is npbandit.NPModel and NPLikelihood is likelihood_home
    assert callable(shared_surrogate)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        npbandit.models.Nope  # noqa: B018


def test_the_old_module_warns_and_re_exports_the_same_objects():
    from npbandit.models import NPLikelihood, NPModel, shared_surrogate
    from npbandit.models.posterior import first_equal_rows

    sys.modules.pop("npbandit.surrogates.npmodel", None)
    with pytest.warns(DeprecationWarning, match="npbandit.models"):
        old = importlib.import_module("npbandit.surrogates.npmodel")
    assert old.NPModel is NPModel and old.NPLikelihood is NPLikelihood and old.shared_surrogate is shared_surrogate
    assert old._first_equal_rows is first_equal_rows and old.NOISE_POINTS == 256


def test_the_model_package_never_imports_an_integration():
    # integrations import the models (and register hooks); the other way round would be a cycle
    for path in (ROOT / "npbandit" / "models").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(name.startswith("npbandit.integrations") for name in names), (path.name, names)
            assert not any(name == "npbandit" for name in names), (path.name, names)  # nor the package's __init__


def test_importing_npbandit_loads_neither_botorch_nor_a_framework():
    code = ("import sys, npbandit, npbandit.models.hooks; "
            "print(sorted(m for m in ('botorch', 'ax', 'optuna', 'npbandit.integrations.ax') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


class Refuse(hooks.ConstructInputsHook):
    def __init__(self):
        self.seen = []

    def check_dataset(self, training_data):
        self.seen.append(training_data)
        if "bad" in training_data.feature_names:
            raise ValueError("bad feature")


def test_construct_inputs_consults_the_installed_hook_and_the_plain_one_takes_everything():
    from npbandit.models import NPModel

    hook = Refuse()
    previous = hooks.set_construct_inputs_hook(hook)
    try:
        assert hooks.construct_inputs_hook() is hook
        good = dataset()
        inputs = NPModel.construct_inputs(good, checkpoint="cmanp-bo")
        assert hook.seen == [good] and inputs["train_X"] is good.X
        with pytest.raises(ValueError, match="bad feature"):
            NPModel.construct_inputs(dataset(("x1", "bad")), checkpoint="cmanp-bo")
        with pytest.raises(TypeError, match="lengthscale"):  # the model's own checks come first
            NPModel.construct_inputs(dataset(("x1", "bad")), checkpoint="cmanp-bo", lengthscale=1.0)
        assert len(hook.seen) == 2
        assert hooks.set_construct_inputs_hook(None) is hook
        assert type(hooks.construct_inputs_hook()) is hooks.ConstructInputsHook  # the plain behaviour
        assert NPModel.construct_inputs(dataset(("x1", "bad")), checkpoint="cmanp-bo")["train_X"].shape == (6, 2)
    finally:
        hooks.set_construct_inputs_hook(previous)
    with pytest.raises(TypeError, match="ConstructInputsHook"):
        hooks.set_construct_inputs_hook(lambda data: None)


def test_the_ax_trigger_does_nothing_while_ax_is_not_in_use(monkeypatch):
    from npbandit.integrations import AX_FIT_MODULE, AxWhenLoaded

    monkeypatch.delitem(sys.modules, AX_FIT_MODULE, raising=False)
    monkeypatch.delitem(sys.modules, "npbandit.integrations.ax", raising=False)
    AxWhenLoaded().check_dataset(dataset(("x1", "c_OH_PARAM_0")))  # Ax's encoding, but no Ax: plain
    assert "npbandit.integrations.ax" not in sys.modules


def test_the_fit_registration_takes_model_classes_only():
    from npbandit.models.likelihood import register_pretrained_fit
    from npbandit.models.model import NPModel

    register_pretrained_fit(NPModel)  # again: replaces the entry (a no-op where BoTorch calls custom_fit)
    with pytest.raises(TypeError, match="model_class"):
        register_pretrained_fit(object)


def test_a_row_buffer_appends_in_place_and_branches_by_copying():
    rows = torch.arange(6.0).reshape(3, 2)
    first = RowBuffer(rows)
    same, view = first.append(3, torch.ones(2, 2))
    assert same is first and torch.equal(view, torch.cat([rows, torch.ones(2, 2)]))
    assert torch.equal(rows, torch.arange(6.0).reshape(3, 2))  # the caller's tensor is never written
    again, longer = first.append(5, torch.zeros(1, 2))
    assert again is first and longer.data_ptr() == view.data_ptr() and torch.equal(view[:5], longer[:5])
    branch, other = first.append(3, torch.full((1, 2), 7.0))  # after an older model's rows: a copy
    assert branch is not first and torch.equal(other, torch.cat([rows, torch.full((1, 2), 7.0)]))
    assert torch.equal(longer[3:5], torch.ones(2, 2))  # the first branch is untouched


def test_running_moments_merge_to_those_of_all_the_data():
    g = torch.Generator().manual_seed(0)
    Y = torch.randn(11, 2, generator=g, dtype=torch.float64) * 3 + 1
    merged = merge_moments(merge_moments(moments(Y[:4]), moments(Y[4:5])), moments(Y[5:]))
    whole = moments(Y)
    assert merged[0] == whole[0] == 11
    assert torch.allclose(merged[1], whole[1]) and torch.allclose(merged[2], whole[2])
    mean, std = moment_statistics(merged)
    assert torch.allclose(mean, Y.mean(0)) and torch.allclose(std, Y.std(0))
    one_mean, one_std = moment_statistics(moments(Y[:1]))
    assert torch.equal(one_std, torch.ones(2)) and torch.equal(one_mean, Y[0])
