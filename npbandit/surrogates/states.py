"""What a surrogate's ``condition`` / ``update`` return: a conditioned state.

A state is an immutable value (``update`` returns a new one), batched along its first
dimension: :meth:`NPState.select` takes batch elements, repeats allowed, and
:meth:`NPState.repeat` tiles the batch (fantasies, q-batches, many restarts of an
acquisition on one context). :class:`ContextSetState` is the state of a model whose
``update`` re-conditions on the old and new points together; :func:`select_batch` is the
selection every model's own state class builds on.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

import torch
from torch import Tensor

__all__ = ["NPState", "ContextSetState", "select_batch"]


def select_batch(value: Any, index: Tensor, dim: int = 0) -> Any:
    """Every tensor in ``value`` (tensors, tuples, lists, dataclasses, None) at batch
    elements ``index`` along ``dim``: element ``i`` of the result is element ``index[i]``.
    A batch of one is expanded, not copied."""
    if isinstance(value, Tensor):
        if value.shape[dim] == 1:
            return value.expand(*value.shape[:dim], index.numel(), *value.shape[dim + 1:])
        return value.index_select(dim, index.to(value.device))
    if isinstance(value, (tuple, list)):
        return type(value)(select_batch(v, index, dim) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: select_batch(getattr(value, f.name), index, dim) for f in fields(value)})
    return value


class NPState:
    """Base class of every surrogate's conditioned state."""

    def select(self, index: Tensor) -> NPState:  # pragma: no cover - overridden
        """The state of batch elements ``index`` (a 1-D integer tensor, repeats allowed):
        element ``i`` of the result is element ``index[i]`` of this state."""
        raise NotImplementedError

    def repeat(self, times: int) -> NPState:
        """The state tiled ``times`` times along the batch: element ``k * B + b`` is element ``b``."""
        if not isinstance(times, int) or isinstance(times, bool) or times < 1:
            raise ValueError(f"times must be a positive int, got {times!r}")
        return self.select(torch.arange(times * self.batch_size) % self.batch_size)

    @property
    def batch_size(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def num_points(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class ContextSetState(NPState):
    """State of a model whose ``update`` re-conditions: the raw context plus its encoding.

    Attributes:
        xc: ``[B, N, dx]``; yc: ``[B, N, dy]``.
        encoding: whatever the model caches to answer ``predict`` cheaply.
    """

    xc: Tensor
    yc: Tensor
    encoding: Any

    @property
    def batch_size(self) -> int:
        return self.xc.shape[0]

    @property
    def num_points(self) -> int:
        return self.xc.shape[1]

    def select(self, index: Tensor) -> ContextSetState:
        return ContextSetState(select_batch(self.xc, index), select_batch(self.yc, index),
                               select_batch(self.encoding, index))
