"""GP-UCB for any contextual bandit: :class:`GPUCBPolicy`, one BoTorch ``SingleTaskGP`` per
arm. Torch loads with this module; BoTorch when a policy first fits
(:mod:`npbandit.policies.gp`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from npbandit.policies.problem import (
    ContextualBanditPolicy,
    check_arm_and_reward,
    check_bandit_context,
    check_bounds,
)
from npbandit.threads import check_threads, torch_threads
from npbandit.transforms.moments import RESCALE_TOL, drifted, merge_moments, moment_statistics, moments
from npbandit.validation import check_int, check_real

__all__ = ["GPUCBPolicy"]


class GPUCBPolicy(ContextualBanditPolicy):
    """GP-UCB with one BoTorch ``SingleTaskGP`` per arm on the contexts where it was
    played (:func:`npbandit.policies.gp.fit_single_task_gp`, as ``BOPolicy``'s GP).

    Every arm's GP reads its rewards on one scale for all arms, standardised by the mean
    and std of *all* rewards seen, with a prior mean of 0 there (``fit_single_task_gp(...,
    standardize=False)``): far from its data an arm is predicted at the mean reward of all
    arms, with the prior's uncertainty. Standardised by its own rewards, an arm played once
    would be predicted at that one reward everywhere, with a std of 1 in reward units, and
    an arm whose first reward fell low would never be played again. When the pooled mean
    has moved by more than :data:`~npbandit.transforms.moments.RESCALE_TOL` of the std an
    arm's GP was built on, or the std by more than a factor ``1 + RESCALE_TOL``, the GP is
    rebuilt on the new scale (as the per-arm NP policy re-conditions its arms).

    Each arm's GP is rebuilt with its new point every time the arm is played; its
    hyperparameters are fitted afresh when the arm's data has doubled or grown by
    ``refit_every`` points since their last fit (at 1, 2, 4, ..., 32, 64, 114, ...
    points with the default 50), and reused in between: an exact GP refit every round
    of a 2000-round run would take hours on a CPU, and a fit made on the first few
    points must not stand for the run.

    ``bounds``: ``[2, d]`` (lower row, upper row), the box every context lies in: the GPs
    read each context mapped from it onto the unit cube ``[0, 1]^d``, the inputs BoTorch's
    default priors are made for (its lengthscale prior assumes them: on contexts of another
    scale a GP fits a lengthscale that cannot tell them apart); a context outside the box
    is refused (``ValueError`` naming ``obs``), and ``check_spaces`` refuses an environment
    whose ``Box`` the bounds do not contain. ``None``: the contexts are read as they come
    (fine at about unit scale), and BoTorch's warning that they are not in the unit cube is
    shown once. ``make_bandit_policy`` passes the ``Box``'s finite bounds.

    ``threads``: torch's intra-op threads for each step's fits and predictions
    (:class:`~npbandit.threads.torch_threads`; ``None``: ``NPBANDIT_THREADS``, else
    ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``, else 1). ``context_dim``: the width of
    every context, checked on each one (``None``: ``bounds``' width, else any width, the
    same within a run).

    A warning raised in the GPs' fits and predictions reaches the user once per policy
    (each category and message), not once a round."""

    name = "gp-ucb"

    def __init__(self, n_arms: int = 5, beta: float = 1.0, refit_every: int = 50,
                 threads: int | str | None = None, context_dim: int | None = None, bounds: Any = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.beta = check_real("beta", beta, low=0.0)
        self.refit_every = check_int("refit_every", refit_every, minimum=1)
        self.threads = check_threads("threads", threads)
        self.context_dim = None if context_dim is None else check_int("context_dim", context_dim, minimum=1)
        self.bounds = None if bounds is None else check_bounds("bounds", bounds, self.context_dim)
        if self.bounds is not None:
            self.context_dim = self.bounds.shape[1]
        self._warned: set[tuple[type, str]] = set()  # the warnings shown (category, message)

    def _context(self, obs: Any) -> np.ndarray:
        """``obs`` checked (its width, finite, inside ``bounds``) and as the GPs read it."""
        x = check_bandit_context(obs, self._width, self.bounds)
        self._width = len(x)
        if self.bounds is None:
            return x
        low, high = self.bounds
        return (x - low) / (high - low)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.X: list[list[np.ndarray]] = [[] for _ in range(self.n_arms)]
        self.Y: list[list[float]] = [[] for _ in range(self.n_arms)]
        self.models: list[Any] = [None] * self.n_arms
        self.hypers: list[dict[str, torch.Tensor] | None] = [None] * self.n_arms
        self.fitted_on = [0] * self.n_arms  # points each arm's hyperparameters were fitted on
        self.scales: list[tuple[float, float] | None] = [None] * self.n_arms  # (mean, std) each GP's rewards are on
        self._moments = None  # running moments of all rewards (npbandit.transforms.moments)
        self._width = self.context_dim  # None: the first context's

    def _model(self, arm: int):
        import npbandit.policies.gp as gp  # BoTorch loads only when a GP-UCB policy first fits

        center, std = self.scales[arm] = tuple(float(v) for v in moment_statistics(self._moments))
        X = torch.tensor(np.array(self.X[arm]), dtype=torch.float64)
        Y = (torch.tensor(self.Y[arm], dtype=torch.float64).unsqueeze(-1) - center) / std
        n, fitted = len(self.Y[arm]), self.fitted_on[arm]
        reuse = self.hypers[arm] is not None and n < 2 * fitted and n - fitted < self.refit_every
        model = gp.fit_single_task_gp(X, Y, hyperparameters=self.hypers[arm] if reuse else None, standardize=False)
        if not reuse:
            self.hypers[arm], self.fitted_on[arm] = gp.gp_hyperparameters(model), n
        return model

    def _stale(self, arm: int) -> bool:
        """Whether arm ``arm``'s GP is unbuilt, or built on a reward scale the pooled one has left."""
        return self.models[arm] is None or drifted(*moment_statistics(self._moments),
                                                   *map(torch.tensor, self.scales[arm]), RESCALE_TOL)

    def act(self, obs: np.ndarray) -> int:
        x = self._context(obs)
        untried = [a for a in range(self.n_arms) if not self.Y[a]]
        if untried:
            return int(self.rng.choice(untried))
        x = torch.from_numpy(x).reshape(1, -1)
        scores = []
        with torch_threads(self.threads), warnings.catch_warnings(record=True) as caught:
            for arm in range(self.n_arms):
                if self._stale(arm):
                    self.models[arm] = self._model(arm)
                with torch.no_grad():
                    post = self.models[arm].posterior(x)
                center, std = self.scales[arm]
                scores.append(center + std * (float(post.mean) + self.beta * float(post.variance.sqrt())))
        self._show_once(caught)
        return int(np.argmax(scores))

    def _show_once(self, caught: list[warnings.WarningMessage]) -> None:
        """Show the warnings of a step's fits and predictions that this policy has not shown
        yet (as the filters let them through: ignored ones are not caught, an error is raised
        where it occurs). BoTorch's fits run inside ``catch_warnings``, which clears Python's
        memory of the warnings already shown, so its ``default`` filter alone shows one a round."""
        for w in caught:
            key = (w.category, str(w.message))
            if key not in self._warned:
                self._warned.add(key)
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)

    def observe(self, obs, action, reward, info) -> None:
        action, reward = check_arm_and_reward(action, reward, self.n_arms)
        self.X[action].append(self._context(obs))
        self.Y[action].append(reward)
        self.models[action] = None
        one = moments(torch.tensor([[reward]], dtype=torch.float64))
        self._moments = one if self._moments is None else merge_moments(self._moments, one)

    def params(self) -> dict[str, Any]:
        return {"beta": self.beta, "refit_every": self.refit_every,
                "bounds": None if self.bounds is None else self.bounds.tolist(), "reward_scale": "pooled"}
