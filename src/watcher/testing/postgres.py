"""A throwaway PostgreSQL server for tests, benchmarks and trying a shared journal on one machine.

``LocalPostgres`` runs Debian's (or any) PostgreSQL binaries: ``initdb`` in a fresh folder, then
the server on a loopback port and a unix socket in that folder. ``initdb`` refuses to run as root,
so as root the server runs as the ``postgres`` user (``runuser``). Stop it with ``stop()``, start
it again with ``start()`` (its data stays), remove everything with ``close()``::

    with LocalPostgres() as server:
        url = server.create_database("journal")   # postgresql://watcher@127.0.0.1:PORT/journal
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from watcher.core.errors import ConfigurationError

__all__ = ["LocalPostgres", "postgres_bin"]

USER = "watcher"


def postgres_bin() -> Path | None:
    """The folder of the newest installed PostgreSQL server's programs, or None when there is none."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/postgres"), key=lambda p: int(p.parent.parent.name))
    if found:
        return found[-1].parent
    on_path = shutil.which("postgres")
    return Path(on_path).parent if on_path else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LocalPostgres:
    """One PostgreSQL server in a temporary folder, owned by this process.

    ``fast``: no fsync (tests: nothing must survive a power cut); benchmarks leave it off.
    ``listen``: the addresses to listen on besides the socket (``*`` for other network namespaces).
    """

    def __init__(self, *, fast: bool = True, listen: str = "127.0.0.1", max_connections: int = 300) -> None:
        bindir = postgres_bin()
        if bindir is None:
            raise ConfigurationError("no PostgreSQL server is installed: apt-get install postgresql (Debian) and retry")
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="watcher-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self.host = "127.0.0.1"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            os.chmod(self.folder, 0o755)
            shutil.chown(self.folder, "postgres", "postgres")
        self._options = (
            f"-k {self.folder} -p {self.port} -c listen_addresses='{listen}' -c max_connections={max_connections}"
            + (" -c fsync=off -c full_page_writes=off" if fast else "")
        )
        self._run("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-locale")
        if listen not in ("127.0.0.1", "localhost"):  # other namespaces reach it over veth: trust them too (tests)
            with (self.data / "pg_hba.conf").open("a") as hba:
                hba.write("host all all 0.0.0.0/0 trust\n")
        self.start()

    def _run(self, program: str, *args: str) -> None:
        command = [str(self.bindir / program), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            raise ConfigurationError(
                f"{program} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}"
            )

    def url(self, database: str = "postgres", host: str | None = None) -> str:
        """The URL of ``database`` on this server (over TCP, at ``host`` or the loopback address)."""
        return f"postgresql://{USER}@{host or self.host}:{self.port}/{database}"

    def start(self) -> None:
        """Start the server (again) and wait until it takes connections."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "-o", self._options, "start")

    def stop(self) -> None:
        """Stop the server (fast shutdown: open transactions are rolled back, committed ones kept)."""
        pid = self.pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + 30
        while self.pid() is not None and time.monotonic() < deadline:
            time.sleep(0.05)

    def pid(self) -> int | None:
        """The server's process id while it runs."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            return None

    def create_database(self, name: str) -> str:
        """Create database ``name`` and return its URL."""
        import psycopg  # the postgres extra; imported here so the other fakes need none of it

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def create_schema(self, name: str) -> str:
        """Create schema ``name`` in the ``postgres`` database: a fresh journal in milliseconds (a database takes ~0.5 s).

        The URL sets ``search_path``, so everything the journal creates and reads lives in that schema.
        """
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return f"{self.url()}?options=-csearch_path%3D{name}"

    def close(self) -> None:
        """Stop the server and delete its folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
