"""What the control interface takes as input and how it refuses the rest (docs/control.md, "Errors"): a number of
the body is an integer written as one, the body is JSON in UTF-8 (RFC 8259, 8.1), and every error, a file of the
dealer's screen that does not exist included, is JSON in the one shape ``{"error": ...}``."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from controller.control.checks import MAX_SEQ
from controller.control.openapi import openapi_document
from tests.test_control import JSON, Client, _auth, _operators, bare_server, operators_file  # noqa: F401 (fixtures)

CONFIRM = '{"action": "confirm"}'


def post(server, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, str, dict]:
    """``POST /actions`` as the supervisor: the status, the Content-Type and the JSON answer."""
    status, answer_headers, answer = Client(server).request("POST", "/actions", body,
                                                            {**JSON, **_auth("sue"), **(headers or {})})
    return status, answer_headers["Content-Type"], json.loads(answer)


@pytest.mark.parametrize("body, says", [
    # JSON has one number type; a fraction or an exponent is a number computed as a float: refused, not rounded
    (b'{"action": "confirm", "round": 1.0}', "got 1.0"),
    (b'{"action": "confirm", "round": 1e0}', "got 1.0"),
    (b'{"action": "confirm", "round": 1.5}', "got 1.5"),
    (b'{"action": "confirm", "round": true}', "got true"),
    (b'{"action": "confirm", "round": -1}', "got -1"),
    (f'{{"action": "confirm", "round": {MAX_SEQ + 1}}}'.encode(), f"got {MAX_SEQ + 1}"),
    (b'{"action": "clear_fault", "answers": 2.0}', "got 2.0"),
    (b'{"action": "clear_fault", "answers": false}', "got false"),
])
def test_a_number_of_the_body_is_an_integer_written_as_one(bare_server, body, says):
    status, _, answer = post(bare_server, body)
    assert status == 400 and says in answer["error"] and "3, not 3.0, 3e0 or true" in answer["error"]
    assert bare_server.events.empty()


def test_an_integer_round_is_taken_as_the_round_guard(bare_server):
    """The same body with ``1`` for ``1.0``: past the checks, to the round guard (round 1 is not the current one:
    409 with the current round), and queued as a stale action (journaled and refused by the controller)."""
    bare_server.publish_view({"state": "idle", "round_no": 2})
    status, _, answer = post(bare_server, b'{"action": "confirm", "round": 1}')
    assert status == 409 and answer["round"] == 2
    assert not bare_server.events.empty()


def test_a_round_or_answers_is_at_most_what_the_journal_holds_and_the_largest_is_journaled_whole(bare_server,
                                                                                                   tmp_path):
    """An action's ``round`` and ``answers`` are journaled with it: they are at most 2**53 - 1, the largest
    integer every JSON reader keeps exactly (RFC 8259, 6) and the journal's reader takes (docs/architecture.md:
    "integers within +-(2^53 - 1)"). 2**53 was taken, journaled, and the journal then failed its check
    ("respelled: ... integer 9007199254740992 outside the safe range")."""
    from controller.journal.store import Journal
    from controller.journal.tools import verify
    from controller.service.loop import fields_of

    largest = 2**53 - 1
    for key, action in (("round", "confirm"), ("answers", "clear_fault")):
        status, _, answer = post(bare_server, json.dumps({"action": action, key: largest + 1}).encode())
        assert status == 400 and f"(0 to {largest})" in answer["error"] and f"got {largest + 1}" in answer["error"]
        assert bare_server.events.empty()
    bare_server.publish_view({"state": "idle", "round_no": 2})
    status, _, _ = post(bare_server, json.dumps({"action": "confirm", "round": largest}).encode())
    assert status == 409  # not the current round: queued as a stale action, journaled and refused
    event = bare_server.events.get_nowait()
    assert event.round == largest
    journal = Journal(tmp_path / "journal.db", fsync=False)
    journal.commit([("event", type(event).__name__, fields_of(event), None)])
    journal.close()
    assert verify(tmp_path / "journal.db").tamper is None


@pytest.mark.parametrize("encoding, named", [
    ("utf-16", "UTF-16"),  # with its byte order mark
    ("utf-16-le", "UTF-16-LE"),
    ("utf-16-be", "UTF-16-BE"),
    ("utf-32", "UTF-32"),
    ("utf-8-sig", "UTF-8 with a byte order mark"),  # RFC 8259, 8.1: none is added to networked JSON
])
def test_a_body_in_another_encoding_than_utf8_is_refused_naming_it(bare_server, encoding, named):
    status, content_type, answer = post(bare_server, CONFIRM.encode(encoding))
    assert (status, content_type) == (415, "application/json")
    assert answer["error"].startswith(f"the body is {named}: ") and "UTF-8 only" in answer["error"]
    assert bare_server.events.empty()


def test_a_charset_other_than_utf8_is_refused_and_utf8_is_taken(bare_server):
    status, _, answer = post(bare_server, CONFIRM.encode("utf-16"), {"Content-Type": "application/json; charset=UTF-16"})
    assert status == 415 and answer["error"] == 'charset "UTF-16": the body must be JSON in UTF-8 (RFC 8259, 8.1)'
    assert bare_server.events.empty()
    status, _, _ = post(bare_server, CONFIRM.encode(), {"Content-Type": 'application/json; charset="utf-8"'})
    assert status == 202 and not bare_server.events.empty()


def test_bytes_that_are_not_utf8_are_refused_naming_the_first(bare_server):
    status, _, answer = post(bare_server, b'{"action": "confirm", "reason": "caf\xe9"}')
    assert status == 400 and answer["error"].startswith("the body is not UTF-8: byte 36 (0xe9) ")
    assert bare_server.events.empty()


@pytest.mark.parametrize("method, path", [("GET", "/screen/nothing.js"), ("GET", "/screen/"),
                                          ("GET", "/screen/%00"), ("HEAD", "/screen/nothing.js"),
                                          # a file's path spelled otherwise is no file (static files read
                                          # /screen/index.html/ as /screen/index.html)
                                          ("GET", "/screen/index.html/"), ("HEAD", "/screen/index.html/"),
                                          ("GET", "/screen//index.html"), ("GET", "/screen/./index.html"),
                                          ("GET", "/screen/screen.js/"), ("GET", "/screen/index.html%2F")])
def test_a_file_of_the_screen_that_does_not_exist_is_a_json_404(bare_server, method, path):
    """A path under ``/screen/`` goes to the screen's files: one that is not there is answered in the interface's
    error shape, as every other error is (it was Starlette's plain text "Not Found")."""
    status, headers, body = Client(bare_server).request(method, path)
    assert (status, headers["Content-Type"]) == (404, "application/json")
    if method == "GET":
        assert json.loads(body) == {"error": f"no such file {json.dumps(urllib.parse.unquote(path))}"}


def test_the_description_says_how_a_body_and_its_numbers_are_written():
    """/openapi.json states the rules JSON Schema cannot: an integer written as one, the body in UTF-8; and each
    operation with a body documents the 415 and 400 it may answer, in the one error shape."""
    document = openapi_document()
    action = document["components"]["schemas"]["Action"]["properties"]
    for name in ("round", "answers"):
        assert "3.0" in action[name]["description"] and "integer" in action[name]["type"]
    for path, method in (("/actions", "post"), ("/sessions", "post")):
        operation = document["paths"][path][method]
        assert "UTF-8" in operation["requestBody"]["description"]
        for status in ("400", "415"):
            schema = operation["responses"][status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/Error"}
    assert document["components"]["schemas"]["Error"]["required"] == ["error"]
