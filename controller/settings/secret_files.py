"""Files read beside the program's own (the journal's anchor and the floor's progress) and files that hold a
secret (the journal key, the floor's broker password): read never through a symbolic link, never waiting on a pipe
or a device, never more than the few bytes they hold; a secret only when its owner alone may read or write it.
The configuration files are read by the same rule (``controller.settings.files.load_yaml``), through a link too."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from controller.settings.text import path_shown


class SecretFileError(ValueError):
    """A secret's file that is not a regular file, or that group or others may read or write: the message
    names the file, the secret and the fix."""


def read_regular(path: Path, limit: int, *, follow: bool = False) -> tuple[bytes, os.stat_result]:
    """The first ``limit`` bytes of the regular file at ``path`` and its ``stat``, opened never through a symbolic
    link (its last name; with ``follow``, the file a link names is read, and refused as the file itself would be)
    and without waiting (a pipe or a device in its place is refused, not read: ``/dev/zero`` would fill the
    memory, a pipe wait for ever). Nothing but a regular file is opened (opening a device may act on it: a serial
    port raises its DTR line), and what was opened is checked again (it may have been swapped meanwhile). Raises
    ``FileNotFoundError`` when there is none and ``OSError`` otherwise, its ``strerror`` saying what is there:
    ``a symbolic link, not a file`` (ELOOP), ``Is a directory`` (EISDIR, as opening one to read says), ``not a
    regular file`` (EINVAL)."""
    _check_regular(os.stat(path, follow_symlinks=follow), path)
    try:
        fd = os.open(path, os.O_RDONLY | (0 if follow else os.O_NOFOLLOW) | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow and os.path.islink(path):
            raise OSError(errno.ELOOP, "a symbolic link, not a file", str(path)) from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        _check_regular(info, path)
        return handle.read(limit), info


def _check_regular(info: os.stat_result, path: Path) -> None:
    """``OSError`` unless ``info`` is a regular file's (``read_regular``)."""
    if stat.S_ISLNK(info.st_mode):
        raise OSError(errno.ELOOP, "a symbolic link, not a file", str(path))
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))


def read_owner_only(path: Path, what: str, limit: int = 200) -> bytes:
    """The first ``limit`` bytes of the file at ``path``, a secret (``what`` names it in messages), as
    ``read_regular`` reads it. Raises ``OSError`` when it cannot be opened (``FileNotFoundError`` when absent, a
    symbolic link) and ``SecretFileError`` for a file that is not a regular file or that group or others may read
    or write."""
    try:
        data, info = read_regular(path, limit)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise SecretFileError(f"{path_shown(path)}: {what} is not a regular file") from None
        raise
    if shared := shared_rights(info.st_mode):
        shown = path_shown(path)
        raise SecretFileError(f"{shown}: {what}: {shared} (mode {info.st_mode & 0o777:o}): chmod 600 {shown}")
    return data


def shared_rights(mode: int) -> str:
    """What group and others may do with a file of ``mode`` (its ``st_mode``), in words for a refusal:
    ``"group and others may read it"`` (0644), ``"group may read and write it, others may execute it"`` (0661);
    ``""`` when neither has any right (the owner alone, as a secret and the journal store must be held)."""
    def rights(bits: int) -> str:
        names = [name for bit, name in ((4, "read"), (2, "write"), (1, "execute")) if bits & bit]
        return " and ".join(filter(None, (", ".join(names[:-1]), names[-1]))) if names else ""

    group, others = rights(mode >> 3 & 7), rights(mode & 7)
    if group == others:
        return f"group and others may {group} it" if group else ""
    return ", ".join(f"{who} may {what} it" for who, what in (("group", group), ("others", others)) if what)
