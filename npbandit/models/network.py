"""How an :class:`~npbandit.models.NPModel` talks to its network: raw inputs onto the box
the network was trained on, outputs standardised, states conditioned and updated, and
predictions read -- in every symmetric view when the model has views.

Inputs and outputs
------------------
* **Inputs** are mapped onto the box the surrogate was trained on (``[0, 1]^d`` for
  ``*-bo``): from ``bounds`` when given, after a BoTorch ``input_transform`` (e.g.
  ``Normalize``) when given; with neither, the inputs must already lie in the box (see
  "Input domain").
  The columns the network reads (all, or those ``columns`` chose: "Wider data") are
  zero-padded to the surrogate's input width (the ``bo`` prior was trained that way); a
  network that reads any width (``any_x_dim``, DATNP) is given them as they are.
* **Outputs** go through the optional BoTorch ``outcome_transform`` and then, for
  surrogates whose prior standardised outputs (``*-bo``), are standardised with
  the training data's mean and std (:mod:`npbandit.transforms.standardize`), as in training.

Input domain
------------
A network says nothing reliable about inputs outside the box it was trained on: it was
never shown one, and unlike a GP, which falls back to its prior away from its data, its
output there is not an extrapolation of anything it learned. Data and queries are treated
apart, as a BoTorch user would expect of each:

* **Data** -- ``train_X``, and the ``X`` of ``condition_on_observations`` with new
  observations (not fantasies) -- must lie, after the input transform, in ``bounds`` (or,
  without them, in ``input_domain``): a point outside is refused with a ``ValueError``
  naming the argument, the row (its index in the leading dimensions), the column, the
  value and the box. Data outside the box is mis-scaled data, and conditioning the network
  on it would change every later prediction.
* **Queries** -- the ``X`` of ``posterior`` and ``joint_sample``, and fantasy points -- are
  predicted wherever they are, with an ``InputDataWarning`` (once per call site) when one
  lies outside: a GP's user expects a posterior anywhere, and an optimiser kept inside the
  search space's bounds never asks there when the model has those bounds.
* **The box itself** comes from ``bounds`` or from an input transform, never from the data:
  a ``Normalize`` that learns its bounds from ``train_X`` (BoTorch's ``Normalize(d)``) is
  refused when the model is built (:func:`~npbandit.models.checks.check_input_transform`),
  since every candidate past the data's range would then reach the network outside its box
  and an acquisition optimiser is drawn to such points (to the search space's corners, for
  ``cmanp-bo``); so is a ``Normalize`` given together with ``bounds``, which would map the
  inputs twice.

Rounding is not an excursion: an input within :data:`~npbandit.models.checks.DOMAIN_EPS`
float eps (of its dtype, at least float32's, times the box's scale) of a face counts as
inside, since a transform's arithmetic can leave a point that lies on the face a little
past it, and bounds often went through float32 (Ax keeps them at float32 precision).
Several outputs
---------------
A network with one output (every ``*-bo`` checkpoint) models a ``train_Y`` of ``m > 1``
columns as ``m`` independent neural processes sharing the network, one per column -- a
model list, as BoTorch's ``ModelListGP`` is a list of GPs, each output standardised on its
own. They share the inputs, so the model folds the outputs into the network's batch
dimension: model element ``b`` holds network tasks ``b m .. b m + m - 1`` (output-minor),
one conditioning or prediction call serves every output, and the predictions come back
as ``[b, M, m]``. The posterior is then independent across outputs (a multitask normal
whose covariance is block diagonal: one block per output, see
:mod:`npbandit.models.posterior` and :mod:`npbandit.models.joint`), and
``subset_output`` keeps only the tasks of the outputs it names. A network with ``m``
outputs of its own (``y_dim = m``) reads the columns together instead, as it was trained.

Wider data
----------
A network reads at most ``width`` inputs (its ``x_dim``: 6 for the ``*-bo`` checkpoints; for
a network of any width, the widest it was built for).
For ``train_X`` with more columns the model conditions on a set ``S`` of at most ``width``
of them, chosen once from the training data (``columns``; by default, for ``d > width``,
the most relevant ones: :class:`~npbandit.models.columns.RelevantColumns`), and reads
``X[..., S]`` of every point it predicts at, after the ``input_transform`` and ``bounds``
(which stay ``d`` wide). Its posterior is therefore flat in the other columns: an
acquisition optimised over all ``d`` columns sets those of ``S`` and leaves the others
wherever its optimiser puts them, and points equal in ``S`` are one point to it (they
share a draw, as equal points do). Streamed observations and fantasies keep ``S``; a
model built on new data (Ax builds one per trial) chooses again.
:attr:`~npbandit.models.NPModel.columns` says which columns were read.

Symmetric views
---------------
The ``bo`` prior is unchanged by permuting the input dimensions and by reflecting any
of them about the box's centre, so its posterior predictive is the same in every such
view of the data; a trained network is only approximately so, and its errors differ
from view to view. With ``n_views = K > 1`` the model conditions the network on ``K``
views of the data at once (view 0 the data as given, the others fixed symmetries:
:class:`~npbandit.surrogates.views.InputViews`; one batched network call serves them
all) and predicts the moments of the equal-weight mixture of the ``K`` predictives:
the mean of the means, and the mean variance plus the variance of the means.
``from_pretrained`` and ``construct_inputs`` use the number the checkpoint's card
recommends (``card["use"]["n_views"]``, default 1; fewer for ``d = 1``, whose box has two
symmetries): views raise the held-out log-likelihood on the ``bo`` prior for some more
network time per call, so a card recommends them where a search improved with them.
Streaming updates, fantasies and the noise estimate work view by view, and update cost
stays constant in ``N`` (``K`` constant states). Joint-predictive surrogates take no
views (a mixture of their joints is not the Gaussian joint the posterior gives BoTorch).

Threads
-------
Every network call (conditioning, updates, predictions) runs inside
:class:`~npbandit.threads.torch_threads`: one torch thread unless ``NPBANDIT_THREADS`` /
``OMP_NUM_THREADS`` say otherwise, the caller's count given back afterwards. Gradients
flow back through these calls outside the block, with the caller's count: a BoTorch
loop of the user's own runs entirely at npbandit's count when wrapped in
``with torch_threads():`` itself.

dtype and device
----------------
The network stays in its own dtype (float32 from ``load_surrogate``) and is held
outside the model's parameters (:class:`~npbandit.models.cache.HeldNetwork`), so
``model.to(X)`` -- which analytic acquisition functions call -- cannot silently upcast
it: inputs and outputs are converted to the network's dtype and device here, and
predictions back to the caller's. ``next(model.parameters())`` is an empty, frozen
parameter on the network's device and in its dtype, which moving the model leaves too
(:class:`~npbandit.models.cache.NetworkAnchor`). Inputs of any floating dtype are accepted;
posteriors come back in ``X``'s dtype, or in a wider one when an ``outcome_transform`` holds
its statistics in it (a ``Standardize`` fitted on float64 ``train_Y`` turns a float32 ``X``'s
posterior float64, as it does a BoTorch GP's). ``construct_inputs`` loads a named checkpoint in
float32 too unless told otherwise (``network_dtype``). In float32 the acquisition value
is smooth only to about 1e-7, so BoTorch's L-BFGS-B ends a few more restarts "ABNORMAL"
and ``optimize_acqf`` starts again more often than in float64; a float64 network call
costs more than those retries.
"""

from __future__ import annotations

import warnings

import torch
from botorch.exceptions.warnings import InputDataWarning
from torch import Tensor

from npbandit.models.checks import box_excursion, box_limits
from npbandit.surrogates.states import NPState
from npbandit.threads import torch_threads
from npbandit.transforms.standardize import standardization

__all__ = ["NetworkMixin"]


class NetworkMixin:
    """:class:`~npbandit.models.NPModel`'s side of the network: input mapping, output
    standardisation, conditioning and prediction (with views, the mixture over them).

    A mixin of ``NPModel`` only: it reads the model's options (``_bounds``,
    ``_input_domain``, ``_standardize``, ``_views``, ``_columns``, ``_box_limits``: a dict the
    box checks keep their thresholds in), its ``surrogate``, ``_state`` and
    ``_tasks`` (the network tasks per model element: ``m`` for a one-output network modelling
    ``m`` columns, else 1; see "Several outputs"), and sets ``_y_mean`` / ``_y_std`` (``m``
    float64 values each)."""

    @property
    def _m(self) -> int:
        """The outputs the model's state holds (``num_outputs`` unless a native multi-output
        network's ``subset_output`` picked some of them)."""
        return self._tasks * self.surrogate.y_dim

    def _fold(self, X_in: Tensor, Y_n: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """``X_in [b, n, x_dim]`` and ``Y_n [b, n, m]`` as the network's tasks, one per model
        element and output: ``[b T, n, x_dim]`` and ``[b T, n, 1]`` (``T = _tasks``; unchanged
        for ``T = 1``)."""
        T = self._tasks
        if T == 1:
            return X_in, Y_n
        X_in = X_in.repeat_interleave(T, dim=0)
        if Y_n is not None:
            Y_n = Y_n.transpose(-1, -2).reshape(-1, Y_n.shape[-2], 1)
        return X_in, Y_n

    def _unfold(self, t: Tensor) -> Tensor:
        """Per-task values ``[b T, M, 1]`` back to the model's ``[b, M, T]`` (``T = _tasks``)."""
        T = self._tasks
        if T == 1:
            return t
        return t.reshape(-1, T, t.shape[-2]).transpose(-1, -2)

    def _state_rows(self, elements: Tensor, tasks: Tensor | None = None) -> Tensor:
        """The rows of the state's batch that hold model elements ``elements`` (1-D): for each
        element its tasks ``tasks`` (1-D; default all ``_tasks`` of them), each in every view,
        in the state's order (element-major, then task, then view)."""
        tasks = torch.arange(self._tasks) if tasks is None else tasks
        rows = (elements.unsqueeze(-1) * self._tasks + tasks).reshape(-1)
        if self._views is not None:
            k = self._views.n_views
            rows = (rows.unsqueeze(-1) * k + torch.arange(k)).reshape(-1)
        return rows

    def _read_columns(self, X: Tensor) -> Tensor:
        """The columns of ``X`` (``... x d``) the network reads: ``... x len(model.columns)``."""
        return X if self._columns is None else X[..., list(self._columns)]

    def _to_surrogate_inputs(self, X: Tensor, check: str | None = None) -> Tensor:
        """Raw ``... x d`` inputs -> the surrogate's inputs ``... x x_dim`` in its dtype/device
        (the columns it reads, zero-padded; as many as it reads for a network of any width,
        ``any_x_dim``).

        ``check``: the name of the argument ``X`` came from, when it must be checked to lie in
        the box (:meth:`_check_inputs`).

        An input transform must keep the ``d`` columns: ``bounds``, the box and ``columns``
        name ``train_X``'s columns, and the network reads the transform's output through
        them. One that changes the width (``FilterFeatures``) is refused, with a
        ``ValueError``, when the model first maps ``train_X`` at construction."""
        X = self.transform_inputs(X)
        if X.shape[-1] != self._d:
            raise ValueError(
                f"input_transform {type(self.input_transform).__name__} maps train_X's {self._d} columns to "
                f"{X.shape[-1]}; NPModel's bounds, input box and columns are in train_X's columns, so it takes "
                "only input transforms that keep them; to have the network read some columns only, pass "
                "columns=[...] (indices into train_X) instead of a transform that drops the others")
        if check is not None:
            self._check_box(check, X)
        if self._bounds is not None:
            lo, hi = self._bounds.to(X)
            low, high = self._input_domain
            X = low + (X - lo) / (hi - lo) * (high - low)
        ref = next(self.surrogate.parameters())
        X = self._read_columns(X).to(device=ref.device, dtype=ref.dtype)
        pad = self.surrogate.input_width(X.shape[-1]) - X.shape[-1]
        if pad:
            X = torch.cat([X, X.new_zeros(X.shape[:-1] + (pad,))], dim=-1)
        return X

    def _check_inputs(self, name: str, X: Tensor, refuse: bool = True) -> None:
        """Raw inputs ``X`` (``... x d``, argument ``name``) outside the box mapped onto the
        network's: refused (``refuse``: data), else warned about once per call site (queries;
        see "Input domain" in the module docstring)."""
        self._check_box(name, self.transform_inputs(X.detach()), refuse)

    def _check_box(self, name: str, X: Tensor, refuse: bool = True) -> None:
        """:func:`~npbandit.models.checks.box_excursion` of inputs ``X`` after the input
        transform, against ``bounds`` or, without them, ``input_domain``: a ``ValueError``
        saying where, or (``refuse=False``) an ``InputDataWarning``.

        The box's thresholds (:func:`~npbandit.models.checks.box_limits`) are kept per
        dtype and device, so a point inside costs two comparisons (an acquisition
        optimiser asks about every candidate)."""
        if X.numel() == 0:
            return
        key = (X.dtype, X.device)
        limits = self._box_limits.get(key)
        if limits is None:
            limits = self._box_limits[key] = box_limits(*self._box(), X)
        if not bool(((X < limits[0]) | (X > limits[1])).any()):
            return
        low, high = self._input_domain
        if self._bounds is not None:
            box = "bounds"
            note = f", mapped onto input_domain [{low:g}, {high:g}]^d, the box the surrogate was trained on"
        else:
            box, note = "input_domain", ": the box the surrogate was trained on"
        found = box_excursion(name, X, *self._box(), box, note)
        if found is not None and refuse:
            raise ValueError(f"{found}; the network was never shown such a point, so NPModel refuses it as data: "
                             "give bounds=<2 x d tensor> (or an input_transform such as Normalize(d, bounds=...)) "
                             "that contain every point the model is given")
        if found is not None:  # one text, so that Python's default filter shows it once per call site
            warnings.warn("NPModel is asked about points outside the box its network was trained on (after the "
                          "input transform: bounds, or input_domain without them), where its output is an "
                          "extrapolation it was never trained for; keep the points within the bounds the model "
                          "was given", InputDataWarning, stacklevel=4)

    def _box(self) -> tuple[Tensor, Tensor]:
        """The box inputs must lie in after the input transform: ``bounds`` or, without
        them, ``input_domain`` (lower and upper, ``d`` values each)."""
        if self._bounds is not None:
            return self._bounds[0], self._bounds[1]
        low, high = self._input_domain
        return torch.full((self._d,), low), torch.full((self._d,), high)

    def _set_statistics(self, Y_t: Tensor) -> None:
        if self._standardize:
            mean, std = standardization(Y_t.detach().to(torch.float64))
            self._y_mean, self._y_std = mean.squeeze(-2), std.squeeze(-2)
        else:
            self._y_mean = torch.zeros(Y_t.shape[-1], dtype=torch.float64)
            self._y_std = torch.ones(Y_t.shape[-1], dtype=torch.float64)

    def _normalise_outputs(self, Y_t: Tensor) -> Tensor:
        ref = next(self.surrogate.parameters())
        Y = (Y_t.to(torch.float64) - self._y_mean.to(Y_t.device)) / self._y_std.to(Y_t.device)
        return Y.to(device=ref.device, dtype=ref.dtype)

    def _condition(self, X_in: Tensor, Y_t: Tensor) -> NPState:
        with torch.no_grad():
            return self._absorb(None, X_in.unsqueeze(0), self._normalise_outputs(Y_t).unsqueeze(0))

    def _absorb(self, state: NPState | None, X_in: Tensor, Y_n: Tensor) -> NPState:
        """The network's state after conditioning on (``state is None``) or adding
        ``X_in [b, n, x_dim]``, ``Y_n [b, n, m]`` (network units), for every output and view."""
        X_in, Y_n = self._fold(X_in, Y_n)
        if self._views is not None:
            X_in, Y_n = self._views.inputs(X_in), self._views.outputs(Y_n)
        with torch_threads():
            if state is None:
                return self.surrogate.condition(X_in, Y_n)
            return self.surrogate.update(state, X_in, Y_n)

    def _predict(self, X_in: Tensor, state: NPState | None = None) -> tuple[Tensor, Tensor]:
        """The network's predictive mean and variance at ``X_in [b, M, x_dim]`` (``[b, M, m]``
        each): with views, the moments of the mixture over them. ``state``: the network
        state to predict from (one made by :meth:`_absorb` for ``b`` model elements);
        ``None``: the model's own."""
        X_in, _ = self._fold(X_in)
        state = self._state if state is None else state
        with torch_threads():
            # X_in is built here from checked inputs, in the network's dtype and device
            if self._views is None:
                dist = self.surrogate.predict(state, X_in, check=False)
                mean, var = dist.loc, dist.variance
            else:
                dist = self.surrogate.predict(state, self._views.inputs(X_in), check=False)
                mean, var = self._views.combine(dist.loc, dist.variance)
        return self._unfold(mean), self._unfold(var)

    def _joint(self, X_in: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """A joint-predictive network's one-shot joint at ``X_in [b, M, x_dim]``, flattened
        target-major over the ``M m`` values (network units): mean ``[b, M m]``, covariance
        factors ``[b, M m, r]`` and diagonal ``[b, M m]``. Outputs modelled by separate tasks
        are independent: their factors occupy separate columns (``r = T r'`` for ``T``
        tasks of rank ``r'``), so the covariance is block diagonal across outputs."""
        joint = getattr(self.surrogate, "joint", None)
        if not callable(joint):
            raise TypeError(f"{type(self.surrogate).__name__} says joint_predictive but has no joint(state, xt) "
                            "method returning its low-rank-plus-diagonal joint")
        b, M, T = X_in.shape[0], X_in.shape[1], self._tasks
        with torch_threads():
            dist = joint(self._state, self._fold(X_in)[0])
        loc, factor, diag = dist.loc, dist.cov_factor, dist.cov_diag
        if T == 1:
            return loc, factor, diag
        r = factor.shape[-1]
        loc, diag = (t.reshape(b, T, M).transpose(-1, -2).reshape(b, M * T) for t in (loc, diag))
        factor = factor.reshape(b, T, M, r).transpose(1, 2)  # b x M x T x r
        eye = torch.eye(T, dtype=factor.dtype, device=factor.device)
        factor = (factor.unsqueeze(-2) * eye[:, :, None]).reshape(b, M * T, T * r)
        return loc, factor, diag

    def _sample(self, X_in: Tensor, num_samples: int, generator: torch.Generator | None, noise: Tensor,
                **blocks: int) -> Tensor:
        """The network's joint draws at ``X_in [1, n, x_dim]`` of a model without views and
        batch, ``noise`` (``m`` variances) held out: ``[num_samples, 1, n, m]``; outputs
        modelled by separate tasks are drawn apart (independent)."""
        with torch_threads():
            if self._tasks == 1:
                return self.surrogate.sample(self._state, X_in, num_samples, generator, noise=noise, **blocks)
            draws = [self.surrogate.sample(self._state.select(torch.tensor([t])), X_in, num_samples, generator,
                                           noise=noise[t:t + 1], **blocks) for t in range(self._tasks)]
        return torch.cat(draws, dim=-1)

