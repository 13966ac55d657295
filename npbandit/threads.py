"""How many CPU threads torch uses for npbandit's own inference.

A pretrained surrogate's network calls are small: a few thousand multiply-adds per
point, in batches of at most a few thousand points. Fanned out over every core, such an
operation spends more time waking and joining threads than computing, and on a machine
whose cores other processes are using, each call waits for the slowest thread to be
scheduled; a proposal can then take ten or a hundred times as long as on one thread.
So npbandit runs its inference -- each proposal of ``optimize``, ``BOPolicy`` and
``NPSampler``, each network call of ``NPModel``, each step of a bandit policy -- inside a
:class:`torch_threads` block, which sets torch's intra-op thread count for the block and
gives the caller's count back afterwards.

How many threads (the first that applies):

1. an explicit count: ``threads=`` (``optimize``, ``BOPolicy``, ``NPSampler``, the bandit
   policies) or ``--threads N`` (every ``npbandit`` command);
2. the environment variable ``NPBANDIT_THREADS`` (:data:`THREADS_ENV`);
3. ``OMP_NUM_THREADS``, else ``MKL_NUM_THREADS``, when set (the count a user asked of
   every OpenMP / MKL program);
4. one thread.

The value ``"torch"`` (as ``threads="torch"``, ``--threads torch`` or
``NPBANDIT_THREADS=torch``) leaves the count as it is: torch's own choice (one thread
per core unless the process set another).

Why scoped: torch's thread pool is the whole process's, so setting it once would also
slow a user's own training in the same process (an Optuna objective, the evaluations of
``optimize``). A block changes it only while npbandit computes.

Blocks nest: inside a block, a further block changes nothing (the outermost block's
count holds until it ends), so a user's ``with torch_threads(4):`` around a loop governs
every npbandit call in it, and nested library calls cost one thread-local lookup.
The count is set only where it differs from the current one.

Threads: torch keeps the count per thread, and fixes a thread's count at the first torch
call in that thread that reads it (to the count most recently set in any thread). A
block therefore reads the current count before setting its own, so that the setting
holds in a fresh worker thread (a ``ThreadPoolExecutor``, Optuna's ``n_jobs``) whatever
other threads set meanwhile; each thread's blocks are independent of the others'.
"""

from __future__ import annotations

import numbers
import os
import threading
from typing import Any

__all__ = ["THREADS_ENV", "TORCH_CHOICE", "torch_threads", "resolve_threads", "check_threads"]

#: the environment variable that sets npbandit's inference thread count (a positive int or ``"torch"``)
THREADS_ENV = "NPBANDIT_THREADS"

#: the value that leaves torch's own thread count in place
TORCH_CHOICE = "torch"

_state = threading.local()  # per thread: depth (blocks entered), restore (the count to give back, or None)


def check_threads(name: str, value: Any) -> int | str | None:
    """``value`` as a thread count argument: ``None`` (the environment decides, see
    :func:`resolve_threads`), a positive int, or ``"torch"`` (torch's own count).

    Raises:
        ValueError: anything else, naming ``name``.
    """
    if value is None or (isinstance(value, str) and value == TORCH_CHOICE):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:  # a NumPy integer too
        raise ValueError(f"{name} must be a positive int, 'torch' (torch's own count) or None (${THREADS_ENV}, "
                         f"else OMP_NUM_THREADS / MKL_NUM_THREADS, else 1), got {value!r}")
    return int(value)


def _env_count(variable: str) -> int | None:
    """A user's ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` as a count, ``None`` where unset or
    not a positive integer (OpenMP's nested form ``"4,2"`` counts its first level)."""
    text = os.environ.get(variable, "").split(",")[0].strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def resolve_threads(threads: int | str | None = None) -> int | None:
    """The intra-op thread count npbandit's inference runs with: ``threads`` when given,
    else ``$NPBANDIT_THREADS``, else ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``, else 1.

    Returns:
        The count, or ``None`` for torch's own choice (``"torch"``): leave the count as it is.

    Raises:
        ValueError: ``threads`` or ``$NPBANDIT_THREADS`` is not a positive int or ``"torch"``.
    """
    if threads is not None:
        threads = check_threads("threads", threads)
        return None if threads == TORCH_CHOICE else threads
    text = os.environ.get(THREADS_ENV, "").strip()
    if text:
        if text == TORCH_CHOICE:
            return None
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"${THREADS_ENV} must be a positive integer or 'torch', got {text!r}")
        return int(text)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        count = _env_count(variable)
        if count is not None:
            return count
    return 1


class torch_threads:  # noqa: N801 - used as a block, like torch.no_grad
    """A block that runs with ``threads`` intra-op torch threads (:func:`resolve_threads`:
    ``None`` lets ``NPBANDIT_THREADS`` / ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` decide,
    else 1) and gives the thread's previous count back when it ends, also on an exception::

        with torch_threads():          # npbandit's default
            ...
        with torch_threads(4):         # four threads for everything npbandit does inside
            ...

    Inside another block (in the same thread) it changes nothing; the outermost block's
    count holds. ``"torch"`` leaves the count as it is (and, outermost, holds it so for
    nested blocks too).

    Raises:
        ValueError: on construction, ``threads`` is not ``None``, a positive int or
            ``"torch"``; on entry (outermost only), ``$NPBANDIT_THREADS`` is invalid.
    """

    __slots__ = ("threads",)

    def __init__(self, threads: int | str | None = None) -> None:
        self.threads = check_threads("threads", threads)

    def __enter__(self) -> torch_threads:
        depth = getattr(_state, "depth", 0)
        if depth:
            _state.depth = depth + 1
            return self
        import torch  # here, not at the top: the CLI and storage import this module without needing torch

        count = resolve_threads(self.threads)
        # read first: in a thread torch has not yet seen, this read fixes the thread's count,
        # so the set below is not undone by a later first read
        before = torch.get_num_threads()
        if count is not None and count != before:
            torch.set_num_threads(count)
            _state.restore = before
        else:
            _state.restore = None
        _state.depth = 1
        return self

    def __exit__(self, *exc: object) -> None:
        _state.depth -= 1
        if _state.depth == 0 and _state.restore is not None:
            import torch

            torch.set_num_threads(_state.restore)
            _state.restore = None
