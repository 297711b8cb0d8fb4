"""What the control interface takes as input and how it refuses the rest (docs/control.md, "Errors"): a number of
the body is an integer written as one, the body is JSON in UTF-8 (RFC 8259, 8.1), and every error, a file of the
dealer's screen that does not exist included, is JSON in the one shape ``{"error": ...}``."""

from __future__ import annotations

import json

import pytest

from tests.test_control import Client, _operators, bare_server, operators_file  # noqa: F401 (fixtures)


@pytest.mark.parametrize("method, path", [("GET", "/screen/nothing.js"), ("GET", "/screen/"),
                                          ("GET", "/screen/%00"), ("HEAD", "/screen/nothing.js")])
def test_a_file_of_the_screen_that_does_not_exist_is_a_json_404(bare_server, method, path):
    """A path under ``/screen/`` goes to the screen's files: one that is not there is answered in the interface's
    error shape, as every other error is (it was Starlette's plain text "Not Found")."""
    status, headers, body = Client(bare_server).request(method, path)
    assert (status, headers["Content-Type"]) == (404, "application/json")
    if method == "GET":
        assert json.loads(body) == {"error": f"no such file {json.dumps(path.replace('%00', chr(0)))}"}
