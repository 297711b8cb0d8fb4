"""The simulated table: scripted players, dealer and supervisor that play against the simulated devices.

Owns: ``table`` and ``manual`` (the simulated people at the table, dealing by shoe or by hand), ``players`` and
``player_spec`` (the players' strategies, hole-carders among them), ``protect_measure`` (the detector measured
on simulated play). The service never imports this package: the command line hands a simulated table in.
May import: anything below the command line.
"""
