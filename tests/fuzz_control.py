"""Fuzz every HTTP operation of the control interface's ``/openapi.json`` with Schemathesis against a running
service with simulators (``.ci/run``; docs/control.md).

``python -m tests.fuzz_control [--seconds S] [--examples N]`` writes a table file with the control interface on
a free port and two operators (a supervisor and a dealer), starts ``crisscross run --simulate`` on it, waits
for the interface, and runs ``st run`` on its ``/openapi.json`` with every check of Schemathesis (no 500,
status codes, content types and bodies as documented) plus this module's own (``no_private_record``: no
answer carries a record type that holds face-down cards, but the recall of a round that ended, nor a record's
``prev`` or ``hash``; ``auth_enforced``: a 2xx needed the credentials, in place of Schemathesis's
``ignored_auth``, whose wrong credentials the sign-in throttle answers 429 by design), signed in as
the supervisor, for at most ``S`` seconds (``--max-time``). An answer may take the wait it was asked for
(``GET /events?timeout=``, at most ``MAX_WAIT`` s) and 5 s more (``--max-response-time``). ``/events/stream``
is left out: an event stream stays open for minutes by design (it has its own tests). Exit status: Schemathesis's (0: nothing found), or 2
when the service did not start; the service is stopped either way.
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Record types that carry face-down cards or device commands: never in an answer (controller.control.server).
PRIVATE_TYPES = ("StackDealt", "StackDispensed", "ShoeLastDispense", "CardsEntered", "CardsRecorded")

try:  # the custom check, loaded by Schemathesis through SCHEMATHESIS_HOOKS=tests.fuzz_control
    import schemathesis

    @schemathesis.check
    def no_private_record(ctx, response, case) -> None:
        """No answer names a record type holding face-down cards, nor a record's ``prev`` or ``hash``; but game
        recall of a round that ended (``GET /recall?round=N``, status ``closed`` or ``voided``) shows every record
        of it to the supervisor (docs/control.md, "Game recall")."""
        text = response.text or ""
        ended = False
        if case.path == "/recall" and response.status_code == 200:
            ended = response.json().get("status") in ("closed", "voided")
        for name in PRIVATE_TYPES:
            if f'"{name}"' in text and not ended:
                raise AssertionError(f"the answer carries a {name} record")
        if '"prev":' in text or '"hash":' in text:
            raise AssertionError("the answer carries a record's prev or hash")
    @schemathesis.check
    def auth_enforced(ctx, response, case) -> None:
        """An operation that needs credentials (a ``security`` requirement in /openapi.json), answered 2xx, is
        refused the same request without them (401). Schemathesis's own ``ignored_auth`` also sends wrong credentials,
        which the control interface's sign-in throttle answers 429 after a few (by design: docs/control.md,
        "Credentials"); a request without credentials is never throttled, so this check sees every answer."""
        import requests

        from controller.control.openapi import openapi_document

        if not 200 <= response.status_code < 300:
            return
        operation = openapi_document()["paths"].get(case.path, {}).get(case.method.lower(), {})
        if not operation.get("security") and not openapi_document().get("security"):
            return  # public
        sent = response.request
        headers = {k: v for k, v in sent.headers.items() if k.lower() != "authorization"}
        again = requests.request(sent.method, sent.url, headers=headers, data=sent.body, timeout=40)
        if again.status_code != 401:
            raise AssertionError(f"{case.method} {case.path} without credentials answered {again.status_code}, "
                                 f"not 401")

    @schemathesis.hook
    def map_body(context, body):
        """A whole float of a generated body (``3.0``) as the integer it stands for (``3``): JSON Schema 2020-12
        counts it an integer, so Schemathesis sends it as valid data, and the control interface refuses it (400):
        an integer is written as one (docs/control.md, "POST /actions"; ``/openapi.json`` says so in words, as no
        keyword can). A real fraction (``3.5``), invalid data, is left as it is."""
        return _integers_written_as_such(body)
except ImportError:  # only the driver below runs without it
    pass


def _integers_written_as_such(value):
    """``value`` (a JSON value) with every float that is a whole number, to 2**53, as an int; the rest as it is."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: _integers_written_as_such(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integers_written_as_such(item) for item in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz_control", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=120, help="time budget of the fuzzing (st --max-time)")
    parser.add_argument("--examples", type=int, default=100, help="most examples per operation")
    args = parser.parse_args(argv)
    from controller.cli.main import main as crisscross
    from controller.control.checks import MAX_WAIT
    from controller.control.operators import MIN_ITERATIONS, add_operator
    from tests.idle_clients import accepts, free_port

    work = Path(tempfile.mkdtemp(prefix="crisscross-fuzz-"))
    site = work / "site"
    if crisscross(["config", "init", str(site)]) != 0:
        return 2
    port = free_port()
    table = site / "table.yaml"
    text = table.read_text()
    table.write_text(text.replace("control:\n  enabled: false\n  host: 127.0.0.1\n  port: 8740",
                                  f"control:\n  enabled: true\n  host: 127.0.0.1\n  port: {port}"))
    add_operator(site / "operators.yaml", "sue", "supervisor", "supervisor-pass", iterations=MIN_ITERATIONS)
    add_operator(site / "operators.yaml", "dan", "dealer", "dealer-pass-1", iterations=MIN_ITERATIONS)
    log = (work / "service.log").open("w")
    service = subprocess.Popen([sys.executable, "-m", "controller", "run", "--simulate", "--rating", "--sessions", "8",
                                "--quiet", "--config", str(table), "--journal", str(work / "journal.db")],
                               cwd=ROOT, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while not accepts(port):
            if service.poll() is not None or time.monotonic() > deadline:
                print(f"the service did not start; its log: {work / 'service.log'}", file=sys.stderr)
                return 2
            time.sleep(0.1)
        token = base64.b64encode(b"sue:supervisor-pass").decode()
        command = ["st", "run", f"http://127.0.0.1:{port}/openapi.json", "--checks", "all", "--max-time",
                   str(args.seconds), "--max-examples", str(args.examples), "--request-timeout", "40",
                   "--max-response-time", str(MAX_WAIT + 5),
                   "--exclude-path", "/events/stream", "--exclude-checks", "ignored_auth",
                   "-H", f"Authorization: Basic {token}",
                   "--generation-deterministic", "--suppress-health-check", "all", "--no-color"]
        env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.fuzz_control", "PYTHONPATH": str(ROOT)}
        status = subprocess.run(command, cwd=work, env=env).returncode  # its own files go to work
        if service.poll() is not None:
            print(f"the service ended during the fuzzing (status {service.returncode}); its log: "
                  f"{work / 'service.log'}", file=sys.stderr)
            return 1
        if status == 0:
            shutil.rmtree(work, ignore_errors=True)  # kept, with the service's log, when something was found
        return status
    finally:
        if service.poll() is None:
            service.send_signal(signal.SIGINT)
            service.send_signal(signal.SIGINT)  # a second signal: stop at once, the round open is no matter here
            try:
                service.wait(timeout=60)
            except subprocess.TimeoutExpired:
                service.kill()
                service.wait()
        log.close()


if __name__ == "__main__":
    raise SystemExit(main())
