"""Opening a database: URLs (:func:`display_url`, :func:`shared_url`), :func:`open_db`
(one cached engine per URL and mode; writers create the schema, readers never write) and
the schema-version check every open makes."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine, event, insert, inspect, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError

from npbandit._version import __version__
from npbandit.exceptions import SchemaVersionError, StorageError
from npbandit.storage.models import SCHEMA_VERSION, Base, Meta

__all__ = ["DEFAULT_URL", "open_db", "display_url", "shared_url"]

DEFAULT_URL = "sqlite:///npbandit.db"

_ENGINES: dict[tuple[str, bool], Engine] = {}


def _forget_inherited_engines() -> None:
    # A forked child (a benchmark's worker pool) must not use its parent's pooled
    # connections: two processes on one PostgreSQL socket or one SQLite handle corrupt each
    # other's transactions. close=False leaves those connections to the parent.
    for engine in list(_ENGINES.values()):
        engine.dispose(close=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited_engines)

#: the key of the PostgreSQL advisory lock writers hold while they create or check the schema
_SCHEMA_LOCK = zlib.crc32(b"npbandit schema")


def display_url(url: str) -> str:
    """``url`` as it may be printed or logged: a password in it is shown as ``***``."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:  # a bare SQLite path
        return url


def _normalise_url(url: Any) -> str:
    if not isinstance(url, str) or not url:
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {url!r}")
    return url if "://" in url else f"sqlite:///{url}"


def _sqlite_file(url: str) -> Path | None:
    """The file of an SQLite URL; ``None`` for in-memory and ``file:`` URI databases."""
    try:
        parsed = make_url(url)
    except ArgumentError as err:
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {url!r}: {err}") from None
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file:") or parsed.query.get("uri"):
        return None
    return Path(database)


def shared_url(url: str) -> str:
    """``url`` as other processes see the same database, wherever they run from: a bare or
    relative SQLite path is made absolute (a Dask worker or pool process may start in
    another directory). Other URLs are returned as they are.

    Raises:
        ValueError: ``url`` is not a URL or path, or is an in-memory SQLite database, which
            no other process can reach.
    """
    url = _normalise_url(url)
    path = _sqlite_file(url)
    if path is None:
        if make_url(url).get_backend_name() == "sqlite":
            raise ValueError(f"db {url!r} is an in-memory or URI SQLite database, which other processes cannot "
                             "share; give a file path or a PostgreSQL URL")
        return url
    if path.is_absolute():
        return url
    return make_url(url).set(database=str(path.resolve())).render_as_string(hide_password=False)


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
                           "install the `postgres` extra (pip install 'npbandit[postgres]') and use a "
                           "postgresql+psycopg:// URL") from None
    except ArgumentError as err:  # an unknown dialect or driver name
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {display_url(url)!r}: {err}") from None


def _check_schema(conn: Any, url: str, *, writer: bool) -> None:
    """Refuse a database laid out by another schema version; a writer also creates the
    missing tables and records the version (in the caller's transaction).

    A database with npbandit's tables but no version predates versioning: it is used if
    its tables have every column this version needs (a writer then records the version)."""
    tables = set(inspect(conn).get_table_names())
    stored = None
    if Meta.__tablename__ in tables:
        stored = conn.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar_one_or_none()
    if stored is not None and stored != str(SCHEMA_VERSION):
        newer = stored.isdigit() and int(stored) > SCHEMA_VERSION
        raise SchemaVersionError(
            f"db {display_url(url)!r}: its tables have schema version {stored}, but this npbandit ({__version__}) "
            f"uses schema version {SCHEMA_VERSION}; "
            + ("it was written by a newer npbandit: upgrade npbandit to use it" if newer else
               "it was written by an older npbandit: log to a new database, and read this one with the npbandit "
               "that wrote it"))
    ours = {"runs", "steps"}
    if stored is None and tables & ours:
        present = {name: {c["name"] for c in inspect(conn).get_columns(name)} if name in tables else set()
                   for name in sorted(ours)}
        missing = [f"{name}.{column}" for name, columns in present.items()
                   for column in Base.metadata.tables[name].columns.keys() if column not in columns]
        if missing:
            raise SchemaVersionError(
                f"db {display_url(url)!r}: no schema version recorded and its tables lack {', '.join(missing)}, "
                f"which schema version {SCHEMA_VERSION} needs: it was written by an older npbandit; log to a new "
                "database")
    elif not writer and tables and not tables & ours:
        raise StorageError(f"db {display_url(url)!r} is not an npbandit database (no runs/steps tables)")
    if writer:
        Base.metadata.create_all(conn)
        if stored is None:
            conn.execute(insert(Meta).values(key="schema_version", value=str(SCHEMA_VERSION)))


def open_db(url: str = DEFAULT_URL, *, readonly: bool = False) -> Engine:
    """An engine for ``url`` (cached per URL and mode).

    A bare path (``runs.db``) is taken as an SQLite file.

    Args:
        readonly: ``False`` (writers): the database is created if needed, with its
            schema (idempotent); SQLite files switch to WAL mode. ``True`` (readers):
            nothing is written or created -- the database must exist (an SQLite file
            is opened read-only, its journal mode untouched; a PostgreSQL session is
            read-only).

    Every open checks the database's schema version (:data:`SCHEMA_VERSION`); a
    writer records it in a new database.

    Raises:
        ValueError: ``url`` is not a URL or path.
        StorageError: the database cannot be opened for that use: (readonly) it does
            not exist or is not an npbandit database; (writing) its directory does not
            exist, or the file or its directory is read-only; the server cannot be
            reached; the URL's driver is not installed.
        SchemaVersionError: (a ``StorageError``) the database has another schema version.
    """
    url = _normalise_url(url)
    key = (url, bool(readonly))
    if key in _ENGINES:
        return _ENGINES[key]
    path = _sqlite_file(url)
    engine = _open_reader(url, path) if readonly else _open_writer(url, path)
    _ENGINES[key] = engine
    return engine


def _open_writer(url: str, path: Path | None) -> Engine:
    if path is not None:
        # say what is wrong in the user's terms before SQLite says "unable to open database file"
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise StorageError(f"db {url!r}: directory {str(parent)!r} does not exist")
        if path.is_dir():
            raise StorageError(f"db {url!r}: {str(path)!r} is a directory, not a database file")
        if path.exists() and not os.access(path, os.W_OK):
            raise StorageError(f"db {url!r}: {str(path)!r} is read-only; logging a run writes to it "
                               "(`npbandit report` can read it as it is)")
        if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
            raise StorageError(f"db {url!r}: directory {str(parent)!r} is read-only; cannot create the database")
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        engine = _create_engine(url, connect_args={"timeout": 60})

        # SQLite only: WAL and BEGIN IMMEDIATE are how SQLite serves several writers
        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:
            dbapi_conn.isolation_level = None  # let the "begin" hook below issue BEGIN itself
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=60000")
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
        engine = _create_engine(url, pool_pre_ping=True)

    try:
        with _storage_errors(url, "create the schema"), engine.begin() as conn:
            if backend == "postgresql":
                # writers that start together would each create the tables and all but one
                # fail; the lock makes the first create them (DDL is transactional here) and
                # the rest find them. SQLite's BEGIN IMMEDIATE (above) serialises the same way.
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK})
            _check_schema(conn, url, writer=True)
    except Exception:
        engine.dispose()  # not cached, so nobody else would close its connection
        raise
    return engine


def _open_reader(url: str, path: Path | None) -> Engine:
    if path is not None:
        if not path.is_file():
            raise StorageError(f"db {url!r}: no database at {str(path)!r}")
        # mode=ro: SQLite itself refuses every write, and the journal mode is left as
        # it is (switching to WAL, as writers do, is a write). A WAL file in a
        # read-only directory without its -shm file cannot be opened that way; nobody
        # can be writing it then, so it is read as immutable.
        uri = f"file:{quote(str(path.resolve()))}"

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60, check_same_thread=False)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:
                conn.close()
                conn = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)
            return conn

        engine = create_engine("sqlite://", creator=connect)
    else:
        engine = _create_engine(url, pool_pre_ping=True)
        if engine.dialect.name == "postgresql":
            @event.listens_for(engine, "connect")
            def _read_only(dbapi_conn, _record) -> None:
                # the server itself then refuses every write made through this engine
                cur = dbapi_conn.cursor()
                cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                cur.close()
                dbapi_conn.commit()

    try:
        with _storage_errors(url, "read it"), engine.connect() as conn:
            _check_schema(conn, url, writer=False)
    except Exception:
        engine.dispose()
        raise
    return engine


def _has_schema(engine: Engine) -> bool:
    # an existing but empty file holds no runs yet (e.g. a writer is creating the schema)
    return inspect(engine).has_table("runs")
