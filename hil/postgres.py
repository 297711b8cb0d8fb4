"""A PostgreSQL server of its own for the tests and the back office's benchmark (the floor's store,
tests/test_floor_store.py, bench/bench_floor_store.py): ``initdb`` into a new folder, ``pg_ctl`` on a free loopback
port, trust authentication for the ``postgres`` user, stopped at the end.

Debian's ``postgresql`` package puts the programs in ``/usr/lib/postgresql/VERSION/bin`` (``.ci/run`` installs it).
PostgreSQL refuses to run as root: as root the server's folder is given to ``nobody`` and every program runs as
that user (``runuser``). Without PostgreSQL, ``Postgres`` raises ``PostgresMissing``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from hil.broker import free_port

#: The user the server runs as when the tests run as root.
SERVER_USER = "nobody"


class PostgresMissing(RuntimeError):
    """No ``initdb`` on this machine."""


def find_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on the PATH, else Debian's newest ``/usr/lib/postgresql/*/bin``."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[-3]))
    return Path(versions[-1]).parent if versions else None


class Postgres:
    """One PostgreSQL server in a folder of its own on 127.0.0.1 (module docstring). ``settings``: server
    settings (``-c NAME=VALUE``) over the defaults ``fsync=off`` (a test's database need not survive a power
    cut) and ``max_connections=40``. ``dsn(name)``: a database's connection string; ``create(name)`` makes one;
    ``stop``/``start``/``restart`` as the server goes. Raises ``PostgresMissing`` without ``initdb``."""

    def __init__(self, settings: dict[str, str] | None = None) -> None:
        folder = find_bin()
        if folder is None:
            raise PostgresMissing("PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = folder
        self.folder = Path(tempfile.mkdtemp(prefix="crisscross-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.settings = {"fsync": "off", "max_connections": "40", **(settings or {})}
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb and postgres refuse root
            user = pwd.getpwnam(SERVER_USER)
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self.as_user = ["runuser", "-u", SERVER_USER, "--"]
        self._run(["initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                   "--no-sync"], timeout=300)

    def _run(self, command: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
        done = subprocess.run(self.as_user + [str(self.bin / command[0]), *command[1:]], capture_output=True,
                              text=True, timeout=timeout, cwd=self.folder)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} exited {done.returncode}: {done.stderr[-800:]} {self.log_tail()}")
        return done

    def start(self) -> None:
        """Start the server and wait until it takes connections (``pg_ctl -w``)."""
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 " + " ".join(
            f"-c {name}={value}" for name, value in self.settings.items())
        self._run(["pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"), "-w", "-t",
                   "120", "start"], timeout=180)

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``mode``: ``fast``, or ``immediate``: as a crash, recovered at the next start)."""
        self._run(["pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "120", "stop"], timeout=180)

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def dsn(self, name: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def create(self, name: str) -> str:
        """A new database ``name``; its connection string."""
        import psycopg

        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def remove(self) -> None:
        """Stop the server if it runs and remove its folder."""
        if (self.data / "postmaster.pid").exists():
            try:
                self.stop("immediate")
            except RuntimeError:
                pass  # already gone: the folder goes anyway
        shutil.rmtree(self.folder, ignore_errors=True)

    def log_tail(self) -> str:
        try:
            return (self.folder / "log").read_text(errors="replace")[-600:]
        except OSError:
            return ""
