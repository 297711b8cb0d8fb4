"""The game of Criss-Cross Poker, without time or devices: cards, five-card hands, the pay tables and their
minimums, the table's seats and limits, each seat's settlement and what a payout owes.

Owns: ``cards``, ``hands``, ``minimums``, ``paytable``, ``table`` (the table's configuration and the wager
limits), ``settlement`` (NY 9 NYCRR 5324.39(d)-(g)), ``payout`` (the plan of a payout and how a reading
differs from it), ``capacity`` (what the limits and pay tables let a spot hold, against what the bet sensors
read), ``sessions`` (what a seat's session is).
May import: ``controller.settings`` and ``drivers`` (event and timing types). Imported by everything above it.
"""
