"""Signing in to an HTTP interface of ours by the operators file (docs/control.md, "Turning it on" and "Limits"):
the control interface (``controller.control.server``) and the pit page (``controller.floor.serve``) use this one
module, so both read the file, check passwords, throttle failures and refuse a foreign ``Host`` alike.

- ``SignIn``: the operators file (``controller.control.operators``) read again whenever its content or mode
  changes, failing closed (a refused file gives nobody any right until it is mended); the password checks
  (PBKDF2) on a thread of their own at a lower priority, ``max_checks`` at once; failed sign-ins throttled per
  user and per client (a loopback client by its account: ``throttle_keys``); a credential verified before served
  without a check.
- ``authenticate_request``: the operator of a request's HTTP Basic credentials, else 401, 429 or 503.
- ``require_supervisor``: 403 unless the operator is a supervisor (domain.md, "Roles").
- ``accepts_host``: whether a request's ``Host`` names the interface (DNS rebinding: RFC 9110 7.4's 421); the
  rule is ``controller.service.hosts``', which the metrics port follows too.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import ipaddress
import logging
import os
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from pathlib import Path
from typing import Any

from controller.control.checks import HTTPError
from controller.control.peer import loopback_owner
from controller.control.operators import (FailureThrottle, Operator, authenticate, load_operators, needs_rehash,
                                          password_bytes, rehash_operator, roster)
from controller.service.hosts import accepts_host  # noqa: F401 (the interfaces' Host rule, re-exported)
from controller.settings.files import ConfigError
from controller.settings.secret_files import read_regular

log = logging.getLogger("controller.control.server")

#: Most password checks (PBKDF2, ``controller.control.operators``) running at once, each on the interface's own
#: password-check thread at a lower priority (nice ``CHECK_NICENESS``); one more is answered 503 at once.
#: Each check takes a core for about 0.15 s: two at once on two cores took both from the controller thread
#: (rounds per minute fell to 0.045x under ten guessing clients). Failed sign-ins are throttled
#: (``operators.FailureThrottle``), and a credential verified before is served without a check.
MAX_CHECKS = 1
#: Niceness added to the password-check threads (Linux: a thread's own priority, setpriority on its id).
CHECK_NICENESS = 10


def _lower_priority() -> None:
    """Lower the calling thread's priority by ``CHECK_NICENESS`` (Linux: setpriority on the thread's id); where
    that is not possible the thread keeps the process's priority, and a check is still one at a time."""
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + CHECK_NICENESS))
    except (AttributeError, OSError) as exc:
        log.info("password checks keep the process's priority: %s", exc)


class SignIn:
    """Who may sign in to an interface (module docstring). ``operators_path``: the operators file (None: no
    file, nobody); ``what``: the interface's name in log lines and answers (``control interface``, ``pit
    page``); ``max_checks``: password checks at once (``checks``, a semaphore taken without waiting, on the
    ``checker`` threads). ``throttle`` and the credentials known belong to the interface's event loop;
    ``operators()`` may be called from any thread. ``close_checks`` ends the checks' threads. ``on_change`` is
    called with the new ``operators.roster`` and its previous one whenever a read of the file finds other
    operators or roles (a file refused gives none), on the thread that read it: it must not block."""

    def __init__(self, operators_path: Path | None, what: str, max_checks: int = MAX_CHECKS, *,
                 on_change: Callable[[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]], None] | None = None
                 ) -> None:
        self.what = what
        self.max_checks = max_checks
        self.checks = threading.BoundedSemaphore(max_checks)
        #: the password checks' own threads, at a lower priority than the rest of the process
        self.checker = ThreadPoolExecutor(max_checks, "password-check", initializer=_lower_priority)
        #: failed sign-ins per user and per client (the loop's thread owns it)
        self.throttle = FailureThrottle()
        #: user -> (keyed digest of a password verified, the stored hash it was verified against); the loop's
        #: thread owns it. The key is this process's own: the digests say nothing outside it.
        self._known: dict[str, tuple[bytes, str]] = {}
        self._known_key = secrets.token_bytes(32)
        self.operators_path = operators_path
        self._operators: dict[str, Operator] = load_operators(operators_path) if operators_path else {}
        self._operators_stamp = self._stamp()
        self._operators_lock = threading.Lock()
        self.on_change = on_change
        #: who may act as last read (``operators.roster``): a read with another calls ``on_change``
        self.roster = roster(self._operators)
        #: why the operators file is refused now (None: it is not), said in each refusal and in the log
        self.operators_refused: str | None = None

    def close_checks(self) -> None:
        """Wait for a check running and end the checks' threads."""
        self.checker.shutdown(wait=True)

    def check_password(self, user: str, password: str) -> Operator | None:
        """``authenticate`` against the operators file as it is now (on a password-check thread; the caller holds
        one of ``checks``' places), then the file is read again: a user removed or changed while the hash ran is
        refused (None). A user whose hash has fewer than ``operators.ITERATIONS`` iterations has it rewritten at
        the current count (a failure to write is logged, the sign-in stands); the operator returned is the
        file's entry after it."""
        operator = authenticate(self.operators(), user, password)
        if operator is None or self.operators().get(user) != operator:  # removed or changed during the hash
            return None
        if needs_rehash(operator) and self.operators_path is not None:
            try:
                if rehash_operator(self.operators_path, operator, password):
                    log.info("%s: the password hash of %s rewritten at the current iteration count", self.what,
                             operator.name)
            except (ConfigError, OSError) as exc:
                log.warning("%s: the password hash of %s could not be rewritten: %s", self.what, operator.name, exc)
            operator = self.operators().get(user)
        return operator

    def known(self, user: str, password: str) -> Operator | None:
        """The operator ``user`` when ``password`` is one verified for them before and the operators file still
        holds the hash it was verified against (no PBKDF2: a known good credential is served during a flood of
        wrong ones); else None. On the loop's thread."""
        kept = self._known.get(user)
        operator = self.operators().get(user)
        if kept is None or operator is None or operator.password != kept[1]:
            return None
        return operator if hmac.compare_digest(kept[0], self._digest(user, password)) else None

    def remember(self, operator: Operator, password: str) -> None:
        """``password`` was just verified for ``operator`` (on the loop's thread)."""
        self._known[operator.name] = (self._digest(operator.name, password), operator.password)

    def _digest(self, user: str, password: str) -> bytes:
        return hmac.new(self._known_key, f"{user}:".encode("utf-8") + password_bytes(password), hashlib.sha256).digest()

    def operators(self) -> dict[str, Operator]:
        """The operators as the file says now: read again whenever its content or mode changed (compared in
        full, not by modification time). It grants rights, so a reload fails closed: a file that is refused
        (malformed, or readable by others) or unreadable gives no operators at all until it is mended, and a
        user removed from the file loses access at the next request."""
        with self._operators_lock:
            stamp = self._stamp()
            if stamp != self._operators_stamp and self.operators_path is not None:
                try:
                    self._operators = load_operators(self.operators_path)
                    self.operators_refused = None
                    log.info("%s: operators read again from %s", self.what, self.operators_path)
                except (ConfigError, OSError) as exc:
                    log.error("%s: %s; every sign-in is refused until the file is mended", self.what, exc)
                    self._operators = {}
                    self.operators_refused = str(exc)
                self._operators_stamp = stamp
                now, before = roster(self._operators), self.roster
                self.roster = now
                if now != before and self.on_change is not None:
                    self.on_change(now, before)
            return self._operators

    def operators_identity(self) -> tuple[int, ...] | str | None:
        """What says, without reading it, that the operators file may have changed: its device, inode, size,
        modification time (ns) and mode (None when there is no file, the error's text when it cannot be
        looked at). A change is always a new identity: ``save_operators`` renames a new file in (a new inode),
        and an edit in place moves the modification time."""
        if self.operators_path is None:
            return None
        try:
            found = os.stat(self.operators_path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return str(exc)
        return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_mode

    def _stamp(self) -> tuple[int, bytes] | str | None:
        """The operators file's mode and content (None when absent, the error's text when unreadable, or not a
        regular file: ``read_regular`` opens nothing else, so a pipe put in its place is refused at once, never
        waited on by the interface's loop)."""
        if self.operators_path is None:
            return None
        try:
            content, found = read_regular(self.operators_path, 1 << 20, follow=True)
            return found.st_mode, content
        except FileNotFoundError:
            return None
        except OSError as exc:
            return str(exc)


def throttle_keys(user: str, client: str, owner: int | None = None) -> tuple[str, ...]:
    """The keys a failed sign-in of ``user`` from the address ``client`` counts against (``FailureThrottle``): the
    user's, and the client's: its address, or for a loopback client whose socket's owner is known (``owner``, a
    user id: ``controller.control.peer.loopback_owner``) that account. Every process of the table's PC signs in
    from loopback: counted by address as one client, one process failing sign-ins under made-up names kept every
    operator not yet signed in out (429), and counted by name alone it kept the one password check busy (503).
    Counted by account, it keeps out its own account only (docs/control.md, "Limits")."""
    try:
        loopback = ipaddress.ip_address(client).is_loopback
    except ValueError:  # not an address (no client known, a socket path): counted as given
        loopback = False
    return (f"user {user}", f"client uid {owner}" if loopback and owner is not None else f"client {client}")


async def authenticate_request(request: Any, gate: SignIn) -> Operator:
    """The operator of the request's HTTP Basic credentials, else 401 (its message names the cause: wrong
    credentials, no operators, or an operators file refused and why: then no password is checked and no failure
    counted); 429 while failed sign-ins of that user or that client wait out their delay
    (``operators.FailureThrottle``; a loopback client counted by the account it runs under: ``throttle_keys``);
    503 when ``gate.max_checks`` password checks already run. A credential verified before is served without a check (``SignIn.known``); otherwise
    the check runs on the gate's password-check thread, off the loop, and the operators file is read again
    after it: a user removed (or changed) while their check ran is refused. ``request``: Starlette's."""
    challenge = {"WWW-Authenticate": 'Basic realm="crisscross", charset="UTF-8"'}
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    user, operator, sep, password = "", None, "", ""
    if scheme.lower() == "basic":
        try:
            user, sep, password = base64.b64decode(token.strip(), validate=True).decode("utf-8").partition(":")
        except ValueError:  # not base64 (non-ASCII bytes too), or not UTF-8
            sep = ""
    client = request.client.host if request.client else "?"
    what = gate.what
    if sep:
        operator = gate.known(user, password)
    if sep and operator is None and gate.operators():  # none (or a file refused): refused below, not a guess
        server = request.scope.get("server")
        owner = loopback_owner(tuple(request.client), tuple(server)) if request.client and server else None
        keys = throttle_keys(user, client, owner)
        wait = gate.throttle.wait(*keys)
        if wait > 0:
            log.warning("%s: sign-in of user %r from %s refused: failed sign-ins wait %.0f s more", what, user[:40],
                        client, wait)
            raise HTTPError(HTTPStatus.TOO_MANY_REQUESTS, f"too many failed sign-ins; try again in {wait:.0f} s",
                            {"Retry-After": str(max(1, round(wait)))})
        if not gate.checks.acquire(blocking=False):
            log.warning("%s: %d password checks already running; refused a check for user %r from %s", what,
                        gate.max_checks, user[:40], client)
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, f"{gate.max_checks} password checks already running; "
                                                            f"try again in a second", {"Retry-After": "1"})
        try:
            checked = await asyncio.get_running_loop().run_in_executor(gate.checker, gate.check_password, user,
                                                                       password)
        finally:
            gate.checks.release()
        if checked is not None and gate.operators().get(checked.name) == checked:
            operator = checked
            gate.remember(checked, password)
            gate.throttle.succeeded(keys[0])
        else:
            gate.throttle.failed(*keys)
    if operator is None:
        gate.operators()  # read again: the file may have been refused or emptied while a check ran
        if gate.operators_refused:
            log.warning("%s: sign-in of user %r from %s refused: the operators file is refused: %s", what,
                        user[:40], client, gate.operators_refused)
            raise HTTPError(HTTPStatus.UNAUTHORIZED, f"the operators file is refused: {gate.operators_refused}; "
                                                     f"every sign-in is refused until it is mended", challenge)
        if not gate.operators():
            log.warning("%s: sign-in of user %r from %s refused: no operators in %s", what, user[:40], client,
                        gate.operators_path)
            raise HTTPError(HTTPStatus.UNAUTHORIZED, f"no operators in {gate.operators_path}: add one with "
                                                     f"`crisscross operator add` (or mend the file)", challenge)
        log.warning("%s: refused credentials for user %r from %s", what, user[:40], client)
        raise HTTPError(HTTPStatus.UNAUTHORIZED, "valid operator credentials required (HTTP Basic)", challenge)
    return operator


def require_supervisor(operator: Operator, what: str) -> None:
    """403 unless ``operator`` has the role supervisor (domain.md, "Roles"; ``inputs.SUPERVISOR_ACTIONS``):
    the one answer of an interface to a role that may not do ``what``."""
    if operator.role != "supervisor":
        raise HTTPError(HTTPStatus.FORBIDDEN, f"{what} needs a supervisor; user {operator.name} has the role "
                                              f"{operator.role}")
