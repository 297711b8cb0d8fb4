"""How text from outside (a file's name, a value someone typed) is shown in a message: a refusal, an error, a log
line. The one rule of which characters are never shown as themselves (``CONTROL_CATEGORIES``), and of how a
file's path is shown (``path_shown``)."""

from __future__ import annotations

import os
import unicodedata

#: Unicode general categories a text from outside may not show as itself where a terminal or a log shows it:
#: controls (a newline, a NUL, an escape), format characters (a direction override, a zero-width joiner),
#: surrogates (a file name's bytes that are not UTF-8), line and paragraph separators. Every other character,
#: of any script, is shown as itself.
CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def path_shown(path: str | bytes | os.PathLike) -> str:
    """A file's path as a message (a refusal, an error, a log line) shows it: itself when none of its characters
    is of ``CONTROL_CATEGORIES``; else with each such character escaped as Python escapes it (``\\x1b``,
    ``\\u202e``, ``\\udcff`` for a byte that is not UTF-8) and each backslash doubled, so that the message stays
    one line, the terminal interprets nothing of the name, and the name can be told back. Bytes are decoded as
    the file system does (``os.fsdecode``). The one rule for every message that names a file."""
    text = os.fsdecode(path)
    if not any(unicodedata.category(char) in CONTROL_CATEGORIES for char in text):
        return text
    return "".join(ascii(char)[1:-1] if unicodedata.category(char) in CONTROL_CATEGORIES
                   else "\\\\" if char == "\\" else char for char in text)
