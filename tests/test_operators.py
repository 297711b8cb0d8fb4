"""The operators' passwords (``controller.control.operators``): an unknown name is checked like a wrong password;
the operators file refused when it is empty, saying so."""

from __future__ import annotations

import hashlib

import pytest

from controller.control import operators
from controller.control.operators import ITERATIONS, Operator, authenticate, hash_password, load_operators
from controller.settings.files import ConfigError
from tests.cli_helpers import crisscross


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


def test_the_work_is_the_same_whatever_the_name_when_a_hash_has_fewer_iterations(monkeypatch):
    """A user whose hash has ``MIN_ITERATIONS`` (200,000, the fewest the file accepts) once cost a third of an
    unknown name's 600,000: the answer time told which names exist. Every attempt now costs the most of
    ``ITERATIONS`` and the file's counts, counted here in PBKDF2 iterations."""
    from controller.control.operators import MIN_ITERATIONS

    known = {"old": Operator("old", "dealer", hash_password("a-long-password", iterations=MIN_ITERATIONS)),
             "new": Operator("new", "dealer", hash_password("a-long-password", iterations=ITERATIONS))}
    spent = {user: sum(_rounds_spent(monkeypatch, user, "wrong-password", known)) for user in ("old", "new", "nobody")}
    assert spent == {"old": ITERATIONS, "new": ITERATIONS, "nobody": ITERATIONS}
    deeper = {**known, "deep": Operator("deep", "dealer", hash_password("x" * 8, iterations=ITERATIONS + 1000))}
    assert sum(_rounds_spent(monkeypatch, "nobody", "wrong-password", deeper)) == ITERATIONS + 1000


def test_failed_sign_ins_wait_a_delay_that_doubles_and_a_success_forgets_them():
    now = [0.0]
    throttle = operators.FailureThrottle(free=2, base=1.0, most=4.0, clock=lambda: now[0])
    delays = []
    for _ in range(6):
        throttle.failed("user dan", "client 127.0.0.1")
        delays.append(throttle.wait("user dan"))
    assert delays == [0.0, 0.0, 1.0, 2.0, 4.0, 4.0]  # two free, then doubling up to the most
    now[0] = 3.0
    assert throttle.wait("user dan", "client 127.0.0.1") == 1.0 and throttle.wait("user sue") == 0.0
    throttle.succeeded("user dan")
    assert throttle.wait("user dan") == 0.0 and throttle.wait("client 127.0.0.1") == 1.0


@pytest.mark.parametrize("text", ["", "\n\n", "# operators of table 3\n"])
def test_an_empty_operators_file_is_refused_saying_so_with_its_path(tmp_path, text):
    """A file with no YAML document in it (no bytes, blanks, comments) is named and said to be empty, with what
    it must hold and how to write the first user, by ``load_operators`` and by ``crisscross operator`` (exit 2,
    one line); it used to say ``expected a mapping at the top level, got NoneType``."""
    path = tmp_path / "operators.yaml"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(ConfigError) as refused:
        load_operators(path)
    assert str(refused.value).startswith(f"{path}: the file is empty (nothing but blanks or comments): ")
    assert "`operators:` with each user under it" in str(refused.value) and "NoneType" not in str(refused.value)
    for command in (("list",), ("add", "sue", "--role", "supervisor")):
        proc = crisscross("operator", *command, "--file", str(path), stdin="a-long-password\n")
        assert proc.returncode == 2 and proc.stderr == f"crisscross: {refused.value}\n", proc
    assert path.read_text() == text  # nothing written over it


def test_an_empty_table_file_is_refused_saying_so_with_its_path(tmp_path):
    """The same reading of every configuration file (``controller.settings.files.load_yaml``)."""
    from controller.game.table import load_table_config

    path = tmp_path / "table.yaml"
    path.write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match=r"the file is empty \(nothing but blanks or comments\)") as refused:
        load_table_config(path)
    assert str(refused.value).startswith(f"{path}: ")


@pytest.mark.parametrize("password", ["a-long-password", "caf\u00e9-cr\u00e8me"], ids=["ascii", "nfc"])
def test_a_password_already_in_nfc_hashes_as_before_so_stored_hashes_stay_valid(password):
    """Normalizing passwords to NFC (NIST SP 800-63B, 5.1.1.2) changes nothing for one already in NFC (every ASCII
    one): its hash is PBKDF2-HMAC-SHA256 over its UTF-8 bytes as it always was, so the hashes of an existing
    operators file still verify."""
    import base64

    salt = bytes(range(16))
    stored = hash_password(password, iterations=operators.MIN_ITERATIONS, salt=salt)
    before = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, operators.MIN_ITERATIONS)
    assert stored == f"pbkdf2_sha256${operators.MIN_ITERATIONS}${base64.b64encode(salt).decode()}$" \
                     f"{base64.b64encode(before).decode()}"
    assert operators.verify_password(password, stored) and not operators.verify_password(password + "x", stored)
