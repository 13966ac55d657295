"""Outcome constraints' convention: when one evaluation's constraint values make it feasible.

An objective with ``k`` outcome constraints returns, beside its value, ``k`` constraint
values; the evaluation is *feasible* when every one of them is ``<= 0`` (Optuna's
``constraints_func`` convention, and BoTorch's constraint callables'). :func:`is_feasible` is
that judgement for one evaluation, on a plain sequence, array or tensor of its values: the
environment's ``info["feasible"]``, ``BOPolicy``'s and ``NPSampler``'s trust-region
bookkeeping, ``optimize``'s history and ``npbandit report``'s counts all ask it.
:func:`npbandit.acquisition.constrained.feasible` asks the same of every row of a tensor
of outputs at once, and :func:`~npbandit.acquisition.constrained.incumbent` picks the best
feasible row, or the least violating one while none is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["is_feasible"]


def is_feasible(values: Any) -> bool:
    """Whether one evaluation's constraint values ``[k]`` (a sequence, array or tensor of
    real numbers) are all ``<= 0``; ``True`` for none (``k = 0``), ``False`` when one is NaN.

    Raises:
        ValueError: ``values`` not one-dimensional.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"values must be one evaluation's constraint values, shape [k], got shape "
                         f"{tuple(values.shape)}")
    return bool((values <= 0).all())
