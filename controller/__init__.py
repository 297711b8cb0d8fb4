"""The Criss-Cross Poker table controller: the game, the round, the journal and the service."""

from importlib import metadata

try:
    #: The installed distribution's version (``crisscross --version``, the service's start record).
    __version__ = metadata.version("crisscross-controller")
except metadata.PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
