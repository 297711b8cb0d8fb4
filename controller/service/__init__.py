"""The service: the controller loop that joins the devices, the round and the journal, its bounded event
queue, systemd's notifications and watchdog, the metrics, the bounds of its doors, and the live protection of
the game.

Owns: ``loop`` (the controller thread), ``assembly`` (the service built and run, the parts handed in),
``opening`` (journal, key, jurisdiction), ``simulators``, ``eventqueue``, ``notify``, ``watch``, ``metrics``,
``limits`` (the open-file budget of every door), ``hosts`` (the ``Host`` a door answers), ``protection`` and ``protect_journal`` (the detector's
reading of journal rounds).
May import: ``controller.journal`` and below, and ``drivers``. The control interface, the floor and the
simulated table are handed in by the command line; the service never imports them.
"""
