"""Black-box optimisation policies on the unit cube (``npbandit/BlackBox-v0`` actions).

Every policy maximises reward (the environment negates objectives it minimises).
The first ``n_init`` points (default ``2d + 1``) are a scrambled Sobol design seeded
by ``reset(seed)``, so every method of a comparison starts from the same points.

:class:`BOPolicy` is the loop around the proposal step of :mod:`npbandit.acquisition`: it
keeps the observations, builds the model through an injected model factory (a callable
``(train_X, train_Y) -> Model``; :func:`~npbandit.policies.factories.model_factory` resolves
the names ``"gp"`` and checkpoint names), keeps a trust region with injected :class:`TrustRegionSettings` and
hands points in flight to an injected :class:`~npbandit.acquisition.pending.PendingStrategy`.
It keeps what it handed out and what it has seen in :mod:`npbandit.policies.observations`.
The proposal step and its options live in :mod:`npbandit.acquisition` (some of its names
re-exported here: this module's public names before that package existed).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.acquisition import proposal, recommend
from npbandit.acquisition import thompson as _thompson
from npbandit.acquisition.constrained import CONSTRAINED_ACQUISITIONS, best_feasible
from npbandit.acquisition.mixed import space_of
from npbandit.acquisition.optimizers import AcquisitionOptimizer, resolve_acq_optimizer
from npbandit.acquisition.pending import (
    DEFAULT_LIAR,
    LIARS,
    ConstantLiar,
    PendingStrategy,
    check_liar,
    liar_value,
    pending_rule,
    pending_strategy,
)
from npbandit.acquisition.pinned import Pinned, pin
from npbandit.acquisition.proposal import ACQUISITIONS, propose, propose_in_region
from npbandit.acquisition.subspace import SubspaceStrategy, bind_search, check_subspace
from npbandit.acquisition.thompson import thompson_draw
from npbandit.acquisition.wide_spaces import subspace_and_width
from npbandit.feasibility import is_feasible
from npbandit.policies.base import Policy, Recommendation, seeded_by
from npbandit.policies.design import SobolDesign, SobolPolicy, check_snap, snap_points
from npbandit.policies.factories import GPModelFactory, NPModelFactory, as_model_factory, model_factory
from npbandit.policies.observations import HandOuts, Observations, hand_out
from npbandit.policies.trust_region import TrustRegion, TrustRegionSettings
from npbandit.rows import evaluation_order
from npbandit.space.linear_constraints import Polytope
from npbandit.surrogates.pretrained import checkpoint_use, context_limit, served_width
from npbandit.threads import check_threads, torch_threads
from npbandit.transforms.yeo_johnson import yeo_johnson_warp
from npbandit.validation import check_bool, check_int, check_real, path_as_str

__all__ = ["SobolPolicy", "BOPolicy", "ACQUISITIONS", "OUTPUT_WARPS", "LIARS", "DEFAULT_LIAR", "check_liar",
           "liar_value", "pending_rule", "propose", "propose_in_region", "thompson_draw", "yeo_johnson_warp",
           "GPModelFactory", "NPModelFactory", "model_factory", "Q_BATCH"]

#: what ``BOPolicy(output_warp=...)`` accepts besides ``None``
OUTPUT_WARPS = ("yeo-johnson",)
#: points per proposal of ``BOPolicy(acquisition="qlognei")``
Q_BATCH = 4


class BOPolicy(Policy):
    """Bayesian optimisation with an NP (``NPModel``), an exact GP (``SingleTaskGP``) or any
    BoTorch model an injected factory builds.

    Args:
        dim: input dimension.
        model: a checkpoint name (e.g. ``"cmanp-bo"``) or path (``str`` or ``os.PathLike``), ``"gp"`` for BoTorch's
            ``SingleTaskGP`` refit every iteration (both resolved by :func:`model_factory`),
            or a model factory: a callable ``(train_X [n, d], train_Y [n, 1]) -> Model``
            returning a one-output BoTorch model on the unit cube (``train_Y [n, 1 + k]`` and
            a model of as many outputs with ``constrained``), called before every
            proposal with the observations the model sees (an :class:`NPModelFactory` is
            streamed as a checkpoint name is). A factory's ``name`` attribute, if any, starts
            the policy's name, and its ``params()``, if any, are logged with the run. Models
            other than an NP checkpoint run with torch's global generator seeded per
            proposal from the run's generator.
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
        q: points per proposal for ``"qlognei"`` (default :data:`Q_BATCH`); 1 for the other
            acquisitions, which propose one point at a time.
        n_init: initial Sobol points (default ``2 * dim + 1``; with a subspace, ``2 d_e + 1``,
            see ``subspace``).
        max_n_init: the most that default may be (``optimize``: the points of a discrete space
            smaller than it, which a longer design could only repeat); ``None`` (default): no
            cap. An ``n_init`` given is kept as it is.
        noise_free: ``model="gp"`` only. ``True`` tells the ``SingleTaskGP`` the objective is
            deterministic: a fixed observation variance of ``NOISE_FREE_VAR`` (1e-6) in
            the standardised units the GP is fit in, as BoTorch documents for
            noise-free observations (``train_Yvar``). ``False`` (default) infers the
            noise (BoTorch's default likelihood: LogNormal(-4, 1) prior, floor 1e-4),
            which suits noisy objectives but blurs a deterministic one near its optimum.
        gp_kernel: ``model="gp"`` only. ``"rbf"`` (default, ``SingleTaskGP``'s own) or
            ``"matern52"`` (see :func:`npbandit.policies.gp.fit_single_task_gp`).
        output_warp: ``None`` (default) or ``"yeo-johnson"``: the model sees the
            observations through :func:`yeo_johnson_warp`, refit to all of them before
            every proposal (the acquisition's ``best_f`` and the pending points' value
            in the same warped units). The warp changes with every observation, so the
            model is rebuilt per proposal instead of streamed (cost linear in N).
        avoid_repeats: ``True`` (default): never propose a point within
            ``REPEAT_DISTANCE`` (1e-3 in the unit cube the model sees: with a trust region,
            its context box; see :func:`propose`, :func:`propose_in_region`) of an evaluated
            one (LogEI / UCB): an NP that stays unsure at its observations otherwise
            re-evaluates its incumbent. ``False`` for a noisy objective where
            re-evaluating a point is worth an evaluation.
        trust_region: ``True`` or a :class:`TrustRegionSettings`: every proposal is made
            inside a :class:`~npbandit.policies.trust_region.TrustRegion` with those settings
            (``True``: the defaults) around the best point (TuRBO-1's resizing rules; it
            starts as the whole cube and shrinks after proposals that do not improve), and
            the model sees only the observations in a box around it, mapped onto the unit
            cube with their outputs standardised among themselves, so a pretrained NP
            models the incumbent's neighbourhood at the scale it was trained on. The box
            moves with every observation, so the model is rebuilt per proposal (cost
            linear in the points inside it). ``None`` (default): on for an NP checkpoint,
            off for any other model (the GP fits its own lengthscales to the data).
            ``False`` keeps the global model, streamed for an NP (CMANP: constant cost per
            observation however long the run).
        liar: a :class:`~npbandit.acquisition.pending.PendingStrategy`, or its name: what
            points still being evaluated (asynchronous BO, ``act(pending=...)``) are
            believed at when the next one is proposed: ``"worst"``, ``"mean"`` or ``"best"``
            of the outputs the model sees (``ConstantLiar``; with the trust region, those
            in its box), ``"believer"``: each at the model's own mean there
            (``KrigingBeliever``), or ``"penalty"`` (LogEI only): at no value, the model
            left as it is and LogEI damped around each (``LocalPenalisation``). Default
            ``DEFAULT_LIAR``.
        budget: the evaluations the search will make, the initial design included
            (``optimize`` passes its own); every point handed out spends one, whether it
            comes back, fails or is still in flight. With it the trust region does not restart
            when too few evaluations are left for a restarted region to shrink back
            (:meth:`TrustRegion.observe`); ``None``: TuRBO's restarts, whenever the region
            collapses.
        max_context: with the trust region, the most observations the model sees: when more
            lie in its box, those nearest the incumbent
            (:func:`~npbandit.acquisition.proposal.propose_in_region`). ``"checkpoint"``
            (default): the most context points an NP checkpoint was trained with
            (:func:`~npbandit.surrogates.pretrained.context_limit`; 100 for the shipped ``bo``
            ones), so a long run never conditions a network on more points than it was
            trained for and a proposal's cost stops growing with the run; no limit for other
            models. An int: that limit; ``None``: every observation in the box.
        subspace: a :class:`~npbandit.acquisition.subspace.SubspaceStrategy`: how ``dim``
            inputs are searched with a model of fewer (``CountSketch()``,
            ``CoordinateSubspace()``). ``None`` (default): an NP checkpoint narrower than
            ``dim`` uses :func:`~npbandit.acquisition.wide_spaces.default_subspace`, any other
            model none. With one, the run is bound to the strategy at ``reset`` (its random
            choices from the run's seed): the Sobol design is drawn in its search cube and
            lifted, the trust region lives there (its failure tolerance counting the
            inputs a proposal moves), the model is rebuilt per proposal on the strategy's
            view of the observations, and :meth:`params` logs what the run used. An NP's
            width is its checkpoint's; any other model needs the strategy's ``d_e``.
        constrained: ``True``: every observation carries its outcome-constraint values in
            ``info["constraints"]`` (a sequence of ``k`` finite floats, the same ``k`` each
            time; feasible when all are ``<= 0``: what ``BlackBox-v0`` with ``constraints=``
            reports). The model then has ``1 + k`` outputs -- the objective, then one per
            constraint (an :class:`~npbandit.models.NPModel` on ``1 + k`` columns: an NP per
            output sharing the network; a multi-output GP) -- and the acquisition is
            expected improvement over the best feasible observation weighted by the
            probability of feasibility (the probability of feasibility alone while no
            observation is feasible; :mod:`npbandit.acquisition.constrained`); ``"logei"``
            and ``"qlognei"`` only. The trust region centres on the best feasible
            observation and counts a proposal a success only when it is feasible and
            improves on it; failed evaluations are seen at the worst objective value and
            the worst value of each constraint observed.
        threads: torch's intra-op threads for each proposal and model update
            (:class:`~npbandit.threads.torch_threads`; the caller's count is restored after
            each): a positive int, ``"torch"`` (torch's own count) or ``None`` (default:
            ``NPBANDIT_THREADS``, else ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``, else 1).
        snap: ``None`` (default: every point of the cube is a point of its own) or a callable
            mapping points ``[..., d]`` of the unit cube to where they will be evaluated, in
            the cube (:meth:`npbandit.space.SearchSpace.snap`: integers, grids and choices).
            Every point handed out, design or proposal, is snapped, so the model sees each
            observation at the encoding of the value evaluated, and the repeat check compares
            snapped points (:func:`propose`'s ``snap``).
        acq_optimizer: how LogEI / UCB are maximised
            (:mod:`npbandit.acquisition.optimizers`; refused with the other acquisitions,
            which use none). ``None`` (default): what the
            checkpoint's card recommends (``CandidateSearch()`` for ``tnpd-bo``: batched
            scoring without gradients, several times cheaper per proposal than L-BFGS-B on
            a network), else ``GradientRestarts()`` (BoTorch's ``optimize_acqf``), as for
            a GP (:func:`~npbandit.acquisition.optimizers.resolve_acq_optimizer`).
        num_restarts, raw_samples: ``optimize_acqf``'s settings. For LogEI / UCB, either one
            given (and no ``acq_optimizer``) selects ``GradientRestarts(num_restarts,
            raw_samples)``; for ``"qlognei"`` they set its joint optimisation (default 10 and
            512). ``raw_samples`` also sizes the Sobol pool the repeat check falls back to.
        polytope: linear input constraints on the unit cube
            (:class:`~npbandit.space.linear_constraints.Polytope`, ``optimize``'s
            ``parameter_constraints``), or ``None``: every point handed out satisfies them (the
            design's by rejection, each proposal's searched inside them, the trust region's box
            cut to them: :func:`propose`, :func:`propose_in_region`). Not with a subspace.

    Without a warp or a trust region the NP model is built once, after the initial design;
    every later observation is streamed in with ``condition_on_observations`` (CMANP:
    constant cost). Every model sees each output multiplied by one exact power of two
    (:attr:`Observations.scale <npbandit.policies.observations.Observations.scale>`): 1 unless a
    value past ``2 ** 100`` was observed (an objective's ``1e300`` for a bad point, whose
    spread's variance float64 cannot hold) or the values observed span less than ``2 ** -10``
    (where absolute variance floors downstream would decide the search), so a run between the
    two is the run it was without it; the streamed NP is rebuilt when it changes, and
    :meth:`recommend` answers in the rewards' units.
    :meth:`params` logs the settings the run uses: the trust region's and
    the pending strategy's as injected, the model factory's ``params()``.
    """

    def __init__(self, dim: int, model: str | Callable[[torch.Tensor, torch.Tensor], Any] = "cmanp-bo",
                 acquisition: str = "logei", n_init: int | None = None, beta: float = 2.0,
                 num_restarts: int | None = None, raw_samples: int | None = None, thompson_candidates: int = 2048,
                 noise_free: bool = False,
                 output_warp: str | None = None, avoid_repeats: bool = True,
                 trust_region: bool | TrustRegionSettings | None = None, q: int | None = None,
                 gp_kernel: str = "rbf", liar: str | PendingStrategy = DEFAULT_LIAR,
                 budget: int | None = None, threads: int | str | None = None,
                 max_context: int | str | None = "checkpoint",
                 snap: Callable[[torch.Tensor], torch.Tensor] | None = None,
                 subspace: SubspaceStrategy | None = None, constrained: bool = False,
                 acq_optimizer: AcquisitionOptimizer | None = None, polytope: Polytope | None = None,
                 max_n_init: int | None = None) -> None:
        # NumPy ints and bools as Python ones from here on; a bool is no count, nor 1 a flag
        dim = check_int("dim", dim, minimum=1)
        subspace = check_subspace(subspace)
        self.threads = check_threads("threads", threads)
        self.snap = check_snap(snap)
        self.budget = None if budget is None else check_int("budget", budget, minimum=1)
        if acquisition not in ACQUISITIONS:
            raise ValueError(f"acquisition must be one of {ACQUISITIONS}, got {acquisition!r}")
        constrained = check_bool("constrained", constrained)
        if constrained and acquisition not in CONSTRAINED_ACQUISITIONS:
            raise ValueError(f"constraints need acquisition 'logei' (expected improvement weighted by the "
                             f"probability of feasibility) or 'qlognei'; got {acquisition!r}")
        self.constrained = constrained
        q = (Q_BATCH if acquisition == "qlognei" else 1) if q is None else check_int("q", q, minimum=1)
        if q > 1 and acquisition != "qlognei":
            raise ValueError(f"q > 1 needs a batch acquisition ('qlognei'); {acquisition!r} proposes one point "
                             "at a time")
        self.q = q
        self.pending_strategy = pending_strategy(liar, acquisition)
        self.liar = self.pending_strategy.name
        if output_warp is not None and output_warp not in OUTPUT_WARPS:
            raise ValueError(f"output_warp must be None or one of {OUTPUT_WARPS}, got {output_warp!r}")
        self.output_warp = output_warp
        self.avoid_repeats = check_bool("avoid_repeats", avoid_repeats)
        if isinstance(trust_region, np.bool_):
            trust_region = bool(trust_region)
        if trust_region is not None and not isinstance(trust_region, (bool, TrustRegionSettings)):
            raise TypeError(f"trust_region must be a bool, a TrustRegionSettings or None, got "
                            f"{type(trust_region).__name__}")
        model = path_as_str(model)
        is_np = model != "gp" if isinstance(model, str) else isinstance(model, NPModelFactory)  # model: checked below
        self.trust_region = is_np if trust_region is None else trust_region is not False
        self.trust_region_settings = (None if not self.trust_region else trust_region
                                      if isinstance(trust_region, TrustRegionSettings) else TrustRegionSettings())
        n_init = None if n_init is None else check_int("n_init", n_init, minimum=1)
        max_n_init = None if max_n_init is None else check_int("max_n_init", max_n_init, minimum=1)
        self.dim, self.acquisition = dim, acquisition
        self.beta = check_real("beta", beta, low=0.0)  # UCB's exploration weight
        self.num_restarts = 10 if num_restarts is None else num_restarts  # qlognei's optimize_acqf
        self.raw_samples = 512 if raw_samples is None else raw_samples  # and the repeat check's fallback
        self.thompson_candidates = check_int("thompson_candidates", thompson_candidates, minimum=1)
        noise_free = check_bool("noise_free", noise_free)
        self.model_factory, self.model_name = as_model_factory(model, noise_free=noise_free, gp_kernel=gp_kernel)
        gp = self.model_factory if isinstance(self.model_factory, GPModelFactory) else None  # however it was given
        self.noise_free, self.gp_kernel = (gp.noise_free, gp.kernel) if gp else (bool(noise_free), gp_kernel)
        self.name = (f"{self.model_name}{'' if output_warp is None else '-' + output_warp}"
                     f"{'-tr' if self.trust_region else ''}-{acquisition}")
        self.surrogate = self.model_factory.surrogate if isinstance(self.model_factory, NPModelFactory) else None
        if self.surrogate is not None:
            self.checkpoint = {"name": self.surrogate.card["name"], "sha256": self.surrogate.card["sha256"]}
        recommended = None if self.surrogate is None else checkpoint_use(self.surrogate.card).get("acq_optimizer")
        self.acq_optimizer = resolve_acq_optimizer(acq_optimizer, recommended, num_restarts, raw_samples,
                                                   acquisition=acquisition)
        if max_context == "checkpoint":
            max_context = None if self.surrogate is None else context_limit(self.surrogate.card)
        elif max_context is not None and (isinstance(max_context, (bool, np.bool_)) or not isinstance(
                max_context, (int, np.integer)) or max_context < 1):
            raise ValueError(f"max_context must be 'checkpoint', a positive int or None, got {max_context!r}")
        elif max_context is not None:
            max_context = int(max_context)
        self.max_context = max_context
        width = None if self.surrogate is None else served_width(self.surrogate)  # trained d, not padded x_dim
        subspace, width = subspace_and_width(subspace, width, dim, space_of(self.snap))
        self.subspace, self.width = subspace, width
        if polytope is not None and subspace is not None:
            raise ValueError(f"linear input constraints (parameter_constraints) are not supported with a subspace "
                             f"search ({dim} columns for a model of {width}): the constraints live in the whole "
                             "cube, the search in the subspace")
        self.polytope = polytope
        if n_init is None:
            n_init = 2 * dim + 1 if subspace is None else subspace.n_init(dim, width)
            n_init = n_init if max_n_init is None else min(n_init, max_n_init)
        self.n_init = n_init
        self._search = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.seen = Observations()  # the observations and failures (their best reward raw, not warped)
        self.np_model, self._model_scale = None, None
        if self.subspace is None:
            self.design = SobolDesign(self.dim, seed, self.polytope)
            self.region = (TrustRegion.from_settings(self.dim, self.trust_region_settings) if self.trust_region
                           else None)
        else:  # the design and the region live in the strategy's search cube
            self._search = bind_search(self.subspace, self.dim, self.width, int(self.rng.integers(2**31)))
            self.design = SobolDesign(self._search.search_dim, seed)
            self.region = None
            if self.trust_region:
                settings = self.trust_region_settings
                if settings.failure_tolerance is None:  # TuRBO's max(4, d), d the inputs a proposal moves
                    settings = dataclasses.replace(settings, failure_tolerance=max(4, self._search.active_dim))
                self.region = TrustRegion.from_settings(self._search.search_dim, settings)
        self._batch: list[np.ndarray] = []  # the rest of the last q-point proposal, handed out in order
        self.hand_outs = HandOuts()  # points in flight, each with the best value known when handed out
        self._value_model: tuple[tuple[int, int], Any] | None = None  # acquisition_value's, by what it saw
        self.torch_rng = torch.Generator().manual_seed(int(self.rng.integers(2**62)))

    #: the observed points, their rewards and constraint values, the failed points (:class:`Observations`)
    X = property(lambda self: self.seen.X)
    Y = property(lambda self: self.seen.Y)
    C = property(lambda self: self.seen.C)
    failed = property(lambda self: self.seen.failed)

    def _data(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``X [n, d]`` and the outputs ``[n, 1 + k]`` the model sees
        (:meth:`Observations.data`); keeps the output warp fitted to them."""
        X, Y, self._fitted_warp = self.seen.data(self.output_warp)
        return X, Y

    def _model(self, X: torch.Tensor, Y: torch.Tensor):
        if (self.surrogate is None or self.output_warp is not None or self.region is not None
                or self._search is not None):
            # a GP refits; a warp, a box or a subspace moves with every observation
            return self.model_factory(X, Y)
        if self.np_model is None:  # the NP built once, later observations streamed in (observe) at its scale
            self.np_model, self._model_scale = self.model_factory(X, Y), self.seen.scale
        return self.np_model

    def _stream(self, x: np.ndarray, row: list[float]) -> None:
        """Condition the streamed NP on ``x`` with outputs ``row`` (reward units), at the scale it
        was built at (:attr:`Observations.scale`); when an observation has changed the scale, the
        model is let go instead and rebuilt from every observation at the new one before the next
        proposal (:meth:`_model`), so that its rows share one unit."""
        scale = self.seen.scale
        if not torch.equal(scale, self._model_scale):
            self.np_model = None
            return
        with torch_threads(self.threads):
            self.np_model = self.np_model.condition_on_observations(
                torch.tensor(x, dtype=torch.float64)[None], torch.tensor([row], dtype=torch.float64) * scale)

    def act(self, obs: np.ndarray, pending: np.ndarray | None = None, pinned: Pinned | None = None) -> np.ndarray:
        """The next point, ``[d]`` in the unit cube; ``pending`` ``[p, d]``: points handed out
        and not yet observed (asynchronous BO), believed as ``liar`` says (:func:`propose`).
        The initial design counts its points in flight with the observations, so with points
        in flight it is still ``n_init`` points (then the model proposes once two are
        observed); observations (and failures) given directly count as design too, and the
        design passes over them (:mod:`~npbandit.policies.design`). ``pinned``: columns held at
        given values (:class:`~npbandit.acquisition.pinned.Pinned`): the next design point with
        them set, or the acquisition maximised over the other columns (:func:`propose`'s
        ``pinned``; one point of a ``"qlognei"`` batch, the queue of an earlier batch left).

        Raises:
            ValueError: ``pinned`` with a subspace search (its columns are not the cube's)."""
        if pinned is not None and self.subspace is not None:
            raise ValueError(f"fixed values are not supported with a subspace search ({self.dim} columns for a model "
                             f"of {self.width}): the search moves in the subspace's cube, not the parameters'")
        return hand_out(self.hand_outs, pending, dim=self.dim, n_init=self.n_init, observed=len(self.Y),
                        failed=len(self.failed), design=lambda: self._design_point(pinned),
                        propose=lambda points: self._next_point(points, pinned),
                        seed_from=None if self.surrogate is not None else self.rng, threads=self.threads,
                        queued=self._batch if pinned is None else None)

    def _design_point(self, pinned: Pinned | None = None) -> np.ndarray:
        """The next design point (:meth:`HandOuts.design_point`), lifted from the subspace's search cube with one,
        with ``pinned``'s columns set."""
        lift = pinned.apply if pinned is not None else None if self._search is None else (
            lambda z: self._search.lift(torch.from_numpy(z)[None])[0].numpy())
        return self.hand_outs.design_point(self.design, self.snap, (*self.X, *self.failed), lift)

    def _next_point(self, pending: torch.Tensor | None, pinned: Pinned | None = None) -> np.ndarray:
        X, Y = self._data()
        seed = int(self.rng.integers(2**31))
        k = self.seen.constraint_count
        settings = {"beta": self.beta, "num_restarts": self.num_restarts, "raw_samples": self.raw_samples,
                    "thompson_candidates": self.thompson_candidates, "q": self.q, "acq_optimizer": self.acq_optimizer}
        if k:
            settings["constraints"] = k
        if self.polytope is not None:
            settings["polytope"] = self.polytope
        if self._search is not None:  # a search reads the history in the order it happened
            order = torch.as_tensor(evaluation_order(len(self.Y), self.seen.failed_after[:len(X) - len(self.Y)]))
            X, Y = X[order], Y[order]
            points = self._search.propose(self.region, X, Y, self._model, self.acquisition, seed=seed,
                                          pending=pending, avoid_repeats=self.avoid_repeats,
                                          liar=self.pending_strategy, snap=self.snap,
                                          max_context=self.max_context, **settings)
        elif self.region is not None:
            points = proposal.propose_in_region(self.region, X, Y, self._model, self.acquisition, seed=seed,
                                                pending=pending, avoid_repeats=self.avoid_repeats,
                                                liar=self.pending_strategy, max_context=self.max_context,
                                                snap=self.snap, pinned=pinned, **settings)
        else:
            best_f = best_feasible(Y, k) if k else Y.max()
            points = proposal.propose(self._model(X, Y), self.acquisition, dim=self.dim, best_f=best_f, seed=seed,
                                      pending=pending, pending_strategy=self.pending_strategy, outputs=Y,
                                      observed=X if self.avoid_repeats else None, snap=self.snap, pinned=pinned,
                                      **settings)
            if self.avoid_repeats and self.acquisition in ("logei", "ucb"):  # those that keep the check
                proposal.warn_if_repeated(points, X, self.snap)
        points = pin(pinned, snap_points(self.snap, points))
        if pinned is not None and points.ndim > 1:  # one point with the values fixed; the batch's others dropped
            points = points[0]
        if self.polytope is not None and not bool(self.polytope.holds(torch.as_tensor(points)).all()):
            raise RuntimeError(f"a proposal left the linear input constraints (a bug in the proposal step): {points}")
        for point in points.reshape(-1, self.dim):
            self.hand_outs.add(point, self.seen.best)  # raw, not warped
        if points.ndim == 1:
            return points
        self._batch = list(points[1:])
        return points[0]

    def withdraw(self, point: np.ndarray) -> None:
        """Forget ``point`` ``[d]``, the last point :meth:`act` handed out, which will not be
        evaluated (a caller that asked several policies and took another's point): the trust
        region will not wait for it, and the budget has it back.

        Raises:
            ValueError: ``point`` is not in flight from this policy."""
        self.hand_outs.withdraw(point)

    def acquisition_value(self, point: np.ndarray, best: float) -> float:
        """The log expected improvement at ``point`` ``[d]`` over ``best`` (a reward, maximised)
        under a model of every observation over the whole cube (an NP wider than its checkpoint
        reading the most relevant columns), in the rewards' units so that two policies' values
        compare (:func:`~npbandit.acquisition.point_value.acquisition_value`); ``-inf`` before
        two observations. With constraints, weighted by the probability of feasibility.

        Raises:
            ValueError: the policy warps its outputs (``output_warp``): its values are in the
                warp's units, not the rewards'."""
        if self.output_warp is not None:
            raise ValueError("acquisition_value needs the rewards' units; this policy warps its outputs "
                             f"(output_warp={self.output_warp!r})")
        if len(self.Y) < 2:
            return -math.inf
        from npbandit.acquisition.point_value import acquisition_value

        X, Y = self._data()
        scale = float(self.seen.scale[0])
        seen = (len(self.Y), len(self.failed))  # what the model saw; a caller comparing policies asks every step
        with torch_threads(self.threads), seeded_by(self.rng):
            if self._value_model is not None and self._value_model[0] == seen:
                model = self._value_model[1]
            elif self.surrogate is not None and self.width is not None and self.width < self.dim:
                from npbandit.models import NPModel

                model = NPModel.from_pretrained(self.surrogate, X, Y, columns="relevant")
            else:
                model = self.model_factory(X, Y)
            self._value_model = (seen, model)
            value = acquisition_value(model, torch.as_tensor(point, dtype=torch.float64), "logei", best_f=best * scale,
                                      beta=self.beta, outputs=Y, constraints=self.seen.constraint_count)
        return value - math.log(scale)

    def observe(self, obs, action, reward, info) -> None:
        x = np.asarray(action, dtype=np.float64)
        # a proposal's outcome resizes the box, judged against the best value its proposal knew:
        # with evaluations in flight, a point that improved on that is not a failure because a
        # point proposed beside it came back first and better (TuRBO judges a batch likewise)
        # (a point not handed out here, given to observe directly, counts as the design's until
        # n_init are observed, as TrustRegion.replay counts a history)
        c = self.seen.constraint_values(info) if self.constrained else None
        best_then = self.hand_outs.settle(x, lambda: self.seen.best if len(self.Y) >= self.n_init else None)
        if self.region is not None and best_then is not None:
            value = float(reward) if c is None or is_feasible(c) else -np.inf  # an infeasible one improves nothing
            self.region.observe(self.region.improves(value, best_then, self.seen.spread),
                               self.hand_outs.remaining(self.budget))
        self.seen.add(x, float(reward), c)
        if self.np_model is not None and self.output_warp is None:
            self._stream(x, [float(reward)] + ([] if c is None else c.tolist()))

    def observe_failure(self, obs, action, error: str) -> None:
        """A point whose evaluation failed: never proposed again (the repeat check), a
        proposal that did not improve (the trust region), and seen by the model at the worst
        value observed, so the search moves away from where evaluations fail: a failure is
        taken as a bad outcome of its region, the usual reading of a crashed or diverged
        configuration. (A model rebuilt per proposal places each failure at the worst value
        then; a streamed one at the worst value when it failed.)"""
        x = np.asarray(action, dtype=np.float64)
        best_then = self.hand_outs.settle(x, lambda: None)
        if self.region is not None and best_then is not None:
            self.region.observe(False, self.hand_outs.remaining(self.budget))
        self.seen.add_failure(x)
        if self.np_model is not None and self.output_warp is None:
            self._stream(x, self.seen.failure_outputs())

    def recommend(self) -> Recommendation | None:
        """Of the evaluated points, the one where a model on every observation over the whole cube
        (through the subspace for a wide space) has the highest (de-noised, for an NP) posterior mean
        of the objective, of those it predicts feasible with constraints
        (:mod:`npbandit.acquisition.recommend`); with ``output_warp``, that mean taken back through the
        warp (the posterior median in reward units). ``None`` with fewer than two values, with no point
        predicted feasible, or from a subspace search that makes none."""
        if len(self.Y) < 2:  # as few as a proposal needs
            return None
        X, Y = self._data()  # (fits the output warp, through which the model's mean is taken back)
        with torch_threads(self.threads):
            # a model built on what it sees (not the streamed one, whose rows follow the order of arrival)
            found = recommend.recommend(self.model_factory, X, Y, n_observed=len(self.Y), region=self.region,
                                        snap=self.snap, search=self._search, rng=self.rng, max_context=self.max_context,
                                        constraints=self.seen.constraint_count, outcome=self._fitted_warp)
        # the model's mean in the units it saw, taken back to the rewards' by the (exact) power of two
        return None if found is None else Recommendation(self.X[found[0]].copy(), found[1] / float(self.seen.scale[0]))

    def params(self) -> dict[str, Any]:
        """The settings this policy runs with (JSON-serialisable; logged with each run): the
        injected trust-region settings and pending strategy as they are, not the defaults."""
        out = {"dim": self.dim, "acquisition": self.acquisition, "n_init": self.n_init, "beta": self.beta}
        if self.acq_optimizer is not None:  # LogEI / UCB: the optimiser that maximises them, its settings inside
            out["acq_optimizer"] = self.acq_optimizer.params()
        if self.acquisition == "qlognei":  # its joint optimize_acqf
            out["num_restarts"] = self.num_restarts
        out["raw_samples"] = self.raw_samples  # the repeat check's fallback pool (and qlognei's raw samples)
        if self.q > 1:
            out["q"] = self.q
        if self.constrained:
            out["constrained"] = True
        if self.output_warp is not None:
            out["output_warp"] = self.output_warp
        out["avoid_repeats"] = self.avoid_repeats
        out["liar"] = self.liar
        if isinstance(self.pending_strategy, ConstantLiar) and not isinstance(self.pending_strategy.rule, str):
            out["liar_value"] = self.pending_strategy.rule
        out["trust_region"] = self.trust_region
        if self.trust_region:  # the region's settings, so runs with other ones stay apart
            settings = self.trust_region_settings
            out["trust_region_length_init"] = settings.length_init
            out["trust_region_context_factor"] = settings.context_factor
            # the other settings only when changed: runs with the defaults log what they always did
            out.update({f"trust_region_{k}": v for k, v in settings.changed().items()
                        if k not in ("length_init", "context_factor")})
            out["trust_region_budget"] = self.budget  # None: TuRBO's restarts at any point
            out["max_context"] = self.max_context  # None: every observation in the box
        if self.subspace is not None:  # the values the run used
            out["subspace_width"] = self.width
            search = bind_search(self.subspace, self.dim, self.width, 0) if self._search is None else self._search
            out.update(search.params())  # sizes only: the same for every seed
            if self.trust_region:
                out["trust_region_failure_tolerance"] = (self.trust_region_settings.failure_tolerance
                                                         or max(4, search.active_dim))
        factory_params = getattr(self.model_factory, "params", None)
        if callable(factory_params):
            out.update(factory_params())
        if self.acquisition == "thompson":  # a joint NP's blocks, as the draw reads them
            size = _thompson.THOMPSON_BLOCK_SIZE
            out["thompson_block_size"] = "all" if size is None else size
        return out
