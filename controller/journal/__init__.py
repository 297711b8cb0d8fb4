"""The journal: the append-only, hash-chained store of every event, command and settlement, its key and
anchor, the checks of a store, recovery after a crash, and the reading of rounds back from it.

Owns: ``store``, ``key``, ``check``, ``recovery``, ``tools`` (export, verify and their kin), ``recall``,
``summary``, ``alert_recall``.
May import: ``controller.round`` and below.
"""
