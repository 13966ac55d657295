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
           "CheckpointError", "UnknownCheckpointError", "PolicyNotResetError", "RunMadeElsewhere"]


class NPBanditError(Exception):
    """Base of every exception npbandit raises on purpose."""


class StorageError(NPBanditError, ValueError):
    """The database named by ``db`` cannot be opened, read or written (missing,
    read-only, in a directory that does not exist, not an npbandit database, or its
    driver is not installed)."""


class SchemaVersionError(StorageError):
    """The database's tables were laid out by an npbandit with another
    :data:`~npbandit.storage.SCHEMA_VERSION` than this one."""


class RunMadeElsewhere(NPBanditError, RuntimeError):
    """A run started with a claim (``RunLogger(claim=True)``, as a bandit sweep starts its
    runs) that its database holds already, completed or running in a live process: the same
    run made elsewhere, by another sweep or process. Nothing of the run was written.

    Attributes:
        run: the run found, a :class:`~npbandit.storage.RunRow` (its ``status`` says
            ``completed`` or ``running``); ``None`` when not given.
    """

    def __init__(self, message: str, run: Any = None) -> None:
        super().__init__(message)
        self.run = run

    def __reduce__(self):
        return type(self), (str(self), self.run)


class ObjectiveError(NPBanditError, RuntimeError):
    """An evaluation failed at a point: the objective (or its constraints) raised, returned
    NaN / inf or something other than a number, or outlived the evaluator's timeout.

    Attributes:
        x: the point at which it failed, as the objective received it (a NumPy array of
            shape ``(d,)`` in the objective's own bounds, or the params dict of a search space);
            ``None`` for an error made from its message alone (``type(err)(message)``, as
            Gymnasium's ``AsyncVectorEnv`` raises a worker's error again in the main process:
            the message still names the point).
        kind: how it failed, one of :attr:`KINDS`: ``"raised"`` (the objective or its
            constraints raised, or the executor failed to run it; the message says which and
            names the exception), ``"returned"`` (it returned
            something other than the real number(s) expected: an :class:`ObjectiveReturnError`),
            ``"nonfinite"`` (it returned NaN or inf), ``"timeout"`` (it was still running
            after the evaluator's timeout, ``optimize(eval_timeout=...)``); ``None`` when
            the error is about no one evaluation (every evaluation of a run failed). A
            failed step records it as its ``error_kind``.
        records: the run's steps up to the failed one, as ``run_episode`` keeps them
            (set when the error stops a run; else ``None``).
        run_id: that run's id in the database (``None`` without one, or before a run).
        history: :func:`npbandit.optimize`'s ``history`` of those steps, the failed one last
            (set by ``optimize``; else ``None``): with ``db=None`` the only record of the
            evaluations made, and ``optimize(..., initial=err.history)`` continues from them.
    """

    records: list | None = None
    run_id: int | None = None
    history: list | None = None

    #: how an evaluation can fail (``kind``), as a failed step's ``error_kind`` records it
    KINDS = ("raised", "returned", "nonfinite", "timeout")

    def __init__(self, message: str, x: Any = None, kind: str | None = None) -> None:
        if kind is not None and kind not in self.KINDS:
            raise ValueError(f"kind must be one of {', '.join(map(repr, self.KINDS))} or None, got {kind!r}")
        super().__init__(message)
        self.x = x
        self.kind = kind

    def __reduce__(self):
        # pickled with its point, kind and what a run added (records, run_id, history): a process
        # pool or Dask sends a failure, or a whole optimize call's, back to the driver
        return _rebuild_objective_error, (type(self), str(self), self.x, self.kind), dict(self.__dict__)


class ObjectiveReturnError(ObjectiveError, TypeError):
    """The objective returned something other than one real number (a string, ``None``,
    a bool, several numbers, a complex number) at a point.

    A failed evaluation like any :class:`ObjectiveError` (recorded as failed, skipped with
    ``on_error="skip"``), and a ``TypeError``, as a wrong return type has always been;
    its ``kind`` is ``"returned"``.
    """

    def __init__(self, message: str, x: Any = None) -> None:
        super().__init__(message, x, kind="returned")


def _rebuild_objective_error(cls: type, message: str, x: Any, kind: str | None) -> ObjectiveError:
    """An :class:`ObjectiveError` (or subclass) from its pickled parts, whatever the subclass's
    constructor takes."""
    error = cls.__new__(cls)
    ObjectiveError.__init__(error, message, x, kind)
    return error


class CheckpointError(NPBanditError, ValueError):
    """A checkpoint is corrupted, does not match its card, or does not fit its use."""


class UnknownCheckpointError(NPBanditError, FileNotFoundError):
    """No checkpoint has that name or path (as opposed to a known checkpoint with a file missing).

    Attributes:
        path: the path looked at when what was given reads as one (a directory, a name with a
            separator, a ``.json`` / ``.safetensors`` file), so that a caller listing the names
            it knows can pass the message on instead; ``None`` for a bare name.
    """

    path: str | None = None


class PolicyNotResetError(NPBanditError, RuntimeError, AttributeError):
    """A policy was asked to act, observe or recommend before ``reset(seed)`` started a run
    (what it learns from is made there). An ``AttributeError`` too, so ``hasattr`` and
    ``getattr(policy, name, default)`` on a policy not yet reset answer as before."""
