"""Parameters that exist only when a choice takes certain values: a conditional (hierarchical) space.

A :class:`~npbandit.space.Choice` with ``dependents`` (``{"svm": ["C", "gamma"], "rf":
["n_estimators"]}``, as Ax's hierarchical search spaces write it) makes each listed parameter
*active* only when that choice is active and takes one of the values listing it; a parameter no
choice lists is always active. A point of such a space is the values of its active parameters,
and the objective is called with those alone.

The surrogate still works in the whole cube, every parameter's columns side by side, so that
one model sees every evaluation, whichever branch it took. An inactive parameter has no value,
so its columns are pinned to one fixed point, the encoding of the value at the centre of its
columns (:attr:`Conditions.pinned`), in every point the space encodes or snaps: two points
that differ only in parameters they do not have are the same point of the cube, so the repeat
check, the trust region and the model treat them as one, and the model reads a branch's
points as a slice of the cube in which the other branches' columns are constant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from npbandit.space.parameters import Choice, Parameter

if TYPE_CHECKING:  # torch loads where a point is snapped, not with the space
    import torch

__all__ = ["Conditions", "value_key"]


def value_key(value: Any) -> tuple[str, Any]:
    """A choice's value as compared here: with its type (``True`` and ``1`` are different choices)."""
    value = value.item() if isinstance(value, np.generic) else value
    return type(value).__name__, value


class Conditions:
    """Which parameters of a space each choice's ``dependents`` make conditional, and on what.

    Args:
        parameters: the space's parameters by name, in order.
        slices: the cube columns each parameter occupies.

    Raises:
        ValueError: a dependent that is not a parameter of the space, a parameter listed by two
            different choices or by itself, or a cycle (a choice that, through others, depends
            on itself).
        TypeError: a parameter other than a :class:`~npbandit.space.Choice` with dependents.
    """

    def __init__(self, parameters: Mapping[str, Parameter], slices: Mapping[str, slice]) -> None:
        self.parameters, self.slices = dict(parameters), dict(slices)
        #: child -> (parent, the parent's values, as :func:`value_key`, under which it is active)
        self.parent: dict[str, tuple[str, frozenset]] = {}
        for name, parameter in self.parameters.items():
            dependents = getattr(parameter, "dependents", {})
            if dependents and not isinstance(parameter, Choice):  # its values are what a point's branch reads
                raise TypeError(f"space[{name!r}]: only a Choice has dependents, got a {type(parameter).__name__} "
                                "with some")
            for value, names in dependents.items():
                for child in names:
                    if child not in self.parameters:
                        raise ValueError(f"space[{name!r}]: dependents[{value!r}] names {child!r}, which is not a "
                                         f"parameter of the space ({list(self.parameters)})")
                    if child == name:
                        raise ValueError(f"space[{name!r}]: dependents[{value!r}] names the choice itself")
                    other, keys = self.parent.get(child, (name, frozenset()))
                    if other != name:
                        raise ValueError(f"space[{child!r}] is listed in the dependents of {other!r} and of {name!r}; "
                                         "a parameter may depend on one choice only")
                    self.parent[child] = (name, keys | {value_key(value)})
        for child in self.parent:  # every chain of parents ends at a parameter that depends on none
            seen, name = [child], child
            while name in self.parent:
                name = self.parent[name][0]
                if name in seen:
                    raise ValueError(f"space: the dependents make a cycle: {' -> '.join(seen + [name])}")
                seen.append(name)
        #: each conditional parameter's columns when it is inactive: the encoding of its centre value
        self.pinned = {name: np.asarray(self.parameters[name].encode(self.parameters[name].decode(
            np.full(self.parameters[name].columns, 0.5))), dtype=np.float64) for name in self.parent}
        self.gates = sorted({parent for parent, _ in self.parent.values()}, key=list(self.parameters).index)
        #: each conditional parameter's parent's values, in order: whether it is active under each
        self.under = {child: [value_key(v) in keys for v in self.parameters[parent].values]
                      for child, (parent, keys) in self.parent.items()}

    def __bool__(self) -> bool:
        return bool(self.parent)

    def active(self, values: Mapping[str, Any]) -> list[str]:
        """The parameters active at ``values`` (the values of at least the active choices that
        have dependents; values of other parameters are not read), in the space's order."""
        known: dict[str, bool] = {}

        def is_active(name: str) -> bool:
            if name not in known:
                if name not in self.parent:
                    known[name] = True
                else:
                    parent, keys = self.parent[name]
                    known[name] = is_active(parent) and parent in values and value_key(values[parent]) in keys
            return known[name]

        return [name for name in self.parameters if is_active(name)]

    def condition(self, name: str) -> str:
        """When ``name`` is active, in words (``"kernel is 'rbf' or 'poly'"``), for messages."""
        parent, keys = self.parent[name]
        return f"{parent} is " + " or ".join(repr(v) for _, v in sorted(keys, key=lambda k: repr(k[1])))

    def inactive_columns(self, u: torch.Tensor) -> torch.Tensor:
        """``[..., D]`` bool: the columns of the parameters inactive at each point of ``u``
        ``[..., D]`` (its choices read as they decode, :meth:`Choice.decode_indices
        <npbandit.space.Choice.decode_indices>`), on ``u``'s device: a parameter is active where
        its choice is active and takes a value listing it.

        Raises:
            ValueError: a choice with dependents has a coordinate of ``u`` that is not finite."""
        import torch

        flat = u.detach().reshape(-1, u.shape[-1])
        index = {g: self.parameters[g].decode_indices(flat[:, self.slices[g]]) for g in self.gates}
        active: dict[str, torch.Tensor] = {}  # [n] bool per conditional parameter

        def is_active(name: str) -> torch.Tensor:
            if name not in active:
                parent = self.parent[name][0]
                under = torch.as_tensor(self.under[name], device=u.device)[index[parent]]
                active[name] = under & is_active(parent) if parent in self.parent else under
            return active[name]

        inactive = torch.zeros(flat.shape, dtype=torch.bool, device=u.device)
        for name in self.parent:
            inactive[:, self.slices[name]] = ~is_active(name).unsqueeze(-1)
        return inactive.reshape(u.shape)

    def pin(self, u: torch.Tensor) -> torch.Tensor:
        """Snapped points ``u`` ``[..., D]`` with each inactive parameter's columns pinned to
        :attr:`pinned` (the active ones, and their gradients, as they are)."""
        import torch

        pinned = np.zeros(u.shape[-1])
        for name, code in self.pinned.items():
            pinned[self.slices[name]] = code
        return torch.where(self.inactive_columns(u), torch.as_tensor(pinned, dtype=u.dtype, device=u.device), u)
