"""Which inputs matter, estimated from a run's observations in all its inputs: the scores
that let :class:`~npbandit.acquisition.redealt_sketch.RedealtSketch` give the inputs that
matter a bin each (its ``relevance=``).

* :func:`ard_relevance` -- per input, the inverse squared lengthscale of an exact GP with an
  ARD RBF kernel fitted to the observations (all inputs at once, so an input acting through a
  ridge or an interaction scores as high as one with a trend);
* :func:`concentrated_ard` -- those scores kept only for the inputs that stand out from the
  median input by :data:`CONCENTRATION` (the others 0), so only inputs the fit singles out
  lead bins, and a phase without any is dealt at random.

Why a gate: forcing ``d_e`` leaders every phase (plain :func:`ard_relevance`) hands the bins
to the top scorers even when the scores barely separate them from the rest, as on a problem
whose every input is active, and takes the deal's variety away for nothing. With at most half
of the inputs relevant to the fit, the median input is one it found inert, whose lengthscale
drifts to the prior's long end, and the inputs it uses score orders of magnitude above it. The
fit on few points explains the data with few inputs even when all act (on 40 points of a sum
of ten sines it singles out three or four), so the gate does not turn leaders off on every
all-active problem; it keeps out the inputs the fit does not clearly use. The rule was chosen
by measurement on the choosing suite of ``experiments/benchmarks/highd_subspace.py``.

The fit sees at most :data:`MAX_ROWS` observations (the most recent), so its cost is bounded
in a long run: an exact GP's cost grows with the cube of its rows.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["ard_relevance", "concentrated_ard", "ARD_ITERATIONS", "CONCENTRATION", "MAX_ROWS"]

#: the most L-BFGS-B iterations of :func:`ard_relevance`'s fit
ARD_ITERATIONS = 100

#: how many times the median score an input's must be for :func:`concentrated_ard` to keep it
CONCENTRATION = 10.0

#: the most observations :func:`ard_relevance` fits (the most recent ones)
MAX_ROWS = 200


def ard_relevance(X: torch.Tensor, Y: torch.Tensor, *, iterations: int = ARD_ITERATIONS) -> torch.Tensor:
    """Per column of ``X`` (``[n, D]``), the inverse squared lengthscale of an exact GP with
    an ARD RBF kernel fitted to the first column of ``Y`` (``[n]`` or ``[n, m]``), on the last
    :data:`MAX_ROWS` rows.

    The model: each column rescaled to ``[0, 1]`` over the points (a constant column scores
    0), the output standardised, unit output scale, a noise variance with floor ``1e-6``; the
    lengthscales have BoTorch's dimension-scaled prior (LogNormal(sqrt(2) + log(D) / 2,
    sqrt(3)), Hvarfner et al. 2024; a normal prior on the log lengthscale), bounded to
    ``[0.01, 1000]``, and start from ``exp(sqrt(2) + log(D) / 2 - 3)`` (floor 0.05); a column
    the data do not inform drifts to the prior's long lengthscales. The log marginal
    likelihood plus the log prior is maximised with at most ``iterations`` L-BFGS-B steps
    (SciPy). Deterministic for given data.

    Returns ``[D]`` float64 scores ``>= 0`` (a score's scale is ``1 / lengthscale**2`` in the
    rescaled units); all 0 with fewer than three points or a constant output.

    Raises:
        ValueError: ``X`` not ``[n, D]``, ``Y`` of another length, non-finite values, or
            ``iterations`` not a positive int.
    """
    import scipy.optimize

    X = torch.as_tensor(X).detach().to(torch.float64)
    if X.ndim != 2:
        raise ValueError(f"X must have shape [n, D], got {tuple(X.shape)}")
    Y = torch.as_tensor(Y).detach().to(torch.float64)
    if Y.ndim not in (1, 2) or Y.shape[0] != len(X):
        raise ValueError(f"Y must be [n] or [n, m] with n = {len(X)} (the rows of X), got shape {tuple(Y.shape)}")
    Y = Y.reshape(len(X), -1)
    if not (torch.isfinite(X).all() and torch.isfinite(Y).all()):
        raise ValueError("X and Y must be finite (NaN or inf found)")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    X, Y = X[-MAX_ROWS:], Y[-MAX_ROWS:]
    n, D = X.shape
    y = Y[:, 0]
    if n < 3 or float(y.std()) == 0.0:
        return torch.zeros(D, dtype=torch.float64)
    low, span = X.min(dim=0).values, X.max(dim=0).values - X.min(dim=0).values
    varies = span > 0
    Xs = torch.where(varies, (X - low) / torch.where(varies, span, torch.ones(())), torch.zeros(()))
    y = (y - y.mean()) / y.std()
    loc, scale = 2**0.5 + 0.5 * float(np.log(D)), 3**0.5
    eye = torch.eye(n, dtype=torch.float64)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        params = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
        log_ls, log_noise = params[:D], params[D]
        K = torch.exp(-0.5 * torch.cdist(Xs / log_ls.exp(), Xs / log_ls.exp()).pow(2)) + log_noise.exp() * eye
        L, info = torch.linalg.cholesky_ex(K)
        if int(info) != 0:  # not positive definite in float64: a large value sends the line search back
            return 1e10, np.zeros_like(theta)
        alpha = torch.cholesky_solve(y[:, None], L)
        nll = 0.5 * (y[:, None] * alpha).sum() + torch.log(torch.diagonal(L)).sum()
        prior = (0.5 * ((log_ls - loc) / scale) ** 2).sum()  # LogNormal on ls: normal on log ls (+ const)
        value = (nll + prior) / n
        value.backward()
        return float(value.detach()), params.grad.numpy().copy()

    start = np.append(np.full(D, max(loc - scale**2, np.log(0.05))), np.log(1e-3))
    bounds = [(np.log(0.01), np.log(1e3))] * D + [(np.log(1e-6), 0.0)]
    with torch.enable_grad():
        fit = scipy.optimize.minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds,
                                      options={"maxiter": int(iterations)})
    log_ls = torch.as_tensor(fit.x[:D], dtype=torch.float64)
    score = torch.exp(-2.0 * log_ls)
    return torch.where(varies, score, torch.zeros(()))


def concentrated_ard(X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """:func:`ard_relevance`'s ``[D]`` scores of ``X [n, D]``, ``Y [n, 1]``, kept only for the
    inputs scoring at least :data:`CONCENTRATION` times the median score, the others 0 (see
    the module). All 0 when the fit scores nothing."""
    score = ard_relevance(X, Y)
    median = float(torch.median(score))
    return torch.where(score >= CONCENTRATION * median, score, torch.zeros(()))
