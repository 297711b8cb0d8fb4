"""The operators' passwords (``controller.operators``): an unknown name is checked like a wrong password."""

from __future__ import annotations

import hashlib

from controller import operators
from controller.operators import ITERATIONS, Operator, authenticate, hash_password


def _rounds_spent(monkeypatch, user: str, password: str, known: dict[str, Operator]) -> list[int]:
    """The PBKDF2 iteration counts ``authenticate`` runs for one attempt."""
    spent: list[int] = []
    real = hashlib.pbkdf2_hmac

    def counting(name, secret, salt, iterations, *rest):
        spent.append(iterations)
        return real(name, secret, salt, iterations, *rest)

    monkeypatch.setattr(operators.hashlib, "pbkdf2_hmac", counting)
    assert authenticate(known, user, password) is None
    return spent


def test_an_unknown_name_costs_one_full_hash_as_a_wrong_password_does(monkeypatch):
    known = {"rita": Operator("rita", "supervisor", hash_password("a-long-password", iterations=ITERATIONS))}
    assert _rounds_spent(monkeypatch, "rita", "a-long-passwore", known) == [ITERATIONS]
    assert _rounds_spent(monkeypatch, "nobody", "a-long-password", known) == [ITERATIONS]
    assert _rounds_spent(monkeypatch, "nobody", "", known) == [ITERATIONS]  # the empty password is no way in
