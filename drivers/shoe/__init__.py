"""The automated shoe: wire messages (``protocol``), driver (``driver``) and pty simulator (``simulator``)."""
