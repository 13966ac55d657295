"""GP task priors: ``gp1d`` (the papers' 1-D protocol) and ``bo`` (the BO product)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch

from npbandit.priors.base import Prior, TaskBatch, log_uniform, randint, uniform
from npbandit.priors.kernels import KERNELS, sample_gp_conditional
from npbandit.transforms.standardize import standardization
from npbandit.validation import check_int, check_range, check_real

if TYPE_CHECKING:
    from npbandit.priors.bayes import BayesPosterior

__all__ = ["GP1DPrior", "BOPrior"]


class GP1DPrior(Prior):
    """1-D GP meta-regression as in the TNP / LBANP / CMANP / TCA code.

    Per batch: ``Nc ~ U{3..max_points-4}``, ``Nt ~ U{3..max_points-Nc-1}`` (shared by
    the batch); ``x ~ U(-2, 2)``; context and targets disjoint. Per task:
    ``sigma_f ~ U(0.1, 1)``, lengthscale ``~ U(lengthscale_range)``, noise std 0.02.
    Batches carry the targets' exact predictive moments given the context and the
    task's hyperparameters (``yt_mean``, ``yt_var``, ``yt_cov_factor``), so the
    trainer's expected loss works here too; the draws are the same as without them.

    The papers' text says ``l ~ U[0.6, 1.0)`` but their public code draws
    ``l ~ U(0.1, 0.6)``; the published numbers come from the code, so that is the
    default here.

    Args:
        kernel: ``"rbf"`` (training) or ``"matern52"`` / ``"matern32"`` (evaluation).
        max_points: bound on ``Nc + Nt`` (at least 10).
        lengthscale_range: ``(low, high)`` of the uniform lengthscale, ``0 < low < high``.
        outputscale_range: ``(low, high)`` of the uniform signal std ``sigma_f``.
        noise_std: the observation noise std (``>= 0``).
        x_range: ``(low, high)``, the box inputs are drawn from (the ``input_domain``).

    Raises:
        ValueError: an unknown ``kernel`` or an argument outside the ranges above.
    """

    name = "gp1d"
    x_dim = 1
    y_dim = 1
    input_domain = (-2.0, 2.0)
    input_symmetric = True  # uniform inputs on a box centred at 0, a stationary kernel
    suite_fixed = ("kernel",)
    computes_on_device = True  # the exact GP draw (sample_gp_conditional)

    @classmethod
    def evaluation_suite(cls, **params: Any) -> dict[str, Prior]:
        """``{"rbf": ..., "matern52": ...}``: both kernels, whatever ``kernel`` ``params`` gives
        (a run trains on one; its checkpoint is scored on both)."""
        base = {k: v for k, v in params.items() if k != "kernel"}
        return {"rbf": cls("rbf", **base), "matern52": cls("matern52", **base)}

    def __init__(self, kernel: str = "rbf", max_points: int = 50,
                 lengthscale_range: tuple[float, float] = (0.1, 0.6),
                 outputscale_range: tuple[float, float] = (0.1, 1.0), noise_std: float = 0.02,
                 x_range: tuple[float, float] = (-2.0, 2.0)) -> None:
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
        self.kernel = kernel
        self.max_points = check_int("max_points", max_points, minimum=10)
        self.lengthscale_range = check_range("lengthscale_range", lengthscale_range, positive=True)
        self.outputscale_range = check_range("outputscale_range", outputscale_range, positive=True)
        self.noise_std = check_real("noise_std", noise_std, low=0.0)
        self.x_range = check_range("x_range", x_range)
        self.input_domain = self.x_range  # this instance's box (the class's is the default one)

    @classmethod
    def domain_of(cls, spec: dict[str, Any]) -> tuple[float, float]:
        """The input box of the prior ``spec`` describes (a card's ``"prior"``)."""
        x = spec.get("x")
        return (float(x[1]), float(x[2])) if isinstance(x, list) and len(x) == 3 else cls.input_domain

    @classmethod
    def symmetric_in(cls, spec: dict[str, Any]) -> bool:
        low, high = cls.domain_of(spec)
        return low == -high  # reflecting an input about 0 keeps it in the box only then

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "kernel": self.kernel, "max_points": self.max_points,
                "lengthscale": ["uniform", *self.lengthscale_range], "sigma_f": ["uniform", *self.outputscale_range],
                "noise_std": self.noise_std, "x": ["uniform", *self.x_range],
                "n_context": ["randint", 3, self.max_points - 3], "n_target": ["randint", 3, "max_points - n_context"]}

    def sample(self, batch_size: int, generator: torch.Generator, device: torch.device | None = None) -> TaskBatch:
        nc = randint(generator, 3, self.max_points - 3)
        nt = randint(generator, 3, self.max_points - nc)
        x = uniform(generator, *self.x_range, batch_size, nc + nt, 1)
        lengthscale = uniform(generator, *self.lengthscale_range, batch_size, 1)
        sigma_f = uniform(generator, *self.outputscale_range, batch_size)
        noise = torch.full((batch_size,), self.noise_std, dtype=torch.float64)
        # the same draw as sample_gp's, with the targets' exact predictive given the context (for the
        # expected loss) read off the Cholesky factor that draws it
        y, mean_t, var_t, factor_t = sample_gp_conditional([self.kernel] * batch_size, x, lengthscale,
                                                           sigma_f.pow(2), noise, generator, nc, device)
        x, y = x.to(y.device).float(), y.float()
        info = {"kernel": [self.kernel] * batch_size, "lengthscale": lengthscale.float(), "sigma_f": sigma_f.float()}
        return TaskBatch(x[:, :nc], y[:, :nc], x[:, nc:], y[:, nc:], info, yt_mean=mean_t.float(),
                         yt_var=var_t.float(), yt_cov_factor=factor_t.float())


def _near(anchors: torch.Tensor, k: int, scale_range: tuple[float, float], lengthscale: torch.Tensor,
          generator: torch.Generator) -> torch.Tensor:
    """``k`` points per task near random rows of ``anchors [b, n, d]``: an anchor moved by
    ``N(0, (s l_i)^2)`` per dimension, ``s ~ LogU(scale_range)`` per point, reflected at the
    faces of the unit cube; ``[b, k, d]``."""
    b, n, d = anchors.shape
    if k == 0:
        return anchors.new_zeros(b, 0, d)
    pick = torch.randint(n, (b, k), generator=generator)
    centre = torch.gather(anchors, 1, pick.unsqueeze(-1).expand(b, k, d))
    scale = log_uniform(generator, *scale_range, b, k, 1) * lengthscale.unsqueeze(1)
    moved = (centre + scale * torch.randn(b, k, d, generator=generator, dtype=anchors.dtype)).remainder(2.0)
    return torch.where(moved > 1.0, 2.0 - moved, moved)


def _kumaraswamy_cdf(x: torch.Tensor, concentrations: torch.Tensor) -> torch.Tensor:
    """``1 - (1 - x^a)^b`` per dimension: ``x [b, n, d]`` in ``[0, 1]``, ``concentrations
    [b, d, 2]`` (``a``, ``b`` > 0) -> ``[b, n, d]`` in ``[0, 1]``; the identity, exactly,
    where ``a = b = 1``."""
    a, b = concentrations[:, None, :, 0], concentrations[:, None, :, 1]
    warped = 1 - (1 - x.pow(a)).pow(b)
    return torch.where((a == 1) & (b == 1), x, warped)


class BOPrior(Prior):
    """GP functions on the unit cube for every input dimension in ``dims``, from one prior.

    Per batch: the true dimension ``d`` (uniform over ``dims``) and the context size
    ``Nc ~ U{min_context..max_context}``; ``Nt = n_target``. ``min_context = 3``:
    a BO run always starts from ``2d + 1 >= 3`` points. Per task: a kernel uniform
    over RBF / Matérn-5/2 / Matérn-3/2, unit signal variance, observation noise std
    ``~ LogU(noise_std_range)`` and ARD lengthscales from ``lengthscale_prior``:

    - ``"loguniform"``: ``l_i = sqrt(d) * LogU(lengthscale_range)`` (longer in more
      dimensions, as in BoTorch's dimension-scaled prior);
    - ``"botorch"``: BoTorch's own dimension-scaled prior for ``SingleTaskGP``,
      ``LogNormal(sqrt(2) + log(d) / 2, sqrt(3))``.

    With ``irrelevant_prob > 0`` each dimension is, with that probability, nearly
    irrelevant instead: ``l_i = sqrt(d) * LogU(irrelevant_range)``. A real objective
    often barely depends on some of its inputs, and a GP fitted to it puts lengthscales
    longer than the cube on those; the plain range never draws them.

    Where the targets lie (``near_context_frac``): by default every target is uniform
    on the cube, so with ``d >= 3`` almost none falls within a lengthscale of an
    observation -- yet that is where a BO acquisition is maximised (around the
    incumbent) and where a surrogate must show that an observation pins the function
    down. With ``near_context_frac = p`` a share ``p`` of each task's targets (rounded
    down) is instead a context point moved by ``N(0, (s * l_i)^2)`` in each dimension
    ``i`` (``l_i`` the task's lengthscale, ``s ~ LogU(near_context_scale)`` per target,
    so from on top of the observation to a lengthscale away), reflected back into the
    cube. The exact moments ``yt_mean`` / ``yt_var`` hold wherever the targets lie, so
    the expected loss needs nothing else.

    Where the context lies (``context_cluster_frac``): a BO run's observations are not
    uniform either -- they cluster around the incumbent, with near-repeats of a point.
    With ``context_cluster_frac = q`` a share ``q`` of the context points (rounded down,
    leaving at least two uniform ones) is each a uniform context point moved by
    ``N(0, (s * l_i)^2)``, ``s ~ LogU(context_cluster_scale)`` (down to a thousandth of a
    lengthscale: repeats, as a search that returns to its incumbent makes), reflected
    into the cube, so a model learns what several observations close together say.

    Warped inputs (``input_warp_prob``): real objectives often change fast near one end of
    an input's range and slowly elsewhere (a learning rate on a linear scale), which no
    stationary kernel on the cube draws. With ``input_warp_prob = p`` each dimension is,
    with that probability, warped: the function is a GP in ``w(x_i) = 1 - (1 - x_i^a)^b``
    (the Kumaraswamy CDF, a monotone map of ``[0, 1]`` onto itself) with
    ``log a, log b ~ N(0, input_warp_std^2)`` per task and dimension, while the model sees
    ``x`` itself. Lengthscales, context clusters and near-context targets are in the warped
    coordinates' units as drawn; the exact moments ``yt_mean`` / ``yt_var`` hold unchanged.

    How a model sees ``d < x_dim`` (``padding``): ``"zeros"`` (default), inputs are
    zero-padded to ``x_dim`` columns. A GP on the padded cube restricted to the slice
    ``x_{d+1..} = 0`` is exactly a GP on the ``d``-cube, so the padding is consistent with
    the prior; the BoTorch adapter pads the same way for a network of fixed width.
    ``"none"``: each batch is as wide as its ``d`` (one ``d`` per batch), for a network that
    reads any width (``NeuralProcess.any_x_dim``; ``x_dim`` is then the widest batch).

    Output standardisation (``standardize``), with :func:`npbandit.transforms.standardize.standardization`:

    - ``"context"`` (default): by the mean and std of the *context* alone, which is
      exactly what the BoTorch adapter can do with a user's observations. With few
      points the context std can be small, so targets in these units are
      heavy-tailed; that is what a user's model must predict, so it is trained on it.
    - ``"task"``: by the mean and std of all the task's points, context and targets.
      It keeps targets O(1) but leaks the targets' spread into the units, which the
      adapter cannot reproduce.

    Every batch carries ``yt_mean`` / ``yt_var``, the exact predictive moments of the
    targets given the context and the task's hyperparameters, and ``yt_cov_factor``, a
    factor of their joint covariance, in the same units
    (with ``"context"`` standardisation the units are fixed by the context, so the
    moments map through the same affine transform; with ``"task"`` they would
    depend on the targets themselves and are left out).

    Args:
        dims: the true input dimensions, each in ``1..x_dim``.
        x_dim: the width inputs are zero-padded to (the network's ``x_dim``).
        min_context, max_context: bounds of the uniform context size ``Nc``.
        n_target: targets per task, ``Nt``.
        lengthscale_range: ``(low, high)`` of ``LogU`` for ``"loguniform"`` lengthscales
            (before the ``sqrt(d)`` factor).
        noise_std_range: ``(low, high)`` of the ``LogU`` observation noise std.
        kernels: a non-empty subset of :data:`~npbandit.priors.kernels.KERNELS`.
        standardize: ``"context"`` or ``"task"`` (above).
        lengthscale_prior: ``"loguniform"`` or ``"botorch"`` (above).
        irrelevant_prob, irrelevant_range: nearly irrelevant dimensions (above).
        near_context_frac, near_context_scale: targets near the context (above).
        context_cluster_frac, context_cluster_scale: clustered context (above).
        input_warp_prob, input_warp_std: warped inputs (above).
        padding: ``"zeros"`` or ``"none"`` (above).

    Raises:
        ValueError: an argument outside its range (naming it), or ``standardize="context"``
            with ``min_context < 2``.
    """

    name = "bo"
    y_dim = 1
    input_domain = (0.0, 1.0)
    standardizes_outputs = True
    # iid uniform inputs, a stationary kernel with iid lengthscales per dimension, and
    # near-context / cluster offsets reflected at the faces: unchanged by permuting the
    # dimensions or reflecting any of them about 1/2
    input_symmetric = True
    computes_on_device = True  # the exact GP draw (sample_gp_conditional)
    STANDARDIZE = ("context", "task")
    LENGTHSCALE_PRIORS = ("loguniform", "botorch")
    PADDING = ("zeros", "none")

    @classmethod
    def evaluation_suite(cls, **params: Any) -> dict[str, Prior]:
        """``{"d=1": ..., ..., "d=6": ...}``: one prior per dimension in ``params``' ``dims``
        (default 1..6), the other parameters as given."""
        base = {k: v for k, v in params.items() if k != "dims"}
        dims = params.get("dims", (1, 2, 3, 4, 5, 6))
        return {f"d={d}": cls(dims=(d,), **base) for d in dims}

    def __init__(self, dims: tuple[int, ...] = (1, 2, 3, 4, 5, 6), x_dim: int = 6, min_context: int = 3,
                 max_context: int = 100, n_target: int = 50, lengthscale_range: tuple[float, float] = (0.05, 0.5),
                 noise_std_range: tuple[float, float] = (1e-3, 0.3), kernels: tuple[str, ...] = KERNELS,
                 standardize: str = "context", lengthscale_prior: str = "loguniform",
                 irrelevant_prob: float = 0.0, irrelevant_range: tuple[float, float] = (0.9, 2.5),
                 near_context_frac: float = 0.0, near_context_scale: tuple[float, float] = (0.01, 1.0),
                 context_cluster_frac: float = 0.0,
                 context_cluster_scale: tuple[float, float] = (0.001, 1.0),
                 input_warp_prob: float = 0.0, input_warp_std: float = 0.75, padding: str = "zeros") -> None:
        x_dim = check_int("x_dim", x_dim, minimum=1)
        if padding not in self.PADDING:
            raise ValueError(f"padding must be one of {self.PADDING}, got {padding!r}")
        if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
            raise ValueError(f"dims must be a sequence of ints, got {dims!r}")
        dims = tuple(check_int(f"dims[{i}]", d) for i, d in enumerate(dims))
        for arg, value in (("min_context", min_context), ("max_context", max_context), ("n_target", n_target)):
            check_int(arg, value)
        if not dims or min(dims) < 1 or max(dims) > x_dim:
            raise ValueError(f"dims must be non-empty with every d in 1..x_dim={x_dim}, got {dims}")
        unknown = set(kernels) - set(KERNELS)
        if unknown or not kernels:
            raise ValueError(f"kernels must be a non-empty subset of {KERNELS}, got {kernels}")
        if not 1 <= min_context <= max_context or n_target < 1:
            raise ValueError(f"need 1 <= min_context <= max_context and n_target >= 1, "
                             f"got {min_context}, {max_context}, {n_target}")
        if standardize not in self.STANDARDIZE:
            raise ValueError(f"standardize must be one of {self.STANDARDIZE}, got {standardize!r}")
        if standardize == "context" and min_context < 2:
            raise ValueError(f"standardize='context' needs min_context >= 2 (a std of the context), got {min_context}")
        if lengthscale_prior not in self.LENGTHSCALE_PRIORS:
            raise ValueError(f"lengthscale_prior must be one of {self.LENGTHSCALE_PRIORS}, got {lengthscale_prior!r}")
        for arg, value in (("irrelevant_prob", irrelevant_prob), ("near_context_frac", near_context_frac),
                           ("input_warp_prob", input_warp_prob)):
            check_real(arg, value, low=0.0, high=1.0)  # a real number, not a bool or a string
        check_real("input_warp_std", input_warp_std, low=0.0)
        if not 0.0 <= check_real("context_cluster_frac", context_cluster_frac) < 1.0:
            raise ValueError(f"context_cluster_frac must be in [0, 1), got {context_cluster_frac!r}")
        for arg, value in (("lengthscale_range", lengthscale_range), ("noise_std_range", noise_std_range),
                           ("irrelevant_range", irrelevant_range), ("near_context_scale", near_context_scale),
                           ("context_cluster_scale", context_cluster_scale)):
            check_range(arg, value, positive=True, strict=False)
        self.min_context = min_context
        self.dims = dims
        self.x_dim = x_dim
        self.max_context = max_context
        self.n_target = n_target
        self.lengthscale_range = tuple(lengthscale_range)
        self.noise_std_range = tuple(noise_std_range)
        self.kernels = tuple(kernels)
        self.standardize = standardize
        self.lengthscale_prior = lengthscale_prior
        self.irrelevant_prob = float(irrelevant_prob)
        self.irrelevant_range = tuple(irrelevant_range)
        self.near_context_frac = float(near_context_frac)
        self.near_context_scale = tuple(near_context_scale)
        self.context_cluster_frac = float(context_cluster_frac)
        self.context_cluster_scale = tuple(context_cluster_scale)
        self.input_warp_prob = float(input_warp_prob)
        self.input_warp_std = float(input_warp_std)
        self.padding = padding
        self.fixed_width = padding == "zeros"
        self.pads_inputs = self.fixed_width and min(dims) < x_dim

    def spec(self) -> dict[str, Any]:
        if self.lengthscale_prior == "botorch":
            lengthscale: list[Any] = ["lognormal", "sqrt(2) + log(d) / 2", "sqrt(3)"]
        else:
            lengthscale = ["sqrt(d) * loguniform", *self.lengthscale_range]
        spec = {"name": self.name, "dims": list(self.dims), "x_dim": self.x_dim, "padding": self.padding,
                "x": ["uniform", 0.0, 1.0], "kernels": list(self.kernels),
                "lengthscale": lengthscale, "outputscale": 1.0,
                "noise_std": ["loguniform", *self.noise_std_range],
                "n_context": ["randint", self.min_context, self.max_context + 1], "n_target": self.n_target,
                "y": f"standardised by the mean and std of the {'context' if self.standardize == 'context' else 'task'}"
                     f"{'' if self.standardize == 'context' else ' (all its points)'}"
                     " (npbandit.transforms.standardize)"}
        if self.irrelevant_prob > 0:
            spec["irrelevant"] = {"prob": self.irrelevant_prob,
                                  "lengthscale": ["sqrt(d) * loguniform", *self.irrelevant_range]}
        if self.near_context_frac > 0:
            spec["near_context"] = {"frac": self.near_context_frac,
                                    "offset_std": ["lengthscale * loguniform", *self.near_context_scale],
                                    "outside_cube": "reflected"}
        if self.context_cluster_frac > 0:
            spec["context_cluster"] = {"frac": self.context_cluster_frac,
                                       "offset_std": ["lengthscale * loguniform", *self.context_cluster_scale],
                                       "outside_cube": "reflected"}
        if self.input_warp_prob > 0:
            spec["input_warp"] = {"prob": self.input_warp_prob, "cdf": "kumaraswamy",
                                  "log_concentrations": ["normal", 0.0, self.input_warp_std]}
        return spec

    def _warps(self, generator: torch.Generator, batch_size: int, d: int) -> torch.Tensor:
        """Kumaraswamy concentrations ``[b, d, 2]`` (``a``, ``b``); both 1 (no warp) for the
        dimensions not picked (see the class docstring)."""
        log_ab = self.input_warp_std * torch.randn(batch_size, d, 2, generator=generator, dtype=torch.float64)
        pick = uniform(generator, 0.0, 1.0, batch_size, d) < self.input_warp_prob
        return torch.where(pick[..., None], log_ab, torch.zeros_like(log_ab)).exp()

    def _lengthscales(self, generator: torch.Generator, batch_size: int, d: int) -> torch.Tensor:
        if self.lengthscale_prior == "botorch":
            z = torch.randn(batch_size, d, generator=generator, dtype=torch.float64)
            lengthscale = torch.exp(math.sqrt(2) + 0.5 * math.log(d) + math.sqrt(3) * z)
        else:
            lengthscale = math.sqrt(d) * log_uniform(generator, *self.lengthscale_range, batch_size, d)
        if self.irrelevant_prob > 0:
            flat = math.sqrt(d) * log_uniform(generator, *self.irrelevant_range, batch_size, d)
            pick = uniform(generator, 0.0, 1.0, batch_size, d) < self.irrelevant_prob
            lengthscale = torch.where(pick, flat, lengthscale)
        return lengthscale

    def _move_targets_near_context(self, x: torch.Tensor, nc: int, lengthscale: torch.Tensor,
                                   generator: torch.Generator) -> torch.Tensor:
        """``x [b, nc + nt, d]`` with its first ``floor(frac * nt)`` targets moved near random
        context points (see the class docstring); ``lengthscale [b, d]``."""
        k = int(self.near_context_frac * (x.shape[1] - nc))
        moved = _near(x[:, :nc], k, self.near_context_scale, lengthscale, generator)
        return torch.cat([x[:, :nc], moved, x[:, nc + k:]], dim=1)

    def _cluster_context(self, x: torch.Tensor, nc: int, lengthscale: torch.Tensor,
                         generator: torch.Generator) -> torch.Tensor:
        """``x [b, nc + nt, d]`` with its last ``floor(frac * nc)`` context points (at most
        ``nc - 2``) moved near the uniform ones before them (see the class docstring)."""
        k = min(int(self.context_cluster_frac * nc), nc - 2)
        if k <= 0:
            return x
        moved = _near(x[:, :nc - k], k, self.context_cluster_scale, lengthscale, generator)
        return torch.cat([x[:, :nc - k], moved, x[:, nc:]], dim=1)

    def bayes_posterior(self, xc: torch.Tensor, yc: torch.Tensor, *, num_samples: int = 4096,
                        generator: torch.Generator | None = None) -> BayesPosterior:
        """This prior's Bayes posterior predictive given one task's context ``xc [n, d]``,
        ``yc [n, 1]`` (``d`` in ``dims``, no padding; outputs known up to an affine map), by
        importance sampling ``num_samples`` hyperparameter sets from the prior: see
        :class:`~npbandit.priors.bayes.BayesPosterior`. What the positions of the context say
        about the lengthscales (with ``near_context_frac`` / ``context_cluster_frac`` they
        depend on them) is not used.

        Args:
            xc: ``[n, d]`` context inputs on the unit cube, ``n >= 3``.
            yc: ``[n, 1]`` context outputs.
            num_samples: hyperparameter sets drawn.
            generator: for the draws (default: seeded with 0, so the result is deterministic).

        Raises:
            ValueError: ``xc`` not ``[n, d]`` with ``d`` in ``dims``; see also
                :meth:`BayesPosterior.fit`.
        """
        from npbandit.priors.bayes import BayesPosterior

        if self.input_warp_prob > 0:
            raise ValueError("bayes_posterior integrates the kernel, lengthscales and noise, not input warps: "
                             f"it needs input_warp_prob = 0, got {self.input_warp_prob}")
        if xc.dim() != 2 or xc.shape[-1] not in self.dims:
            raise ValueError(f"xc must be [n, d] with d in {self.dims}, got {tuple(xc.shape)}")
        generator = generator if generator is not None else torch.Generator().manual_seed(0)
        d = xc.shape[-1]

        def draw(k: int) -> tuple[list[str], torch.Tensor, torch.Tensor]:
            kinds = [self.kernels[i] for i in torch.randint(len(self.kernels), (k,), generator=generator)]
            return kinds, self._lengthscales(generator, k, d), log_uniform(generator, *self.noise_std_range, k).pow(2)

        return BayesPosterior.fit(xc, yc, draw, num_samples)

    def sample(self, batch_size: int, generator: torch.Generator, device: torch.device | None = None) -> TaskBatch:
        d = self.dims[randint(generator, 0, len(self.dims))]
        nc = randint(generator, self.min_context, self.max_context + 1)
        n = nc + self.n_target
        x = uniform(generator, 0.0, 1.0, batch_size, n, d)
        kinds = [self.kernels[i] for i in torch.randint(len(self.kernels), (batch_size,), generator=generator)]
        lengthscale = self._lengthscales(generator, batch_size, d)
        if self.context_cluster_frac > 0:
            x = self._cluster_context(x, nc, lengthscale, generator)
        if self.near_context_frac > 0:
            x = self._move_targets_near_context(x, nc, lengthscale, generator)
        noise = log_uniform(generator, *self.noise_std_range, batch_size)
        warp = self._warps(generator, batch_size, d) if self.input_warp_prob > 0 else None
        y, mean_t, var_t, factor_t = sample_gp_conditional(
            kinds, x if warp is None else _kumaraswamy_cdf(x, warp), lengthscale,
            torch.ones(batch_size, dtype=torch.float64), noise, generator, nc, device)
        x = x.to(y.device)
        if self.fixed_width:
            x = torch.cat([x, x.new_zeros(batch_size, n, self.x_dim - d)], dim=-1)
        x = x.float()
        info = {"dim": d, "kernel": kinds, "lengthscale": lengthscale.float(), "noise_std": noise.float()}
        if warp is not None:
            info["input_warp"] = warp.float()
        if self.standardize == "task":
            mean, std = standardization(y)
            y = ((y - mean) / std).float()
            return TaskBatch(x[:, :nc], y[:, :nc], x[:, nc:], y[:, nc:], info)
        mean, std = standardization(y[:, :nc])
        y = ((y - mean) / std).float()
        info["context_std"] = std.reshape(batch_size).float()
        return TaskBatch(x[:, :nc], y[:, :nc], x[:, nc:], y[:, nc:], info,
                         yt_mean=((mean_t - mean) / std).float(), yt_var=(var_t / std.pow(2)).float(),
                         yt_cov_factor=(factor_t / std).float())
