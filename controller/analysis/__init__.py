"""Exact analysis of the game: the pay class of every five-card hand, the par sheet and the optimal strategy."""
