"""The journal: the append-only, hash-chained store of every event, command and settlement, its key and
anchor, the checks of a store, recovery after a crash, and the reading of rounds back from it.

Owns: ``record`` (the record, its hash and canonical spelling), ``schema``, ``reader``, ``chain`` (the hash
chain and tamper findings), ``store`` (the writing ``Journal``, with ``opening``), ``clock``, ``key``, ``check``,
``recovery``, ``tools`` (export, verify and their kin), ``recall``, ``summary``, ``alert_recall``.
May import: ``controller.round`` and below.
"""
