"""New data for an :class:`~npbandit.models.NPModel`: streamed observations and fantasies,
both through the surrogate's ``update``, and output subsets.

Streaming
---------
``condition_on_observations`` folds new points in with the surrogate's ``update``
(constant cost for CMANP; the old points are not re-encoded) and keeps the
standardisation fixed -- BoTorch's own convention for outcome transforms in eval mode.
Fixed statistics slowly go stale as real data arrives, so for non-batched updates the
model keeps running moments of all outputs (updated in ``O(new points)``,
:mod:`npbandit.transforms.moments`) and, when the mean moved by more than
``restandardize_tol`` old stds or the std by more than a factor ``1 + restandardize_tol``,
re-standardises and re-conditions once from the raw data it keeps (one full
conditioning, O(N) for CMANP; with many points a single observation rarely moves the
moments that far). Fantasy (batched) updates never re-standardise.

**Cost per streamed update does not grow with N** (for a constant-cost ``update`` such as
CMANP's), outside those rare re-standardisations: ``train_X`` / ``train_Y`` of a chain of
streamed models are views into one growing buffer (:class:`~npbandit.models.cache.RowBuffer`:
amortised ``O(new points)``; branching twice from the same model copies once), the drift
check uses the running moments, and the noise estimate is kept until the points have grown
by a fraction ``NOISE_REFRESH`` and then read at most at ``noise_points`` observed points
(:mod:`npbandit.models.likelihood`). A fantasy model materialises its
``batch x (N + n) x d`` ``train_X`` / ``train_Y`` only when they are read.

With symmetric views, streaming updates and fantasies work view by view, and update cost
stays constant in ``N`` (``K`` constant states).
"""

from __future__ import annotations

import math
from typing import Any, Self

import torch
from botorch.exceptions.errors import UnsupportedError
from torch import Tensor

from npbandit.models.cache import RowBuffer
from npbandit.models.checks import broadcasts, check_output_indices
from npbandit.transforms.moments import drifted, merge_moments, moment_statistics, moments

__all__ = ["ConditioningMixin"]


class ConditioningMixin:
    """:class:`~npbandit.models.NPModel`'s ``condition_on_observations`` (streamed and
    fantasy updates) and ``subset_output``; each returns a new model made by ``_child``.

    A mixin of ``NPModel`` only: it reads and sets the model's state (``_state``,
    ``_rows``, ``_moments``, ``_y_mean`` / ``_y_std``, ``_pending`` ...) and uses its
    methods (``_child``, ``_to_surrogate_inputs``, ``_normalise_outputs``, ``_absorb``,
    ``_condition``, ``_set_statistics``, ``_element_index``, ``noise_variance``)."""

    def condition_on_observations(self, X: Tensor, Y: Tensor, **kwargs: Any) -> Self:
        """A new model with ``(X, Y)`` added through the surrogate's ``update``.

        ``X``: ``batch_shape x n' x d``; ``Y``: ``batch_shape' x n' x m`` (fantasies
        carry extra leading batch dimensions). The network is shared, not copied. New
        observations must lie in the box as ``train_X`` does, up to rounding (a ``ValueError``
        names the first point outside): a ``Normalize`` that learned its bounds from
        ``train_X`` maps new points beyond the observed range outside ``[0, 1]``, where the
        network was never trained; give it the search space's ``bounds`` instead. Fantasy
        points are queries, taken wherever they are (``fantasize`` has warned of them in the
        posterior it draws them from; see "Input domain" in :mod:`npbandit.models.network`).

        A batched (fantasy) model's predictions are differentiable in ``X`` and ``Y``, as
        a GP's are: qKnowledgeGradient, qNegIntegratedPosteriorVariance and
        qMultiStepLookahead depend on their candidates through them. A non-batched update
        (new real data) keeps no graph: its data are stored detached.

        BoTorch's ``noise`` keyword (the new points' noise variances, which a fixed-noise GP
        uses) is accepted for compatibility and not used: the network infers the noise level
        from the values it conditions on (see "Known noise" in :mod:`npbandit.models.likelihood`).

        A :meth:`subset_output` of a network with several outputs of its own raises
        ``UnsupportedError``: the network reads all its outputs together, so condition the full
        model, then take the subset.

        Sets eval mode first, as :meth:`posterior` does: the transforms are shared with the
        new model, and in training mode an outcome transform such as ``Standardize`` would
        learn its statistics afresh from the new ``Y`` alone, changing this model's posterior
        as well as the new one's."""
        for name, value in (("X", X), ("Y", Y)):
            if not isinstance(value, Tensor) or not value.is_floating_point():
                got = type(value).__name__ if not isinstance(value, Tensor) else f"one of dtype {value.dtype}"
                raise TypeError(f"{name} must be a floating-point torch.Tensor, got {got}")
        if self._output_indices is not None:
            raise UnsupportedError(
                f"this model is subset_output({self._output_indices}) of a network that reads its {self._m} outputs "
                f"together, so it cannot condition on {len(self._output_indices)} of them alone (nor fantasize, "
                f"which conditions): condition the full model on all {self._m} columns, then take subset_output")
        if X.dim() < 2 or X.shape[-1] != self._d:
            raise ValueError(f"X must have shape batch_shape x n x {self._d}, got {tuple(X.shape)}")
        if Y.dim() < 2 or Y.shape[-1] != self._m or Y.shape[-2] != X.shape[-2]:
            raise ValueError(f"Y must have shape batch_shape x {X.shape[-2]} x {self._m}, "
                             f"got {tuple(Y.shape)}")
        for name, value in (("X", X), ("Y", Y)):
            if not torch.isfinite(value).all():
                raise ValueError(f"{name} contains NaN or infinite values")
        self.eval()
        Y_t = Y
        if hasattr(self, "outcome_transform"):
            Y_t, _ = self.outcome_transform(Y, X=X)
        if not broadcasts(X.shape[:-2], Y.shape[:-2]) or not broadcasts(
                torch.broadcast_shapes(X.shape[:-2], Y.shape[:-2]), self.batch_shape):
            raise ValueError(f"X's and Y's batch shapes {tuple(X.shape[:-2])} and {tuple(Y.shape[:-2])} must broadcast "
                             f"with each other and with the model's batch_shape {tuple(self.batch_shape)}")
        new_batch = torch.broadcast_shapes(X.shape[:-2], Y.shape[:-2], self.batch_shape)
        if not new_batch:
            if X.shape[-2] == 0:  # nothing to add (the running moments of no points are NaN)
                return self._child()
            self._check_inputs("X", X)  # new data: refused outside the box
            return self._stream(X, Y, Y_t)
        return self._fantasy(X, Y, Y_t, new_batch)

    def get_fantasy_model(self, inputs: Tensor, targets: Tensor, **kwargs: Any) -> Self:
        """:meth:`condition_on_observations` as GPyTorch's model lists call it: BoTorch's
        ``ModelListGP`` (one model per output) hands each model its new points ``inputs``
        (``batch_shape x n' x d``, in the model's own input space, as ``condition_on_observations``
        takes them) and ``targets`` (``batch_shape' x n'``, without an output dimension) already
        passed through the model's outcome transform, which is therefore undone here before
        conditioning. One output only: a model list splits its outputs one model each, and a
        several-output model's targets would arrive flattened. ``noise`` is accepted and not
        used, as in :meth:`condition_on_observations`."""
        if self.num_outputs != 1:
            raise UnsupportedError(
                f"get_fantasy_model conditions a one-output model (ModelListGP's use); this model has "
                f"{self.num_outputs} outputs: call condition_on_observations with all {self.num_outputs} columns")
        if not isinstance(targets, Tensor) or not targets.is_floating_point():
            got = type(targets).__name__ if not isinstance(targets, Tensor) else f"one of dtype {targets.dtype}"
            raise TypeError(f"targets must be a floating-point torch.Tensor, got {got}")
        n = inputs.shape[-2] if isinstance(inputs, Tensor) and inputs.dim() >= 2 else None
        if targets.dim() < 1 or (n is not None and targets.shape[-1] != n):
            raise ValueError(f"targets must have shape batch_shape x {n if n is not None else 'n'} (GPyTorch's, "
                             f"without an output dimension), got {tuple(targets.shape)}")
        Y = targets.unsqueeze(-1)
        if hasattr(self, "outcome_transform"):
            self.eval()  # untransform with the statistics the targets were transformed with
            Y, _ = self.outcome_transform.untransform(Y)
        return self.condition_on_observations(inputs, Y, **kwargs)

    def _stream(self, X: Tensor, Y: Tensor, Y_t: Tensor) -> Self:
        """Non-batched update; its work does not grow with N (see "Streaming" in the module docstring)."""
        X_in = self._to_surrogate_inputs(X)
        child = self._child()
        n = self.train_X.shape[-2]
        rows_X, child.train_X = self._rows[0].append(n, X)
        rows_Y, child.train_Y = self._rows[1].append(n, Y)
        if self._rows[2] is None:
            rows_Y_t, child._train_Y_t = None, child.train_Y
        else:
            rows_Y_t, child._train_Y_t = self._rows[2].append(n, Y_t)
        child._rows = (rows_X, rows_Y, rows_Y_t)
        child._moments = merge_moments(self._moments, moments(Y_t))
        # kept while the points grow by less than NOISE_REFRESH, as a GP keeps its noise when conditioned
        child._noise_from = self._streamed_noise_from(child.train_X.shape[-2])
        child._noise_var = None if child._noise_from is None else self._noise_var
        if self._standardize and drifted(*moment_statistics(child._moments), self._y_mean, self._y_std, self._tol):
            child._noise_var = child._noise_from = None  # in the old standardised units: read afresh
            child._set_statistics(child._train_Y_t)
            child._state = child._condition(child._to_surrogate_inputs(child.train_X), child._train_Y_t)
        else:
            with torch.no_grad():
                child._state = self._absorb(self._state, X_in.unsqueeze(0),
                                            self._normalise_outputs(Y_t).unsqueeze(0))
        return child


    def _fantasy(self, X: Tensor, Y: Tensor, Y_t: Tensor, new_batch: torch.Size) -> Self:
        """The batched model ``new_batch`` with ``(X, Y)`` added. Not under ``no_grad``: its
        predictions are differentiable in ``X`` and ``Y``, as a GP's fantasy model is, which
        is all qKnowledgeGradient's value depends on its candidate through."""
        n = X.shape[-2]
        n_new = math.prod(new_batch)
        self.noise_variance()  # computed on the real data, inherited by the fantasies
        child = self._child()
        # each new element starts from the model element it broadcasts (all its outputs and views)
        child._state = self._state.select(self._state_rows(self._element_index(new_batch)))
        if n:
            X_in = self._to_surrogate_inputs(X.expand(*new_batch, n, self._d))
            Y_n = self._normalise_outputs(Y_t.expand(*new_batch, n, Y_t.shape[-1]))
            child._state = self._absorb(child._state, X_in.reshape(n_new, n, X_in.shape[-1]),
                                        Y_n.reshape(n_new, n, Y_n.shape[-1]))
        child._batch_shape = new_batch
        # train_X / train_Y (batch x (N + n) x d) are built only if read: a fantasy per
        # acquisition evaluation (qKG) would otherwise copy all N points every time
        child._pending, child._train_X, child._train_Y = (self, X, Y), None, None
        child._train_Y_t = child._rows = child._moments = None
        return child

    def subset_output(self, idcs: list[int]) -> Self:
        """The same model restricted to outputs ``idcs`` (indices into this model's outputs).

        Outputs modelled by NPs of their own (a one-output network on several columns) are
        taken apart: the new model holds only those outputs' network states, data columns,
        standardisation, noise and outcome transform (``outcome_transform.subset_output``,
        which raises ``NotImplementedError`` for a transform without it, as for a BoTorch
        GP), so it conditions on ``len(idcs)`` columns like a model built on them. A network
        with several outputs of its own reads them together: the new model predicts all
        and reports ``idcs``."""
        idcs = check_output_indices("idcs", idcs, self.num_outputs)
        if self.surrogate.y_dim == 1 and self._output_indices is None:
            return self._output_subset(idcs)
        child = self._child()
        # indices into this model's outputs: a subset of a subset picks from the first's
        child._output_indices = [i if self._output_indices is None else self._output_indices[i] for i in idcs]
        child._num_outputs = len(idcs)
        return child

    def _output_subset(self, idcs: list[int]) -> Self:
        """:meth:`subset_output` of a model whose outputs are separate network tasks."""
        X, Y = self.train_X, self.train_Y  # a fantasy model's are built here
        child = self._child()
        if hasattr(self, "outcome_transform"):
            child.outcome_transform = self.outcome_transform.subset_output(idcs)
        index = torch.tensor(idcs)
        child._state = self._state.select(self._state_rows(torch.arange(math.prod(self.batch_shape)), index))
        child._tasks = child._num_outputs = len(idcs)
        child._pending = None
        child._train_X, child._train_Y = X, Y[..., idcs]
        if self._rows is not None:  # a fantasy model keeps none
            child._rows = (self._rows[0], RowBuffer(child._train_Y), None)
            child._train_Y_t = child._train_Y
            if self._rows[2] is not None:  # outcome-transformed outputs of their own
                child._train_Y_t = self._train_Y_t[..., idcs]
                child._rows = child._rows[:2] + (RowBuffer(child._train_Y_t),)
            count, mean, m2 = self._moments
            child._moments = (count, mean[index], m2[index])
        child._y_mean, child._y_std = self._y_mean[index], self._y_std[index]
        child._noise_var, child._noise_from = self.noise_variance()[index], None
        child._known_noise = None if self._known_noise is None else self._known_noise[..., index]
        child._train_Yvar = None if self._train_Yvar is None else self._train_Yvar[..., idcs]
        return child
