"""Wheel-bandit tasks (Riquelme et al. 2018) as meta-learning batches (docs/protocols.md §3).

Context ``x`` is uniform in the unit disc; the five arms and their rewards are the wheel's,
defined in :mod:`npbandit.wheel_rewards` (arm 0 pays ``N(1.2, s²)``, arms 1-4 ``N(1.0, s²)``,
and where ``||x|| >= delta`` the arm of x's quadrant ``N(50, 0.01²)``; ``s = 0.05``).

Training tasks (the NP protocol): ``delta ~ U(0, 1)`` per task, 512 context and 50
target points, all five rewards observed; each context reward entry is dropped with
probability 0.5, matching decision time, where only the played arm of a past round
is observed. Fresh tasks every batch.

``history="played"`` replaces the random drops by what a bandit run leaves behind: one
observed arm per context row, the arm a behaviour policy played there. Each task draws its
own policy, a mixture of the best arm for the row's context (with a task's weight
``w ~ U(0, 1)``) and a fixed preference over the arms (``Dirichlet(0.5)``, so in many tasks
some arms are hardly ever played). A model trained on random drops sees every arm in
about half the rows, so a history in which arms 1-4 were never played is outside its
training data; a model trained on played histories has seen such contexts.

What the network sees: unobserved entries hold the fill (:class:`RewardFill`: ``N(0, 1)``
noise as in the papers, or exactly zero), then every entry passes through the outcome
transform ``T(y / scale)`` with ``T`` = ``identity`` or ``symlog`` (``sign(y) log(1 + |y|)``;
:class:`~npbandit.transforms.Bilog`), recorded together as a
:class:`~npbandit.transforms.RewardEncoding`. The default, and what every shipped wheel checkpoint uses, is
``symlog(y)`` with zeros fill (a card may record ``y / 50`` with noise fill instead), because:

- raw rewards of 50 next to inputs in the unit disc let the large rewards' Gaussian
  loss dominate training, and the quadrant arms' small differences are lost;
- ``y / 50`` makes the small rewards 0.024 vs 0.020, and a UCB decision between them
  needs a predictive std below 0.004;
- ``symlog`` keeps arm 0's margin at 0.09 (about 4 reward stds) and the 50s at 3.9;
  ``N(0, 1)`` fill overlaps a played arm's small reward, while zeros fill (no wheel
  reward is near 0: the smallest mean is 1.0 with std 0.05) tells the model exactly
  which entries were observed.

The encoding is recorded in the prior's spec, i.e. in every checkpoint card: a loaded
model applies the transform (its ``outcome_transform``), and the bandit policy fills the
unplayed arms of its reward rows with the same :class:`RewardFill` before they reach the
model. The transform is monotone, so a policy's upper quantile
(``mu + sigma`` in encoded units) is the same quantile of the predictive in reward units.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from npbandit.priors.base import Prior, TaskBatch, randint
from npbandit.transforms.reward import REWARD_FILLS, REWARD_TRANSFORMS, RewardEncoding, encode_rewards
from npbandit.validation import check_int, check_real
from npbandit.wheel_rewards import LARGE_REWARD_STD, MEAN_LARGE, MEAN_SAFE, MEAN_SMALL, N_ARMS, SMALL_REWARD_STD

__all__ = ["WheelPrior", "RewardFill", "wheel_mean_rewards", "encode_rewards", "RewardEncoding",
           "REWARD_TRANSFORMS", "REWARD_FILLS", "sample_unit_disc", "N_ARMS",
           "SMALL_REWARD_STD", "LARGE_REWARD_STD"]

# the arms, their means and noise are npbandit.wheel_rewards' (shared with the environment)
DEFAULT_DROP_PROB = 0.5
HISTORIES = ("random", "played")
PREFERENCE_CONCENTRATION = 0.5  # of a behaviour policy's Dirichlet arm preference (played_arms draws 0.5 only)


@dataclass(frozen=True)
class RewardFill:
    """What stands in the reward entries of arms that were not observed (dropped in
    training, not played at decision time), in data units, before the outcome transform.

    Attributes:
        kind: ``"noise"`` = ``N(0, 1)`` draws (the papers), ``"zeros"`` = exactly ``0``, a
            value no wheel reward comes near (the smallest mean is 1.0 with std 0.05), so
            it acts as an observation mask.
    """

    kind: str = "zeros"

    def __post_init__(self) -> None:
        if self.kind not in REWARD_FILLS:
            raise ValueError(f"reward_fill must be one of {REWARD_FILLS}, got {self.kind!r}")

    def values(self, shape: tuple[int, ...], generator: torch.Generator | None,
               dtype: torch.dtype = torch.float32, device: torch.device | str | None = None) -> Tensor:
        """Fill values of ``shape``. Noise is drawn from ``generator`` on its device
        (``None``: torch's global generator) and moved to ``device``."""
        if self.kind == "zeros":
            return torch.zeros(shape, dtype=dtype, device=device)
        source = generator.device if generator is not None else device
        return torch.randn(shape, generator=generator, dtype=dtype, device=source).to(device)

    def apply(self, y: Tensor, observed: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """Reward rows with the entries where ``observed`` is false replaced by the fill
        (whatever ``y`` holds there, NaN included); data units in and out.

        Args:
            y: rewards ``[..., n_arms]``.
            observed: bool, ``y``'s shape: which entries were observed.
            generator: for ``"noise"`` (one ``N(0, 1)`` draw per entry of ``y``, in order,
                observed or not); ``None``: torch's global generator.
        """
        if not isinstance(observed, Tensor) or observed.dtype != torch.bool:
            raise TypeError(f"observed must be a bool tensor, got {type(observed).__name__}"
                            + (f" of dtype {observed.dtype}" if isinstance(observed, Tensor) else ""))
        if observed.shape != y.shape:
            raise ValueError(f"observed must have the shape of the rewards {tuple(y.shape)}, "
                             f"got {tuple(observed.shape)}")
        if generator is not None and not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")
        return torch.where(observed, y, self.values(tuple(y.shape), generator, y.dtype, y.device))


def sample_unit_disc(generator: torch.Generator, *shape: int) -> Tensor:
    """Points uniform in the unit disc, ``[*shape, 2]`` (radius ``sqrt(U)``, angle ``U(0, 2π)``)."""
    radius = torch.rand(*shape, generator=generator).sqrt()
    angle = 2 * math.pi * torch.rand(*shape, generator=generator)
    return torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=-1)


def quadrant_arm(x: Tensor) -> Tensor:
    """The arm of each point's quadrant (1..4), ``x [..., 2]`` -> ``[...]`` (long)."""
    right, up = x[..., 0] >= 0, x[..., 1] >= 0
    return torch.where(up, torch.where(right, 1, 2), torch.where(right, 4, 3))


def wheel_mean_rewards(x: Tensor, delta: Tensor) -> tuple[Tensor, Tensor]:
    """Expected reward of each arm and whether it is a large one (in torch, for batches of
    tasks; :func:`npbandit.wheel_rewards.mean_rewards` is the NumPy form the environment uses).

    Args:
        x: ``[..., 2]`` contexts; delta: broadcastable to ``x[..., 0]``.

    Returns:
        ``means [..., 5]`` and a boolean ``large [..., 5]`` marking the 50-reward arm.
    """
    outside = x.norm(dim=-1) >= delta
    arm = quadrant_arm(x)
    large = torch.nn.functional.one_hot(arm, N_ARMS).bool() & outside.unsqueeze(-1)
    base = torch.tensor([MEAN_SAFE] + [MEAN_SMALL] * (N_ARMS - 1), dtype=x.dtype)
    means = torch.where(large, torch.tensor(MEAN_LARGE, dtype=x.dtype), base.expand(large.shape))
    return means, large


def played_arms(x: Tensor, delta: Tensor, generator: torch.Generator) -> Tensor:
    """A one-hot ``[B, N, 5]`` mask of the arm played at each context ``x [B, N, 2]`` by a
    per-task behaviour policy: the best arm for the context (given ``delta [B, 1]``) with
    probability ``w ~ U(0, 1)``, otherwise an arm from the task's preference ``p ~
    Dirichlet(0.5)``)."""
    batch, n, _ = x.shape
    means, _ = wheel_mean_rewards(x, delta)
    best = means.argmax(-1)  # the quadrant arm outside delta, arm 0 inside
    # Dirichlet(1/2) from normalised Gamma(1/2) draws, and Gamma(1/2, 1) is z^2 / 2 for z ~ N(0, 1)
    # (torch.distributions takes no generator)
    gamma = torch.randn(batch, N_ARMS, generator=generator, dtype=x.dtype).square()
    preference = gamma / gamma.sum(-1, keepdim=True)
    other = torch.multinomial(preference, n, replacement=True, generator=generator)  # [B, N]
    greedy = torch.rand(batch, n, generator=generator) < torch.rand(batch, 1, generator=generator)
    arm = torch.where(greedy, best, other)
    return torch.nn.functional.one_hot(arm, N_ARMS).bool()


class WheelPrior(Prior):
    """Wheel-bandit tasks with all target rewards observed; context rewards randomly dropped
    or, with ``history="played"``, observed for the played arm only.

    Args:
        n_context: context rows per task (the papers: 512).
        min_context: when given, each batch draws its context size uniformly from
            ``min_context..n_context`` instead. The papers train on 512 rows only, so
            a model meets the first rounds of a bandit run (a handful of rows) outside
            its training data; a range covers them.
        full_context_prob: with ``min_context`` set, the probability that a batch
            still uses all ``n_context`` rows, so long histories stay well covered
            (``cmanp-wheel``: 0.5).
        n_target: target rows per task, every reward observed.
        delta_range: ``delta ~ U(delta_range)`` per task.
        drop_prob: with ``history="random"``, the probability that a context reward
            entry is replaced by the encoding's unobserved value.
        history: which context rewards are observed: ``"random"`` (each entry dropped
            with ``drop_prob``, the papers' tasks) or ``"played"`` (one arm per row, as a
            bandit run observes them: the arm a per-task behaviour policy played; see
            the module docstring). ``drop_prob`` must be left at its default with
            ``"played"``.
        small_reward_std: std of the small rewards (the public code: 0.05).
        reward_scale, reward_transform, reward_fill: the :class:`RewardEncoding` (its
            transform, and the :class:`RewardFill` of the dropped entries).
    """

    name = "wheel"
    x_dim = 2
    y_dim = N_ARMS
    input_domain = (-1.0, 1.0)

    def __init__(self, n_context: int = 512, n_target: int = 50, delta_range: tuple[float, float] = (0.0, 1.0),
                 drop_prob: float = DEFAULT_DROP_PROB, small_reward_std: float = SMALL_REWARD_STD,
                 reward_scale: float = 1.0, reward_transform: str = "symlog",
                 reward_fill: str = "zeros", min_context: int | None = None, full_context_prob: float = 0.0,
                 history: str = "random") -> None:
        n_context, n_target = check_int("n_context", n_context, minimum=1), check_int("n_target", n_target, minimum=1)
        small_reward_std = check_real("small_reward_std", small_reward_std, low=0.0)
        if min_context is not None and not (isinstance(min_context, int) and 1 <= min_context <= n_context):
            raise ValueError(f"min_context must be None or an int in 1..n_context={n_context}, got {min_context!r}")
        if not 0 <= full_context_prob <= 1 or (full_context_prob > 0 and min_context is None):
            raise ValueError(f"full_context_prob must be in [0, 1] and needs min_context, got {full_context_prob!r}")
        if not 0 <= delta_range[0] < delta_range[1] <= 1:
            raise ValueError(f"delta_range must satisfy 0 <= low < high <= 1, got {delta_range}")
        if not 0 <= drop_prob < 1:
            raise ValueError(f"drop_prob must be in [0, 1), got {drop_prob}")
        if history not in HISTORIES:
            raise ValueError(f"history must be one of {HISTORIES}, got {history!r}")
        if history == "played" and drop_prob != DEFAULT_DROP_PROB:
            raise ValueError(f"drop_prob applies to history='random' only (history='played' observes one arm per "
                             f"row), got drop_prob={drop_prob}")
        self.encoding = RewardEncoding(reward_scale, reward_transform, reward_fill)
        self.fill = RewardFill(self.encoding.fill)
        self.n_context = n_context
        self.min_context = min_context
        self.full_context_prob = float(full_context_prob)
        self.n_target = n_target
        self.delta_range = tuple(delta_range)
        self.drop_prob = drop_prob
        self.history = history
        self.small_reward_std = small_reward_std

    @classmethod
    def outcome_transform(cls, spec: dict[str, Any]) -> RewardEncoding:
        """The reward encoding of the prior ``spec`` describes (a card's ``"prior"``;
        fields a card predates: :meth:`RewardEncoding.from_prior_spec`)."""
        return RewardEncoding.from_prior_spec(spec)

    def spec(self) -> dict[str, Any]:
        n_context: Any = self.n_context
        if self.min_context is not None:
            n_context = ["randint", self.min_context, self.n_context + 1]
            if self.full_context_prob > 0:
                n_context = {"full": self.n_context, "full_prob": self.full_context_prob, "else": n_context}
        return {"name": self.name, "n_context": n_context, "n_target": self.n_target,
                "delta": ["uniform", *self.delta_range],
                **({"drop_prob": self.drop_prob} if self.history == "random" else
                   {"history": {"played": "one arm per row", "best_arm_weight": ["uniform", 0.0, 1.0],
                                "arm_preference": ["dirichlet", PREFERENCE_CONCENTRATION]}}),
                "small_reward_std": self.small_reward_std, "large_reward_std": LARGE_REWARD_STD,
                **self.encoding.spec(),
                "means": {"arm0": MEAN_SAFE, "arms1-4": MEAN_SMALL, "large": MEAN_LARGE},
                "arms": "quadrant (+,+)->1, (-,+)->2, (-,-)->3, (+,-)->4"}

    def sample(self, batch_size: int, generator: torch.Generator) -> TaskBatch:
        nc = self.n_context
        if self.min_context is not None:
            use_full = self.full_context_prob > 0 and float(torch.rand(1, generator=generator)) < self.full_context_prob
            nc = self.n_context if use_full else randint(generator, self.min_context, self.n_context + 1)
        n = nc + self.n_target
        lo, hi = self.delta_range
        delta = lo + (hi - lo) * torch.rand(batch_size, 1, generator=generator)
        x = sample_unit_disc(generator, batch_size, n)
        means, large = wheel_mean_rewards(x, delta)
        std = torch.where(large, LARGE_REWARD_STD, self.small_reward_std)
        y = means + std * torch.randn(means.shape, generator=generator)
        xc, yc, xt, yt = x[:, :nc], y[:, :nc], x[:, nc:], y[:, nc:]
        if self.history == "random":
            observed = torch.rand(yc.shape, generator=generator) >= self.drop_prob
        else:
            observed = played_arms(xc, delta, generator)
        yc = self.encoding.forward(self.fill.apply(yc, observed, generator))
        return TaskBatch(xc, yc, xt, self.encoding.forward(yt), {"delta": delta.squeeze(-1)})
