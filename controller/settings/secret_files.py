"""Files read beside the program's own (the journal's anchor and the floor's progress) and files that hold a
secret (the journal key, the floor's broker password): read never through a symbolic link, never waiting on a pipe
or a device, never more than the few bytes they hold; a secret only when its owner alone may read or write it."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class SecretFileError(ValueError):
    """A secret's file that is not a regular file, or that group or others may read or write: the message
    names the file, the secret and the fix."""


def read_regular(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """The first ``limit`` bytes of the regular file at ``path`` and its ``stat``, opened never through a symbolic
    link (its last name) and without waiting (a pipe or a device in its place is refused, not read: ``/dev/zero``
    would fill the memory, a pipe wait for ever). Raises ``FileNotFoundError`` when there is none and ``OSError``
    otherwise, its ``strerror`` saying what is there: ``a symbolic link, not a file`` (ELOOP), ``not a regular
    file`` (EINVAL)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            raise OSError(errno.ELOOP, "a symbolic link, not a file", str(path)) from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return handle.read(limit), info


def read_owner_only(path: Path, what: str, limit: int = 200) -> bytes:
    """The first ``limit`` bytes of the file at ``path``, a secret (``what`` names it in messages), as
    ``read_regular`` reads it. Raises ``OSError`` when it cannot be opened (``FileNotFoundError`` when absent, a
    symbolic link) and ``SecretFileError`` for a file that is not a regular file or that group or others may read
    or write."""
    try:
        data, info = read_regular(path, limit)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise SecretFileError(f"{path}: {what} is not a regular file") from None
        raise
    if info.st_mode & 0o077:
        raise SecretFileError(f"{path}: {what} may be read or written by group or others "
                              f"(mode {info.st_mode & 0o777:o}): chmod 600 {path}")
    return data
