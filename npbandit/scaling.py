"""Deprecated alias of :mod:`npbandit.transforms.standardize`: import ``standardization``
and ``MIN_STD`` from there (or use :class:`npbandit.transforms.Standardize`)."""

import warnings

from npbandit.transforms.standardize import MIN_STD, standardization

__all__ = ["standardization", "MIN_STD"]

warnings.warn("npbandit.scaling is deprecated; import standardization and MIN_STD from "
              "npbandit.transforms.standardize", DeprecationWarning, stacklevel=2)
