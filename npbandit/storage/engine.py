"""Opening a database: :func:`open_db` (one cached engine per URL and mode, the URL as
:mod:`npbandit.storage.urls` reads it; writers create the schema, readers never write) and
the check every open makes: the database is npbandit's (or empty) and has this schema
version. A writer makes that check before it changes anything, so it never adds its
tables to, or switches the journal mode of, another application's database."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import BigInteger, create_engine, event, insert, inspect, select, text, update
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError
from sqlalchemy.pool import NullPool

from npbandit._version import __version__
from npbandit.exceptions import SchemaVersionError, StorageError
from npbandit.storage.models import ADDED_COLUMNS, OLDEST_UPGRADABLE, SCHEMA_VERSION, WIDENED_COLUMNS, Base, Meta
from npbandit.storage.sqlite_files import ReadConnection, connect_reader
from npbandit.storage.urls import (
    _absolute_url,
    _is_sqlite_uri,
    _normalise_url,
    _sqlite_file,
    display_url,
    refuse_in_memory,
)
from npbandit.validation import check_bool

__all__ = ["DEFAULT_URL", "open_db"]

DEFAULT_URL = "sqlite:///npbandit.db"

_ENGINES: dict[tuple[str, bool], Engine] = {}
#: one lock per key of :data:`_ENGINES`, held while its engine is built, so that threads opening one
#: URL at once build one engine (each would otherwise build its own, and all but the last cached leak
#: their connections); built under :data:`_OPENING_LOCK`
_OPENING: dict[tuple[str, bool], threading.Lock] = {}
_OPENING_LOCK = threading.Lock()
_log = logging.getLogger(__name__)


def _forget_inherited_engines() -> None:
    # A forked child (a benchmark's worker pool) must not use its parent's pooled
    # connections: two processes on one PostgreSQL socket or one SQLite handle corrupt each
    # other's transactions. close=False leaves those connections to the parent.
    for engine in list(_ENGINES.values()):
        engine.dispose(close=False)
    # nor wait on a lock another thread of the parent held at the fork: it is never released here
    global _OPENING_LOCK
    _OPENING_LOCK = threading.Lock()
    _OPENING.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited_engines)

#: seconds an SQLite writer waits for another's write lock before it fails ("database is locked")
_BUSY_TIMEOUT_S = 60.0
#: the key of the PostgreSQL advisory lock writers hold while they create or check the schema
_SCHEMA_LOCK = zlib.crc32(b"npbandit schema")
#: the key of the PostgreSQL advisory lock a claimed run start holds while it looks and inserts
#: (:class:`~npbandit.storage.RunLogger` ``claim``)
_RUN_START_LOCK = zlib.crc32(b"npbandit run start")
#: npbandit's tables: a database holding tables but none of these belongs to another application
_OURS = frozenset({"runs", "steps", Meta.__tablename__})
#: times a read is repeated when the SQLite file it read changed meanwhile (see ``_read``)
_READ_ATTEMPTS = 5
_T = TypeVar("_T")


@contextlib.contextmanager
def _storage_errors(url: str, doing: str) -> Iterator[None]:
    """Re-raise the driver's ``DatabaseError`` (read-only file, missing directory, locked
    past the busy timeout, a file that is not a database, ...) as :class:`StorageError`
    naming the database."""
    try:
        yield
    except DatabaseError as err:
        # the database, not our use of it: OperationalError, or SQLite's bare DatabaseError ("file is not
        # a database"); its other subclasses (IntegrityError: a step written twice) are errors of the caller
        if not isinstance(err, OperationalError) and type(err) is not DatabaseError:
            raise
        raise StorageError(f"db {display_url(url)!r}: cannot {doing}: {getattr(err, 'orig', None) or err}") from None


def _create_engine(url: str, **kwargs: Any) -> Engine:
    try:
        return create_engine(url, **kwargs)
    except ImportError as err:
        raise StorageError(f"db {display_url(url)!r}: its database driver is not installed ({err}); for PostgreSQL "
                           "install the `postgres` extra (pip install -e '.[postgres]' in the clone) and use a "
                           "postgresql+psycopg:// URL") from None
    except ArgumentError as err:  # an unknown dialect or driver name
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {display_url(url)!r}: {err}"
                         + _dialect_hint(make_url(url).get_backend_name())) from None


#: how the URL of each database kind npbandit is used with begins, for a hint after a typo in one
_URL_STARTS = {"sqlite": "sqlite:///path/to/file.db (four slashes for an absolute path), or a bare file path",
               "postgresql": "postgresql+psycopg://user:password@host/dbname"}


def _dialect_hint(backend: str) -> str:
    """What an error adds for a URL whose database kind (``backend``, the scheme before any
    ``+driver``) SQLAlchemy does not know: the kind it is close to, as its URL is written."""
    import difflib

    from sqlalchemy import dialects

    if backend in dialects.__all__:  # the kind is known: the driver after "+" is what failed
        return (f"; npbandit's `postgres` extra installs the driver psycopg: {_URL_STARTS[backend]}"
                if backend == "postgresql" else "")
    close = difflib.get_close_matches(backend, [*_URL_STARTS, *dialects.__all__], n=1, cutoff=0.6)
    said = f"; SQLAlchemy knows no database kind {backend!r}"
    return said + (f": did you mean {_URL_STARTS.get(close[0], close[0] + '://...')}?" if close else "")


def _read(engine: Engine, url: str, doing: str, read: Callable[[Connection], _T]) -> _T:
    """``read(conn)`` on a connection of the reader ``engine``, its database errors raised as
    :class:`StorageError` naming ``url``.

    An SQLite file read immutable (see :mod:`~npbandit.storage.sqlite_files`) may be changed
    by a writer while it is read; the read is then repeated (an error raised meanwhile may be
    that change, seen half-done), up to ``_READ_ATTEMPTS`` times in all."""
    with _storage_errors(url, doing):
        for _ in range(_READ_ATTEMPTS):
            with engine.connect() as conn:
                dbapi_conn = conn.connection.dbapi_connection
                changed = dbapi_conn.changed if isinstance(dbapi_conn, ReadConnection) else lambda: False
                try:
                    result = read(conn)
                except DatabaseError:
                    if not changed():
                        raise
                    continue
                if not changed():
                    return result
    raise StorageError(f"db {display_url(url)!r}: cannot {doing}: the file changed each time it was read "
                       f"({_READ_ATTEMPTS} times); try again")


#: the columns of npbandit's tables that every npbandit wrote, from the first: a table of one of
#: their names without them is another application's (a ``runs`` table of its own), not an older npbandit's
_FIRST_COLUMNS = {"runs": ("kind", "env_id", "policy"), "steps": ("run_id", "t", "action")}


def _not_ours(url: str, dialect: str, tables: list[str], *, lacking: dict[str, list[str]] | None = None) -> str:
    """Why ``url``'s database is another application's: it holds ``tables`` and none of
    npbandit's, or (``lacking``) tables of npbandit's names without the columns every npbandit
    wrote in them (``{table: missing columns}``)."""
    shown = ", ".join(tables[:8]) + (f" and {len(tables) - 8} more" if len(tables) > 8 else "")
    hint = ("give npbandit a database of its own (CREATE DATABASE npbandit), or a schema of its own in this one "
            "(CREATE SCHEMA npbandit, then add options=-csearch_path%3Dnpbandit to the URL's query)"
            if dialect == "postgresql" else "give npbandit a file of its own (e.g. npbandit.db)")
    where = "its default schema holds" if dialect == "postgresql" else "it holds"
    if lacking:
        held = "; ".join(f"table {name} without column(s) {', '.join(columns)}" for name, columns in lacking.items())
        what = f"{where} {held}, which every npbandit wrote there"
    else:
        what = f"{where} {shown} and none of npbandit's tables ({', '.join(sorted(_OURS))})"
    return (f"db {display_url(url)!r}: {what}: it is not an npbandit database, and npbandit does not add its "
            f"tables to another application's: {hint}")


def _check_schema(conn: Any, url: str, *, writer: bool) -> None:
    """Refuse another application's database, or one laid out by a schema version this
    npbandit cannot use; a writer then creates the missing tables, adds the columns later
    versions added (:data:`~npbandit.storage.models.ADDED_COLUMNS`) and records the version
    (in the caller's transaction), having changed nothing before.

    Versions: this one (:data:`SCHEMA_VERSION`) is used as it is. An older one from
    :data:`~npbandit.storage.models.OLDEST_UPGRADABLE` on differs from this one only by
    columns added since, each nullable, and integer columns widened to 64 bits
    (:data:`~npbandit.storage.models.WIDENED_COLUMNS`): a reader reads it as it is (the added
    columns read as ``None``) and a writer upgrades it in place (``ALTER TABLE ... ADD COLUMN``;
    on PostgreSQL ``ALTER COLUMN ... TYPE BIGINT``; then the new version; its runs and steps are
    kept). Older versions and newer ones are refused
    (:class:`SchemaVersionError`, saying which npbandit to use).

    A database with npbandit's tables but no version predates versioning: it is used if
    its tables have every column this version needs but added ones (a writer then adds
    those and records the version)."""
    inspector = inspect(conn)
    tables = set(inspector.get_table_names())
    if not tables & _OURS:
        others = sorted(tables | set(inspector.get_view_names()))
        if others:
            raise StorageError(_not_ours(url, conn.dialect.name, others))
    stored = None
    if Meta.__tablename__ in tables:
        stored = conn.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar_one_or_none()
    if stored is not None and stored != str(SCHEMA_VERSION):
        if not stored.isdigit():
            raise SchemaVersionError(
                f"db {display_url(url)!r}: its {Meta.__tablename__} table records schema_version {stored!r}, which "
                f"is not a schema version (a whole number; this npbandit ({__version__}) uses {SCHEMA_VERSION}): "
                "something other than npbandit changed that table; log to a new database")
        if not OLDEST_UPGRADABLE <= int(stored) < SCHEMA_VERSION:
            newer = int(stored) > SCHEMA_VERSION
            raise SchemaVersionError(
                f"db {display_url(url)!r}: its tables have schema version {stored}, but this npbandit ({__version__}) "
                f"uses schema version {SCHEMA_VERSION}; "
                + ("it was written by a newer npbandit: upgrade npbandit to use it" if newer else
                   "it was written by an older npbandit: log to a new database, and read this one with the "
                   "npbandit that wrote it"))
    ours = {"runs", "steps"}
    addable = {pair for pairs in ADDED_COLUMNS.values() for pair in pairs}
    present = {name: {c["name"] for c in inspector.get_columns(name)} for name in sorted(ours & tables)}
    if stored is None and tables & ours:
        lacking = {name: [c for c in _FIRST_COLUMNS[name] if c not in columns] for name, columns in present.items()}
        lacking = {name: columns for name, columns in lacking.items() if columns}
        if lacking:
            raise StorageError(_not_ours(url, conn.dialect.name, sorted(tables), lacking=lacking))
        missing = [f"{name}.{column}" for name in sorted(ours) for column in Base.metadata.tables[name].columns.keys()
                   if column not in present.get(name, set()) and (name not in present or (name, column) not in addable)]
        if missing:
            raise SchemaVersionError(
                f"db {display_url(url)!r}: no schema version recorded and its tables lack {', '.join(missing)}, "
                f"which schema version {SCHEMA_VERSION} needs: it was written by an older npbandit; log to a new "
                "database")
    if writer:
        Base.metadata.create_all(conn)  # the tables missing, each whole; the columns of existing ones below
        added = []
        for table, column in sorted(addable):
            if table in present and column not in present[table]:
                _add_column(conn, table, column)
                added.append(f"{table}.{column}")
        for table, column in sorted({pair for pairs in WIDENED_COLUMNS.values() for pair in pairs}):
            if table in present and _widen_column(conn, table, column):
                added.append(f"{table}.{column} as 64-bit")
        if stored is None:
            conn.execute(insert(Meta).values(key="schema_version", value=str(SCHEMA_VERSION)))
        elif stored != str(SCHEMA_VERSION):
            conn.execute(update(Meta).where(Meta.key == "schema_version").values(value=str(SCHEMA_VERSION)))
        if added or (stored is not None and stored != str(SCHEMA_VERSION)):
            _log.info("db %s: upgraded from schema version %s to %s (added %s)", display_url(url), stored or "none",
                      SCHEMA_VERSION, ", ".join(added) or "no column")


def _add_column(conn: Connection, table: str, column: str) -> None:
    """``ALTER TABLE table ADD COLUMN column`` with the column's type in ``conn``'s dialect
    (every added column is nullable, so the rows already there read ``NULL``)."""
    spec = Base.metadata.tables[table].columns[column]
    quote = conn.dialect.identifier_preparer.quote
    conn.execute(text(f"ALTER TABLE {quote(table)} ADD COLUMN {quote(column)} "
                      f"{spec.type.compile(dialect=conn.dialect)}"))


def _widen_column(conn: Connection, table: str, column: str) -> bool:
    """Give ``table.column`` its 64-bit integer type where the database holds it narrower
    (PostgreSQL's 32-bit INTEGER); whether it changed. SQLite stores any integer in 64 bits
    whatever a column's declared type, so there is nothing to change."""
    if conn.dialect.name != "postgresql":
        return False
    (found,) = [c["type"] for c in inspect(conn).get_columns(table) if c["name"] == column]
    if isinstance(found, BigInteger):
        return False
    quote = conn.dialect.identifier_preparer.quote
    conn.execute(text(f"ALTER TABLE {quote(table)} ALTER COLUMN {quote(column)} TYPE BIGINT"))
    return True


def open_db(url: str = DEFAULT_URL, *, readonly: bool = False) -> Engine:
    """An engine for ``url`` (cached per URL and mode: one engine, also for threads that open
    one URL at the same moment, the others waiting while the first builds it).

    A bare path (``runs.db``) is taken as an SQLite file; a leading ``~`` of an SQLite file's
    path, bare or in an ``sqlite:///`` URL, is the home directory (``~/runs.db``, as a shell
    expands it; not in an SQLite URI). An SQLite URI filename needs
    ``uri=true`` in the URL (``sqlite:///file:runs.db?mode=ro&uri=true``). A relative
    SQLite path names the file in the current directory at this call: it is made absolute
    before the engine is cached and opened, so after an ``os.chdir`` the same relative URL
    opens the file in the new directory, never the first one's engine.

    Args:
        readonly: ``False`` (writers): the database is created if needed, with its
            schema (idempotent); SQLite files switch to WAL mode. ``True`` (readers):
            nothing is written or created -- the database must exist (an SQLite file
            is opened read-only, its journal mode untouched, and no ``-wal`` / ``-shm``
            file is created beside it; a PostgreSQL session is read-only).

    Every open first checks that the database is npbandit's or empty, and its schema
    version (:data:`SCHEMA_VERSION`); only then does a writer change anything (create
    the tables, record the version, switch an SQLite file to WAL mode).

    An SQLite reader's engine opens the file afresh for each connection, as it finds it
    (see :mod:`~npbandit.storage.sqlite_files`); :func:`~npbandit.storage.list_runs` and
    :func:`~npbandit.storage.run_steps` read again when a writer changed the file
    meanwhile, which a caller using the engine directly would have to check itself.

    Raises:
        ValueError: ``url`` is not a URL or path (a port that is not a number, an SQLite
            ``file:`` URI without ``uri=true``, SQLite parameters SQLAlchemy would ignore);
            (writing) an in-memory SQLite database (:func:`refuse_in_memory`).
        StorageError: the database cannot be opened for that use: it holds another
            application's tables; (readonly) it does not exist or is not an npbandit
            database; (writing) its directory does not exist, or the file or its directory
            is read-only; the server cannot be reached; the URL's driver is not installed.
        SchemaVersionError: (a ``StorageError``) the database has another schema version.
    """
    readonly = check_bool("readonly", readonly)
    given, url = url, _normalise_url(url)
    if not readonly:
        refuse_in_memory(url, given)
    target = _absolute_url(url)
    key = (target, bool(readonly))
    engine = _ENGINES.get(key)
    if engine is not None:
        return engine
    with _OPENING_LOCK:
        opening = _OPENING.setdefault(key, threading.Lock())
    with opening:  # a thread that opens the URL meanwhile waits here, then finds the engine built
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _open_reader(url, target) if readonly else _open_writer(url, target)
            _ENGINES[key] = engine
    return engine


def _check_writable_file(url: str, path: Path) -> None:
    """Say what keeps a writer from the SQLite file ``path`` (``url``'s, made absolute) in the
    user's terms, before SQLite says "unable to open database file": :class:`StorageError`
    naming ``url`` when its directory is missing or read-only, or it is a directory or read-only."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise StorageError(f"db {url!r}: directory {str(parent)!r} does not exist"
                           + _three_slashes(url, lambda twin: twin.parent.is_dir()))
    if path.is_dir():
        raise StorageError(f"db {url!r}: {str(path)!r} is a directory, not a database file")
    if path.exists() and not os.access(path, os.W_OK):
        raise StorageError(f"db {url!r}: {str(path)!r} is read-only; logging a run writes to it "
                           "(`npbandit report` can read it as it is)")
    if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
        raise StorageError(f"db {url!r}: directory {str(parent)!r} is read-only; cannot create the database")


def _three_slashes(url: str, found: Callable[[Path], bool]) -> str:
    """What an error about ``url``'s SQLite file adds when its path is relative (``sqlite:///tmp/x.db``
    names ``tmp/x.db`` under the current directory) but the same path from the root passes
    ``found``: the slip of an absolute path written with three slashes; ``""`` otherwise."""
    path = _sqlite_file(url)
    if path is None or path.is_absolute() or _is_sqlite_uri(make_url(url), url):
        return ""
    twin = Path("/") / path
    if not found(twin):
        return ""
    return (f" ({str(path)!r} is relative to the current directory, {os.getcwd()!r}; for {str(twin)!r} write the URL "
            f"with four slashes, sqlite:///{twin}, or give the bare path)")


def _open_writer(url: str, target: str) -> Engine:
    """A writer's engine for ``target`` (``url`` with its SQLite file made absolute:
    :func:`_absolute_url`); messages name ``url`` (as :func:`_normalise_url` returns it, its
    path relative where it was given so) and the file ``target`` names, the only file it
    reads from."""
    path = _sqlite_file(target)
    if path is not None:
        _check_writable_file(url, path)
    backend = make_url(target).get_backend_name()
    checked = False  # whether the database has been found to be npbandit's: only then may it become WAL
    if backend == "sqlite":
        engine = _create_engine(target, connect_args={"timeout": _BUSY_TIMEOUT_S})

        # SQLite only: WAL and BEGIN IMMEDIATE are how SQLite serves several writers
        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:
            dbapi_conn.isolation_level = None  # let the "begin" hook below issue BEGIN itself
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
            if checked:
                _switch_to_wal(cur)
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin_immediate(conn) -> None:
            # take the write lock up front: a deferred transaction that later upgrades
            # to a writer can fail with "database is locked" instead of waiting
            conn.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        # a run may leave its connection idle for hours (one slow evaluation), long enough
        # for the server or a network in between to drop it: test it before each use
        engine = _create_engine(target, pool_pre_ping=True)

    try:
        with _storage_errors(url, "create the schema"):
            # writers that start together would each create the tables and all but one fail; the
            # lock makes the first create them (DDL is transactional on PostgreSQL) and the rest find them
            with _one_at_a_time(engine, _SCHEMA_LOCK) as conn:
                _check_schema(conn, url, writer=True)
            if backend == "sqlite":
                # the file is npbandit's: from now on each connection switches it to WAL (outside a
                # transaction, as SQLite requires), the first one here
                checked = True
                engine.dispose()
                with engine.connect():
                    pass
    except Exception:
        engine.dispose()  # not cached, so nobody else would close its connection
        raise
    return engine


def _switch_to_wal(cursor: Any) -> None:
    """Switch an SQLite file to WAL on the DB-API ``cursor`` (a no-op once it is). A file
    still in its first journal mode while another connection holds its write lock (two
    writers that start on a new file at once) answers "database is locked" at once, not
    after the busy timeout (waiting there could deadlock: the switch holds a read lock that
    the writer's commit waits for); the failed statement lets that lock go, so the switch
    is tried again, every 10 ms, until the busy timeout has passed."""
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() >= deadline:
                raise
        time.sleep(0.01)


@contextlib.contextmanager
def _one_at_a_time(engine: Engine, key: int) -> Iterator[Connection]:
    """A writer's transaction on ``engine`` (committed at the end of the block) that waits
    until no other transaction holds ``key``, holds it to its end, and reads what those before
    it committed: on PostgreSQL a transaction-scoped advisory lock, in a transaction that reads
    committed data whatever the database's default isolation (under ``repeatable read`` its
    snapshot would be taken at the lock's statement, before the wait, and miss what the holder
    committed); an SQLite writer's transaction holds the file's write lock from its
    ``BEGIN IMMEDIATE`` (:func:`_open_writer`), which serialises every writer already. Other
    databases: no lock."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn = conn.execution_options(isolation_level="READ COMMITTED")
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
            yield conn


def _open_reader(url: str, target: str) -> Engine:
    """A reader's engine for ``target``, as :func:`_open_writer`'s for a writer."""
    path = _sqlite_file(target)
    if path is not None:
        if not path.is_file():
            raise StorageError(f"db {url!r}: no database at {str(path)!r}" + _three_slashes(url, Path.is_file))
        # a connection per use, each opened as the file then is (it may gain or lose a writer)
        engine = create_engine("sqlite://", creator=lambda: connect_reader(path), poolclass=NullPool)
    else:
        engine = _create_engine(target, pool_pre_ping=True)
        if engine.dialect.name == "postgresql":
            @event.listens_for(engine, "connect")
            def _read_only(dbapi_conn, _record) -> None:
                # the server itself then refuses every write made through this engine
                cur = dbapi_conn.cursor()
                cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                cur.close()
                dbapi_conn.commit()

    try:
        _read(engine, url, "read it", lambda conn: _check_schema(conn, url, writer=False))
    except Exception:
        engine.dispose()
        raise
    return engine


def _has_schema(conn: Connection) -> bool:
    # an existing but empty file holds no runs yet (e.g. a writer is creating the schema)
    return inspect(conn).has_table("runs")
