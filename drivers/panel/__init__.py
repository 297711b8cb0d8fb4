"""The dealer panel: wire messages (``protocol``), driver (``driver``) and pty simulator (``simulator``)."""
