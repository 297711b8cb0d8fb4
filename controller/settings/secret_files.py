"""Files that hold a secret (the journal key, the floor's broker password): read only when their owner alone
may read or write them, never through a symbolic link."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class SecretFileError(ValueError):
    """A secret's file that is not a regular file, or that group or others may read or write: the message
    names the file, the secret and the fix."""


def read_owner_only(path: Path, what: str, limit: int = 200) -> bytes:
    """The first ``limit`` bytes of the file at ``path``, a secret (``what`` names it in messages), never through
    a symbolic link. Raises ``OSError`` when it cannot be opened (``FileNotFoundError`` when absent) and
    ``SecretFileError`` for a file that is not a regular file or that group or others may read or write."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SecretFileError(f"{path}: {what} is not a regular file")
        if info.st_mode & 0o077:
            raise SecretFileError(f"{path}: {what} may be read or written by group or others "
                                  f"(mode {info.st_mode & 0o777:o}): chmod 600 {path}")
        return handle.read(limit)
