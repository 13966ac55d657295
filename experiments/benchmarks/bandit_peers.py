"""Lab bandit peers for experiments/benchmarks/classification_bandits.py, not part of the library:
:class:`NeuralLinearPolicy` (below) and :class:`VowpalWabbitPolicy` (Vowpal Wabbit's
``--cb_explore_adf``, when the ``vowpalwabbit`` package is installed).

NeuralLinear Thompson sampling (Riquelme et al. 2018, "Deep Bayesian Bandits Showdown"):

- **Network**: an MLP from the context to one output per arm (ReLU hidden layers, default
  two of 50), trained every ``train_every`` rounds for ``train_steps`` Adam steps on
  minibatches of every round so far; a round's loss is the squared error of the played
  arm's output alone (the other arms' rewards were not seen). Weights start afresh only
  once, at ``reset``; each training continues from the last.
- **Last layer, per arm**: Bayesian linear regression on the last hidden layer's
  activations ``z`` (with a constant 1 appended) with a Normal-inverse-gamma prior:
  ``beta | s2 ~ N(0, s2 / lambda_prior I)``, ``s2 ~ InvGamma(a0, b0)``. After each
  training every arm's posterior is recomputed from all its rounds with the new features;
  between trainings each round is added to its arm's sufficient statistics with the
  features of the current network.
- **Decision**: per arm, one draw ``s2``, then ``beta ~ N(mu, s2 Lambda^-1)``; play the
  argmax of ``z . beta`` (ties to the lowest arm). Arms are played round-robin for the
  first ``n_arms * initial_pulls`` rounds, as in the paper's code.

Seeded by ``reset(seed)``: the network's initial weights and minibatches come from a torch
generator of that seed, the Thompson draws from the policy's NumPy generator.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from npbandit.policies.base import Policy
from npbandit.policies.problem import check_bandit_spaces, check_context


class NeuralLinearPolicy(Policy):
    """NeuralLinear Thompson sampling (see the module docstring).

    Args:
        n_arms: arms (``>= 2``); context_dim: the context's width.
        hidden: the hidden layers' widths; the last one is the regression's features.
        train_every / train_steps / batch_size / lr: the network's training schedule.
        lambda_prior, a0, b0: the Normal-inverse-gamma prior of each arm's last layer.
        initial_pulls: round-robin pulls of every arm before the first decision.
    """

    name = "neural-linear"

    def __init__(self, n_arms: int, context_dim: int, hidden: tuple[int, ...] = (50, 50), train_every: int = 50,
                 train_steps: int = 100, batch_size: int = 64, lr: float = 3e-3, lambda_prior: float = 0.25,
                 a0: float = 6.0, b0: float = 6.0, initial_pulls: int = 2) -> None:
        if n_arms < 2 or context_dim < 1 or not hidden or min(hidden) < 1:
            raise ValueError(f"need n_arms >= 2, context_dim >= 1 and hidden widths >= 1, got {n_arms}, "
                             f"{context_dim}, {hidden}")
        self.n_arms, self.context_dim, self.hidden = n_arms, context_dim, tuple(hidden)
        self.train_every, self.train_steps, self.batch_size, self.lr = train_every, train_steps, batch_size, lr
        self.lambda_prior, self.a0, self.b0, self.initial_pulls = lambda_prior, a0, b0, initial_pulls

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        check_bandit_spaces(observation_space, action_space, self.n_arms, self.context_dim, f"policy {self.name!r}")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.gen = torch.Generator().manual_seed(0 if seed is None else int(seed))
        layers: list[torch.nn.Module] = []
        width = self.context_dim
        for h in self.hidden:
            layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
            width = h
        self.body = torch.nn.Sequential(*layers).double()
        self.head = torch.nn.Linear(width, self.n_arms).double()
        with torch.no_grad():  # initial weights from the run's generator, not torch's global one
            for p in [*self.body.parameters(), *self.head.parameters()]:
                bound = 1.0 / np.sqrt(p.shape[-1] if p.dim() > 1 else width)
                p.copy_(torch.rand(p.shape, generator=self.gen, dtype=torch.float64) * 2 * bound - bound)
        self.params_ = [*self.body.parameters(), *self.head.parameters()]
        self.moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in self.params_]
        self.adam_steps = 0
        self.X: list[np.ndarray] = []
        self.A: list[int] = []
        self.R: list[float] = []
        k = width + 1
        self.ZtZ = np.zeros((self.n_arms, k, k))
        self.Ztr = np.zeros((self.n_arms, k))
        self.rtr = np.zeros(self.n_arms)
        self.n = np.zeros(self.n_arms, dtype=np.int64)
        self._posterior: list[tuple[np.ndarray, np.ndarray, float, float] | None] = [None] * self.n_arms

    def _features(self, X: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            z = self.body(torch.from_numpy(np.atleast_2d(X))).numpy()
        return np.concatenate([z, np.ones((len(z), 1))], 1)

    def _arm_posterior(self, a: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """``(mean, Cholesky factor of the covariance / s2, a_n, b_n)`` of arm ``a``."""
        if self._posterior[a] is None:
            k = self.ZtZ.shape[1]
            precision = self.ZtZ[a] + self.lambda_prior * np.eye(k)
            cov = np.linalg.inv(precision)
            cov = 0.5 * (cov + cov.T)
            mean = cov @ self.Ztr[a]
            a_n = self.a0 + self.n[a] / 2
            b_n = self.b0 + 0.5 * max(self.rtr[a] - mean @ precision @ mean, 0.0)
            self._posterior[a] = (mean, np.linalg.cholesky(cov + 1e-10 * np.eye(k)), a_n, b_n)
        return self._posterior[a]

    def act(self, obs: np.ndarray) -> int:
        x = check_context(obs, self.context_dim)
        t = len(self.A)
        if t < self.n_arms * self.initial_pulls:
            return t % self.n_arms
        z = self._features(x)[0]
        scores = np.empty(self.n_arms)
        for a in range(self.n_arms):
            mean, chol, a_n, b_n = self._arm_posterior(a)
            s2 = b_n / self.rng.gamma(a_n)  # InvGamma(a_n, b_n)
            beta = mean + np.sqrt(s2) * chol @ self.rng.standard_normal(len(mean))
            scores[a] = z @ beta
        return int(np.argmax(scores))

    def observe(self, obs, action, reward, info) -> None:
        x = check_context(obs, self.context_dim).copy()
        a, r = int(action), float(reward)
        self.X.append(x)
        self.A.append(a)
        self.R.append(r)
        if len(self.A) % self.train_every == 0:
            self._train()
            self._refit()
        else:
            z = self._features(x)[0]
            self.ZtZ[a] += np.outer(z, z)
            self.Ztr[a] += r * z
            self.rtr[a] += r * r
            self.n[a] += 1
            self._posterior[a] = None

    def _train(self) -> None:
        X = torch.from_numpy(np.stack(self.X))
        A = torch.tensor(self.A)
        R = torch.tensor(self.R, dtype=torch.float64)
        n = len(self.A)
        for _ in range(self.train_steps):
            idx = torch.randint(n, (min(self.batch_size, n),), generator=self.gen)
            pred = self.head(self.body(X[idx])).gather(1, A[idx].unsqueeze(1)).squeeze(1)
            loss = ((pred - R[idx]) ** 2).mean()
            for p in self.params_:
                p.grad = None
            loss.backward()
            self._adam_step()

    def _adam_step(self, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> None:
        """One Adam step (Kingma & Ba; torch.optim.Adam's defaults and arithmetic, written out:
        constructing torch's optimizer imports TorchDynamo, seconds per process)."""
        self.adam_steps += 1
        t = self.adam_steps
        with torch.no_grad():
            for p, (m, v) in zip(self.params_, self.moments):
                g = p.grad
                m.lerp_(g, 1 - beta1)
                v.mul_(beta2).addcmul_(g, g.conj(), value=1 - beta2)
                denom = (v.sqrt() / (1 - beta2**t) ** 0.5).add_(eps)
                p.addcdiv_(m, denom, value=-self.lr / (1 - beta1**t))

    def _refit(self) -> None:
        """Every arm's sufficient statistics afresh, with the new network's features."""
        Z = self._features(np.stack(self.X))
        A, R = np.array(self.A), np.array(self.R)
        for a in range(self.n_arms):
            mask = A == a
            Za, Ra = Z[mask], R[mask]
            self.ZtZ[a], self.Ztr[a], self.rtr[a], self.n[a] = Za.T @ Za, Za.T @ Ra, Ra @ Ra, mask.sum()
        self._posterior = [None] * self.n_arms

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms, "hidden": list(self.hidden), "train_every": self.train_every,
                "train_steps": self.train_steps, "batch_size": self.batch_size, "lr": self.lr,
                "lambda_prior": self.lambda_prior, "a0": self.a0, "b0": self.b0, "initial_pulls": self.initial_pulls}


class VowpalWabbitPolicy(Policy):
    """Vowpal Wabbit's contextual-bandit learner with action-dependent features,
    ``--cb_explore_adf`` (its default exploration: epsilon-greedy, ``epsilon`` = 0.05), one
    workspace per run (``--random_seed`` the run's seed).

    Each round is one multi-line example: a shared line with the context's features
    ``f0 .. f{d-1}`` (namespace ``s``) and one line per arm holding the arm's indicator
    (namespace ``a``); ``-q sa`` crosses them, so every arm has its own linear model of the
    context (with its indicator as its intercept). VW minimises cost: cost = -reward. The
    arm is drawn from the probabilities VW returns, with the policy's NumPy generator, and
    the played line is labelled ``arm:cost:probability``.
    """

    name = "vw-cb-explore-adf"

    def __init__(self, n_arms: int, context_dim: int, epsilon: float = 0.05) -> None:
        import vowpalwabbit  # noqa: F401  (an ImportError here names the missing package)

        self.n_arms, self.context_dim, self.epsilon = n_arms, context_dim, epsilon

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        check_bandit_spaces(observation_space, action_space, self.n_arms, self.context_dim, f"policy {self.name!r}")

    def reset(self, seed: int | None = None) -> None:
        import vowpalwabbit

        super().reset(seed)
        if getattr(self, "vw", None) is not None:
            self.vw.finish()
        self.vw = vowpalwabbit.Workspace(f"--cb_explore_adf -q sa --epsilon {self.epsilon} --quiet "
                                         f"--random_seed {0 if seed is None else int(seed)}")
        self._pmf: np.ndarray | None = None

    def _example(self, x: np.ndarray, label: tuple[int, float, float] | None = None) -> list[str]:
        shared = "shared |s " + " ".join(f"f{i}:{v:.6g}" for i, v in enumerate(x))
        lines = [shared]
        for a in range(self.n_arms):
            prefix = f"0:{label[1]:.6g}:{label[2]:.6g} " if label is not None and label[0] == a else ""
            lines.append(f"{prefix}|a arm{a}")
        return lines

    def act(self, obs: np.ndarray) -> int:
        x = check_context(obs, self.context_dim)
        pmf = np.asarray(self.vw.predict(self._example(x)), dtype=np.float64)
        self._pmf = pmf / pmf.sum()
        return int(self.rng.choice(self.n_arms, p=self._pmf))

    def observe(self, obs, action, reward, info) -> None:
        x = check_context(obs, self.context_dim)
        a = int(action)
        prob = 1.0 / self.n_arms if self._pmf is None else float(self._pmf[a])
        self.vw.learn(self._example(x, (a, -float(reward), prob)))
        self._pmf = None

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms, "epsilon": self.epsilon, "interactions": "sa"}
