"""What an :class:`~npbandit.models.NPModel` keeps between calls so that repeated work is not
repeated: the network held outside the module tree (and the one empty parameter the model
shows in its place), the growing buffer of a chain of streamed models' data, and the
moments at rows every t-batch of a call shares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from npbandit.surrogates.base import NeuralProcess

__all__ = ["HeldNetwork", "NetworkAnchor", "RowBuffer", "SharedRows", "SHARED_ROWS_MIN"]

# below this many rows saved, predicting the shared rows once (and their Jacobian) costs
# more than predicting them in every t-batch when a gradient is needed (CPU, cmanp-bo)
SHARED_ROWS_MIN = 100

#: ``predict_rows(rows, dtype)``: mean and variance (``n x m`` each, ``dtype``) at raw inputs ``rows`` (``n x d``)
RowPredictor = Callable[[Tensor, torch.dtype], tuple[Tensor, Tensor]]


class HeldNetwork:
    """Holds the network outside the ``nn.Module`` tree, so ``model.to(X)`` cannot change its
    dtype or device and its weights are not the model's parameters (see
    :mod:`npbandit.models.network`, "dtype and device")."""

    def __init__(self, surrogate: NeuralProcess) -> None:
        self.surrogate = surrogate


class NetworkAnchor(torch.nn.Module):
    """One empty, frozen parameter on the network's device and in its dtype: all that
    ``model.parameters()`` yields for an NPModel.

    Code that reads a model's device (and dtype) from ``next(model.parameters())`` --
    Ax's sensitivity analysis (``ax_parameter_sens``, behind ``SensitivityAnalysisPlot``
    and ``TopSurfacesAnalysis``) does -- finds the network's instead of raising
    ``StopIteration``, while there is still nothing to fit or count: the parameter
    (``empty``, shape ``(0,)``) holds no element and does not require a gradient.

    Like the network it stands for (:class:`HeldNetwork`), it keeps its device and dtype
    when the model is moved (``model.to(X)``, ``model.double()``: see "dtype and device"
    in :mod:`npbandit.models.network`) and puts nothing into the model's state dict nor
    reads anything from one, so state dicts keep their keys and load as before. It
    records the network's device and dtype when it is built; one anchor is shared by a
    model and every model conditioned from it, as the network is.
    """

    def __init__(self, surrogate: NeuralProcess) -> None:
        super().__init__()
        ref = next(surrogate.parameters())
        self.empty = torch.nn.Parameter(ref.new_empty(0), requires_grad=False)

    def _apply(self, fn: Callable[..., Any], recurse: bool = True) -> NetworkAnchor:
        """Left where it is by ``to`` / ``double`` / ``cuda`` (which all apply ``fn`` here)."""
        return self

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        """Nothing: the anchor is no state (the model's state dict keeps its keys)."""

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, local_metadata: dict[str, Any],
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Nothing to read (and no key missing from a state dict, old or new)."""


class RowBuffer:
    """Append-only rows shared by a chain of streamed models.

    Each model holds a view of the first ``n`` rows of ``store``; ``used`` rows are
    taken. Appending after the last taken row writes in place (the capacity doubles
    when full, so adding ``k`` rows costs ``O(k)`` amortised) and leaves every earlier
    view unchanged; appending after an older model's rows (a second branch) copies
    those rows into a new store.
    """

    def __init__(self, rows: Tensor) -> None:
        self.store = rows  # the caller's tensor until the first append; never written into
        self.used = rows.shape[0]

    def append(self, n: int, new: Tensor) -> tuple[RowBuffer, Tensor]:
        """``(rows, view)``: the rows ``[:n]`` followed by ``new``, and where they live."""
        new = new.detach().to(self.store)
        if n != self.used:
            rows = RowBuffer(torch.cat([self.store[:n], new]))
            return rows, rows.store
        end = n + new.shape[0]
        if end > self.store.shape[0]:
            grown = self.store.new_empty((max(2 * end, 16), *self.store.shape[1:]))
            grown[:n] = self.store[:n]
            self.store = grown
        self.store[n:end] = new
        self.used = end
        return self, self.store[:end]


class SharedRows:
    """The moments of one model at rows shared by every t-batch of a call, for the next call.

    qNEI appends its observed points to every candidate in every acquisition evaluation;
    a diagonal model's moments there do not depend on the candidates, so they are
    predicted once (values, and each row's Jacobian once a gradient is asked for) and
    reused while the rows are the same. The entry belongs to one model: a conditioned
    model starts without one, and ``NPModel._set_data`` (``load_state_dict``) drops it.
    A call uses it only when its rows at ``mask`` equal ``rows`` exactly, in the same
    dtype and device.

    ``mask``: ``q`` booleans, the positions of the shared rows (``own``: the others;
    ``order``: puts the other rows followed by the shared ones back in place); ``rows``:
    ``k x d`` (raw inputs, detached); ``mean`` / ``var``: ``k x m``, or ``None`` for rows
    seen once and not predicted apart (:meth:`seen`); ``jac_mean`` / ``jac_var``:
    ``k x m x d``, or ``None`` (not asked for yet). All in the rows' dtype, detached.
    """

    __slots__ = ("mask", "own", "order", "rows", "mean", "var", "jac_mean", "jac_var")

    def __init__(self, mask: Tensor, rows: Tensor, mean: Tensor | None, var: Tensor | None,
                 jac_mean: Tensor | None, jac_var: Tensor | None) -> None:
        self.mask, self.rows, self.mean, self.var = mask, rows, mean, var
        self.jac_mean, self.jac_var = jac_mean, jac_var
        self.own = ~mask
        # the other rows first, then the shared ones, back into the caller's order
        self.order = torch.argsort(torch.cat([torch.nonzero(self.own).squeeze(-1), torch.nonzero(mask).squeeze(-1)]))

    @classmethod
    def predict(cls, predict_rows: RowPredictor, mask: Tensor, rows: Tensor, jacobians: bool) -> SharedRows:
        """The entry for ``rows`` (``k x d``) at ``mask``, its moments from ``predict_rows``;
        with ``jacobians``, the rows' Jacobians too: one backward pass per output column and
        moment gives them for all rows at once (the rows' predictions are independent)."""
        rows = rows.detach().clone()
        if not jacobians:
            with torch.no_grad():
                mean, var = predict_rows(rows, rows.dtype)
            return cls(mask, rows, mean, var, None, None)
        leaf = rows.clone().requires_grad_(True)
        with torch.enable_grad():
            mean, var = predict_rows(leaf, rows.dtype)
            jac = [torch.stack([torch.autograd.grad(t[:, i].sum(), leaf, retain_graph=True)[0]
                                for i in range(t.shape[-1])], dim=-2)  # k x m x d
                   for t in (mean, var)]
        return cls(mask, rows, mean.detach(), var.detach(), jac[0], jac[1])

    @classmethod
    def seen(cls, mask: Tensor, rows: Tensor) -> SharedRows:
        """An entry without moments: ``rows`` (``k x d``) at ``mask`` were shared once."""
        return cls(mask, rows.detach().clone(), None, None, None, None)

    def complete(self, predict_rows: RowPredictor, jacobians: bool) -> SharedRows:
        """This entry, with its moments (and Jacobians when asked for) predicted if missing."""
        if self.mean is not None and (self.jac_mean is not None or not jacobians):
            return self
        return SharedRows.predict(predict_rows, self.mask, self.rows, jacobians)

    def matches(self, flat: Tensor) -> bool:
        """Whether every t-batch of ``flat`` (``b x q x d``) holds ``rows`` at ``mask``."""
        if flat.shape[-2] != self.mask.shape[0] or flat.dtype != self.rows.dtype or flat.device != self.rows.device:
            return False
        return bool((flat[:, self.mask] == self.rows).all())
