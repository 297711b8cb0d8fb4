"""The journal key, the seals it makes and the anchor kept outside the store.

- The key: 32 random bytes (``secrets.token_bytes``), written as 64 hex digits and a newline in a file created
  new with mode 0600 (``crisscross journal init-key``; its path is ``journal_key`` in table.yaml). A key file
  that group or others may read or write is refused, as is any other content.
- A seal: HMAC-SHA256 (RFC 2104, ``hmac``) with the key over a label and the fields it vouches for, joined
  by ``\\n``: ``seal`` + seq + chain head at the end of every commit; ``checkpoint`` + seq + head + the
  canonical text of the machine's state; ``anchor`` + seq + head + the entry's place in the anchor file (0 or 1;
  an entry written before it had its place: ``anchor`` + seq + head). Without the key nobody can make one, so an
  edit re-chained to the end, a record appended or a forged checkpoint shows.
- A checkpoint's digest, in a journal kept without a key: ``sha256:`` and SHA-256 over ``checkpoint`` + seq + head
  + the state's canonical text (``checkpoint_digest``), as the records' own hashes bind them to the chain: an edit
  of the state that does not make its digest again shows, as an edit of a record not re-chained does (anyone can
  make a digest: only the key's seal stops a forger who does). A checkpoint without one was written before
  digests were kept; once one carries a digest, a later one without is altered.
- The anchor: the chain head of the last commit in ``<store>.anchor``, two entries (``anchor_entry``) each
  sealed for its own place, so that the older entry copied over the newer (both then naming the commit before
  the last, which could then be cut) is not an anchor. A store shorter than its anchor, or with another record
  at the anchor's seq, was cut from the end or rewritten.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.journal.record import quote
from controller.settings.secret_files import SecretFileError, read_owner_only, read_regular
from controller.settings.text import path_shown

KEY_BYTES = 32


class JournalKeyError(ValueError):
    """A key file that cannot be used: the message names the file and what is wrong."""


def fsync_folder(folder: Path) -> None:
    """fsync the folder ``folder``, so that a file just created or renamed in it keeps its name after a power cut.
    Raises ``OSError`` naming the folder (one whose file system cannot sync, as /proc, too)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:
        raise OSError(exc.errno, f"{exc.strerror} (a folder whose files cannot be made durable)", str(folder)) \
            from None
    finally:
        os.close(fd)


def init_key(path: Path) -> None:
    """Create a new key file at ``path`` (mode 0600, never over an existing file or through a symbolic link;
    the folder is fsynced). Raises ``JournalKeyError`` when ``path`` exists and ``OSError`` when it cannot be written."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise JournalKeyError(f"{path_shown(path)}: exists; a journal key is never replaced (the journal sealed with "
                              f"it would no longer verify)") from None
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_bytes(KEY_BYTES).hex() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    fsync_folder(path.parent)


def load_key(path: Path) -> bytes:
    """Read the key at ``path``. Raises ``JournalKeyError`` for a file that is missing, not a regular file, that
    group or others may read or write (chmod 600 fixes it), or that does not hold 64 hex digits."""
    path = Path(path)
    try:
        text = read_owner_only(path, "the journal key")
    except SecretFileError as exc:
        raise JournalKeyError(str(exc)) from None
    except FileNotFoundError:
        raise JournalKeyError(f"{path_shown(path)}: no journal key (create it with crisscross journal init-key)") \
            from None
    except OSError as exc:
        raise JournalKeyError(f"{path_shown(path)}: cannot read the journal key: {exc.strerror or exc}") from None
    try:
        key = bytes.fromhex(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise JournalKeyError(f"{path_shown(path)}: not a journal key (expected {2 * KEY_BYTES} hex digits)")
    weak = weakness(key)
    if weak:
        raise JournalKeyError(f"{path_shown(path)}: a trivially weak journal key ({weak}): make a new one with "
                              f"crisscross journal init-key")
    return key


#: Fewest distinct byte values a key may hold: 32 random bytes hold about 30 (fewer than 8 has a probability
#: below 10^-20), a key typed or made up by hand far fewer.
MIN_DISTINCT_BYTES = 8


def weakness(key: bytes) -> str | None:
    """Why ``key`` is trivially weak, or None: all one byte value (32 zero bytes is also HMAC's empty key,
    RFC 2104 s. 2: a key shorter than the block is padded with zeros), fewer than ``MIN_DISTINCT_BYTES``
    distinct values (a short pattern repeated), or bytes counting up or down by a fixed step."""
    if len(set(key)) == 1:
        return f"all {len(key)} bytes are {key[0]:#04x}"
    if len(set(key)) < MIN_DISTINCT_BYTES:
        return f"only {len(set(key))} distinct byte values"
    steps = {(b - a) % 256 for a, b in zip(key, key[1:])}
    if len(steps) == 1:
        return f"its bytes count by {steps.pop()}"
    return None


def key_id(key: bytes) -> str:
    """A name for ``key`` kept in the store (the first 16 hex digits of SHA-256 over a label and the key):
    it tells which key sealed a journal and reveals nothing that makes a seal."""
    return hashlib.sha256(b"crisscross journal key id\n" + key).hexdigest()[:16]


def mac(key: bytes, label: str, *parts: Any) -> str:
    """HMAC-SHA256 (hex) with ``key`` over ``label`` and ``parts`` joined by newlines (module docstring)."""
    message = "\n".join([label, *map(str, parts)]).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


#: The start of a checkpoint's digest (``checkpoint_digest``), which no seal (hex digits alone) has.
DIGEST = "sha256:"


def checkpoint_digest(seq: int, head: str, state: str) -> str:
    """The digest of the checkpoint at record ``seq`` (its chain ``head``, the machine's ``state`` as canonical
    text) in a journal kept without a key (module docstring): ``DIGEST`` + 64 hex digits."""
    return DIGEST + hashlib.sha256("\n".join(["checkpoint", str(seq), head, state]).encode()).hexdigest()


def checkpoint_problem(key: bytes | None, before_key: int, seq: int, head: str, state: str, seal: str | None,
                       digested_before: bool, keyed_store: bool) -> tuple[str, str] | None:
    """Why the checkpoint at record ``seq`` (``head``, ``state`` text, its ``seal``: the ``mac`` column) does not
    hold, as the tampering's kind (``edited``, ``forged``: ``controller.journal.chain.TAMPER_KINDS``) and what
    shows it, or None: with ``key`` (the store is sealed with it; ``before_key`` the seq of its introduction,
    ``key_from``, or -1) one after the introduction must carry the key's seal (a digest or nothing there: forged
    without the key), as must any seal there is; a digest must be the state's (else edited); a checkpoint without
    one after one that carried a digest (``digested_before``), in a part not sealed with the key, lost it
    (altered). Without ``key`` a seal is not checked (the key's holder checks it); in a store never sealed with a
    key (not ``keyed_store``) a checkpoint carries its digest or nothing, and anything else there is altered. The
    rule of both the start (``OpeningChecks``) and ``verify``."""
    if seal is not None and seal.startswith(DIGEST):
        if key is not None and seq > before_key:
            return "forged", "its checkpoint carries a digest where the journal key's seal belongs (written without " \
                             "the key)"
        if seal != checkpoint_digest(seq, head, state):
            return "edited", "its checkpoint's state is not the one its digest was made of"
        return None
    if not keyed_store and seal is not None:
        return "edited", "its checkpoint carries neither its digest nor nothing (a journal without a key seals none)"
    if key is not None and (seal is not None or seq > before_key):
        return None if seal == mac(key, "checkpoint", seq, head, state) else \
            ("forged", "its checkpoint was not sealed with the journal key")
    if seal is None and digested_before:
        return "edited", "its checkpoint carries no digest where the ones before it do"
    return None


def key_from(value: str | None, key: bytes | None) -> int:
    """The seq at which the key was introduced, from the store's ``meta`` ``key_from`` (``"<seq> <hmac>"``); -1
    when there is none or its seal does not match ``key`` (nothing is then taken as written before the key)."""
    seq, _, sealed = (value or "").partition(" ")
    if not key or not seq.isdigit() or sealed != mac(key, "key_from", int(seq)):
        return -1
    return int(seq)


def beside(store: Path, extension: str) -> Path:
    """A file kept beside the store at ``store``: ``<store><extension>`` (``.anchor``, ``.lock``), beside the
    store's real file when ``store`` is reached through a symbolic link (as SQLite keeps its WAL), so that every
    name of one store has the same lock and anchor."""
    real = Path(os.path.realpath(store))
    return real.with_name(real.name + extension)


def anchor_path(store: Path) -> Path:
    """Where the anchor of the store at ``store`` is kept: ``<store>.anchor``."""
    return beside(store, ".anchor")


#: The anchor file: two entries, each ``ANCHOR_ENTRY`` bytes at offset 0 and ``ANCHOR_SLOT`` (each in its own
#: 4 KiB page, so that a torn write of one never touches the other); the newer entry (by seq) is the anchor.
ANCHOR_SLOT = 4096
ANCHOR_ENTRY = 256
ANCHOR_SIZE = ANCHOR_SLOT + ANCHOR_ENTRY


def anchor_entry(seq: int, head: str, key: bytes | None, slot: int) -> bytes:
    """One entry of the anchor file, for its place ``slot`` (0: at offset 0, 1: at ``ANCHOR_SLOT``): ``{"head",
    "key_id", "mac", "seq", "slot", "sum"}`` as JSON, padded with spaces to ``ANCHOR_ENTRY - 1`` bytes and a
    newline. ``key_id``/``mac`` are None without a key (the entry then says the store is not keyed); ``mac`` seals
    the place too (``anchor_mac``): an entry copied to the other place is not one there; ``sum`` (16 hex digits of
    SHA-256 over the entry without it) shows a torn write."""
    named, sealed = (key_id(key), anchor_mac(key, seq, head, slot)) if key else (None, None)
    if type(seq) is int and type(slot) is int and type(head) is str:  # spelled here as json.dumps spells them
        plain = (f'{{"head":{quote(head)},"key_id":{_quoted(named)},"mac":{_quoted(sealed)},"seq":{seq},'
                 f'"slot":{slot}}}')
        total = hashlib.sha256(plain.encode()).hexdigest()[:16]
        text = f'{plain[:-1]},"sum":"{total}"}}'.encode("ascii")
    else:
        body = {"head": head, "key_id": named, "mac": sealed, "seq": seq, "slot": slot}
        body["sum"] = _entry_sum(body)
        text = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("ascii")
    return text.ljust(ANCHOR_ENTRY - 1) + b"\n"


def _quoted(text: str | None) -> str:
    """A string or None as ``json.dumps`` spells it."""
    return "null" if text is None else quote(text)


def anchor_mac(key: bytes, seq: int, head: str, slot: int | None) -> str:
    """The seal of an anchor entry naming ``seq``/``head`` at its place ``slot`` in the anchor file; ``slot`` None
    for an entry written before the place was sealed (and for the one-line anchor before the two entries)."""
    return mac(key, "anchor", seq, head) if slot is None else mac(key, "anchor", seq, head, slot)


def _entry_sum(body: dict[str, Any]) -> str:
    plain = {k: v for k, v in body.items() if k != "sum"}
    return hashlib.sha256(json.dumps(plain, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def write_anchor(path: Path, seq: int, head: str, key: bytes | None, *, fsync: bool = True) -> None:
    """Replace the anchor at ``path`` atomically (written beside, fsynced, renamed, the folder fsynced) by one
    naming ``seq``/``head`` in both of its entries (``anchor_entry``: sealed when there is a ``key``). Raises
    ``OSError`` when it cannot be written."""
    path = Path(path)
    temporary = path.with_name(path.name + ".new")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(anchor_entry(seq, head, key, 0).ljust(ANCHOR_SLOT, b"\x00") + anchor_entry(seq, head, key, 1))
        handle.flush()
        if fsync:
            os.fsync(handle.fileno())
    os.replace(temporary, path)
    if fsync:
        fsync_folder(path.parent)


class AnchorWriter:
    """The anchor of an open journal, moved at the end of every commit (``advance``), so that the anchor names
    the last committed record and no committed record can be lost unseen (a deleted or damaged WAL).

    Owned by the journal's writer thread. Each ``advance`` writes one entry (``pwrite`` of ``ANCHOR_ENTRY``
    bytes) into the entry not holding the newest seq (a write cut short leaves the other entry, which names the
    commit before), into the kernel's page cache, which outlives the process (a kill); a ``durable`` one (a
    round's close) is fsynced too (``fdatasync``), so that a power cut leaves the anchor at worst at the
    round's close before: behind the store, never ahead of it. ``path`` must hold an anchor (``write_anchor``)
    already. Raises ``OSError`` when it cannot be opened or written."""

    def __init__(self, path: Path, seq: int, key: bytes | None, *, fsync: bool = True) -> None:
        self.path = Path(path)
        self._key = key
        self._fsync = fsync
        self._fd = os.open(self.path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        self._slot = 0  # ``write_anchor`` wrote both entries alike: either may be replaced first
        self.seq = seq

    def advance(self, seq: int, head: str, *, durable: bool = False) -> None:
        """Name ``seq``/``head`` (the last record of the commit just made) in the anchor; fsynced when
        ``durable``."""
        os.pwrite(self._fd, anchor_entry(seq, head, self._key, self._slot), self._slot * ANCHOR_SLOT)
        if durable and self._fsync:
            os.fdatasync(self._fd)
        self._slot, self.seq = 1 - self._slot, seq

    def close(self) -> None:
        """Close the anchor's file (a second call does nothing)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_anchor(path: Path) -> dict[str, Any] | None:
    """The anchor at ``path`` (``{"seq", "head", "mac", "key_id", "slot"}`` of its newer entry, no ``slot`` in an
    entry written before it was kept, and ``entries``: both, each sealed for its place, ``check_anchor``), or None
    when there is none. An anchor written before it had two entries
    (one line, ``{"seq", "head", "mac"}``) is read as it is. An unreadable anchor, one with an entry that is
    not one (torn or altered) or that names the other place (copied over it), or one entry of the two alone (an
    older entry so kept, sealed as it is, would name a journal cut after it), is returned as ``{"problem":
    ...}`` (``check_anchor`` reports it; the seal of the place is checked there, with the key)."""
    try:  # at most one byte more than an anchor holds: a link to /dev/zero or a pipe in its place is named
        raw, _ = read_regular(path, ANCHOR_SIZE + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EINVAL):
            return {"problem": f"anchor {path_shown(path)}: {exc.strerror}"}
        return {"problem": f"anchor {path_shown(path)}: cannot read it: {exc.strerror or exc}"}
    if len(raw) != ANCHOR_SIZE:
        return _legacy_anchor(raw, path)
    entries = []
    for number, start in enumerate((0, ANCHOR_SLOT), 1):
        entry = _entry(raw[start:start + ANCHOR_ENTRY])
        if entry is None:
            return {"problem": f"anchor {path_shown(path)}: entry {number} is not an anchor entry (torn or altered)"}
        if entry.get("slot", number - 1) != number - 1:
            return {"problem": f"anchor {path_shown(path)}: entry {number} is the other entry's (copied over it)"}
        entries.append(entry)
    return {**max(entries, key=lambda e: e["seq"]), "entries": entries}


def _entry(raw: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    fields = {"head", "key_id", "mac", "seq", "sum"}  # and ``slot``, but in an entry written before it was kept
    if not (isinstance(entry, dict) and set(entry) in (fields, fields | {"slot"}) and entry.get("slot", 0) in (0, 1)
            and type(entry.get("slot", 0)) is int and type(entry["seq"]) is int and isinstance(entry["head"], str)
            and entry["sum"] == _entry_sum(entry)):
        return None
    return entry


def _legacy_anchor(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return {"problem": f"anchor {path_shown(path)}: cannot read it: not ASCII text"}
    try:
        anchor = json.loads(text)
        if not (isinstance(anchor, dict) and isinstance(anchor.get("seq"), int) and isinstance(anchor.get("head"), str)):
            raise ValueError
    except ValueError:
        return {"problem": f"anchor {path_shown(path)}: not an anchor"}
    if "sum" in anchor or "slot" in anchor:  # an entry of the two-entry form (``anchor_entry``) alone in the file
        return {"problem": f"anchor {path_shown(path)}: one entry of a two-entry anchor alone, the other cut away "
                           f"(an older entry so kept would hide the commits after it)"}
    return anchor


def anchor_keyed(anchor: dict[str, Any]) -> bool:
    """True when ``anchor`` (``read_anchor``, without a problem) says its store is sealed with a key: it carries
    a seal. Once keyed, always keyed: a keyed configuration refuses an anchor that does not say so."""
    return anchor.get("mac") is not None or anchor.get("key_id") is not None


def check_anchor(anchor: dict[str, Any], hash_at: Callable[[int], str | None], last_seq: int,
                 key: bytes | None) -> str | None:
    """What is wrong with the journal against ``anchor`` (``read_anchor``), or None. ``hash_at(seq)`` gives the
    hash of the journal's record ``seq`` (None when it has none); ``last_seq`` its last record. With ``key``
    the anchor's own seal is checked too."""
    if "problem" in anchor:
        return anchor["problem"]
    seq, head = anchor["seq"], anchor["head"]
    if key is not None and not anchor_keyed(anchor):
        return (f"the anchor (seq {seq}) says the journal is not sealed with a key, but it is (the key stripped or "
                f"the anchor forged)")
    for entry in anchor.get("entries", [anchor]) if key is not None else ():  # the older one too: either may be read
        if entry.get("mac") != anchor_mac(key, entry["seq"], entry["head"], entry.get("slot")):
            return f"the anchor (seq {entry['seq']}) does not carry the key's seal (altered or forged)"
    if last_seq < seq:
        return (f"truncated: the journal ends at record {last_seq}, its anchor was written at record {seq} "
                f"(records cut from the end)")
    if (hash_at(seq) if seq else "0" * 64) != head:  # seq 0: the anchor of a store without records
        return f"record {seq} is not the record the anchor holds (the journal was rewritten)"
    return None
