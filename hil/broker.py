"""A Mosquitto broker of its own for the tests and the floor's scale test: a free loopback port, a temporary
configuration (anonymous clients, or only ``users`` with their passwords; an ACL file with ``acl``; TLS with
``tls``; persistence in its folder so a restart keeps durable sessions) and a log.

``Broker.start`` runs ``mosquitto -c CONFIG`` and waits until the port accepts connections; ``stop`` ends it
with SIGTERM (Mosquitto saves its persistence file on the way out) and ``restart`` stops and starts it on the
same port. Raises ``BrokerMissing`` when no ``mosquitto`` is installed (``apt-get install mosquitto``).
"""

from __future__ import annotations

import getpass
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

#: Where Debian installs the broker (not on a normal user's PATH).
CANDIDATES = ("mosquitto", "/usr/sbin/mosquitto")


class BrokerMissing(RuntimeError):
    """No ``mosquitto`` executable on this machine."""


def find_mosquitto() -> str | None:
    """The path of the ``mosquitto`` executable, or None."""
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


#: Where the kernel keeps the range of the ports it gives outgoing connections (Linux).
PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, below the kernel's range of ports for outgoing connections when it can
    be read (Linux: ``PORT_RANGE``, 32768-60999 by default): a broker restarted on its port (``restart``) finds it
    free, where a port of that range may meanwhile be the local end of another process's connection (mosquitto:
    "Address already in use"). Elsewhere, any free port."""
    try:
        low = int(PORT_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 0
    if low > 11000:
        for port in random.Random().sample(range(10000, low), 200):
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Broker:
    """One Mosquitto on 127.0.0.1 (module docstring); ``folder`` holds its configuration, persistence and log.
    ``max_queued``: Mosquitto's ``max_queued_messages``, the messages it queues for a client beyond those in
    flight before it drops the rest (0: no bound, the default here; Mosquitto's own default is 1000)."""

    def __init__(self, folder: Path, port: int | None = None, *, tls: tuple[Path, Path] | None = None,
                 users: dict[str, str] | None = None, acl: str | None = None, extra: str = "",
                 max_queued: int = 0) -> None:
        self.executable = find_mosquitto()
        if self.executable is None:
            raise BrokerMissing("mosquitto is not installed (apt-get install mosquitto)")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.config = self.folder / "mosquitto.conf"
        security = "allow_anonymous true\n"
        if tls is not None:  # (certificate chain, key) in PEM
            security += f"certfile {tls[0]}\nkeyfile {tls[1]}\n"
        if users is not None:  # only these users, with their passwords (hashed by mosquitto_passwd)
            passwords = self.folder / "passwords"
            passwords.write_text("".join(f"{user}:{password}\n" for user, password in users.items()))
            passwords.chmod(0o600)
            subprocess.run([shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd", "-U", str(passwords)],
                           check=True, capture_output=True)
            security = security.replace("allow_anonymous true", "allow_anonymous false") + \
                f"password_file {passwords}\n"
        if acl is not None:  # an ACL file's text (``acl_file``): who may read and write which topics
            (self.folder / "acl").write_text(acl)
            security += f"acl_file {self.folder / 'acl'}\n"
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\n{security}persistence true\n"
            f"user {getpass.getuser()}\n"  # as root it would run as mosquitto, who cannot write this folder
            f"persistence_location {self.folder}/\nlog_dest file {self.folder}/mosquitto.log\n"
            f"max_queued_messages {max_queued}\nmax_inflight_messages 0\nset_tcp_nodelay true\n"
            + extra)  # extra: more lines
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 10.0) -> None:
        """Start the broker and wait until its port accepts a connection. Raises ``RuntimeError`` when it exits
        or does not listen within ``timeout`` seconds (its log's tail in the message)."""
        self.process = subprocess.Popen([self.executable, "-c", str(self.config)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited ({self.process.returncode}): {self.process.stderr.read()!r} "
                                   f"{self._log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"mosquitto did not listen on {self.port} within {timeout} s: {self._log_tail()}")

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL after 10 s)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stderr.close()
        self.process = None

    def restart(self, down: float = 0.0) -> None:
        """Stop, stay down ``down`` seconds, start again on the same port."""
        self.stop()
        time.sleep(down)
        self.start()

    def _log_tail(self) -> str:
        try:
            return (self.folder / "mosquitto.log").read_text()[-600:]
        except OSError:
            return ""
