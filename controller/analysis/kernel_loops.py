"""The compiled loops' shared pieces (numba): how a loop is compiled (cached on disk where it can be), a bit
count, and the small loops of pairs both passes use (``kernel.decision_values``, ``kernel_account.account``).

Pairs index the 50 cards left in ``combinations`` order (``kernel`` module docstring). numba's cache checks
only the file a compiled function is in: after a change here, remove numba's cache (``__pycache__/*.nbi``,
``*.nbc`` beside these files) so that the loops of ``kernel`` and ``kernel_account`` are compiled again.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

#: Middle cards left for a round; down pairs disjoint from an across pair.
N_MIDDLE = 46
N_DOWN = 1128




def compiled(function, inline="never"):
    """``numba.njit`` with the compiled code cached on disk when a cache folder can be written (numba's
    ``__pycache__`` beside this file, else the user's cache folder), else compiled at each start."""
    try:
        return njit(cache=True, nogil=True, inline=inline)(function)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available" (a read-only install)
        return njit(nogil=True, inline=inline)(function)


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
