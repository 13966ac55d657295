"""Tiny untrained checkpoints for tests that need a surrogate with a card, and the
benchmark scripts as modules."""

import importlib.util
from pathlib import Path

import torch

from npbandit.priors import BOPrior, WheelPrior
from npbandit.surrogates import build
from npbandit.surrogates.pretrained import save_pretrained


def tiny_checkpoint(directory: Path, model: str = "cmanp", prior: str = "bo", seed: int = 0) -> Path:
    """Save a tiny random-weight ``<model>-<prior>`` checkpoint; returns the card path."""
    p = BOPrior() if prior == "bo" else WheelPrior()
    torch.manual_seed(seed)
    net = build(model, p.x_dim, p.y_dim, size="tiny")
    return save_pretrained(net, directory, f"{model}-{prior}", prior=p.spec(), training={"steps": 1},
                           evaluation={"log_likelihood": {"test": 0.0}})


class EmbedCounter:
    """Counts the points a module has been called on (a context embedder: points
    embedded; a decoder: target points predicted)."""

    def __init__(self, module):
        self.points = 0
        module.register_forward_hook(self)

    def __call__(self, module, inputs, output):
        self.points += inputs[0].shape[0] * inputs[0].shape[1]


def load_script(folder: str, name: str):
    """``experiments/<folder>/<name>.py`` (``benchmarks`` or ``probes``) as a fresh module (neither is a package)."""
    path = Path(__file__).resolve().parent.parent / "experiments" / folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{folder}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_benchmark(name: str):
    """``experiments/benchmarks/<name>.py`` as a fresh module."""
    return load_script("benchmarks", name)
