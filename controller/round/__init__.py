"""The round: the transitions graph of a round and one module per rule area, from betting to the payout.

Owns: ``graph`` (the states and transitions: which action is allowed), ``machine`` (``Round``, the dispatch of
inputs and people's actions, composing the rule areas), ``data`` (actors, seats, the round's facts), ``lock``
(wagers and the lock of NY 9 NYCRR 5324.39(c)(3), past-posting), ``dealing`` (the shoe and its reconciliation),
``decisions`` (decisions, reveals, settlement), ``payout_check``, ``faults`` (faults, holds, voiding), ``view``
(the view and the panel's text), ``checkpoint``, ``manual`` (dealing by hand), ``alerts``, ``inputs`` (what the
round is told), ``commands`` (what it tells the devices and the journal), ``diagram`` (the graph drawn for
docs/round-states.md).
May import: ``controller.game``, ``controller.settings``, ``drivers.events`` and the panel's protocol; never the
service, HTTP, the simulators or numpy.
"""
