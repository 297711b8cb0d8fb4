"""The round: the transitions graph of a round and one module per rule area, from betting to the payout.

Owns: ``machine`` (the graph and the ``Round`` that follows it), ``inputs`` (what the round is told),
``commands`` (what it tells the devices and the journal), ``alerts``, ``manual`` (dealing by hand),
``diagram`` (the graph drawn for docs/round-states.md).
May import: ``controller.game``, ``controller.settings``, ``drivers.events`` and the panel's protocol; never the
service, HTTP, the simulators or numpy.
"""
