"""A throw-away PostgreSQL cluster for the tests and the storage benchmark.

``Cluster.start()`` runs ``initdb`` into a fresh temporary directory and starts a server
that listens on a Unix socket in that directory only (no TCP port, so it cannot clash
with another server or be reached from outside); ``stop()`` shuts it down and deletes the
directory. The server binaries come from ``PATH`` or Debian's
``/usr/lib/postgresql/<version>/bin`` (``apt-get install postgresql``).

PostgreSQL refuses to run as root. Run as root (as CI is), the cluster's directory is
handed to an unprivileged account (``postgres``, which Debian's package creates, else
``nobody``) and ``initdb`` / ``pg_ctl`` run as that account.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import_error: str | None
try:
    import psycopg
except ImportError as err:  # the `postgres` extra is not installed
    psycopg = None
    import_error = str(err)
else:
    import_error = None

PORT = 5432  # names the socket file only; nothing listens on TCP


def server_bin() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl`` (PATH first, then Debian's newest)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(os.path.realpath(found)).parent
    candidates = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")]
    candidates = [c for c in candidates if (c / "pg_ctl").exists()]

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", path.parent.name))

    return max(candidates, key=version) if candidates else None


def unavailable() -> str | None:
    """Why a cluster cannot be started here, or ``None`` when it can."""
    if psycopg is None:
        return f"the psycopg driver is not installed ({import_error}); pip install -e '.[postgres]' in the clone"
    if server_bin() is None:
        return ("no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin; "
                "apt-get install postgresql")
    if os.geteuid() == 0 and _account() is None:
        return "running as root and no unprivileged account (postgres, nobody) to run the server as"
    return None


def skip_unless_available() -> None:
    """Skip the calling test when a cluster cannot start here, saying why; with
    ``NPBANDIT_REQUIRE_POSTGRES=1`` (CI, which installs the server) fail instead."""
    import pytest

    why = unavailable()
    if why is None:
        return
    if os.environ.get("NPBANDIT_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"NPBANDIT_REQUIRE_POSTGRES=1 but PostgreSQL cannot run here: {why}")
    pytest.skip(f"PostgreSQL tests skipped: {why}")


def _account() -> pwd.struct_passwd | None:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    return None


class Cluster:
    """One server in a temporary directory; ``url(name)`` is an SQLAlchemy URL of a database.

    Args:
        durable: ``False`` (tests) turns off ``fsync``: a crash of the server machine could
            lose data, which no test exercises, and every commit is faster. ``True`` (the
            benchmark) keeps PostgreSQL's defaults.
    """

    def __init__(self, durable: bool = False) -> None:
        self.durable = durable
        self.dir: Path | None = None
        self._as: dict = {}
        self._n = 0

    def _run(self, *args: str) -> None:
        proc = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"},
                              cwd=self.dir, timeout=120, **self._as)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")

    def start(self) -> Cluster:
        why = unavailable()
        if why is not None:
            raise RuntimeError(why)
        bin_dir = server_bin()
        # /tmp, not pytest's tmp_path: the server's account must be able to reach the directory
        self.dir = Path(tempfile.mkdtemp(prefix="npbandit-pg-"))
        if os.geteuid() == 0:
            account = _account()
            os.chown(self.dir, account.pw_uid, account.pw_gid)
            self._as = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
        data = self.dir / "data"
        self._run(str(bin_dir / "initdb"), "-D", str(data), "-U", "npbandit", "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        settings = {"listen_addresses": "''", "unix_socket_directories": f"'{self.dir}'", "port": str(PORT),
                    "max_connections": "100", "shared_buffers": "32MB"}
        if not self.durable:
            settings.update(fsync="off", full_page_writes="off", synchronous_commit="off")
        with open(data / "postgresql.conf", "a") as conf:
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
        self._run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(self.dir / "server.log"), "-w", "-t", "60",
                  "start")
        return self

    def stop(self) -> None:
        if self.dir is None:
            return
        try:
            bin_dir = server_bin()
            if (self.dir / "data" / "postmaster.pid").exists():
                self._run(str(bin_dir / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def url(self, database: str, driver: str = "psycopg") -> str:
        return f"postgresql+{driver}://npbandit@/{database}?host={self.dir}&port={PORT}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        if name is None:
            self._n += 1
            name = f"t{self._n}"
        with psycopg.connect(host=str(self.dir), port=PORT, user="npbandit", dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
