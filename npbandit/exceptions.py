"""Every exception the library defines, under one base, :class:`NPBanditError`.

``except NPBanditError`` catches any of them. Each also keeps the builtin base it
has always had (a :class:`StorageError` is a ``ValueError``, an
:class:`UnknownCheckpointError` a ``FileNotFoundError``, ...), so code that catches
the builtin still does. They are importable from here and from the module that raises
them (:mod:`npbandit.storage`, :mod:`npbandit.envs.blackbox`,
:mod:`npbandit.surrogates.pretrained`).

This module imports nothing from the library, so any module may import it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NPBanditError", "StorageError", "SchemaVersionError", "ObjectiveError", "ObjectiveReturnError",
           "CheckpointError", "UnknownCheckpointError", "PolicyNotResetError"]


class NPBanditError(Exception):
    """Base of every exception npbandit raises on purpose."""


class StorageError(NPBanditError, ValueError):
    """The database named by ``db`` cannot be opened, read or written (missing,
    read-only, in a directory that does not exist, not an npbandit database, or its
    driver is not installed)."""


class SchemaVersionError(StorageError):
    """The database's tables were laid out by an npbandit with another
    :data:`~npbandit.storage.SCHEMA_VERSION` than this one."""


class ObjectiveError(NPBanditError, RuntimeError):
    """The objective raised or returned a non-finite value at a point.

    Attributes:
        x: the point at which it failed, as the objective received it (a NumPy array of
            shape ``(d,)`` in the objective's own bounds, or the params dict of a search space).
    """

    def __init__(self, message: str, x: Any) -> None:
        super().__init__(message)
        self.x = x


class ObjectiveReturnError(ObjectiveError, TypeError):
    """The objective returned something other than one real number (a string, ``None``,
    a bool, several numbers, a complex number) at a point.

    A failed evaluation like any :class:`ObjectiveError` (recorded as failed, skipped with
    ``on_error="skip"``), and a ``TypeError``, as a wrong return type has always been.
    """


class CheckpointError(NPBanditError, ValueError):
    """A checkpoint is corrupted, does not match its card, or does not fit its use."""


class UnknownCheckpointError(NPBanditError, FileNotFoundError):
    """No checkpoint has that name or path (as opposed to a known checkpoint with a file missing)."""


class PolicyNotResetError(NPBanditError, RuntimeError, AttributeError):
    """A policy was asked to act, observe or recommend before ``reset(seed)`` started a run
    (what it learns from is made there). An ``AttributeError`` too, so ``hasattr`` and
    ``getattr(policy, name, default)`` on a policy not yet reset answer as before."""
