"""The service: the controller loop that joins the devices, the round and the journal, its bounded event
queue, systemd's notifications and watchdog, the metrics, and the live protection of the game.

Owns: ``loop``, ``eventqueue``, ``notify``, ``watch``, ``metrics``, ``protection``.
May import: ``controller.journal`` and below, and ``drivers``. The control interface, the floor and the
simulated table are handed in by the command line; the service never imports them.
"""
