"""Operators of the control interface: who may act, in which role, and how their passwords are kept.

The operators file (YAML, ``control.operators`` in ``table.yaml``) maps each user name to a role (``dealer`` or
``supervisor``, ``controller.round.inputs.ROLES``) and a salted password hash::

    operators:
      alice: {role: supervisor, password: "pbkdf2_sha256$600000$<salt, base64>$<hash, base64>"}

The hash is PBKDF2-HMAC-SHA256 with a per-user random salt of 16 bytes and ``ITERATIONS`` iterations (the
OWASP password storage recommendation for PBKDF2-HMAC-SHA256); a file whose hash has fewer than
``MIN_ITERATIONS`` is refused, and a hash of fewer than ``ITERATIONS`` is rewritten at the user's next
sign-in (``rehash_operator``). What is hashed is the password in Unicode NFC, in UTF-8 (``password_bytes``; NIST
SP 800-63B, 5.1.1.2), so an accent typed composed or decomposed is one password. Passwords are compared with
``hmac.compare_digest``; every check costs the same work whatever the name (``authenticate``), so the answer time
does not tell which names exist; failed sign-ins are throttled per user and per client (``FailureThrottle``). The
file is written with mode 0600 (``save_operators``): the hashes are salted, but nobody else needs to read them.
Roles (domain.md, "Roles"): voiding a round, clearing a fault and acknowledging past-posting need a
supervisor; the round machine enforces it (``controller.round.machine``), this module only says who someone is.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import errno
import fcntl
import hashlib
import hmac
import os
import secrets
import tempfile
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from controller.round.inputs import ROLES, USER_NAME
from controller.settings.files import ConfigError, EmptyFile, check_keys, error, line_of, load_yaml
from controller.settings.secret_files import shared_rights
from controller.settings.text import path_shown

#: PBKDF2-HMAC-SHA256 iterations of a new hash (OWASP Password Storage Cheat Sheet, 2023).
ITERATIONS = 600_000
#: Fewest iterations accepted in an operators file.
MIN_ITERATIONS = 200_000
#: Most iterations accepted in an operators file: every sign-in costs the most iterations of any hash in the file
#: (``authenticate``), so one hash of a billion iterations would hold every sign-in for minutes (and a count past
#: C's ``int`` fails inside ``hashlib``); ten times a new hash's, a few seconds on a table PC.
MAX_ITERATIONS = 10 * ITERATIONS
#: The scheme name that starts every stored hash.
SCHEME = "pbkdf2_sha256"
#: User names (``controller.round.inputs.USER_NAME``).
NAME_PATTERN = USER_NAME
#: Shortest password accepted by ``crisscross operator add`` (characters of its NFC form: ``password_length``).
MIN_PASSWORD = 8
#: Longest password accepted (characters of its NFC form): a sign-in's body holds at most ``checks.MAX_BODY``
#: (4,096) bytes, so a longer one could never be given; ``crisscross operator add`` reads no more from its
#: standard input.
MAX_PASSWORD = 1024
#: Why a password longer than ``MAX_PASSWORD`` is refused.
TOO_LONG = f"the password must have at most {MAX_PASSWORD:,} characters (a sign-in carries no more)"


@dataclass(frozen=True)
class Operator:
    """One user of the control interface: ``name``, ``role`` (one of ``ROLES``) and the stored ``password``
    hash (``pbkdf2_sha256$iterations$salt$hash``, salt and hash in base64)."""

    name: str
    role: str
    password: str


def roster(operators: dict[str, Operator]) -> tuple[tuple[str, str], ...]:
    """Who may act, and as what: every ``(name, role)`` of ``operators``, sorted by name (no password hash)."""
    return tuple(sorted((operator.name, operator.role) for operator in operators.values()))


def password_bytes(password: str) -> bytes:
    """What is hashed of ``password``, at ``operator add`` and at every check: its Unicode NFC form
    (``unicodedata.normalize``) in UTF-8. NIST SP 800-63B, section 5.1.1.2: passwords SHOULD be normalized with
    NFKC or NFC before hashing; NFC keeps characters that NFKC would fold (a superscript two stays one). An
    accented letter typed as one code point or as a letter and a combining accent is then one password, and a
    password already in NFC (every ASCII one) gives the bytes it always gave, so stored hashes stay valid."""
    return unicodedata.normalize("NFC", password).encode("utf-8")


def password_length(password: str) -> int:
    """The length of ``password`` as its rules count it (``MIN_PASSWORD``, ``MAX_PASSWORD``): the characters of
    its NFC form, the form that is hashed (``password_bytes``), so that an "é" typed as an "e" and a combining
    accent is one character, as it is one when typed as one code point."""
    return len(unicodedata.normalize("NFC", password))


def hash_password(password: str, *, iterations: int = ITERATIONS, salt: bytes | None = None) -> str:
    """The stored form of ``password``: ``pbkdf2_sha256$<iterations>$<salt b64>$<hash b64>`` with a fresh
    16-byte salt unless one is given; the password hashed in NFC (``password_bytes``). Raises ``ValueError`` for
    fewer than ``MIN_ITERATIONS`` or more than ``MAX_ITERATIONS`` iterations."""
    _check_iterations(iterations)
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", password_bytes(password), salt, iterations)
    return f"{SCHEME}${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def _check_iterations(iterations: int) -> None:
    """Raise ``ValueError`` for an iteration count outside ``MIN_ITERATIONS``-``MAX_ITERATIONS``."""
    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise ValueError(f"{iterations} iterations: between {MIN_ITERATIONS} and {MAX_ITERATIONS} are accepted")


def _parse_hash(stored: str) -> tuple[int, bytes, bytes]:
    """(iterations, salt, digest) of a stored hash; raises ``ValueError`` saying what is wrong (never the hash)."""
    parts = stored.split("$") if isinstance(stored, str) else []
    if len(parts) != 4 or parts[0] != SCHEME:
        raise ValueError(f"expected {SCHEME}$<iterations>$<salt>$<hash>")
    try:
        iterations = int(parts[1])
        salt, digest = base64.b64decode(parts[2], validate=True), base64.b64decode(parts[3], validate=True)
    except ValueError:
        raise ValueError("iterations, salt or hash unreadable") from None
    _check_iterations(iterations)
    if len(salt) < 8 or len(digest) != 32:
        raise ValueError("salt shorter than 8 bytes or hash not 32 bytes")
    return iterations, salt, digest


def verify_password(password: str, stored: str) -> bool:
    """True when ``password`` (in NFC: ``password_bytes``) matches the stored hash (constant-time comparison,
    ``hmac.compare_digest``). Raises ``ValueError`` for a stored hash that cannot be read (``_parse_hash``)."""
    iterations, salt, digest = _parse_hash(stored)
    candidate = hashlib.pbkdf2_hmac("sha256", password_bytes(password), salt, iterations)
    return hmac.compare_digest(candidate, digest)


#: Compared against when the user name is unknown (``authenticate``), so that an unknown name costs as much as a
#: wrong password: a well-formed hash (checking it costs one PBKDF2 like a real one) whose digest, all zeros, no
#: password is known to have. Written out rather than hashed at import: that would cost every process that
#: imports this module (``crisscross settle``, ``run``) a third of a second.


def _iterations(stored: str) -> int:
    """The iteration count of a stored hash (0 when it cannot be read: ``load_operators`` refuses such a file)."""
    try:
        return _parse_hash(stored)[0]
    except ValueError:
        return 0


def authenticate(operators: dict[str, Operator], user: str, password: str) -> Operator | None:
    """The operator ``user`` if ``password`` is theirs, else None (unknown name or wrong password alike).

    Every call costs the same PBKDF2 work whatever the name: ``max(ITERATIONS, the most iterations of any hash
    in operators)``. An unknown name is checked against a dummy hash of that many iterations; a user whose hash
    has fewer is checked, then the rest of the work is done on the dummy (a user at ``MIN_ITERATIONS`` once
    answered three times faster than an unknown name, which told which names exist)."""
    work = max([ITERATIONS, *(_iterations(op.password) for op in operators.values())])
    operator = operators.get(user)
    if operator is None:
        verify_password(password, _dummy(work))
        return None
    ok = verify_password(password, operator.password)
    rest = work - _iterations(operator.password)
    if rest > 0:
        hashlib.pbkdf2_hmac("sha256", password_bytes(password), bytes(16), rest)  # the same work as the others
    return operator if ok else None


def _dummy(iterations: int) -> str:
    """The dummy hash of ``iterations`` (see the comment above ``authenticate``)."""
    return f"{SCHEME}${iterations}${base64.b64encode(bytes(16)).decode()}${base64.b64encode(bytes(32)).decode()}"


def needs_rehash(operator: Operator) -> bool:
    """True when ``operator``'s hash has fewer than ``ITERATIONS`` iterations (rehashed at their next sign-in)."""
    return _iterations(operator.password) < ITERATIONS


def rehash_operator(path: Path, operator: Operator, password: str) -> bool:
    """Write ``operator``'s ``password`` (just verified) hashed with ``ITERATIONS`` into the operators file at
    ``path`` (rewritten atomically, mode 0600), when the file still holds the hash it was verified against;
    False when it changed meanwhile (nothing written). The password is hashed first, then the file is held for
    the change (``editing``), as ``operator add`` and ``remove`` hold it: a user removed meanwhile is never
    written back. A change in progress is not waited for (``BlockingIOError``: left for a later sign-in), so that
    neither a sign-in nor the interface's stop waits behind an ``operator add`` held up. Raises ``ConfigError``
    for a file that does not load, ``OSError`` when it cannot be written."""
    hashed = hash_password(password)  # the slow part, before the file is taken
    with editing(path, wait=False):
        operators = load_operators(path)
        if operators.get(operator.name) != operator:
            return False
        operators[operator.name] = Operator(operator.name, operator.role, hashed)
        save_operators(path, operators)
    return True


class FailureThrottle:
    """Failed sign-ins counted per key (a user name, a client address) with a growing delay: after
    ``free`` failures in a row, each one more makes the key wait ``base`` seconds, doubled at each failure up to
    ``most`` (OWASP Authentication Cheat Sheet, "Login throttling"). A success forgets the key's failures.
    At most ``keys`` keys are remembered (the oldest is forgotten first). ``clock`` gives seconds (monotonic).
    Owned by one thread (the control interface's event loop)."""

    def __init__(self, *, free: int = 3, base: float = 1.0, most: float = 60.0, keys: int = 4096,
                 clock: Any = None) -> None:
        self.free, self.base, self.most, self.keys = free, base, most, keys
        self.clock = clock or time.monotonic
        self._failures: collections.OrderedDict[str, tuple[int, float]] = collections.OrderedDict()

    def wait(self, *keys: str) -> float:
        """Seconds until every one of ``keys`` may try again (0: now)."""
        now = self.clock()
        return max([0.0, *(self._failures[k][1] - now for k in keys if k in self._failures)])

    def failed(self, *keys: str) -> None:
        """One more failure of each of ``keys``."""
        now = self.clock()
        for key in keys:
            count = self._failures.pop(key, (0, now))[0] + 1
            delay = 0.0 if count <= self.free else min(self.most, self.base * 2 ** (count - self.free - 1))
            self._failures[key] = (count, now + delay)
            while len(self._failures) > self.keys:
                self._failures.popitem(last=False)

    def succeeded(self, key: str) -> None:
        """``key`` signed in: its failures are forgotten."""
        self._failures.pop(key, None)


def load_operators(path: Path) -> dict[str, Operator]:
    """Read an operators file (module docstring); an absent file has no operators.

    Raises ``ConfigError`` naming the file, the line and the user for an empty file (no document: it says so, and
    how to write the first user), malformed YAML, ``operators`` that is not a mapping, an unknown key, a bad name, an unknown role or a password entry that is not a ``pbkdf2_sha256``
    hash of at least ``MIN_ITERATIONS`` iterations; and for a file that others may read or write (the hashes
    are the owner's only, as ``save_operators`` writes them: mode 0600).
    """
    path = Path(path)
    if not path.exists():
        return {}
    mode = path.stat().st_mode & 0o777
    if path.is_file() and (shared := shared_rights(mode)):
        shown = path_shown(path)
        raise ConfigError(f"{shown}: the operators file: {shared} (mode {mode:04o}): it holds the password hashes; "
                          f"chmod 600 {shown}")
    try:
        data = load_yaml(path)
    except EmptyFile as exc:  # what the file must hold, and that ``operator add`` writes it once it is gone
        raise ConfigError(f"{exc}; an operators file holds `operators:` with each user under it: remove the empty "
                          f"file and add the first user with `crisscross operator add NAME --role ROLE --file "
                          f"{path_shown(path)}`") from None
    check_keys(path, "top level", data, {"operators"})
    entries = {} if data["operators"] is None else data["operators"]  # ``operators:`` left empty: no one yet
    if not isinstance(entries, dict):
        raise error(path, "operators", f"expected a mapping of user names, got {type(entries).__name__}",
                    line_of(data, "operators"))
    operators = {}
    for name, entry in entries.items():
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise error(path, "operators", f"{name!r} is not a user name (letters, digits, . _ -; 1-40)",
                        line_of(entries, name))
        check_keys(path, f"operators.{name}", entry, {"role", "password"})
        if entry["role"] not in ROLES:
            raise error(path, f"operators.{name}.role", f"{entry['role']!r} is not one of {', '.join(ROLES)}",
                        line_of(entry, "role"))
        try:
            _parse_hash(entry["password"])
        except ValueError as exc:
            raise error(path, f"operators.{name}.password", str(exc), line_of(entry, "password")) from None
        operators[name] = Operator(name, entry["role"], entry["password"])
    return operators


def save_operators(path: Path, operators: dict[str, Operator]) -> None:
    """Write the operators file atomically (a temporary file in the same folder, then renamed) with mode 0600.

    Raises ``OSError`` when the folder cannot be written.
    """
    path = Path(path)
    body: dict[str, Any] = {"operators": {op.name: {"role": op.role, "password": op.password}
                                          for op in sorted(operators.values(), key=lambda o: o.name)}}
    text = ("# Operators of the control interface (docs/control.md). Written by `crisscross operator add`.\n"
            + yaml.safe_dump(body, sort_keys=False, default_flow_style=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # created with mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def no_file(path: Path) -> ConfigError:
    """The error of an operators file at ``path`` that does not exist, where one is needed (``operator list`` and
    ``remove``: a mistyped path is not a table without users)."""
    return ConfigError(f"{path_shown(path)}: no such file: no operators file there (`crisscross operator add` "
                       f"writes it with its first user)")


@contextlib.contextmanager
def editing(path: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold the operators file at ``path`` for one change (read, changed, written): an exclusive ``flock`` of
    ``<file>.lock`` beside it (made with mode 0600, never through a link), waited for while another ``operator
    add`` or ``remove`` holds it, so that no change writes over another's (two adds at once kept one user; a
    remove during an add was undone: the removed user kept their rights). The file itself is replaced whole at
    each change, so the lock is on a name beside it. The lock file is removed as the change ends, whatever its
    end (done, refused, failed), while it is still held: one who waited for it then finds its name gone or
    another file there and takes the lock of the name again, so no two changes ever hold it at once. Without
    ``wait`` a lock held by another change is not waited for: ``BlockingIOError`` (the running interface's own
    rewrite of a hash, which its stop must not wait behind). Raises ``OSError`` when the lock cannot be made."""
    lock = Path(path).with_name(Path(path).name + ".lock")
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                raise BlockingIOError(errno.EWOULDBLOCK, "held by a change of the operators file in progress",
                                      str(lock)) from None
            held = os.fstat(fd)
            try:
                named = os.stat(lock, follow_symlinks=False)
            except FileNotFoundError:
                named = None
        except BaseException:
            os.close(fd)
            raise
        if named is not None and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)  # the lock of a name its holder removed: take the name's again
    try:
        yield
    finally:
        try:
            lock.unlink(missing_ok=True)  # held: no one else removes it or holds it now
        finally:
            os.close(fd)  # the lock goes with the descriptor


def untypable(password: str) -> str | None:
    """The first character of ``password`` that a keyboard does not type and a screen does not show, named with
    its place (``"U+FEFF ZERO WIDTH NO-BREAK SPACE at character 1"``), or None: a control character (Unicode
    category Cc: NUL, the line ends, DEL, C1) or a format character (Cf: the byte-order mark a Windows editor
    writes at a file's start, zero-width and direction marks). A password holding one is accepted by no sign-in
    that a person makes."""
    for place, char in enumerate(password, 1):
        if unicodedata.category(char) in ("Cc", "Cf"):
            return f"U+{ord(char):04X} {unicodedata.name(char, 'a control character')} at character {place}"
    return None


def add_operator(path: Path, name: str, role: str, password: str, *, iterations: int = ITERATIONS) -> bool:
    """Add user ``name`` with ``role`` and ``password`` to the file at ``path``, or replace their entry.

    The password is hashed first, then the file is held for the change (``editing``). Returns True when the
    user was new. Raises ``ValueError`` for a bad name, an unknown role or a password
    shorter than ``MIN_PASSWORD`` or longer than ``MAX_PASSWORD`` (``password_length``: characters of its NFC
    form), or holding a character nobody types at a
    sign-in (``untypable``); ``ConfigError`` for an existing file that does not load; ``OSError``.
    """
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(f"{name!r} is not a user name (letters, digits, . _ -; 1-40 characters)")
    if role not in ROLES:
        raise ValueError(f"role {role!r} is not one of {', '.join(ROLES)}")
    length = password_length(password)
    if length < MIN_PASSWORD:
        raise ValueError(f"the password must have at least {MIN_PASSWORD} characters")
    if length > MAX_PASSWORD:
        raise ValueError(TOO_LONG)
    if (found := untypable(password)) is not None:
        raise ValueError(f"the password holds {found}: nobody could type it at a sign-in (a file saved with a "
                         f"byte-order mark, or a control character in the input?)")
    hashed = hash_password(password, iterations=iterations)  # the slow part, before the file is taken
    with editing(path):
        operators = load_operators(path)
        new = name not in operators
        operators[name] = Operator(name, role, hashed)
        save_operators(path, operators)
    return new


def remove_operator(path: Path, name: str) -> None:
    """Remove user ``name`` from the operators file at ``path`` (rewritten atomically, mode 0600); the control
    interface refuses their next request (it reads the file again at every change). Held for the change
    (``editing``).

    Raises ``ConfigError`` for a file that does not exist (``no_file``: nothing is written, no lock file left)
    or does not load, ``ValueError`` when the file has no such user, ``OSError``.
    """
    if not Path(path).exists():
        raise no_file(path)
    with editing(path):
        if not Path(path).exists():  # removed while another change held it
            raise no_file(path)
        operators = load_operators(path)
        if name not in operators:
            known = ", ".join(sorted(operators)) or "none"
            raise ValueError(f"{path_shown(path)}: no user {name!r} (users: {known})")
        del operators[name]
        save_operators(path, operators)
