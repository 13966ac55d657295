"""The subspace strategy a problem wider than its model gets unless given one.

A ``bo`` NP takes at most its checkpoint's width of unit-cube columns; ``BOPolicy``,
``optimize`` and ``NPSampler`` search a wider problem through a
:class:`~npbandit.acquisition.subspace.SubspaceStrategy`. Without one given, the default
depends on the space:

- a search space with an unordered choice of three or more values (``k`` one-hot columns):
  :class:`~npbandit.acquisition.indexed_choices.IndexedChoices`, its choices on one column
  each until it fits (a count sketch of a view still too wide);
- any other space (a box, ints, ordered or two-valued choices):
  :class:`~npbandit.acquisition.redealt_sketch.RedealtSketch`, a count sketch whose slice is
  re-dealt through the incumbent as the run goes on.
"""

from __future__ import annotations

from npbandit.acquisition.indexed_choices import IndexedChoices
from npbandit.acquisition.redealt_sketch import RedealtSketch
from npbandit.acquisition.subspace import SubspaceStrategy
from npbandit.space import Choice, SearchSpace

__all__ = ["default_subspace"]


def default_subspace(space: SearchSpace | None = None) -> SubspaceStrategy:
    """The strategy for ``space`` (``None``: a box) when it is wider than the model (see the module)."""
    if space is not None and any(isinstance(p, Choice) and p.one_hot for p in space.values()):
        return IndexedChoices(space)
    return RedealtSketch()
