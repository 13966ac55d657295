"""A BO policy behind the check that its observations can be standardised in float64
(:class:`StandardisedDataCheck`, what ``optimize`` runs its surrogate's policy behind)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from npbandit.policies.base import PolicyWrapper
from npbandit.rows import RowBuffer
from npbandit.transforms.standardize import output_scale, standardization

__all__ = ["StandardisedDataCheck", "standardisable"]


class StandardisedDataCheck(PolicyWrapper):
    """A BO policy behind a check that the rewards can be standardised in float64.

    Both surrogates standardise the observations (the NP as its ``bo`` prior did,
    the GP with BoTorch's ``Standardize``). Values beyond ~1e154 overflow the
    variance, and BoTorch then fails far from the cause ("probability tensor
    contains inf"); a :class:`~npbandit.policies.bo.BOPolicy` therefore gives its model
    each output multiplied by one exact power of two
    (:func:`~npbandit.transforms.standardize.output_scale`), which brings any finite values
    into range. This checks the values as so scaled, and says what is wrong before a value
    reaches the model when not even that helps (a value that is not finite)."""

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        # kept as arrays grown in place: a step late in a long run does not restack every value
        self.rewards = RowBuffer()  # a number per row, or several objectives' [m]
        self.limits = RowBuffer()

    def observe(self, obs: np.ndarray, action: Any, reward: float, info: dict[str, Any]) -> None:
        limits = info.get("constraints") if isinstance(info, dict) else None
        if limits is not None:  # the surrogate standardises each constraint's values too
            self.limits.append([float(c) for c in limits])
            C = torch.from_numpy(self.limits.array.copy())
            if not standardisable(C):
                raise ValueError(f"the constraints' values cannot be standardised in float64, even scaled by a power "
                                 f"of two (up to {float(C.abs().max()):.3g} in magnitude); each constraint must "
                                 "return finite values")
        self.rewards.append(np.asarray(reward, dtype=np.float64))
        y = torch.from_numpy(self.rewards.array.copy()).reshape(len(self.rewards), -1)  # [n, 1] or [n, m]
        if not standardisable(y):
            mean, std = (", ".join(f"{v:.3g}" for v in part.reshape(-1).tolist()) for part in standardization(y))
            raise ValueError(f"the objective's values cannot be standardised in float64, even scaled by a power of "
                             f"two (mean {mean}, std {std} over {len(self.rewards)} values up "
                             f"to {float(y.abs().max()):.3g} in magnitude); the objective must return finite values, "
                             "or use surrogate='random'")
        self.inner.observe(obs, action, reward, info)


def standardisable(Y: torch.Tensor) -> bool:
    """Whether every column of ``Y [n, m]``, multiplied by its power of two
    (:func:`~npbandit.transforms.standardize.output_scale`, as a BO policy's model sees it),
    standardises to finite values in float64: whether each column's mean is finite. A value
    that is not finite makes its column's mean so; finite values, so scaled, lie under
    ``2 ** MAX_MAGNITUDE_EXPONENT`` in magnitude, so their mean and std are finite, and
    standardised they are too (by a std that measures their spread, at most about ``sqrt(n)``
    in magnitude; by a std of 1, :func:`~npbandit.transforms.standardize.spread`, under
    ``2 ** 101``)."""
    mean, _ = standardization(Y * output_scale(Y))
    return bool(torch.isfinite(mean).all())
