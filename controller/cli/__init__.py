"""The command line: ``crisscross`` and its subcommands.

Owns: ``main`` (the parser and the subcommands). May import every package; nothing imports it.
"""
