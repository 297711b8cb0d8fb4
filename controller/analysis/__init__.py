"""Exact analysis of the game: the pay class of every five-card hand, the par sheet and the optimal strategy,
pay-table design, and the hole-card detector's math (``protect``, ``protect_tables``).

May import: ``controller.game`` and below. Reading a journal, running a service or the round: the layers above.
"""
