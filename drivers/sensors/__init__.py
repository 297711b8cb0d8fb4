"""The bet sensors: wire messages (``protocol``), driver (``driver``) and pty simulator (``simulator``)."""
