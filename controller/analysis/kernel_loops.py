"""The compiled loops' shared pieces (numba): how a loop is compiled (cached on disk where it can be), a bit
count, and the small loops of pairs both passes use (``kernel.decision_values``, ``kernel_account.account``).

Pairs index the 50 cards left in ``combinations`` order (``kernel`` module docstring).

numba's cache is kept where numba finds a folder it can write, in its order: ``NUMBA_CACHE_DIR`` if set, else
the user's cache folder (``$XDG_CACHE_HOME/numba``, by default ``~/.cache/numba``); where none can be written the
loops are compiled at each start (about 16 s of CPU). Never in the ``__pycache__`` beside these files, numba's
default: its index is a pickle, code loaded at the next start, and nothing among the software's files may be
written at run time (``controller.service.identity`` names any such file). numba
alone checks only the source of the file a compiled function is in, while the loops of ``kernel`` and
``kernel_account`` inline those of this file: here a cached loop is also stale once any ``kernel*.py`` beside
it has changed (``compiled``).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np
from numba import njit, types
from numba.core import caching
from numba.extending import intrinsic

#: Middle cards left for a round; down pairs disjoint from an across pair.
N_MIDDLE = 46
N_DOWN = 1128


@functools.cache
def sources_digest(folder: str) -> bytes:
    """SHA-256 of the ``kernel*.py`` files in ``folder`` (names and contents, in name order): the part of a
    compiled loop's cache stamp that numba's own (its file's source alone) does not cover."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).glob("kernel*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.digest()


class _KernelStamp:
    """A numba cache locator's source stamp extended with ``sources_digest`` of the function's folder."""

    def get_source_stamp(self):
        """numba's stamp of the function's file, with the digest of the ``kernel*.py`` files beside it."""
        return super().get_source_stamp(), sources_digest(str(Path(self._py_file).parent))


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    """numba's cache of compiled functions, each of its locators (same order) stamped by ``_KernelStamp``, but
    the one in the package's own ``__pycache__`` (module docstring)."""

    _locator_classes = [type(locator.__name__, (_KernelStamp, locator), {})
                        for locator in caching.CompileResultCacheImpl._locator_classes
                        if locator is not caching.InTreeCacheLocator]


class KernelCache(caching.FunctionCache):
    """numba's ``FunctionCache`` whose entries go stale when any ``kernel*.py`` beside the function changes.
    Raises ``RuntimeError`` (numba's "no locator available") where no cache folder can be written."""

    _impl_class = _KernelCacheImpl


def compiled(function, inline="never"):
    """``numba.njit(nogil=True)`` with the compiled code cached on disk (``KernelCache``: where, in the module
    docstring) when a cache folder can be written, else compiled at each start. ``inline``: numba's option."""
    dispatcher = njit(nogil=True, inline=inline)(function)
    try:
        dispatcher._cache = KernelCache(function)  # what njit(cache=True) does, with the stamp of KernelCache
    except RuntimeError:  # numba: "cannot cache function ...: no locator available" (a read-only install)
        pass
    return dispatcher


def inlined(function):
    """``compiled``, the body inlined where it is called (so that the caller's loops vectorise)."""
    return compiled(function, inline="always")


@intrinsic
def popcount(typingctx, value):
    """Number of bits set in a 64-bit integer (LLVM's ctpop)."""
    if isinstance(value, types.Integer):
        def codegen(context, builder, signature, args):
            return builder.ctpop(args[0])
        return value(value), codegen
    return None


@compiled
def pair_offsets(p0, p1):
    """``off[i]`` such that pair ``(i, j)`` (i < j) has index ``off[i] + j``."""
    off = np.zeros(50, dtype=np.int64)
    for t in range(p0.size):
        off[p0[t]] = t - p1[t]
    return off


@inlined
def by_card_row(a, p0, off, values, out):
    """``out[card] +=`` the sum of ``values`` (indexed as ``_row``'s arrays) over the down pairs ``t > a``
    holding ``card``; ``values`` is 0 where ``t`` meets across pair ``a``, as on every pair of its first card."""
    a0 = p0[a]
    lo = a + 1
    for i in range(a0 + 1, 49):
        start = off[i] + i + 1 - lo  # pair (i, i + 1)
        row = values[start:start + 49 - i]
        dest = out[i + 1:]
        s = np.int64(0)
        for j in range(49 - i):
            v = row[j]
            s += v
            dest[j] += v
        out[i] += s


@compiled
def repeated_classes(masks):
    """``repeated[k]``: no pair's line is of class k with any middle card (``masks[k] == masks[k - 1]``), so
    that ``N_k = N_{k - 1}`` for every (a, d): an unsuited hand makes no flush, for one."""
    n_classes, n = masks.shape
    repeated = np.zeros(n_classes, dtype=np.bool_)
    for k in range(1, n_classes):
        same = True
        for t in range(n):
            if masks[k, t] != masks[k - 1, t]:
                same = False
                break
        repeated[k] = same
    return repeated
