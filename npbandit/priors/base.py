"""Task priors: seeded generators of meta-learning batches ``(xc, yc, xt, yt)``."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from npbandit.text import printable, shorten
from npbandit.validation import check_int

__all__ = ["TaskBatch", "Prior", "step_generator", "check_model_width", "checked_spec"]


@dataclass(frozen=True)
class TaskBatch:
    """One batch of tasks: ``xc [B, Nc, dx]``, ``yc [B, Nc, dy]``, ``xt [B, Nt, dx]``, ``yt [B, Nt, dy]``.

    ``info`` carries per-task details (kernel, hyperparameters, true dimension) for
    tests and evaluation breakdowns; models never see it.

    ``yt_mean``, ``yt_var`` (``[B, Nt, dy]``, optional): the moments of ``yt`` given
    the context and the task's hyperparameters, in the same units as ``yt``, for
    priors that know them exactly (the GP priors). The trainer's ``loss="expected"``
    minimises the expected negative log-likelihood under them instead of at the one
    sampled ``yt``.

    ``yt_cov_factor`` (``[B, Nt, Nt]``, optional, ``dy = 1``): a factor ``F`` of the targets'
    joint covariance given the context, ``yt ~ N(yt_mean, F F^T)`` (lower triangular; its
    rows' squared norms are ``yt_var``), for the expected loss of joint models.
    """

    xc: Tensor
    yc: Tensor
    xt: Tensor
    yt: Tensor
    info: dict[str, Any]
    yt_mean: Tensor | None = None
    yt_var: Tensor | None = None
    yt_cov_factor: Tensor | None = None

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> TaskBatch:
        """The batch on ``device`` and in ``dtype`` (every tensor is floating-point)."""
        def move(t: torch.Tensor) -> torch.Tensor:
            return t.to(device=device, dtype=dtype)

        moments = [None if t is None else move(t) for t in (self.yt_mean, self.yt_var, self.yt_cov_factor)]
        return TaskBatch(move(self.xc), move(self.yc), move(self.xt), move(self.yt), self.info, *moments)


def step_generator(seed: int, index: int) -> torch.Generator:
    """The generator of batch ``index`` in the stream with seed ``seed``.

    Every batch has its own seed, so a stream can be restarted at any index (this
    is what makes training resumable without saving RNG state). Streams of different
    seeds are disjoint for their first 1,000,003 batches (``(seed, 1_000_003)`` is
    ``(seed + 1, 0)``); changing the map would change every run's batches."""
    seed, index = check_int("seed", seed), check_int("index", index, minimum=0)
    return torch.Generator().manual_seed((seed * 1_000_003 + index) % (2**63 - 1))


class Prior(ABC):
    """A distribution over regression tasks.

    Attributes:
        name: registry name (``gp1d``, ``bo``, ``wheel``).
        x_dim, y_dim: the input/output widths of the tensors it produces (and so
            of the model that trains on it).
        input_domain: ``(low, high)`` box every input coordinate is drawn from;
            the BoTorch adapter maps a user's bounds onto it.
        standardizes_outputs: whether outputs are standardised by the context's
            statistics (:mod:`npbandit.transforms.standardize`); the adapter then does the same.
        input_symmetric: whether permuting the input dimensions and reflecting any of
            them about the box's centre leaves the distribution of tasks unchanged; the
            adapter may then average over such views (:mod:`npbandit.surrogates.views`).
        suite_fixed: the constructor parameters :meth:`evaluation_suite` sets itself
            (``gp1d``: ``kernel``, its suite scoring both kernels), which a training run's
            evaluation parameters (``--eval-prior-set``) may therefore not set.
        fixed_width: whether every batch's inputs are ``x_dim`` wide; ``False``: each batch
            has its own width, at most ``x_dim`` (the ``bo`` prior with ``padding="none"``),
            for models that read any width (``NeuralProcess.any_x_dim``).
        pads_inputs: whether some batches are zero-padded to ``x_dim`` columns (the ``bo``
            prior with ``padding="zeros"`` and a ``d < x_dim``): right for a network of fixed
            width, wrong for one that reads any width (it would read the padding as inputs).
        computes_on_device: whether :meth:`sample` takes ``device=`` and does its arithmetic
            there (the exact GP draws' kernel matrices and Cholesky factors: most of a ``bo``
            batch's cost). Its random numbers still come from the CPU ``generator``, so a batch is
            the same draw on every device, up to the device's floating-point rounding.

    A new prior subclasses this, implements :meth:`sample` and :meth:`spec`, may override
    :meth:`evaluation_suite`, and is registered by name with
    :func:`npbandit.priors.register_prior`.
    """

    name: str
    x_dim: int
    y_dim: int
    input_domain: tuple[float, float]
    standardizes_outputs: bool = False
    input_symmetric: bool = False
    suite_fixed: tuple[str, ...] = ()
    fixed_width: bool = True
    pads_inputs: bool = False
    computes_on_device: bool = False

    @abstractmethod
    def sample(self, batch_size: int, generator: torch.Generator) -> TaskBatch:
        """Draw ``batch_size`` tasks (float32, CPU) using only ``generator``: a
        :class:`TaskBatch` with ``xc [batch_size, Nc, x_dim]``, ``yc [batch_size, Nc, y_dim]``,
        ``xt [batch_size, Nt, x_dim]``, ``yt [batch_size, Nt, y_dim]`` (``Nc``, ``Nt`` drawn
        per batch as the prior says)."""

    @classmethod
    def domain_of(cls, spec: dict[str, Any]) -> tuple[float, float]:
        """The input box of the prior ``spec`` describes (a card's ``"prior"``): where a
        prior's box is a parameter, the spec says which; else the class's."""
        return cls.input_domain

    @classmethod
    def symmetric_in(cls, spec: dict[str, Any]) -> bool:
        """Whether the prior ``spec`` describes is ``input_symmetric``."""
        return cls.input_symmetric

    @classmethod
    def outcome_transform(cls, spec: dict[str, Any]) -> Any:
        """The outcome transform (:mod:`npbandit.transforms`) of networks trained on the
        prior ``spec`` describes, or ``None``: they see outputs as observed. A checkpoint
        card declares it and a loaded surrogate applies it. (The ``bo`` prior's
        standardisation by the context is not one: it depends on the data a model is
        conditioned on, and ``NPModel`` applies it.)"""
        return None

    @classmethod
    def evaluation_suite(cls, **params: Any) -> dict[str, Prior]:
        """The named priors a checkpoint trained on this prior (built with ``params``) is
        scored on, its *evaluation suite* (:mod:`npbandit.training.evaluation` draws each
        one's batches from the fixed evaluation seed's stream, disjoint from training's).

        The default is the prior itself, ``{cls.name: cls(**params)}``: held-out tasks of the
        training distribution. A prior overrides it to score sub-families separately (``gp1d``:
        each kernel; ``bo``: each input dimension).

        Raises:
            TypeError: a parameter the prior does not take.
        """
        return {cls.name: cls(**params)}

    @abstractmethod
    def spec(self) -> dict[str, Any]:
        """JSON-serialisable description of the prior and its parameters (for checkpoint cards)."""

    def batch(self, batch_size: int, seed: int, index: int, device: torch.device | str | None = None) -> TaskBatch:
        """Batch ``index`` of the stream seeded by ``seed`` (deterministic): :meth:`sample`
        with :func:`step_generator` ``(seed, index)``, checked against :meth:`sample`'s
        contract (training and evaluation draw every batch here), so that a prior's bug is
        reported as the prior's rather than as a model's input error.

        ``device`` (default: the CPU): where the batch is returned; a prior that
        ``computes_on_device`` also draws it there (the trainer's GPU runs without loader
        workers), any other draws it on the CPU and moves it.

        Raises:
            ValueError: ``batch_size`` not a positive int, ``seed`` not an int, or ``index``
                not a non-negative int; :meth:`sample` returned something else than a
                :class:`TaskBatch` of float tensors of the shapes it promises
                (``batch_size`` tasks, ``x_dim`` / ``y_dim`` wide), or non-finite values.
        """
        check_int("batch_size", batch_size, minimum=1)
        generator = step_generator(seed, index)
        on_device = device is not None and torch.device(device) != torch.device("cpu")
        if on_device and self.computes_on_device:
            batch = self.sample(batch_size, generator, device=torch.device(device))
        else:
            batch = self.sample(batch_size, generator)
            if on_device and isinstance(batch, TaskBatch):
                batch = batch.to(device)
        _check_batch(batch, batch_size, self.x_dim, self.y_dim,
                     f"prior {self.name!r}: {type(self).__name__}.sample({batch_size}, generator)", self.fixed_width)
        return batch


def check_model_width(prior: Prior, any_x_dim: bool, who: str) -> None:
    """Refuse batches a network cannot read as the prior means them: a network of fixed width
    (``any_x_dim`` false) needs every batch ``x_dim`` wide, a network of any width needs no
    zero padding (it would read padding columns as inputs); ``who`` names the network.

    Raises:
        ValueError: naming ``who``, the prior and the setting to change.
    """
    if not any_x_dim and not prior.fixed_width:
        raise ValueError(f"{who} reads a fixed width x_dim={prior.x_dim}, but prior {prior.name!r} draws batches of "
                         "their own width (bo's padding='none'): pad them (bo: padding='zeros') or train a model "
                         "of any width (datnp)")
    if any_x_dim and prior.pads_inputs:
        raise ValueError(f"{who} reads any width, but prior {prior.name!r} zero-pads batches to x_dim={prior.x_dim} "
                         "columns, which it would read as inputs: draw them at their own width (bo: padding='none')")


def checked_spec(prior: Prior) -> dict[str, Any]:
    """``prior.spec()`` as a checkpoint card and a training run's saved state store it: a dict
    of JSON values, read back (a tuple as a list).

    Raises:
        TypeError: ``spec()`` returns no dict, or a dict holding a value JSON cannot (a
            tensor, an array, an object), naming the prior's ``spec``.
    """
    who = f"prior {prior.name!r}: {type(prior).__name__}.spec()"
    spec = prior.spec()
    if not isinstance(spec, dict):
        raise TypeError(f"{who} must return a dict (the prior's description a checkpoint card stores), got "
                        f"{type(spec).__name__}")
    try:
        return json.loads(json.dumps(spec))
    except (TypeError, ValueError) as err:
        raise TypeError(f"{who} must return a dict of JSON values (str, number, bool, None, list, dict; a tensor's "
                        f"value as float(t) or t.tolist()), got {shorten(printable(repr(spec)), 200)}: {err}") from None


def _check_batch(batch: Any, batch_size: int, x_dim: int, y_dim: int, who: str, fixed_width: bool = True) -> None:
    """``batch`` must be a :class:`TaskBatch` of ``batch_size`` tasks: ``xc [B, Nc, x_dim]``,
    ``yc [B, Nc, y_dim]``, ``xt [B, Nt, x_dim]``, ``yt [B, Nt, y_dim]`` and, where present,
    ``yt_mean`` / ``yt_var`` ``[B, Nt, y_dim]`` and ``yt_cov_factor`` ``[B, Nt, Nt]``, all
    floating-point and finite (``fixed_width=False``: inputs of the batch's own width, ``1..x_dim``,
    instead of ``x_dim``). A few comparisons of shapes and one sum per tensor: small
    next to drawing the batch and to the model step that reads it.

    Raises:
        ValueError: otherwise, starting with ``who`` (what produced the batch).
    """
    if not isinstance(batch, TaskBatch):
        raise ValueError(f"{who} must return a TaskBatch, got {type(batch).__name__}")
    tensors = {"xc": batch.xc, "yc": batch.yc, "xt": batch.xt, "yt": batch.yt}
    tensors.update({k: getattr(batch, k) for k in ("yt_mean", "yt_var", "yt_cov_factor")
                    if getattr(batch, k) is not None})
    for key, value in tensors.items():
        if not (isinstance(value, Tensor) and value.is_floating_point() and value.ndim == 3):
            raise ValueError(f"{who} returned {key} that is not a float tensor [batch, points, width]: "
                             f"{type(value).__name__} {getattr(value, 'dtype', '')} "
                             f"{list(getattr(value, 'shape', []))}")
    nc, nt = batch.xc.shape[1], batch.xt.shape[1]
    if not fixed_width:
        if not 1 <= batch.xc.shape[-1] <= x_dim:
            raise ValueError(f"{who} returned xc {list(batch.xc.shape)}: its width must be in 1..x_dim={x_dim}")
        x_dim = batch.xc.shape[-1]
    expected = {"xc": (batch_size, nc, x_dim), "yc": (batch_size, nc, y_dim), "xt": (batch_size, nt, x_dim),
                "yt": (batch_size, nt, y_dim), "yt_mean": (batch_size, nt, y_dim),
                "yt_var": (batch_size, nt, y_dim), "yt_cov_factor": (batch_size, nt, nt)}
    for key, value in tensors.items():
        if tuple(value.shape) != expected[key]:
            raise ValueError(f"{who} returned {key} of shape {list(value.shape)}; expected {list(expected[key])} "
                             f"(batch_size {batch_size}, {nc} context and {nt} target points, x_dim {x_dim}, "
                             f"y_dim {y_dim})")
    # each tensor's sum is finite if every value is (a NaN or inf propagates), at a tenth of
    # isfinite's cost; only a non-finite sum (or one that overflowed) is looked at value by value
    if not bool(torch.stack([v.sum() for v in tensors.values()]).isfinite().all()):
        bad = {k: int((~torch.isfinite(v)).sum()) for k, v in tensors.items()}
        key = next((k for k, n in bad.items() if n), None)
        if key is not None:
            raise ValueError(f"{who} returned {key} with {bad[key]} NaN or infinite value(s)")


def uniform(generator: torch.Generator, low: float, high: float, *shape: int) -> Tensor:
    """A float64 tensor of ``shape`` drawn uniformly on ``[low, high)`` from ``generator``."""
    return low + (high - low) * torch.rand(*shape, generator=generator, dtype=torch.float64)


def log_uniform(generator: torch.Generator, low: float, high: float, *shape: int) -> Tensor:
    """A float64 tensor of ``shape`` whose logarithm is uniform on ``[log low, log high)``
    (``low``, ``high > 0``): every factor of ten in the range is equally likely."""
    log_low, log_high = float(torch.log(torch.tensor(low))), float(torch.log(torch.tensor(high)))
    return torch.exp(uniform(generator, log_low, log_high, *shape))


def randint(generator: torch.Generator, low: int, high: int) -> int:
    """An int in ``[low, high)``."""
    return int(torch.randint(low, high, (1,), generator=generator).item())
