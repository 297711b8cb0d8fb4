"""The Criss-Cross Poker table controller: the game, the round, the journal and the service.

``controller.__version__`` is the installed distribution's version (``crisscross --version``, the service's
start record), ``"0+unknown"`` from a source tree that was never installed; it is read from the package
metadata when first asked for, so a command that does not need it does not pay for ``importlib.metadata``.
"""


def __getattr__(name: str) -> str:
    """``__version__``, read once from the package metadata; ``AttributeError`` for any other name."""
    if name != "__version__":
        raise AttributeError(f"module 'controller' has no attribute {name!r}")
    from importlib import metadata

    try:
        version = metadata.version("crisscross-controller")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        version = "0+unknown"
    globals()["__version__"] = version
    return version
