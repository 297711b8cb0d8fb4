"""The journal key, the seals it makes and the anchor kept outside the store.

- The key: 32 random bytes (``secrets.token_bytes``), written as 64 hex digits and a newline in a file created
  new with mode 0600 (``crisscross journal init-key``; its path is ``journal_key`` in table.yaml). A key file
  that group or others may read or write is refused, as is any other content.
- A seal: HMAC-SHA256 (RFC 2104, ``hmac``) with the key over a label and the fields it vouches for, joined
  by ``\\n``: ``seal`` + seq + chain head at the end of every commit; ``checkpoint`` + seq + head + the
  canonical text of the machine's state; ``anchor`` + seq + head. Without the key nobody can make one, so an
  edit re-chained to the end, a record appended or a forged checkpoint shows.
- The anchor: the chain head of the last checkpoint (``{"seq", "head", "mac"}``) in ``<store>.anchor``,
  replaced atomically (write, fsync, rename, fsync of the folder) at each checkpoint. A store shorter than its
  anchor, or with another record at the anchor's seq, was cut from the end or rewritten.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

KEY_BYTES = 32


class JournalKeyError(ValueError):
    """A key file that cannot be used: the message names the file and what is wrong."""


def fsync_folder(folder: Path) -> None:
    """fsync the folder ``folder``, so that a file just created or renamed in it keeps its name after a power cut."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def init_key(path: Path) -> None:
    """Create a new key file at ``path`` (mode 0600, never over an existing file or through a symbolic link;
    the folder is fsynced). Raises ``JournalKeyError`` when ``path`` exists and ``OSError`` when it cannot be written."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise JournalKeyError(f"{path}: exists; a journal key is never replaced (the journal sealed with it would no "
                        f"longer verify)") from None
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_bytes(KEY_BYTES).hex() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    fsync_folder(path.parent)


def read_owner_only(path: Path, what: str, limit: int = 200) -> bytes:
    """The first ``limit`` bytes of the file at ``path``, a secret (``what`` names it in messages), never through
    a symbolic link. Raises ``OSError`` when it cannot be opened (``FileNotFoundError`` when absent) and
    ``JournalKeyError`` for a file that is not a regular file or that group or others may read or write."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise JournalKeyError(f"{path}: {what} is not a regular file")
        if info.st_mode & 0o077:
            raise JournalKeyError(f"{path}: {what} may be read or written by group or others "
                                  f"(mode {info.st_mode & 0o777:o}): chmod 600 {path}")
        return handle.read(limit)


def load_key(path: Path) -> bytes:
    """Read the key at ``path``. Raises ``JournalKeyError`` for a file that is missing, not a regular file, that
    group or others may read or write (chmod 600 fixes it), or that does not hold 64 hex digits."""
    path = Path(path)
    try:
        text = read_owner_only(path, "the journal key")
    except FileNotFoundError:
        raise JournalKeyError(f"{path}: no journal key (create it with crisscross journal init-key)") from None
    except OSError as exc:
        raise JournalKeyError(f"{path}: cannot read the journal key: {exc.strerror or exc}") from None
    try:
        key = bytes.fromhex(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise JournalKeyError(f"{path}: not a journal key (expected {2 * KEY_BYTES} hex digits)")
    return key


def key_id(key: bytes) -> str:
    """A name for ``key`` kept in the store (the first 16 hex digits of SHA-256 over a label and the key):
    it tells which key sealed a journal and reveals nothing that makes a seal."""
    return hashlib.sha256(b"crisscross journal key id\n" + key).hexdigest()[:16]


def mac(key: bytes, label: str, *parts: Any) -> str:
    """HMAC-SHA256 (hex) with ``key`` over ``label`` and ``parts`` joined by newlines (module docstring)."""
    message = "\n".join([label, *map(str, parts)]).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def beside(store: Path, extension: str) -> Path:
    """A file kept beside the store at ``store``: ``<store><extension>`` (``.anchor``, ``.lock``), beside the
    store's real file when ``store`` is reached through a symbolic link (as SQLite keeps its WAL), so that every
    name of one store has the same lock and anchor."""
    real = Path(os.path.realpath(store))
    return real.with_name(real.name + extension)


def anchor_path(store: Path) -> Path:
    """Where the anchor of the store at ``store`` is kept: ``<store>.anchor``."""
    return beside(store, ".anchor")


def write_anchor(path: Path, seq: int, head: str, key: bytes | None, *, fsync: bool = True) -> None:
    """Replace the anchor at ``path`` atomically by ``seq``/``head`` (sealed when there is a ``key``).
    Raises ``OSError`` when it cannot be written."""
    path = Path(path)
    anchor = {"seq": seq, "head": head, "mac": mac(key, "anchor", seq, head) if key else None}
    temporary = path.with_name(path.name + ".new")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps(anchor, sort_keys=True, separators=(",", ":")) + "\n")
        handle.flush()
        if fsync:
            os.fsync(handle.fileno())
    os.replace(temporary, path)
    if fsync:
        fsync_folder(path.parent)


def read_anchor(path: Path) -> dict[str, Any] | None:
    """The anchor at ``path``, or None when there is none. An unreadable anchor is returned as
    ``{"problem": ...}`` (``check_anchor`` reports it)."""
    try:
        text = Path(path).read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        return {"problem": f"anchor {path}: cannot read it: {exc}"}
    try:
        anchor = json.loads(text)
        if not (isinstance(anchor, dict) and isinstance(anchor.get("seq"), int) and isinstance(anchor.get("head"), str)):
            raise ValueError
    except ValueError:
        return {"problem": f"anchor {path}: not an anchor"}
    return anchor


def check_anchor(anchor: dict[str, Any], hash_at: Callable[[int], str | None], last_seq: int,
                 key: bytes | None) -> str | None:
    """What is wrong with the journal against ``anchor`` (``read_anchor``), or None. ``hash_at(seq)`` gives the
    hash of the journal's record ``seq`` (None when it has none); ``last_seq`` its last record. With ``key``
    the anchor's own seal is checked too."""
    if "problem" in anchor:
        return anchor["problem"]
    seq, head = anchor["seq"], anchor["head"]
    if key is not None and anchor.get("mac") != mac(key, "anchor", seq, head):
        return f"the anchor (seq {seq}) does not carry the key's seal (altered or forged)"
    if last_seq < seq:
        return (f"truncated: the journal ends at record {last_seq}, its anchor was written at record {seq} "
                f"(records cut from the end)")
    if hash_at(seq) != head:
        return f"record {seq} is not the record the anchor holds (the journal was rewritten)"
    return None
