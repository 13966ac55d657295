"""Deprecated alias: ``NPModel`` and its helpers live in :mod:`npbandit.models`.

Importing this module warns ``DeprecationWarning`` and re-exports the names it used to
define from their new homes; the library itself never imports it. The Ax internals
(``ONE_HOT_INFIX``, the fit registration) are in :mod:`npbandit.integrations.ax`.
"""

from __future__ import annotations

import warnings

from npbandit.models.cache import SHARED_ROWS_MIN
from npbandit.models.cache import HeldNetwork as _Held
from npbandit.models.cache import RowBuffer as _Rows
from npbandit.models.cache import SharedRows as _SharedRows
from npbandit.models.checkpoint import _SHARED, _SHARED_LOCK, shared_surrogate
from npbandit.models.checkpoint import fingerprint as _fingerprint
from npbandit.models.checkpoint import input_symmetric as _input_symmetric
from npbandit.models.checkpoint import pretrained_defaults as _pretrained_defaults
from npbandit.models.checks import check_bounds as _check_bounds
from npbandit.models.checks import check_matrix as _check_matrix
from npbandit.models.checks import check_output_indices as _check_output_indices
from npbandit.models.likelihood import NOISE_POINTS, NPLikelihood, _fit_pretrained
from npbandit.models.likelihood import NoiseEstimate as _NoiseEstimate
from npbandit.models.likelihood import evenly_spaced as _evenly_spaced
from npbandit.models.model import NPModel
from npbandit.models.posterior import PAIRWISE_MAX
from npbandit.models.posterior import first_equal_rows as _first_equal_rows
from npbandit.models.posterior import gaussian_posterior as _gaussian_posterior
from npbandit.models.posterior import low_rank_root as _low_rank_root
from npbandit.transforms.moments import merge_moments as _merge_moments
from npbandit.transforms.moments import moment_statistics as _moment_statistics
from npbandit.transforms.moments import moments as _moments

warnings.warn("npbandit.surrogates.npmodel is deprecated: import NPModel, NPLikelihood and shared_surrogate "
              "from npbandit.models", DeprecationWarning, stacklevel=2)

__all__ = ["NPModel", "NPLikelihood", "shared_surrogate"]

# the private names of the old module, for code that reached into it
_ALIASES = (_Held, _Rows, _SharedRows, _SHARED, _SHARED_LOCK, _fingerprint, _input_symmetric, _pretrained_defaults,
            _check_bounds, _check_matrix, _check_output_indices, _NoiseEstimate, _fit_pretrained, _evenly_spaced,
            _merge_moments, _moment_statistics, _moments, _first_equal_rows, _gaussian_posterior, _low_rank_root,
            NOISE_POINTS, SHARED_ROWS_MIN, PAIRWISE_MAX)
