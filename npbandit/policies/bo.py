"""Black-box optimisation policies on the unit cube (``npbandit/BlackBox-v0`` actions).

Every policy maximises reward (the environment negates objectives it minimises).
The first ``n_init`` points (default ``2d + 1``) are a scrambled Sobol design seeded
by ``reset(seed)``, so every method of a comparison starts from the same points.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.policies.base import Policy
from npbandit.policies.gp import NOISE_FREE_VAR  # noqa: F401 (kept importable from here)
from npbandit.policies.trust_region import TrustRegion

__all__ = ["SobolPolicy", "BOPolicy", "ACQUISITIONS", "OUTPUT_WARPS", "LIARS", "DEFAULT_LIAR", "check_liar",
           "liar_value", "pending_rule", "propose", "propose_in_region", "thompson_draw", "yeo_johnson_warp"]

ACQUISITIONS = ("logei", "ucb", "thompson", "marginal-thompson", "qlognei")
#: what ``BOPolicy(output_warp=...)`` accepts besides ``None``
OUTPUT_WARPS = ("yeo-johnson",)
#: how points still being evaluated enter a proposal (``BOPolicy(liar=...)``): believed at the worst,
#: mean or best output the model sees (:func:`liar_value`), ``"believer"``: each at the model's own
#: predictive mean there (Ginsbourger et al. 2010's kriging believer), or ``"penalty"``: believed at no
#: value, the acquisition damped around each instead (González et al. 2016's local penalisation; :func:`propose`)
LIARS = ("worst", "mean", "best", "believer", "penalty")
#: ``BOPolicy``'s, ``optimize``'s and ``NPSampler``'s default rule for points in flight (chosen by
#: ``benchmarks/async_liar.py``; the worst value until 2026-11-24, the mean until 2026-11-27)
DEFAULT_LIAR = "believer"


def check_liar(liar: Any, acquisition: str | None = None) -> str:
    """``liar`` if it is one of :data:`LIARS` (and, given the ``acquisition`` it serves, one
    that works with it: ``"penalty"`` damps LogEI only); otherwise a ``ValueError``."""
    if liar not in LIARS:
        raise ValueError(f"liar must be one of {LIARS}, got {liar!r}")
    if liar == "penalty" and acquisition is not None and acquisition != "logei":
        raise ValueError(f"liar 'penalty' needs acquisition 'logei' (it damps LogEI), got {acquisition!r}")
    return liar


def liar_value(Y: torch.Tensor, liar: str) -> torch.Tensor:
    """The constant a pending point is believed at (Ginsbourger et al. 2010's constant liar),
    from the outputs ``Y`` ``[n, 1]`` the model sees (maximised): ``"worst"`` their minimum,
    ``"mean"`` their mean, ``"best"`` their maximum. A scalar tensor.

    Of the constants the mean does best: replaying ``optimize(batch_size=4)`` with ``tnpd-bo``
    (``benchmarks/async_liar.py``, 10 seeds on each of two machines) it ended 0.84 and 1.23
    log10 lower than the worst value on Branin and 0.29 and 0.06 lower on Hartmann-6; over 30
    seeds ``"penalty"`` was level with it at 1.7 times the proposal cost, and the default,
    ``"believer"`` (no constant: the model's own mean at each pending point), 0.21 (Branin) and
    0.12 (Hartmann-6) lower than it (docs/benchmarks.md, "Points in flight")."""
    check_liar(liar)
    if liar == "penalty":
        raise ValueError("liar 'penalty' believes pending points at no value (propose(penalise_pending=True))")
    if liar == "believer":
        raise ValueError("liar 'believer' believes each pending point at the model's mean there, not at one "
                         "constant (propose(believe_pending=True))")
    if Y.numel() == 0:
        raise ValueError("liar_value needs at least one observed output")
    return {"worst": Y.min, "mean": Y.mean, "best": Y.max}[liar]()


def pending_rule(Y: torch.Tensor, liar: str) -> dict[str, Any]:
    """:func:`propose`'s keyword arguments for the points in flight under ``liar``, from the
    outputs ``Y`` ``[n, 1]`` the model sees: ``pending_value`` (:func:`liar_value`),
    ``penalise_pending`` (``True`` for ``"penalty"``, with no value) and ``believe_pending``
    (``True`` for ``"believer"``, with no value). The one mapping ``BOPolicy``,
    :func:`propose_in_region` and ``NPSampler`` share."""
    liar = check_liar(liar)
    if liar in ("penalty", "believer"):
        return {"pending_value": None, "penalise_pending": liar == "penalty", "believe_pending": liar == "believer"}
    return {"pending_value": liar_value(Y, liar), "penalise_pending": False, "believe_pending": False}


def yeo_johnson_warp(y: np.ndarray) -> np.ndarray:
    """The observations standardised, then Yeo-Johnson power-transformed with the
    exponent that makes them most Gaussian (maximum likelihood, ``scipy.stats.yeojohnson``),
    as PFNs4BO does before its surrogate sees them. Monotone increasing, so the best
    observation stays the best; it spreads out the values near the top when a few very
    bad ones dominate the spread (Branin's range is 0.4 to 308), where a surrogate trained
    on Gaussian-process draws expects them. ``y`` ``[n]``; returned the same shape. A
    constant ``y`` is returned standardised to zeros."""
    from scipy.stats import yeojohnson

    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or not np.isfinite(y).all():
        raise ValueError(f"y must be a 1-D array of finite values, got shape {y.shape}")
    std = y.std()
    if not std > 0:
        return np.zeros_like(y)
    return yeojohnson((y - y.mean()) / std)[0]


class _SobolDesign:
    def __init__(self, dim: int, seed: int | None) -> None:
        self.engine = torch.quasirandom.SobolEngine(dim, scramble=True, seed=seed)

    def next(self) -> np.ndarray:
        return self.engine.draw(1, dtype=torch.float64)[0].numpy()


class SobolPolicy(Policy):
    """Quasi-random search: the next point of a scrambled Sobol sequence."""

    name = "sobol"

    def __init__(self, dim: int) -> None:
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        self.dim = dim

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.design = _SobolDesign(self.dim, seed)

    def act(self, obs: np.ndarray, pending: np.ndarray | None = None) -> np.ndarray:
        # a Sobol sequence never repeats itself: points still being evaluated need no care
        return self.design.next()

    def observe(self, obs, action, reward, info) -> None:
        pass

    def params(self) -> dict[str, Any]:
        return {"dim": self.dim}


class BOPolicy(Policy):
    """Bayesian optimisation with an NP (``NPModel``) or an exact GP (``SingleTaskGP``).

    Args:
        dim: input dimension.
        model: a checkpoint name (e.g. ``"cmanp-bo"``) or ``"gp"`` for BoTorch's
            ``SingleTaskGP`` refit every iteration.
        acquisition: ``"logei"``, ``"ucb"`` (``mu + sqrt(beta) sigma``, BoTorch's
            convention) or ``"thompson"`` (argmax of one posterior draw of the objective
            over ``thompson_candidates`` Sobol points: one function for the GP and for
            joint NPs such as ``cmanp-and``; independent per candidate, hence optimistic,
            for diagonal NPs; see :func:`thompson_draw`), or ``"marginal-thompson"``: the
            same argmax with every candidate drawn from its own marginal, whatever the
            model (the ablation that isolates what a joint draw adds), or ``"qlognei"``:
            ``q`` points at a time, maximising BoTorch's ``qLogNoisyExpectedImprovement``
            jointly over them (Monte Carlo over the model's joint posterior of the ``q``
            points and the observations), handed out one by one; on a diagonal NP the
            ``q`` points are independent given the data, so the batch can collapse onto
            one point, which a joint model such as ``cmanp-and`` avoids.
        q: points per proposal for ``"qlognei"`` (default 4); 1 for the other
            acquisitions, which propose one point at a time.
        n_init: initial Sobol points (default ``2 * dim + 1``).
        noise_free: GP only. ``True`` tells the ``SingleTaskGP`` the objective is
            deterministic: a fixed observation variance of ``NOISE_FREE_VAR`` (1e-6) in
            the standardised units the GP is fit in, as BoTorch documents for
            noise-free observations (``train_Yvar``). ``False`` (default) infers the
            noise (BoTorch's default likelihood: LogNormal(-4, 1) prior, floor 1e-4),
            which suits noisy objectives but blurs a deterministic one near its optimum.
        gp_kernel: GP only. ``"rbf"`` (default, ``SingleTaskGP``'s own) or ``"matern52"``
            (see :func:`npbandit.policies.gp.fit_single_task_gp`).
        output_warp: ``None`` (default) or ``"yeo-johnson"``: the model sees the
            observations through :func:`yeo_johnson_warp`, refit to all of them before
            every proposal (the acquisition's ``best_f`` and the pending points' value
            in the same warped units). The warp changes with every observation, so the
            model is rebuilt per proposal instead of streamed (cost linear in N).
        avoid_repeats: ``True`` (default): never propose a point within
            ``REPEAT_DISTANCE`` (1e-3 in the unit cube) of an evaluated one (LogEI / UCB;
            see :func:`propose`). An NP that stays unsure at its observations otherwise
            re-evaluates its incumbent: ``cmanp-bo`` spent half its Branin proposals on
            repeats, and avoiding them improved its final regret on 7 of 10 seeds and
            changed no other function's (docs/results.md). ``False`` for a noisy
            objective where re-evaluating a point is worth an evaluation.
        trust_region: ``True``: every proposal is made inside a
            :class:`~npbandit.policies.trust_region.TrustRegion` around the best point
            (TuRBO-1's resizing rules; it starts as the whole cube and shrinks after
            proposals that do not improve), and the model sees only the observations in
            that box, mapped onto the unit cube with their outputs standardised among
            themselves, so a pretrained NP models the incumbent's neighbourhood at the
            scale it was trained on. The box moves with every observation, so the model
            is rebuilt per proposal (cost linear in the points inside it). ``None``
            (default): on for an NP checkpoint, off for the GP, which fits its own
            lengthscales to the data. On the BO suite it improved ``tnpd-bo`` and
            ``cmanp-bo`` on five of six functions (docs/results.md, "Trust region").
            ``False`` keeps the global model, streamed (CMANP: constant cost per
            observation however long the run).
        liar: what points still being evaluated (asynchronous BO, ``act(pending=...)``)
            are believed at when the next one is proposed: ``"worst"``, ``"mean"`` or
            ``"best"`` of the outputs the model sees (:func:`liar_value`; with the trust
            region, those in its box), ``"believer"``: each at the model's own mean there
            (the kriging believer), or ``"penalty"`` (LogEI only): at no value, the model
            left as it is and LogEI damped around each (González et al. 2016's local
            penalisation; see :func:`propose`). Default ``DEFAULT_LIAR``.
        budget: the evaluations the search will make, the initial design included
            (``optimize`` passes its own); every point handed out spends one, whether it
            comes back, fails or is still in flight. With it the trust region does not restart
            when too few evaluations are left for a restarted region to shrink back
            (:meth:`TrustRegion.observe`); ``None``: TuRBO's restarts, whenever the region
            collapses.

    Without a warp or a trust region the NP model is built once, after the initial design;
    every later observation is streamed in with ``condition_on_observations`` (CMANP:
    constant cost).
    """

    def __init__(self, dim: int, model: str = "cmanp-bo", acquisition: str = "logei", n_init: int | None = None,
                 beta: float = 2.0, num_restarts: int = 10, raw_samples: int = 512,
                 thompson_candidates: int = 2048, noise_free: bool = False, output_warp: str | None = None,
                 avoid_repeats: bool = True, trust_region: bool | None = None, q: int | None = None,
                 gp_kernel: str = "rbf", liar: str = DEFAULT_LIAR, budget: int | None = None) -> None:
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 1):
            raise ValueError(f"budget must be None or a positive int, got {budget!r}")
        self.budget = budget
        if acquisition not in ACQUISITIONS:
            raise ValueError(f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r}")
        q = (Q_BATCH if acquisition == "qlognei" else 1) if q is None else q
        if not isinstance(q, int) or isinstance(q, bool) or q < 1:
            raise ValueError(f"q must be a positive int, got {q!r}")
        if q > 1 and acquisition != "qlognei":
            raise ValueError(f"q > 1 needs a batch acquisition ('qlognei'); {acquisition!r} proposes one point "
                             "at a time")
        self.q = q
        self.liar = check_liar(liar, acquisition)
        if output_warp is not None and output_warp not in OUTPUT_WARPS:
            raise ValueError(f"output_warp must be None or one of {OUTPUT_WARPS}, got {output_warp!r}")
        self.output_warp = output_warp
        if not isinstance(avoid_repeats, bool):
            raise TypeError(f"avoid_repeats must be a bool, got {type(avoid_repeats).__name__}")
        self.avoid_repeats = avoid_repeats
        if trust_region is not None and not isinstance(trust_region, bool):
            raise TypeError(f"trust_region must be a bool or None, got {type(trust_region).__name__}")
        self.trust_region = model != "gp" if trust_region is None else trust_region
        n_init = 2 * dim + 1 if n_init is None else n_init
        if not isinstance(n_init, int) or n_init < 1:
            raise ValueError(f"n_init must be a positive int, got {n_init!r}")
        self.dim, self.model_name, self.acquisition = dim, model, acquisition
        self.n_init, self.beta = n_init, float(beta)
        self.num_restarts, self.raw_samples, self.thompson_candidates = num_restarts, raw_samples, thompson_candidates
        self.name = (f"{model}{'' if output_warp is None else '-' + output_warp}{'-tr' if self.trust_region else ''}"
                     f"-{acquisition}")
        self.surrogate = None
        if model != "gp" and noise_free:
            raise ValueError("noise_free configures the GP (model='gp') only")
        self.noise_free = bool(noise_free)
        from npbandit.policies.gp import GP_KERNELS

        if gp_kernel not in GP_KERNELS:
            raise ValueError(f"gp_kernel must be one of {GP_KERNELS}, got {gp_kernel!r}")
        if model != "gp" and gp_kernel != "rbf":
            raise ValueError("gp_kernel configures the GP (model='gp') only")
        self.gp_kernel = gp_kernel
        if model != "gp":
            from npbandit.surrogates.pretrained import load_surrogate

            self.surrogate = load_surrogate(model)
            self.checkpoint = {"name": self.surrogate.card["name"], "sha256": self.surrogate.card["sha256"]}
            if dim > self.surrogate.x_dim:
                raise ValueError(f"dim={dim} exceeds the {self.surrogate.x_dim} inputs {model!r} was trained for")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.design = _SobolDesign(self.dim, seed)
        self.X: list[np.ndarray] = []
        self.Y: list[float] = []
        self.np_model = None
        self.region = TrustRegion(self.dim) if self.trust_region else None
        self._batch: list[np.ndarray] = []  # the rest of the last q-point proposal, handed out in order
        # points handed out and not yet observed -> the best value observed when they were
        # proposed (None: a design point), against which their outcome resizes the trust region
        self._handed: dict[bytes, float | None] = {}
        # evaluations started: points handed out (failed or still in flight ones too) and
        # points observed without being handed out; what the budget has left is counted from it
        self._spent = 0
        self.torch_rng = torch.Generator().manual_seed(int(self.rng.integers(2**62)))

    def _data(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``X [n, d]`` and the outputs ``[n, 1]`` the model sees (warped with ``output_warp``)."""
        y = np.asarray(self.Y, dtype=np.float64)
        if self.output_warp is not None:
            y = yeo_johnson_warp(y)
        return torch.tensor(np.array(self.X), dtype=torch.float64), torch.tensor(y, dtype=torch.float64).unsqueeze(-1)

    def _model(self, X: torch.Tensor, Y: torch.Tensor):
        if self.surrogate is None:
            from npbandit.policies import gp  # looked up per call: the one fitting helper, also GPUCBPolicy's

            return gp.fit_single_task_gp(X, Y, noise_free=self.noise_free, kernel=self.gp_kernel)
        if self.output_warp is not None or self.region is not None:  # moves with every observation: rebuild
            from npbandit.models import NPModel

            return NPModel.from_pretrained(self.surrogate, X, Y)
        if self.np_model is None:
            from npbandit.models import NPModel

            self.np_model = NPModel.from_pretrained(self.surrogate, X, Y)
        return self.np_model

    def act(self, obs: np.ndarray, pending: np.ndarray | None = None) -> np.ndarray:
        """The next point, ``[d]`` in the unit cube; ``pending`` ``[p, d]``: points handed out
        and not yet observed (asynchronous BO), believed as ``liar`` says (:func:`propose`).
        The initial design counts its points in flight with the observations, so with points
        in flight it is still ``n_init`` points (then the model proposes once two are
        observed); observations given to :meth:`observe` directly count as design too."""
        point = self._choose(pending)
        self._spent += 1
        return point

    def _choose(self, pending: np.ndarray | None) -> np.ndarray:
        # counting observations alone, q evaluations in flight would get q - 1 Sobol points too many
        design_in_flight = {key for key, best_then in self._handed.items() if best_then is None}
        in_flight = 0 if pending is None else sum(
            x.tobytes() in design_in_flight for x in np.asarray(pending, dtype=np.float64).reshape(-1, self.dim))
        if len(self.Y) + in_flight < self.n_init or len(self.Y) < min(self.n_init, 2):
            point = self.design.next()
            self._handed[point.tobytes()] = None
            return point
        if self._batch:
            return self._batch.pop(0)
        pending = None if pending is None or len(pending) == 0 else torch.as_tensor(
            np.asarray(pending, dtype=np.float64).reshape(-1, self.dim))
        if self.surrogate is not None:
            return self._next_point(pending)
        # The GP's fit (restarts from prior draws when a fit fails), optimize_acqf's choice of
        # start points and Thompson draws use torch's global generator: seed it from the run's
        # generator, so a GP run depends on its seed alone, not on what its process ran before.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.rng.integers(2**62)))
            return self._next_point(pending)

    def _next_point(self, pending: torch.Tensor | None) -> np.ndarray:
        X, Y = self._data()
        seed = int(self.rng.integers(2**31))
        settings = {"beta": self.beta, "num_restarts": self.num_restarts, "raw_samples": self.raw_samples,
                    "thompson_candidates": self.thompson_candidates, "q": self.q}
        if self.region is not None:
            points = propose_in_region(self.region, X, Y, self._model, self.acquisition, seed=seed, pending=pending,
                                       avoid_repeats=self.avoid_repeats, liar=self.liar, **settings)
        else:
            points = propose(self._model(X, Y), self.acquisition, dim=self.dim, best_f=Y.max(), seed=seed,
                             pending=pending, **pending_rule(Y, self.liar),
                             observed=X if self.avoid_repeats else None,
                             **settings)
        for point in points.reshape(-1, self.dim):
            self._handed[np.asarray(point, dtype=np.float64).tobytes()] = max(self.Y)  # raw, not warped
        if points.ndim == 1:
            return points
        self._batch = list(points[1:])
        return points[0]

    def observe(self, obs, action, reward, info) -> None:
        x = np.asarray(action, dtype=np.float64)
        # a proposal's outcome resizes the box, judged against the best value its proposal knew:
        # with evaluations in flight, a point that improved on that is not a failure because a
        # point proposed beside it came back first and better (TuRBO judges a batch likewise)
        # (a point not handed out here, given to observe directly, counts as the design's until
        # n_init are observed, as TrustRegion.replay counts a history)
        key = x.tobytes()
        handed = key in self._handed
        best_then = self._handed.pop(key) if handed else (max(self.Y) if len(self.Y) >= self.n_init else None)
        if not handed:
            self._spent += 1
        if self.region is not None and best_then is not None:
            # proposals still to come: neither those in flight nor failed ones can be proposed again
            remaining = None if self.budget is None else max(self.budget - self._spent, 0)
            self.region.observe(TrustRegion.improves(float(reward), best_then), remaining)
        self.X.append(x)
        self.Y.append(float(reward))
        if self.np_model is not None and self.output_warp is None:
            self.np_model = self.np_model.condition_on_observations(
                torch.tensor(x, dtype=torch.float64)[None], torch.tensor([[float(reward)]], dtype=torch.float64))

    def params(self) -> dict[str, Any]:
        out = {"dim": self.dim, "acquisition": self.acquisition, "n_init": self.n_init, "beta": self.beta,
               "num_restarts": self.num_restarts, "raw_samples": self.raw_samples}
        if self.q > 1:
            out["q"] = self.q
        if self.output_warp is not None:
            out["output_warp"] = self.output_warp
        out["avoid_repeats"] = self.avoid_repeats
        out["liar"] = self.liar
        out["trust_region"] = self.trust_region
        if self.trust_region:  # the region's settings, so runs with other ones stay apart
            out["trust_region_length_init"] = TrustRegion.length_init
            out["trust_region_context_factor"] = TrustRegion.context_factor
            out["trust_region_budget"] = self.budget  # None: TuRBO's restarts at any point
        if self.surrogate is None:
            out["noise_free"] = self.noise_free
            out["gp_kernel"] = self.gp_kernel
        if self.acquisition == "thompson":  # a joint NP's blocks (runs before this key: 25)
            out["thompson_block_size"] = "all" if THOMPSON_BLOCK_SIZE is None else THOMPSON_BLOCK_SIZE
        return out


def propose(model, acquisition: str, *, dim: int, best_f: float | torch.Tensor, seed: int, beta: float = 2.0,
            num_restarts: int = 10, raw_samples: int = 512, thompson_candidates: int = 2048,
            pending: torch.Tensor | None = None, pending_value: float | torch.Tensor | None = None,
            observed: torch.Tensor | None = None, bounds: torch.Tensor | None = None, q: int = 1,
            penalise_pending: bool = False, believe_pending: bool = False,
            snap: Callable[[torch.Tensor], torch.Tensor] | None = None) -> np.ndarray:
    """The next point to evaluate: the maximiser of ``acquisition`` on ``model`` over the unit cube.

    The one proposal step every NP/GP route shares (``BOPolicy``, and so ``optimize``;
    ``npbandit.integrations.optuna.NPSampler``).

    Args:
        model: a BoTorch model on ``[0, 1]^d`` inputs whose output is maximised
            (``NPModel`` or ``SingleTaskGP``).
        acquisition: one of ``ACQUISITIONS`` (see ``BOPolicy``).
        dim: ``d``, the number of inputs.
        best_f: the best observed output, for LogEI.
        seed: seeds the start points of ``optimize_acqf`` (or the Thompson candidates),
            so the same model and seed give the same point.
        pending: ``[p, d]`` points being evaluated now (an Optuna trial still running,
            an evaluation in flight with ``optimize(batch_size=q)``), or ``None``. The model
            is conditioned on them at ``pending_value`` (a constant liar, Ginsbourger et
            al. 2010, as Optuna's ``constant_liar=True``), while ``best_f`` stays the best
            *observed* value. A liar rather than fantasies because it costs one
            ``condition_on_observations`` (constant for CMANP) rather than a batch of
            fantasy models per proposal. See ``believe_pending`` for the default rule.
        pending_value: the value pending points are believed at, in the model's output
            units (:func:`liar_value` of the observed outputs). Below the best observed value
            it pulls the model's mean down there, so the acquisition looks elsewhere whether
            or not the spread collapses.
            Required with a non-empty ``pending`` unless ``penalise_pending`` or
            ``believe_pending``.
        believe_pending: instead of one constant, condition the model on each pending
            point at its own predictive mean there (the kriging believer). The model's
            mean surface stays where the data put it, so near a sharp optimum the next
            proposal is not pushed off it by a value the region never showed; what keeps
            it from proposing a pending point again is the spread conditioning removes
            there (all of it for a GP, part of it for an NP: ``benchmarks/bo_interpolation.py``)
            and ``observed``, which then includes the pending points. ``BOPolicy``'s default
            (``liar="believer"``): replayed with ``tnpd-bo`` and four points in flight (30
            seeds), it ended 0.21 (Branin) and 0.12 (Hartmann-6) log10 lower than the mean
            liar, lower on 18 and 19 of 30 paired seeds, for 5-11 % more proposal CPU.
        penalise_pending: instead of a liar, leave the model as it is and multiply LogEI's
            expected improvement by González et al. (2016)'s local penalty around each
            pending point ``x_j``: the probability that ``x`` lies outside the ball in which
            nothing can beat the objective's maximum ``M`` if ``f(x_j)`` is what the model
            predicts there, ``Phi((L |x - x_j| - M + mu_j) / sigma_j)``, with ``L`` the largest
            gradient norm of the model's mean over Sobol points of ``bounds`` and ``M`` the
            largest of ``best_f`` and the model's mean there (``_LocalPenalty``). ``"logei"`` only.
        observed: ``[n, d]`` points already evaluated, or ``None``. Given, LogEI / UCB never
            return a point within ``REPEAT_DISTANCE`` of one of them: the best restart that
            lands farther away is taken, or, when every restart came back to an observation,
            the acquisition's best among ``raw_samples`` Sobol points farther away. On a
            deterministic objective a repeat teaches nothing, yet an NP that stays unsure
            at its observations keeps expected improvement high there (Ax, likewise,
            generates again when it proposes an evaluated point).
        snap: maps points ``[k, d]`` of the cube to where they would be evaluated (a grid of
            stepped parameters, ``NPSampler``); the repeat check then compares those, so a
            proposal that rounds onto an observed grid point counts as a repeat.
        bounds: ``[2, d]`` lower and upper corners of the box searched, inside the unit
            cube (``None``: the whole cube). The model may know points outside it.
        q: points proposed together, for ``"qlognei"`` (1 for the other acquisitions).
            ``qLogNoisyExpectedImprovement`` is maximised jointly over the ``q`` points,
            its baseline the model's training inputs (pending points included); no
            repeat check (``observed`` is not used): the batch is what the acquisition
            makes of the model's joint.

    Returns:
        the point, numpy float64 of shape ``[d]``; ``[q, d]`` for ``"qlognei"``.
    """
    if acquisition not in ACQUISITIONS:
        raise ValueError(f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r}")
    if not isinstance(q, int) or isinstance(q, bool) or q < 1 or (q > 1 and acquisition != "qlognei"):
        raise ValueError(f"q must be a positive int, and 1 unless acquisition is 'qlognei'; got {q!r}")
    # optimize_acqf's seed covers its raw samples but not the choice among them (torch.multinomial
    # on the global generator), and a posterior draw uses the global generator too: seed it here,
    # so the point depends on (model, seed) alone and the caller's generator is left as it was
    if pending is not None:
        pending = torch.as_tensor(pending, dtype=torch.float64)
        if pending.ndim != 2 or pending.shape[-1] != dim:
            raise ValueError(f"pending must have shape [p, {dim}], got {tuple(pending.shape)}")
        if penalise_pending and believe_pending:
            raise ValueError("penalise_pending and believe_pending exclude each other (one rule for pending points)")
        if len(pending) and penalise_pending:
            if acquisition != "logei":
                raise ValueError(f"penalise_pending needs acquisition 'logei', got {acquisition!r}")
            if pending_value is not None:
                raise ValueError("pending_value is not used with penalise_pending (pending points are believed at "
                                 "no value)")
        elif len(pending) and believe_pending:
            if pending_value is not None:
                raise ValueError("pending_value is not used with believe_pending (each pending point is believed at "
                                 "the model's mean there)")
            with torch.no_grad():
                believed = model.posterior(pending).mean.reshape(len(pending), 1)
            model = _condition(model, pending, believed)
            if observed is not None:
                observed = torch.cat([torch.as_tensor(observed, dtype=torch.float64), pending])
        elif len(pending):
            if pending_value is None:
                raise ValueError("pending_value is required with pending points: the value they are believed at "
                                 "(liar_value of the observed outputs)")
            value = torch.as_tensor(pending_value, dtype=torch.float64).reshape(-1)
            if value.numel() != 1 or not torch.isfinite(value).all():
                raise ValueError(f"pending_value must be one finite number, got {pending_value!r}")
            with torch.no_grad():
                model.posterior(pending)  # a GPyTorch ExactGP conditions only after it has predicted once
            model = _condition(model, pending, value.expand(len(pending)).unsqueeze(-1))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if observed is not None:
            observed = torch.as_tensor(observed, dtype=torch.float64)
            if observed.ndim != 2 or observed.shape[-1] != dim:
                raise ValueError(f"observed must have shape [n, {dim}], got {tuple(observed.shape)}")
        if bounds is None:
            bounds = torch.stack([torch.zeros(dim), torch.ones(dim)]).to(torch.float64)
        bounds = torch.as_tensor(bounds, dtype=torch.float64)
        if bounds.shape != (2, dim) or not ((0 <= bounds[0]) & (bounds[0] < bounds[1]) & (bounds[1] <= 1)).all():
            raise ValueError(f"bounds must be [2, {dim}] corners with 0 <= lower < upper <= 1, got {bounds.tolist()}")
        if acquisition == "qlognei":
            return _maximise_batch(model, q, seed, num_restarts, raw_samples, bounds)
        penalty = None
        if penalise_pending and pending is not None and len(pending):
            penalty = _LocalPenalty.build(model, pending, best_f, bounds, seed)
        return _maximise(model, acquisition, dim, best_f, seed, beta, num_restarts, raw_samples, thompson_candidates,
                         observed, bounds, penalty, snap)


def _condition(model, X: torch.Tensor, Y: torch.Tensor):
    """``model.condition_on_observations(X, Y)`` for the pending points, ``Y`` in the model's
    output units. A GP told its objective is noise-free (a fixed-noise likelihood) needs the
    new points' noise too: the same variance as its observations (converted back through
    its outcome transform, which ``condition_on_observations`` applies to it)."""
    from gpytorch.likelihoods import FixedNoiseGaussianLikelihood

    likelihood = getattr(model, "likelihood", None)
    if not isinstance(likelihood, FixedNoiseGaussianLikelihood):
        return model.condition_on_observations(X, Y)
    noise = likelihood.noise.min().detach()
    transform = getattr(model, "outcome_transform", None)
    if transform is not None and hasattr(transform, "stdvs"):
        noise = noise * transform.stdvs.reshape(-1)[0] ** 2
    return model.condition_on_observations(X, Y, noise=noise.expand_as(Y).clone())


def propose_in_region(region: TrustRegion, X: torch.Tensor, Y: torch.Tensor, build_model, acquisition: str, *,
                      seed: int, pending: torch.Tensor | None = None, avoid_repeats: bool = True,
                      liar: str = DEFAULT_LIAR, snap: Callable[[torch.Tensor], torch.Tensor] | None = None,
                      **settings: Any) -> np.ndarray:
    """:func:`propose` inside ``region``'s box around the best of ``X`` ``[n, d]`` (values
    ``Y`` ``[n, 1]``, maximised): the model, ``build_model(X_box, Y_box)``, sees only the
    observations in the box ``region.context_factor`` times as wide around the same
    centre, mapped onto the unit cube, and so do the pending points and the repeat check;
    the proposal, searched for in the middle of that cube, is mapped back. The one trust-region step of
    ``BOPolicy`` and ``NPSampler``. ``liar``: what the pending points are believed at, from
    the outputs in the model's box (:func:`liar_value`). ``settings``: ``propose``'s ``beta``, ``num_restarts``,
    ``raw_samples``, ``thompson_candidates``, ``q``. ``snap``: as :func:`propose`'s, on the
    whole unit cube. Returns ``[d]`` in the unit cube (``[q, d]`` for ``"qlognei"``)."""
    center = X[int(torch.argmax(Y))]
    lower, upper = region.box(center)  # searched
    seen_lower, seen_upper = region.box(center, region.context_factor)  # what the model sees, as its unit cube
    X_box, inside = region.to_unit(X, seen_lower, seen_upper)
    Y_box = Y[inside]
    if pending is not None:
        pending = region.to_unit(pending, seen_lower, seen_upper)[0]
    span = seen_upper - seen_lower
    bounds = torch.stack([(lower - seen_lower) / span, (upper - seen_lower) / span]).clamp(0.0, 1.0)
    local_snap = None
    if snap is not None:  # the repeat check in the model's cube, through the whole cube's grid
        def local_snap(points: torch.Tensor) -> torch.Tensor:
            return (snap(seen_lower + points * span) - seen_lower) / span

    point = propose(build_model(X_box, Y_box), acquisition, dim=X.shape[-1], best_f=Y_box.max(), seed=seed,
                    pending=pending, **pending_rule(Y_box, liar), observed=X_box if avoid_repeats else None,
                    bounds=bounds, snap=local_snap, **settings)
    return (seen_lower + torch.as_tensor(point) * span).clamp(lower, upper).numpy()


#: candidates a GP sample path is evaluated on at a time (bounds the memory of a draw)
_PATH_CHUNK = 1024


def thompson_draw(model, candidates: torch.Tensor, seed: int, *, joint: bool = True) -> torch.Tensor:
    """One posterior draw of the objective at ``candidates`` (``[n, d]``), shape ``[n]``.

    ``joint=False``: every candidate drawn from its own marginal
    (``posterior(candidates.unsqueeze(-2))``), whatever the model, as below for a diagonal
    NP: the ablation of the joint draw (``acquisition="marginal-thompson"``).

    - An exact GP (``SingleTaskGP`` and other GPyTorch ``ExactGP`` models): one function
      drawn path-wise (BoTorch's ``draw_matheron_paths``: a random-feature prior draw,
      1024 features, plus the exact data update) and evaluated at every candidate, so
      the draw is joint across candidates at memory linear in ``n`` (constant per
      chunk of candidates). The former ``posterior(candidates.unsqueeze(-2))`` drew each
      candidate independently, and the argmax of ``n`` independent draws is an
      optimistic upper bound, not a Thompson sample.
    - An ``NPModel`` whose surrogate has a joint predictive (``joint_predictive``,
      e.g. CMANP-AND): :meth:`NPModel.joint_sample`, the surrogate's autoregressive
      ``sample`` in blocks of ``block_size`` candidates, joint across all of them, at
      memory constant in the data and linear in ``n``. Like the GP's, the draw is of the
      latent objective: the NP's noise estimate is held out, as in its posterior.
    - Any other model, the diagonal NPs among them: independent per candidate
      (``posterior(candidates.unsqueeze(-2))``). A diagonal NP's posterior says the
      candidates are independent given the data, so this is a draw from its own joint,
      as BoTorch's ``MaxPosteriorSampling`` would take it; but since that joint ignores
      how ``f`` at nearby points moves together, the argmax over thousands of candidates
      is optimistic, closer to a UCB with a large ``beta`` than to a Thompson sample. It
      is kept (not refused) so diagonal checkpoints keep their published behaviour; use a
      joint model (``cmanp-and``) for a Thompson sample of the function.

    ``seed`` seeds the NP's joint draw; the GP path and the diagonal draw read torch's
    global generator, which :func:`propose` seeds.
    """
    from gpytorch.models import ExactGP

    if not isinstance(candidates, torch.Tensor) or not candidates.is_floating_point() or candidates.dim() != 2:
        raise TypeError(f"candidates must be a floating-point torch.Tensor of shape [n, d], got "
                        f"{getattr(candidates, 'shape', type(candidates).__name__)}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if not isinstance(joint, bool):
        raise TypeError(f"joint must be a bool, got {type(joint).__name__}")
    if not joint:
        return model.posterior(candidates.unsqueeze(-2)).rsample().reshape(-1)
    if isinstance(model, ExactGP) and not _is_np_model(model):
        from botorch.sampling.pathwise import draw_matheron_paths

        path = draw_matheron_paths(model, sample_shape=torch.Size([1]))
        return torch.cat([path(chunk).reshape(-1) for chunk in candidates.split(_PATH_CHUNK)])
    if _is_np_model(model) and model.surrogate.joint_predictive:
        return _np_joint_draw(model, candidates, seed)
    return model.posterior(candidates.unsqueeze(-2)).rsample().reshape(-1)


def _is_np_model(model) -> bool:
    from npbandit.models import NPModel

    return isinstance(model, NPModel)


#: candidates per autoregressive block of a joint NP's Thompson draw; ``None``: every
#: candidate in one block, one draw from the head's one-shot joint (low rank plus diagonal,
#: consistent, so it is the joint of the candidates given the data; cost linear in their
#: number). One block, because drawing in blocks drifts: each block's drawn values are
#: folded into the context with ``update``, and cmanp-and-bo's predictive barely narrows at
#: the points it is given (it does not interpolate them), so every block adds a fresh
#: spread on top of a mean moved by the blocks before. Over 2,048 Sobol candidates on 30
#: Branin points the draws' mean |z| against the latent marginal is 0.80 in one block (a
#: calibrated draw: sqrt(2/pi) = 0.80) and 1.6 already over 100 candidates in blocks of 25;
#: on a 4-d model over 2,048 candidates, 0.82 in one block and 3.2-3.6 in blocks of 1 to 50
#: (6-8 over the last quarter drawn; benchmarks/thompson_blocks.py, docs/benchmarks.md). In
#: BOPolicy's trust region (x2) one block gave a median log10 regret of -3.34 on Branin
#: over 10 seeds, blocks of 25 -1.04 and the marginal draw -2.73 (docs/results.md).
THOMPSON_BLOCK_SIZE: int | None = None


def _np_joint_draw(model, candidates: torch.Tensor, seed: int) -> torch.Tensor:
    if model.batch_shape != torch.Size() or model.num_outputs != 1:
        raise ValueError("a joint Thompson draw needs an NPModel with one output and no batch shape, got "
                         f"batch_shape {tuple(model.batch_shape)} and {model.num_outputs} outputs")
    device = next(model.surrogate.parameters()).device
    generator = torch.Generator(device=device).manual_seed(seed)
    block_size = candidates.shape[0] if THOMPSON_BLOCK_SIZE is None else THOMPSON_BLOCK_SIZE
    return model.joint_sample(candidates, 1, generator, block_size=block_size).reshape(-1)


#: points per proposal of ``BOPolicy(acquisition="qlognei")`` (issue 18's q = 4)
Q_BATCH = 4


def _maximise_batch(model, q: int, seed: int, num_restarts: int, raw_samples: int,
                    bounds: torch.Tensor) -> np.ndarray:
    """``q`` points ``[q, d]`` maximising ``qLogNoisyExpectedImprovement`` jointly, with the
    model's training inputs as its baseline."""
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.optim import optimize_acqf

    baseline = model.train_X if _is_np_model(model) else model.train_inputs[0]
    acq = qLogNoisyExpectedImprovement(model, X_baseline=baseline.detach(), prune_baseline=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as in _maximise
        points, _ = optimize_acqf(acq, bounds, q=q, num_restarts=num_restarts, raw_samples=raw_samples,
                                  options={"seed": seed})
    return points.detach().reshape(q, -1).numpy()


#: a proposal closer than this (Euclidean, unit cube) to an observed point is a repeat; with
#: ``avoid_repeats`` the proposal step replaces it (see :func:`propose`)
REPEAT_DISTANCE = 1e-3


def _maximise(model, acquisition: str, dim: int, best_f: float | torch.Tensor, seed: int, beta: float,
              num_restarts: int, raw_samples: int, thompson_candidates: int,
              avoid: torch.Tensor | None, bounds: torch.Tensor, penalty: "_LocalPenalty | None" = None,
              snap: Callable[[torch.Tensor], torch.Tensor] | None = None) -> np.ndarray:
    from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound
    from botorch.optim import optimize_acqf

    if acquisition in ("thompson", "marginal-thompson"):
        candidates = bounds[0] + (bounds[1] - bounds[0]) * torch.quasirandom.SobolEngine(
            dim, scramble=True, seed=seed).draw(thompson_candidates, dtype=torch.float64)
        with torch.no_grad():
            sample = thompson_draw(model, candidates, seed, joint=acquisition == "thompson")
        return candidates[int(torch.argmax(sample))].numpy()
    acq = (LogExpectedImprovement(model, best_f=best_f) if acquisition == "logei"
           else UpperConfidenceBound(model, beta=beta))
    if penalty is not None:
        acq = penalty.wrap(acq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # restarts that stop early are normal for flat acquisitions
        # BoTorch's retry (a whole new optimisation when a restart ends "ABNORMAL") stays on. Without
        # it, cmanp-bo's BO suite changed by chance, not for the better (paired by seed: better / equal
        # / worse in 23 / 12 / 25 of 60 runs, medians worse on Branin, Hartmann-3 and -6), for ~17 %
        # less proposal CPU; the published BO numbers are with it (docs/results.md, "Proposal retries off")
        candidates, values = optimize_acqf(acq, bounds, q=1, num_restarts=num_restarts, raw_samples=raw_samples,
                                           options={"seed": seed}, return_best_only=False)
    candidates, values = candidates.detach().reshape(-1, dim), values.detach().reshape(-1)
    if avoid is None or not len(avoid):
        return candidates[int(torch.argmax(values))].numpy()
    if snap is None:
        def snap(points: torch.Tensor) -> torch.Tensor:
            return points

    avoid = snap(avoid.to(candidates))
    new = torch.cdist(snap(candidates), avoid).amin(dim=-1) >= REPEAT_DISTANCE
    if new.any():  # the best restart that lands away from every observation
        return candidates[int(torch.argmax(torch.where(new, values, -torch.inf)))].numpy()
    # every restart came back to an observation: the acquisition's best among Sobol points away from them
    pool = bounds[0] + (bounds[1] - bounds[0]) * torch.quasirandom.SobolEngine(
        dim, scramble=True, seed=seed).draw(raw_samples, dtype=torch.float64)
    pool = pool[torch.cdist(snap(pool), avoid).amin(dim=-1) >= REPEAT_DISTANCE]
    if not len(pool):  # observations everywhere (a tiny box searched for long): nothing new to offer
        return candidates[int(torch.argmax(values))].numpy()
    with torch.no_grad():
        scores = acq(pool.unsqueeze(-2))
    return pool[int(torch.argmax(scores))].numpy()


class _LocalPenalty:
    """González et al. (2016)'s local penalty around pending points, for a log acquisition.

    ``log phi_j(x) = log Phi((L |x - x_j| - M + mu_j) / sigma_j)`` summed over the pending
    points ``x_j`` (``[p, d]``), where ``mu_j``, ``sigma_j`` are the model's predictive mean
    and standard deviation at ``x_j``; ``L`` estimates the objective's Lipschitz constant, the
    largest norm of the gradient of the model's mean over 256 Sobol points of the searched
    box, and ``M`` its maximum, the largest of the best observed value and the model's mean
    at those points and at the pending ones (as Trieste's local penalisation does, so a point
    in flight where the model expects a new best is penalised too, not waved through for
    lying above the best observation)."""

    _LIPSCHITZ_POINTS = 256

    def __init__(self, pending: torch.Tensor, mean: torch.Tensor, std: torch.Tensor, best_f: torch.Tensor,
                 lipschitz: float) -> None:
        self.pending, self.mean, self.std, self.best_f, self.lipschitz = pending, mean, std, best_f, lipschitz

    @classmethod
    def build(cls, model, pending: torch.Tensor, best_f, bounds: torch.Tensor, seed: int) -> "_LocalPenalty":
        with torch.no_grad():
            post = model.posterior(pending)
            mean = post.mean.reshape(-1)
            std = post.variance.reshape(-1).clamp_min(1e-12).sqrt()
        points = bounds[0] + (bounds[1] - bounds[0]) * torch.quasirandom.SobolEngine(
            pending.shape[-1], scramble=True, seed=seed).draw(cls._LIPSCHITZ_POINTS, dtype=torch.float64)
        points.requires_grad_(True)
        with torch.enable_grad():
            means = model.posterior(points).mean
            grad, = torch.autograd.grad(means.sum(), points)
        lipschitz = max(float(grad.norm(dim=-1).max()), 1e-6)  # a flat mean: only the point itself is damped
        top = torch.stack([torch.as_tensor(best_f, dtype=torch.float64).reshape(()), means.detach().max(), mean.max()])
        return cls(pending, mean, std, top.max(), lipschitz)

    def log_penalty(self, X: torch.Tensor) -> torch.Tensor:
        """``X`` ``[b, 1, d]`` -> ``[b]``: the summed log penalty."""
        from torch.special import log_ndtr

        dist = torch.cdist(X.squeeze(-2), self.pending.to(X))  # [b, p]
        z = (self.lipschitz * dist - self.best_f + self.mean) / self.std
        return log_ndtr(z).sum(-1)

    def wrap(self, acq):
        """``acq`` (a log acquisition on ``[b, 1, d]``) plus the log penalty, as a BoTorch
        acquisition function."""
        from botorch.acquisition import AcquisitionFunction

        penalty = self

        class _Penalised(AcquisitionFunction):  # defined here: this module imports BoTorch lazily
            def __init__(self) -> None:
                super().__init__(acq.model)
                self.base = acq

            def forward(self, X: torch.Tensor) -> torch.Tensor:
                return self.base(X) + penalty.log_penalty(X)

        return _Penalised()
