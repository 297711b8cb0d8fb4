"""The simulated table: scripted players, dealer and supervisor that play against the simulated devices.

Owns: ``table`` (the simulated people at the table), ``players`` (the players' strategies, hole-carders among
them). The service never imports this package: the command line hands a simulated table in.
May import: anything below the command line.
"""
