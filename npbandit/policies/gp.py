"""The one place npbandit builds and fits BoTorch's ``SingleTaskGP``.

``BOPolicy(model="gp")`` and ``GPUCBPolicy`` both go through :func:`fit_single_task_gp`,
so the exact-GP baselines share one configuration: BoTorch's default kernel and
priors (or the Matérn-5/2 kernel with the same dimension-scaled lengthscale prior,
``kernel="matern52"``), a ``Standardize`` outcome transform (also for a single observation, where
BoTorch centres it and keeps the scale at 1; or, ``standardize=False``, outcomes the caller put on
its own scale and a prior mean of 0), the marginal likelihood maximised with
``fit_gpytorch_mll``, and, for deterministic objectives, a fixed tiny observation
variance instead of an inferred one.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

__all__ = ["GP_KERNELS", "NOISE_FREE_VAR", "fit_single_task_gp", "gp_hyperparameters"]

#: the GP's fixed observation variance with ``noise_free=True``, in standardised units
NOISE_FREE_VAR = 1e-6
#: the kernels :func:`fit_single_task_gp` builds: ``"rbf"``, BoTorch's default (an RBF kernel with
#: a LogNormal lengthscale prior scaled with sqrt(d), Hvarfner et al. 2024), and ``"matern52"``,
#: the Matérn-5/2 kernel with the same prior (the kernel of Snoek et al. 2012 and of Optuna's
#: GPSampler)
GP_KERNELS = ("rbf", "matern52")


def _check_data(X: Any, Y: Any) -> None:
    for name, value in (("X", X), ("Y", Y)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
        if not value.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got {value.dtype}")
        if not torch.isfinite(value).all():
            raise ValueError(f"{name} must be finite (NaN or inf found)")
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must have shape [n, d] with n, d >= 1, got {tuple(X.shape)}")
    if Y.ndim != 2 or Y.shape[0] != X.shape[0] or Y.shape[1] < 1:
        raise ValueError(f"Y must have shape [n, m] = [{X.shape[0]}, m] to match X, got {tuple(Y.shape)}")
    if X.dtype != Y.dtype:
        raise TypeError(f"X and Y must share a dtype, got {X.dtype} and {Y.dtype}")


def fit_single_task_gp(X: torch.Tensor, Y: torch.Tensor, *, noise_free: bool = False, kernel: str = "rbf",
                       hyperparameters: dict[str, torch.Tensor] | None = None, standardize: bool = True):
    """A ``SingleTaskGP`` on ``(X, Y)``, fitted (or given ``hyperparameters``), in eval mode.

    Args:
        X: inputs, shape ``[n, d]`` (float64 advised, as BoTorch does), ``n >= 1``.
        Y: outcomes, shape ``[n, m]`` (``m > 1``: a batched multi-output GP, independent
            outputs, e.g. an objective and its constraints), same dtype as ``X``.
        noise_free: tell the GP the outcomes are exact: a fixed observation variance
            of :data:`NOISE_FREE_VAR` in the standardised units the GP works in, as
            BoTorch documents for noise-free data (``train_Yvar``). ``False`` infers
            the noise (BoTorch's default likelihood: LogNormal(-4, 1) prior, floor 1e-4).
        kernel: one of :data:`GP_KERNELS`; ``"rbf"`` (default) is ``SingleTaskGP``'s own.
            ``"matern52"``'s sample paths are twice differentiable rather than infinitely
            smooth, so it assumes less smoothness than the RBF kernel and suits objectives
            with sharper features.
        hyperparameters: a state dict from :func:`gp_hyperparameters`; loaded instead
            of running the fit (reusing an earlier fit between refits).
        standardize: ``True``: ``Y`` standardised by its own mean and std (``Standardize``)
            and a constant prior mean fitted with the rest. ``False``: ``Y`` is on a scale the
            caller chose, centred and of about unit std over more data than ``Y`` (GP-UCB's
            rewards of one arm on the scale of every arm's): no outcome transform and a prior
            mean of 0, so far from its data the GP predicts the caller's centre with the
            prior's std, where a GP standardised by a single outcome would predict that
            outcome with a std of 1 in its units.

    Returns:
        ``botorch.models.SingleTaskGP`` in eval mode, with a ``Standardize(m)`` outcome
        transform unless ``standardize=False``; its posterior is in ``Y``'s units.

    Raises:
        TypeError / ValueError: non-tensor, non-float, non-finite or misshapen ``X`` / ``Y``;
            a ``standardize`` that is not a bool (``TypeError``).
    """
    from botorch.exceptions.warnings import InputDataWarning
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize
    from gpytorch.mlls import ExactMarginalLogLikelihood
    from gpytorch.utils.warnings import NumericalWarning

    _check_data(X, Y)
    if not isinstance(standardize, bool):
        raise TypeError(f"standardize must be a bool, got {type(standardize).__name__}")
    if kernel not in GP_KERNELS:
        raise ValueError(f"kernel must be one of {GP_KERNELS}, got {kernel!r}")
    covar_module = None
    if kernel == "matern52":
        from botorch.models.utils.gpytorch_modules import get_covar_module_with_dim_scaled_prior

        covar_module = get_covar_module_with_dim_scaled_prior(ard_num_dims=X.shape[-1], use_rbf_kernel=False)
    Yvar = None
    if noise_free:
        # Standardize divides Yvar by Y's variance (a single or constant Y is left unscaled)
        var = Y.var(dim=0) if len(Y) > 1 and standardize else torch.zeros(Y.shape[-1], dtype=Y.dtype)
        Yvar = (NOISE_FREE_VAR * torch.where(var > 1e-16, var, torch.ones_like(var))).expand_as(Y).clone()
    with warnings.catch_warnings():
        # gpytorch floors a fixed float64 noise at 1e-6 and warns when the standardised Yvar
        # lands a rounding error below it; every other warning reaches the user
        warnings.filterwarnings("ignore", message="Very small noise values detected", category=NumericalWarning)
        if not standardize or (len(Y) > 1 and bool((Y.var(dim=0) <= 1e-16).any())):
            # outcomes on the caller's scale, or all equal (a bandit arm that always paid 0: Standardize
            # keeps their scale): BoTorch calls them unstandardised, which is meant, or true and nothing
            # the user can act on
            warnings.filterwarnings("ignore", message=r"Data \(outcome observations\) is not standardized",
                                    category=InputDataWarning)
        options: dict[str, Any] = {"outcome_transform": Standardize(Y.shape[-1])}
        if not standardize:
            from gpytorch.means import ZeroMean

            options = {"outcome_transform": None, "mean_module": ZeroMean()}
        model = SingleTaskGP(X, Y, train_Yvar=Yvar, covar_module=covar_module, **options)
        if hyperparameters is not None:
            model.load_state_dict(hyperparameters, strict=False)
        else:
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
    return model.eval()


def gp_hyperparameters(model) -> dict[str, torch.Tensor]:
    """The fitted hyperparameters of a :func:`fit_single_task_gp` model, without the
    outcome transform's statistics (those belong to the data, not the fit).

    Args:
        model: a model returned by :func:`fit_single_task_gp`.

    Returns:
        A detached copy of its state dict minus the ``outcome_transform`` entries, for
        ``fit_single_task_gp(..., hyperparameters=...)`` on new data.
    """
    return {k: v.detach().clone() for k, v in model.state_dict().items() if "outcome_transform" not in k}
