"""The directions of a problem's objectives, as users give them (``minimize``: a bool for one
objective; a sequence, or a mapping from names, of bools for several) and what the search
sees: values maximised, each minimised objective negated (:func:`maximised`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from npbandit.objective_names import check_objective_names, positional_names

__all__ = ["directions", "named_directions", "maximised"]


def directions(minimize: Any) -> tuple[bool | tuple[bool, ...], int]:
    """``minimize`` checked, with the number of objectives it gives: a bool (one objective), or a
    sequence of ``m >= 2`` bools (several, one direction each) as a tuple, or a mapping of ``m >= 2``
    objective names to bools (its values, in its order; :func:`named_directions` keeps the names).

    Raises:
        TypeError: neither, naming ``minimize`` and what was expected.
        ValueError: fewer than two directions, or a name refused (:func:`named_directions`).
    """
    minimize, m, _ = named_directions(minimize)
    return minimize, m


def named_directions(minimize: Any) -> tuple[bool | tuple[bool, ...], int, tuple[str, ...] | None]:
    """:func:`directions` with the objectives' names: the keys of a mapping
    (``{"cost": True, "accuracy": False}``: ``("cost", "accuracy")``, checked by
    :func:`~npbandit.objective_names.check_objective_names`), the positional names
    (:func:`~npbandit.objective_names.positional_names`) for a sequence, ``None`` for a bool.

    Raises:
        TypeError / ValueError: as :func:`directions`; a mapping's key or value refused names its
            entry (``minimize['cost'] must be a bool``).
    """
    if isinstance(minimize, (bool, np.bool_)):
        return bool(minimize), 1, None
    if isinstance(minimize, Mapping):
        names = check_objective_names(list(minimize))
        if len(names) < 2:
            raise ValueError(f"minimize as a mapping names each objective with its direction, and needs at least two; "
                             f"got {dict(minimize)!r} (for one objective give a bool)")
        for name, each in minimize.items():
            if not isinstance(each, (bool, np.bool_)):
                raise TypeError(f"minimize[{name!r}] must be a bool (True: minimise that objective), got "
                                f"{type(each).__name__} {each!r}")
        return tuple(bool(each) for each in minimize.values()), len(names), names
    if isinstance(minimize, np.ndarray) and minimize.ndim == 1:  # an array of directions, read as its list
        minimize = minimize.tolist()
    if isinstance(minimize, (str, bytes)) or not isinstance(minimize, Sequence):
        raise TypeError(f"minimize must be a bool, or a sequence of bools (one per objective, for several), or a "
                        f"mapping of objective names to bools, got {type(minimize).__name__}")
    if len(minimize) < 2:
        raise ValueError(f"minimize as a sequence gives one direction per objective, and needs at least two; got "
                         f"{list(minimize)!r} (for one objective give a bool)")
    for i, each in enumerate(minimize):
        if not isinstance(each, (bool, np.bool_)):
            raise TypeError(f"minimize[{i}] must be a bool (True: minimise that objective), got "
                            f"{type(each).__name__} {each!r}")
    return tuple(bool(each) for each in minimize), len(minimize), positional_names(len(minimize))


def maximised(values: Any, minimize: Any) -> Any:
    """``values`` as they are maximised (the rewards a policy and its model see): negated where
    their objective is minimised. ``minimize`` as :func:`directions` takes it: a bool (one
    objective; ``values`` a number or an array of its values, negated when ``True``), or ``m``
    directions (``values`` an array ``[..., m]``, column ``j`` negated where objective ``j`` is
    minimised; a float64 array comes back). Negation is exact and its own inverse, so the same
    call takes rewards back to the objectives' values.

    Raises:
        TypeError / ValueError: ``minimize`` refused (:func:`directions`), or ``values``' last
            axis not ``m`` long.
    """
    minimize, m = directions(minimize)
    if m == 1:
        return -values if minimize else values
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != m:
        raise ValueError(f"values must have {m} columns, one per direction of minimize={minimize!r}, got shape "
                         f"{array.shape}")
    return np.where(minimize, -array, array)
