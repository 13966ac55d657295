"""Database URLs as npbandit takes them: a bare file path or an SQLAlchemy URL, normalised
(:func:`_normalise_url`; a leading ``~`` of an SQLite path expanded), checked (SQLite URI
filenames, parameters SQLAlchemy would ignore), shown without a password (:func:`display_url`),
made absolute for other processes (:func:`shared_url`), and in-memory SQLite refused for a
writer (:func:`refuse_in_memory`). Nothing here opens a database: :mod:`npbandit.storage.engine`
does, through these."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.util import asbool

__all__ = ["display_url", "shared_url", "refuse_in_memory"]

#: the query parameters of an SQLite URL that SQLAlchemy hands to the driver; without
#: ``uri=true`` it silently ignores any other (``mode=ro`` would not make a writer read-only)
_SQLITE_DRIVER_PARAMETERS = frozenset({"uri", "timeout", "isolation_level", "detect_types", "check_same_thread",
                                       "cached_statements"})
_PASSWORD = re.compile(r"(://[^/@:]*:)[^@]*@")


def display_url(url: str) -> str:
    """``url`` as it may be printed or logged: a password in it is shown as ``***``.

    Raises:
        TypeError: ``url`` is not a str or path."""
    url = os.fspath(url) if isinstance(url, os.PathLike) else url
    if not isinstance(url, str):
        raise TypeError(f"url must be an SQLAlchemy URL or a file path (a str or os.PathLike), got "
                        f"{type(url).__name__} {url!r}")
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):  # a bare SQLite path, or a URL that does not parse (a bad port)
        return _PASSWORD.sub(r"\1***@", url)


def _normalise_url(url: Any) -> str:
    """``url`` as an SQLAlchemy URL (a bare path becomes an SQLite one), checked as
    :func:`_sqlite_file` checks it; errors name ``db`` as it was given. A ``pathlib.Path`` is its
    file's path. An SQLite file path that starts with ``~`` (a bare path, or the path of an
    ``sqlite:///`` URL) names the user's home directory, as a shell would expand it
    (:func:`os.path.expanduser`; a path given through Python or quoted in a shell is not):
    neither SQLAlchemy nor SQLite expands it, and a directory named ``~`` is never what was meant."""
    url = os.fspath(url) if isinstance(url, os.PathLike) else url
    if not isinstance(url, str) or not url:
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {url!r}")
    normalised = url if "://" in url else f"sqlite:///{url}"
    _sqlite_file(normalised, shown=url)
    return _home_expanded(normalised, url)


def _home_expanded(url: str, shown: str) -> str:
    """``url`` (an SQLAlchemy URL, checked) with a leading ``~`` of its SQLite file path
    expanded (``~`` or ``~user``, see :func:`_normalise_url`); an SQLite URI (``uri=true``),
    whose path SQLite reads itself, and other URLs are returned as they are."""
    parsed = make_url(url)
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or not database.startswith("~") or _is_sqlite_uri(parsed, shown):
        return url
    expanded = os.path.expanduser(database)  # pathlib's expanduser, without its RuntimeError for an unknown user
    if expanded.startswith("~"):  # no such user, or no home directory known
        raise ValueError(f"db {shown!r}: cannot expand {database.split('/')[0]!r} to a home directory")
    return parsed.set(database=expanded).render_as_string(hide_password=False)


def _parse_url(url: str, shown: str) -> URL:
    try:
        return make_url(url)
    except ArgumentError as err:
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {shown!r}: {err}") from None
    except ValueError as err:  # the one number in a URL
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {shown!r}: its port is not a "
                         f"number ({err})") from None


def _is_sqlite_uri(parsed: URL, shown: str) -> bool:
    try:
        return asbool(parsed.query.get("uri", False))
    except ValueError:
        raise ValueError(f"db {shown!r}: uri must be true or false, got {parsed.query['uri']!r}") from None


def _sqlite_file(url: str, shown: str | None = None) -> Path | None:
    """The file of an SQLite URL; ``None`` for in-memory databases and other backends.

    A ``file:`` URI filename is understood only with ``uri=true`` in the URL (SQLAlchemy
    would otherwise create a file named ``file:...``); its path is the file.

    Raises:
        ValueError: the URL does not parse, is a ``file:`` URI without ``uri=true``, or has
            parameters SQLAlchemy would ignore (the message shows ``shown``, default ``url``,
            without its password).
    """
    shown = _PASSWORD.sub(r"\1***@", url if shown is None else shown)  # as given, without its password
    parsed = _parse_url(url, shown)
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if not _is_sqlite_uri(parsed, shown):
        ignored = sorted(set(parsed.query) - _SQLITE_DRIVER_PARAMETERS)
        if database.startswith("file:"):
            raise ValueError(f"db {shown!r}: {database!r} is an SQLite URI filename, which SQLAlchemy opens only "
                             f"with uri=true in the URL (sqlite:///{database}?uri=true, as a URL, not a bare path); "
                             "without it a file of that name would be created. Or give a plain file path")
        if ignored:
            raise ValueError(f"db {shown!r}: SQLite URL parameter(s) {', '.join(ignored)} are ignored unless the URL "
                             f"also has uri=true (they are then SQLite URI parameters); understood without it: "
                             f"{', '.join(sorted(_SQLITE_DRIVER_PARAMETERS))}")
        return None if database in ("", ":memory:") else Path(database)
    if not database.startswith("file:"):  # with uri=true SQLite reads a name without "file:" as a plain path
        if set(parsed.query) - _SQLITE_DRIVER_PARAMETERS:  # ...and SQLAlchemy appends these to that name
            raise ValueError(f"db {shown!r}: with uri=true the database must be an SQLite URI (file:path) for its "
                             f"parameters to apply; got {database!r}")
        return None if database in ("", ":memory:") else Path(database)
    parts = urlsplit(database)
    if parts.netloc not in ("", "localhost"):
        raise ValueError(f"db {shown!r}: an SQLite URI names a file on this machine (file:/path or "
                         f"file://localhost/path), got host {parts.netloc!r}")
    path = unquote(parts.path)
    if parsed.query.get("mode") == "memory" or path in ("", ":memory:"):
        return None
    return Path(path)


def refuse_in_memory(url: str, shown: Any) -> None:
    """Refuse ``url`` (as :func:`_normalise_url` returns it) for a writer when it is an in-memory
    SQLite database (``sqlite://``, ``:memory:``, an SQLite URI with ``mode=memory``): every new
    connection to one is an empty database of its own, so the schema a writer creates would be
    gone by its next connection (the run's first write: "no such table: runs"), and no reader
    could see the runs. The message names ``db`` as it was given (``shown``), and ``None``
    without a keyword (the command line would read ``db=None`` as its ``--db None``, a file).

    Raises:
        ValueError: ``url`` is an in-memory SQLite database.
    """
    if _sqlite_file(url) is None and make_url(url).get_backend_name() == "sqlite":
        shown = _PASSWORD.sub(r"\1***@", str(os.fspath(shown) if isinstance(shown, os.PathLike) else shown))
        raise ValueError(f"db {shown!r} is an in-memory SQLite database, which "
                         "holds nothing from one connection to the next, so a run cannot be logged to it: give an "
                         "SQLite file path or a PostgreSQL URL, or, in Python, None to log nothing")


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
            raise ValueError(f"db {url!r} is an in-memory SQLite database, which other processes cannot "
                             "share; give a file path or a PostgreSQL URL")
        return url
    if not path.is_absolute() and _is_sqlite_uri(make_url(url), url):
        raise ValueError(f"db {url!r}: an SQLite URI with a relative path means another file to a process started "
                         "elsewhere; give an absolute path (file:/abs/path)")
    return _absolute_url(url)


def _absolute_url(url: str) -> str:
    """``url`` (as :func:`_normalise_url` returns it) with a relative SQLite file path made
    absolute (resolved against the current directory now), so that a later ``os.chdir`` does
    not change which file it names. Other URLs, an absolute path among them, are returned as
    they are."""
    path = _sqlite_file(url)
    if path is None or path.is_absolute():
        return url
    parsed = make_url(url)
    if _is_sqlite_uri(parsed, url):  # file:path (see _sqlite_file): the URI's path, quoted again
        database = urlunsplit(urlsplit(parsed.database)._replace(path=quote(str(path.resolve()))))
    else:
        database = str(path.resolve())
    return parsed.set(database=database).render_as_string(hide_password=False)
