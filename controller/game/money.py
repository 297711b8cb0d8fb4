"""Money as the table shows it: integer minor units (``domain.md``, "Money") written in major units."""

from __future__ import annotations


def money(amount: int, signed: bool = False) -> str:
    """Integer minor units as ``1,234.50`` (a ``+``/``-`` prefix when ``signed``; ``-`` always for a loss)."""
    sign = "-" if amount < 0 else ("+" if signed and amount > 0 else "")
    units, cents = divmod(abs(amount), 100)
    return f"{sign}{units:,}.{cents:02d}"
