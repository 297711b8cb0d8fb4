"""The card reader: wire messages (``protocol``), driver (``driver``) and pty simulator (``simulator``)."""
