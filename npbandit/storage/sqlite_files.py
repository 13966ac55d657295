"""Reading an SQLite file without writing anything, not even next to it.

An SQLite connection opened read-only (``mode=ro``) on a database in WAL mode still
creates the ``-wal`` and ``-shm`` files beside it when they are missing, and leaves them
when it closes (only a writer may remove them). Made by another user, they lock the
database's owner out (``attempt to write a readonly database``). So a reader chooses
how to open the file from what lies beside it (:func:`connect_reader`):

- a database in rollback-journal mode, or in WAL mode with its ``-wal`` and ``-shm`` files
  present (a writer has it open, or died with it open): ``mode=ro``. SQLite then uses the
  files that are there, with their locks, and creates none;
- a database in WAL mode without them (every writer has closed it): ``immutable=1``, which
  opens no other file and takes no lock. The file's state (inode, size, times, header) is
  recorded when it is opened; :meth:`ReadConnection.changed` tells whether a writer may have
  changed the file since, so that the caller can read again (``npbandit.storage.engine._read``).
  A writer that starts meanwhile writes into its new ``-wal`` file, not into this one,
  until it checkpoints; a checkpoint changes the file's times, but only by the kernel's
  timestamp tick, and leaves its size and header as they were, so a checkpoint in the tick of
  the file's last write would go unseen by the state alone. Hence a ``-wal`` file that has
  appeared since the connection opened counts as a change too: every checkpoint needs a
  writer, and a writer keeps its ``-wal`` file while it has the database open. A read that
  saw neither read one consistent state; the next read then opens ``mode=ro`` beside the
  writer's files.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from pathlib import Path
from urllib.parse import quote

__all__ = ["ReadConnection", "connect_reader", "file_state"]

#: files already warned about (a WAL file without its -shm), so that each read does not warn again
_WARNED: set[Path] = set()


#: one read-only descriptor per database file (device, inode) this process has read the header
#: of, kept open for the life of the process: closing any descriptor of a file drops every
#: POSIX lock this process holds on it, those of its SQLite connections included (a writer in
#: the same process would then lose its locks and another process could checkpoint under it)
_HEADER_FDS: dict[tuple[int, int], int] = {}


def _descriptor(path: Path, st: os.stat_result) -> int | None:
    """A read-only descriptor of the file ``st`` describes, opened once per process and never
    closed (see :data:`_HEADER_FDS`); ``None`` when ``path`` names another file by now."""
    key = (st.st_dev, st.st_ino)
    if key not in _HEADER_FDS:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        opened = os.fstat(fd)
        _HEADER_FDS.setdefault((opened.st_dev, opened.st_ino), fd)  # kept either way: never closed
    return _HEADER_FDS.get(key)


def file_state(path: Path) -> tuple:
    """What changes when SQLite writes ``path``: its identity, size, times and 100-byte header.

    The header is read without closing a descriptor of the file (see :data:`_HEADER_FDS`).

    Raises:
        OSError: ``path`` is missing, or was replaced again and again while it was read.
    """
    for _ in range(5):
        st = os.stat(path)
        fd = _descriptor(path, st)
        if fd is not None:
            return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, os.pread(fd, 100, 0)
    raise OSError(f"{path} was replaced while it was read")


class ReadConnection(sqlite3.Connection):
    """A reader's connection to ``path``; ``snapshot`` is the file's :func:`file_state` when
    it was opened immutable (``None`` when opened ``mode=ro``, where SQLite's locks keep
    reads consistent)."""

    path: Path
    snapshot: tuple | None = None
    #: whether ``path``'s ``-wal`` file existed when the connection was opened immutable
    wal_at_open: bool = False

    def changed(self) -> bool:
        """Whether the file of an immutable connection has changed (or gone) since it was
        opened, or a writer has opened it since (its ``-wal`` file has appeared): see the
        module docstring."""
        if self.snapshot is None:
            return False
        try:
            if file_state(self.path) != self.snapshot:
                return True
        except OSError:
            return True
        return not self.wal_at_open and os.path.exists(f"{self.path}-wal")


def _open(uri: str, path: Path, snapshot: tuple | None, wal_at_open: bool = False) -> ReadConnection:
    conn = sqlite3.connect(uri, uri=True, timeout=60, check_same_thread=False, factory=ReadConnection)
    conn.path, conn.snapshot, conn.wal_at_open = path, snapshot, wal_at_open
    return conn


def connect_reader(path: Path) -> ReadConnection:
    """A read-only connection to the SQLite file ``path`` that creates no file (see the module
    docstring for how it is opened).

    Raises:
        sqlite3.OperationalError: the file cannot be read (gone, unreadable, locked past the
            busy timeout, a hot journal that only a writer can roll back).
    """
    path = Path(path).resolve()
    try:
        state = file_state(path)
    except OSError as err:
        raise sqlite3.OperationalError(f"unable to open database file: {err}") from None
    header = state[-1]
    wal_mode = len(header) >= 20 and header[18] == 2  # the file format's read version: 2 is WAL
    wal, shm = (os.path.exists(f"{path}-{suffix}") for suffix in ("wal", "shm"))
    uri = f"file:{quote(str(path))}"
    if not wal_mode or (wal and shm):
        conn = _open(f"{uri}?mode=ro", path, None)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError as err:
            conn.close()
            if not wal_mode or "locked" in str(err):
                raise
            # a WAL index that cannot be used read-only (e.g. a crashed writer's, in a read-only
            # directory): read the file as it is, as below
    elif wal and path not in _WARNED:
        _WARNED.add(path)
        warnings.warn(f"{str(path)!r} has a -wal file but no -shm file; it is read without the -wal file (reading "
                      "it would create the -shm file), so its last commits may be missing until a writer opens it",
                      RuntimeWarning, stacklevel=2)
    return _open(f"{uri}?immutable=1", path, state, wal)
