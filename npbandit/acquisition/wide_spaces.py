"""The subspace strategy a problem wider than its model gets unless given one.

A ``bo`` NP takes at most its checkpoint's width of unit-cube columns; ``BOPolicy``,
``optimize`` and ``NPSampler`` search a wider problem through a
:class:`~npbandit.acquisition.subspace.SubspaceStrategy`. Without one given, the default
depends on the space:

- a search space with an unordered choice of three or more values (``k`` one-hot columns):
  :class:`~npbandit.acquisition.indexed_choices.IndexedChoices`, its choices on one column
  each until it fits (a count sketch of a view still too wide);
- a continuous space (a box, floats without steps):
  :class:`~npbandit.acquisition.redealt_sketch.RedealtSketch` with
  ``relevance=``:func:`~npbandit.acquisition.relevance.concentrated_ard`, a count sketch whose
  slice is re-dealt through the incumbent as the run goes on, the few inputs an ARD GP finds
  relevant (when few stand out) each leading a bin of the new slice;
- any other space (ints, steps, ordered or two-valued choices):
  :class:`~npbandit.acquisition.subspace.CountSketch`. A re-dealt slice is exact only for
  points it can hold: an int sharing a bin with another input is rounded off the slice, so
  most of a phase's points would drop out of the model's view (and of the repeat check);
  the re-deal was chosen on continuous problems only.

:data:`SUBSPACES` names each shipped strategy at the settings the library uses it with, as
``npbandit optimize --subspace NAME`` takes them (:func:`named_subspace`).
"""

from __future__ import annotations

from npbandit.acquisition.indexed_choices import IndexedChoices
from npbandit.acquisition.redealt_sketch import RedealtSketch
from npbandit.acquisition.relevance import concentrated_ard
from npbandit.acquisition.subspace import CoordinateSubspace, CountSketch, SubspaceStrategy
from npbandit.space import Choice, SearchSpace

__all__ = ["default_subspace", "check_subspace_space", "subspace_and_width", "SUBSPACES", "named_subspace"]

#: each shipped strategy by its ``name``, at its default settings (the re-dealt sketch with the
#: relevance it is the default for a box with; :class:`IndexedChoices` of the space searched)
SUBSPACES = ("redealt-sketch", "count-sketch", "coordinates", "indexed-choices")


def default_subspace(space: SearchSpace | None = None) -> SubspaceStrategy:
    """The strategy for ``space`` (``None``: a box) when it is wider than the model (see the module)."""
    if space is not None and any(isinstance(p, Choice) and p.one_hot for p in space.values()):
        return IndexedChoices(space)
    if space is None or space.continuous:
        return RedealtSketch(relevance=concentrated_ard)
    return CountSketch()


def named_subspace(name: str, space: SearchSpace | None = None) -> SubspaceStrategy:
    """The strategy :data:`SUBSPACES` names ``name`` for a search of ``space`` (``None``: a box).

    Raises:
        ValueError: ``name`` is none of :data:`SUBSPACES`, or ``"indexed-choices"`` without a space."""
    if name == "redealt-sketch":
        return RedealtSketch(relevance=concentrated_ard)
    if name == "count-sketch":
        return CountSketch()
    if name == "coordinates":
        return CoordinateSubspace()
    if name != "indexed-choices":
        raise ValueError(f"subspace must be one of {list(SUBSPACES)}, got {name!r}")
    if space is None:
        raise ValueError("subspace 'indexed-choices' indexes a search space's choices; a box has none")
    return IndexedChoices(space)


def check_subspace_space(subspace: SubspaceStrategy | None, space: SearchSpace | None) -> None:
    """An :class:`~npbandit.acquisition.indexed_choices.IndexedChoices` given for a search
    must be of the space searched (the same parameters, in the same order: the order of the
    unit cube's columns); else ``ValueError`` naming both."""
    if isinstance(subspace, IndexedChoices) and space is not None and subspace.space != space:
        raise ValueError(f"subspace is IndexedChoices of another space than the one searched: {subspace.space!r} "
                         f"against {space!r} (the same parameters in the same order are needed: they set the "
                         f"unit cube's columns)")


def subspace_and_width(subspace: SubspaceStrategy | None, width: int | None, dim: int,
                       space: SearchSpace | None) -> tuple[SubspaceStrategy | None, int | None]:
    """The strategy a search of ``dim`` columns of ``space`` (``None``: a box) runs through,
    and the width its model takes: ``subspace`` as given (checked by
    :func:`check_subspace_space`), else, for a model of ``width`` columns narrower than ``dim``,
    :func:`default_subspace`; the width a model's (``None``: a model of any width, such as a
    GP), else, with a strategy, the strategy's ``d_e`` (``ValueError`` when it has none)."""
    if subspace is None and width is not None and dim > width:
        subspace = default_subspace(space)
    check_subspace_space(subspace, space)
    if subspace is not None and width is None:
        width = getattr(subspace, "d_e", None)
        if width is None:
            raise ValueError("subspace needs its d_e with a model other than an NP checkpoint (the checkpoint's "
                             "width sets it otherwise)")
    return subspace, width
