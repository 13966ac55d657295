"""Argument checks shared by :class:`~npbandit.models.NPModel` and its helpers.

Each raises an error naming the argument and what was expected; none changes its input
(:func:`check_bounds` only converts a non-tensor to float64).
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
import torch
from botorch.exceptions.warnings import InputDataWarning
from torch import Tensor

from npbandit.surrogates.base import NeuralProcess
from npbandit.validation import is_real

__all__ = ["broadcasts", "check_matrix", "check_training_data", "check_output_indices", "check_bounds",
           "check_model_arguments", "check_points", "check_input_transform", "box_excursion", "box_limits",
           "DOMAIN_EPS", "warn_unstandardised_outputs", "TRAINED_OUTPUT_MAGNITUDE", "FAR_FACTOR"]

#: how far an input may lie outside its box and still count as inside, in float eps of the
#: inputs' dtype (at least float32's) times the box's scale per column (the larger of its side
#: and its corners' magnitudes): what rounding leaves of a point on the box's face after the
#: affine maps between the user's units and the network's (an input transform's subtraction and
#: division, then NPModel's ``bounds`` and ``input_domain`` maps). Each such operation moves a
#: result by at most half an eps of its magnitude, and a chain of them by a few; 8 leaves room
#: for them. The eps is never below float32's because bounds often went through float32 on the
#: way even when the data are float64 (Ax keeps its ``Normalize`` bounds at float32 precision,
#: so a value on the bound 0.1 lands 2.5e-9 outside [0, 1]); the allowance, 1e-6 of the box,
#: stays far below any real excursion.
DOMAIN_EPS = 8

#: the largest output magnitude any shipped network was conditioned on in training. The ``bo`` prior
#: standardises each context by its own mean and std over at most 100 points (its ``n_context``), and a
#: value standardised among ``n`` points is at most ``(n - 1) / sqrt(n) < sqrt(100) = 10`` in magnitude;
#: the ``gp1d`` prior, which does not standardise, draws a unit-variance GP, past 10 with probability
#: about 1e-23
TRAINED_OUTPUT_MAGNITUDE = 10.0
#: how far past :data:`TRAINED_OUTPUT_MAGNITUDE` the outputs an ``NPModel(standardize=False)`` hands its
#: network may reach before :func:`warn_unstandardised_outputs` warns: a factor 10, so that outputs
#: standardised over a larger pool than the model's own rows (a per-arm bandit's rewards on the scale of
#: every arm's, where a rare large reward stands some 10 stds out) pass, while outputs in raw units
#: (``1e4``), orders of magnitude past anything the network learned, do not
FAR_FACTOR = 10.0


def check_matrix(name: str, value: Any) -> None:
    """``value`` must be a finite floating-point ``n x columns`` tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a floating-point torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point torch.Tensor, got one of dtype {value.dtype} "
                        f"(convert it: {name}.double())")
    if value.dim() != 2:
        raise ValueError(f"{name} must be a 2-D tensor (n x columns), got shape {tuple(value.shape)}")
    if not torch.isfinite(value).all():
        raise ValueError(f"{name} contains NaN or infinite values")


def check_training_data(name: str, value: Any) -> None:
    """``value`` (``train_X`` or ``train_Y``) must be one data set: a finite floating-point
    ``n x columns`` tensor (:func:`check_matrix`). A tensor of more dimensions is a BoTorch
    batched model's data (a ``SingleTaskGP`` on ``batch_shape x n x d``, as
    ``batch_cross_validation`` builds its folds), refused with a ``ValueError`` that says to
    build one ``NPModel`` per data set."""
    if isinstance(value, Tensor) and value.dim() > 2:
        raise ValueError(f"{name} must be a 2-D tensor (n x columns), got shape {tuple(value.shape)}: NPModel "
                         "holds one data set, not a batch of them (a SingleTaskGP's batch_shape x n x d, as "
                         "batch_cross_validation builds); build one NPModel per data set")
    check_matrix(name, value)


def check_output_indices(name: str, indices: Any, m: int | None) -> list[int]:
    """``indices``, a non-empty list (or tuple) of ints in ``[0, m)`` (``m=None``: any ``>= 0``),
    as a list of Python ints. NumPy integers count as ints: BoTorch's ``ModelListGP`` hands each
    model its indices so."""
    if (not isinstance(indices, (list, tuple)) or not indices
            or any(isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral) or i < 0
                   or (m is not None and i >= m) for i in indices)):
        below = "" if m is None else f" below {m}"
        raise ValueError(f"{name} must be a non-empty list of output indices{below}, got {indices!r}")
    return [int(i) for i in indices]


def check_bounds(bounds: Any, d: int) -> Tensor:
    """``bounds`` as a finite ``2 x d`` tensor (lower row, upper row) with every upper
    bound above its lower bound; a non-tensor is converted to float64."""
    if not isinstance(bounds, Tensor):
        bounds = torch.as_tensor(bounds, dtype=torch.float64)
    if bounds.shape != (2, d):
        raise ValueError(f"bounds must be a 2 x {d} tensor (lower row, upper row), got shape {tuple(bounds.shape)}")
    if not torch.isfinite(bounds).all():
        raise ValueError("bounds must be finite")
    if not (bounds[1] > bounds[0]).all():
        column = int(torch.nonzero(~(bounds[1] > bounds[0]))[0])
        raise ValueError(f"bounds must have every upper bound (row 1) above its lower bound (row 0); column {column} "
                         f"has {bounds[0, column].item():g} .. {bounds[1, column].item():g}")
    return bounds


def check_input_transform(input_transform: Any, bounds: Any) -> None:
    """Refuse the input transforms an NPModel would use wrongly, naming what to do instead:

    - one that maps a point to several (``is_one_to_many``: ``InputPerturbation``,
      ``AppendFeatures``): the model predicts at the points it is given, one each;
    - one with learnable parameters (``Warp``'s concentrations): nothing fits them, so
      they would keep their initial values (freeze them, ``requires_grad_(False)``, to
      use the transform as it is; Ax builds its transforms itself, so there the way out is
      to leave it out of ``ModelConfig``'s ``input_transform_classes``);
    - a ``Normalize`` that learns its bounds from ``train_X``: candidates beyond the
      data's range then reach the network outside the box it was trained on, where its
      predictions are unreliable, and an acquisition optimiser is drawn there;
    - a ``Normalize`` together with ``bounds``: ``bounds`` maps the transform's output, so
      the inputs would be mapped onto the box twice;
    - an ``InputStandardize`` that learns its means and stds from ``train_X``: z-scores are
      centred on zero, so part of the data always lies outside the box.

    One that changes the number of columns (``FilterFeatures``) shows only in its output, so
    the model refuses it when it first maps ``train_X`` (``NetworkMixin._to_surrogate_inputs``).
    """
    from botorch.models.transforms.input import ChainedInputTransform, InputStandardize, Normalize

    parts = list(input_transform.values()) if isinstance(input_transform, ChainedInputTransform) else [input_transform]
    for part in (input_transform, *parts):
        if getattr(part, "is_one_to_many", False):
            raise ValueError(f"input_transform {type(part).__name__} maps each point to several; NPModel predicts "
                             "one value per point it is given, so transforms of that kind are not supported")
    learnable = [name for name, p in input_transform.named_parameters() if p.requires_grad]
    if learnable:
        raise ValueError(f"input_transform has learnable parameters ({', '.join(learnable)}) and NPModel fits "
                         "nothing, so they would keep their initial values; freeze them "
                         "(input_transform.requires_grad_(False)) to use the transform as it is, or leave it out "
                         "(in Ax, out of ModelConfig's input_transform_classes)")
    for part in parts:
        if isinstance(part, Normalize) and part.learn_bounds:
            raise ValueError("input_transform Normalize learns its bounds from train_X, so candidates beyond the "
                             "data's range reach the network outside the box it was trained on; give it the search "
                             "space's bounds, Normalize(d, bounds=bounds), or pass bounds=bounds to NPModel "
                             "instead of the transform")
        if isinstance(part, InputStandardize) and part.learn_coefficients:
            raise ValueError("input_transform InputStandardize maps train_X to z-scores (mean 0, std 1 per column), "
                             "not onto the box the network was trained on, so part of the data lies outside it; "
                             "give the search space's box instead: Normalize(d, bounds=bounds), or bounds=bounds "
                             "to NPModel")
        if isinstance(part, Normalize) and bounds is not None:
            raise ValueError("bounds and a Normalize input_transform both map the inputs onto the unit cube, and "
                             "bounds applies to the transform's output, so the inputs would be mapped twice; give "
                             "one of them (bounds=bounds, or Normalize(d, bounds=bounds))")


def check_points(X: Any, d: int) -> None:
    """``X`` must be a finite floating-point ``batch_shape x q x d`` tensor (a posterior's inputs)."""
    if not isinstance(X, Tensor):
        raise TypeError(f"X must be a floating-point torch.Tensor, got {type(X).__name__}")
    if not X.is_floating_point():
        raise TypeError(f"X must be a floating-point torch.Tensor, got one of dtype {X.dtype} (convert it: X.double())")
    if X.dim() < 2 or X.shape[-1] != d:
        raise ValueError(f"X must have shape batch_shape x q x {d}, got {tuple(X.shape)}")
    if not torch.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values")


def broadcasts(shape: torch.Size | tuple[int, ...], other: torch.Size | tuple[int, ...], to: bool = False) -> bool:
    """Whether ``shape`` and ``other`` broadcast together (``to``: and the result is ``other``)."""
    try:
        joined = torch.broadcast_shapes(shape, other)
    except RuntimeError:
        return False
    return not to or joined == torch.Size(other)


def box_limits(lower: Tensor, upper: Tensor, like: Tensor) -> tuple[Tensor, Tensor]:
    """The thresholds :func:`box_excursion` compares inputs with: ``lower - tol`` and
    ``upper + tol`` (``d`` values each, in ``like``'s dtype and device), ``tol`` the
    :data:`DOMAIN_EPS` rounding allowance (in float32 eps for float64 inputs too). An input ``x`` lies in the box iff
    ``low <= x <= high`` column by column, so a caller checking many inputs against one box
    can keep these two tensors."""
    lower, upper = lower.to(like), upper.to(like)
    scale = torch.maximum(upper - lower, torch.maximum(lower.abs(), upper.abs()))
    tol = DOMAIN_EPS * max(torch.finfo(like.dtype).eps, torch.finfo(torch.float32).eps) * scale
    return lower - tol, upper + tol


def box_excursion(name: str, X: Tensor, lower: Tensor, upper: Tensor, box: str, note: str = "") -> str | None:
    """``None`` when ``X`` (``... x n x d``, after any input transform) lies in the box
    ``lower`` .. ``upper`` (``d`` values each) up to rounding (:data:`DOMAIN_EPS`); else what
    is outside, for an error: ``name``, the first offending row (its index in ``X``'s leading
    dimensions) and column, its value, the box's name (``box``, e.g. ``"bounds"``) and that
    column's range, ``note`` on the box, and how many rows are outside."""
    if X.numel() == 0:
        return None
    X = X.detach()
    lower, upper = lower.to(X), upper.to(X)
    low, high = box_limits(lower, upper, X)
    outside = (X < low) | (X > high)
    if not bool(outside.any()):
        return None
    *row, column = torch.nonzero(outside)[0].tolist()
    value = float(X[(*row, column)])
    where = f"row {row[0]}" if len(row) == 1 else f"row {tuple(row)}"
    return (f"{name} {where}, column {column} is {value:.9g} (after any input_transform), outside {box} "
            f"[{float(lower[column]):.9g}, {float(upper[column]):.9g}] (that column's{note}; "
            f"{int(outside.any(dim=-1).sum())} row(s) outside)")


def check_model_arguments(surrogate: Any, train_X: Any, train_Y: Any, train_Yvar: Any,
                          input_domain: tuple[float, float], restandardize_tol: float, noise_points: Any,
                          n_views: Any, *, standardize: Any = True, input_transform: Any = None,
                          outcome_transform: Any = None) -> None:
    """The checks of :class:`~npbandit.models.NPModel`'s constructor that need no checkpoint
    card: the surrogate's kind, the data's shapes (``train_X`` ``n x D``, ``train_Y`` /
    ``train_Yvar`` ``n x m`` with ``m`` the surrogate's outputs, or any ``m >= 1`` for a
    one-output surrogate) and the options. How many of ``train_X``'s columns the network
    may read is :func:`~npbandit.models.columns.resolve_columns`'s to check."""
    if not isinstance(surrogate, NeuralProcess):
        raise TypeError(f"surrogate must be an npbandit NeuralProcess, got {type(surrogate).__name__}")
    if surrogate.outcome_transform is not None:  # its predictive is not Gaussian in the data's units
        raise ValueError(f"surrogate reads its outputs through an outcome transform "
                         f"({surrogate.outcome_transform.describe()}); NPModel gives BoTorch a Gaussian "
                         "posterior in the data's units, which such a model does not have: use a checkpoint "
                         "without one (the *-bo ones), or set surrogate.outcome_transform = None and pass "
                         "train_Y in the network's own units")
    check_training_data("train_X", train_X)
    check_training_data("train_Y", train_Y)
    if train_X.shape[0] != train_Y.shape[0]:
        raise ValueError(f"train_X and train_Y must have the same number of rows, "
                         f"got {train_X.shape[0]} and {train_Y.shape[0]}")
    if train_Yvar is not None:
        check_matrix("train_Yvar", train_Yvar)
        if train_Yvar.shape != train_Y.shape:
            raise ValueError(f"train_Yvar must have train_Y's shape {tuple(train_Y.shape)}, "
                             f"got {tuple(train_Yvar.shape)}")
        if (train_Yvar < 0).any():
            raise ValueError("train_Yvar (observation noise variances) must be non-negative")
    if train_X.shape[0] == 0:
        raise ValueError("train_X must hold at least one point")
    if train_Y.shape[-1] != surrogate.y_dim and surrogate.y_dim != 1:
        raise ValueError(f"train_Y must have {surrogate.y_dim} column(s) (the surrogate's outputs; a one-output "
                         f"surrogate models any number of columns, one NP each), got {train_Y.shape[-1]}")
    if train_Y.shape[-1] == 0:
        raise ValueError("train_Y must have at least one column")
    if isinstance(input_domain, (str, bytes)) or not hasattr(input_domain, "__len__") or len(input_domain) != 2 \
            or not all(is_real(v) for v in input_domain):  # a str's first characters were compared
        raise ValueError(f"input_domain must be (low, high), two real numbers, got {input_domain!r}")
    if not input_domain[0] < input_domain[1]:
        raise ValueError(f"input_domain must be (low, high) with low < high, got {input_domain}")
    if not is_real(restandardize_tol) or not restandardize_tol > 0:
        raise ValueError(f"restandardize_tol must be positive, got {restandardize_tol!r}")
    if isinstance(noise_points, (bool, np.bool_)) or not isinstance(noise_points, (int, np.integer)) \
            or noise_points < 1:
        raise ValueError(f"noise_points must be a positive int, got {noise_points!r}")
    if not isinstance(standardize, (bool, np.bool_)):  # 1 or "no" would read as true
        raise TypeError(f"standardize must be a bool, got {type(standardize).__name__} {standardize!r}")
    from botorch.models.transforms.input import InputTransform
    from botorch.models.transforms.outcome import OutcomeTransform

    for name, value, kind in (("input_transform", input_transform, InputTransform),
                              ("outcome_transform", outcome_transform, OutcomeTransform)):
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"{name} must be a BoTorch {kind.__name__} or None, got {type(value).__name__}")
    if isinstance(n_views, (bool, np.bool_)) or not isinstance(n_views, (int, np.integer)) or n_views < 1:
        raise ValueError(f"n_views must be a positive int, got {n_views!r}")
    if n_views > 1 and surrogate.joint_predictive:
        raise ValueError(f"n_views > 1 averages marginal predictives; {type(surrogate).__name__} is "
                         "joint-predictive and a mixture of its joints is not the Gaussian joint it gives BoTorch "
                         "(use n_views=1)")


def warn_unstandardised_outputs(Y_t: Tensor, stacklevel: int = 3) -> None:
    """Warn (``InputDataWarning``, BoTorch's category for data a model was not built for) when the
    outputs ``Y_t [n, m]`` an ``NPModel(standardize=False)`` hands its network as they are (after
    any outcome transform) reach past ``FAR_FACTOR * TRAINED_OUTPUT_MAGNITUDE`` (100) in some
    column: the network was never trained on outputs on that scale, its posterior there is an
    extrapolation, and nothing else would say so."""
    limit = FAR_FACTOR * TRAINED_OUTPUT_MAGNITUDE
    largest = Y_t.detach().abs().amax(dim=-2) if Y_t.shape[-2] else Y_t.new_zeros(Y_t.shape[-1])
    far = (largest > limit).nonzero().flatten().tolist()
    if far:
        column = far[0]
        warnings.warn(f"NPModel(standardize=False) hands the network the outputs as they are, and train_Y column "
                      f"{column} reaches {float(largest[column]):.2e} in magnitude (after any outcome_transform), "
                      f"far past the {TRAINED_OUTPUT_MAGNITUDE:g} that no network was trained beyond: its posterior "
                      "is an extrapolation; pass standardize=True, or outputs already on the network's scale "
                      "(outcome_transform=Standardize(m))", InputDataWarning, stacklevel=stacklevel)
