"""The command line: ``crisscross`` and its subcommands.

Owns: ``entry`` (the program: the command line loaded with Ctrl-C held back), ``main`` (the parser, the
dispatch and ``run``), ``parts`` (what ``run`` hands the service), ``journal`` (journal tools and ``recall``),
``settle``, ``operators``, ``protect``, ``simulate`` (the Monte Carlo check).
May import every package; nothing imports it.
"""
