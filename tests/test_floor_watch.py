"""``crisscross floor watch`` (controller/floor/pit.py, controller/floor/tools.py; docs/floor.md, "Watch"): how it
stops, what it counts of the alerts' acknowledgements, and what of a table's text it shows on the terminal.

Oracles: a stop by a service manager is SIGTERM, by Ctrl-C SIGINT (POSIX signal(7)); an acknowledgement as the
round machine writes it (``controller.round.alerts``, driven through ``tests.round_helpers.TableDriver``); the
Unicode categories of the characters a table id may hold (``table.yaml``'s rule) and of those that move a
terminal's cursor or break a line (Unicode's general categories, as ``unicodedata`` names them).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
import unicodedata
from datetime import date

import paho.mqtt.client as paho
import pytest

from controller.floor import pit as floor_pit
from controller.floor import topics
from controller.floor.pit import Pit, shown
from controller.game.table import load_table_config
from controller.round import commands as cmd
from controller.round.alerts import ACKNOWLEDGE_ALERT, MAX_WAITING, Alert
from controller.round.inputs import OperatorAction
from controller.settings.files import CONFIG_DIR, ConfigError
from drivers import events as ev
from tests.round_helpers import TableDriver, of_type

HEADING = "table "


class Output:
    """Every line a process writes to ``stream``, read by a thread of its own as they come."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(stream,), name="watch-output", daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def wait_for(self, predicate, timeout: float, what: str) -> list[str]:
        """The lines so far, once ``predicate(lines)`` holds; ``AssertionError`` naming ``what`` after ``timeout``
        seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                lines = list(self.lines)
            if predicate(lines):
                return lines
            time.sleep(0.02)
        raise AssertionError(f"not within {timeout} s: {what}; the output: {self.lines[-10:]}")


def _retained(port: int, table: str, kind: str, payload: bytes) -> None:
    """Publish ``payload`` retained on ``table``'s ``kind`` topic from a plain paho client (no code of ours),
    acknowledged by the broker."""
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        client.publish(topics.topic("crisscross", table, kind), payload, qos=1, retain=True).wait_for_publish(15)
    finally:
        client.loop_stop()
        client.disconnect()


def _summaries(lines: list[str]) -> list[list[str]]:
    """The summaries in ``lines``: each from its heading to the line before the next one (blank lines left out)."""
    found: list[list[str]] = []
    for line in lines:
        if line.startswith(HEADING):
            found.append([])
        if found and line:
            found[-1].append(line)
    return found


def _watch_until(port: int, first: list[str], signum: int, **env: str) -> tuple[list[str], list[str]]:
    """Run ``crisscross floor watch`` (``--every 5``, no ``--for``; ``env``: more of its environment) against
    the broker at ``port`` until a summary holds a line whose first two words are ``first``, then send it
    ``signum``; it must exit with status 0 and write nothing on standard error. Returns the lines written
    before the signal (at least) and all of them."""
    process = subprocess.Popen([sys.executable, "-m", "controller", "floor", "watch", "--broker", "127.0.0.1",
                                "--port", str(port), "--every", "5"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, encoding="utf-8", env={**os.environ, **env})
    try:
        output = Output(process.stdout)
        before = output.wait_for(lambda lines: process.poll() is not None or
                                 any(line.split()[:2] == first for line in lines), 90, f"a summary with {first}")
        assert process.poll() is None, f"the watch ended ({process.returncode}): {process.stderr.read()[-2000:]}"
        process.send_signal(signum)
        status = process.wait(60)
        output.thread.join(30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
    stderr = process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    assert status == 0 and stderr == "", (status, stderr)
    return before, output.lines


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_watch_stopped_by_a_signal_prints_its_last_summary_and_exits_0(mosquitto, signum):
    """``floor watch`` without ``--for`` runs until stopped: a service manager's SIGTERM or a Ctrl-C's SIGINT
    ends it as the end of ``--for`` does (docs/floor.md, "Watch"), with one last summary at once (not the next
    one of ``--every``: 5 s later) and status 0, as ``floor store`` and ``floor serve`` stop; never status 143
    with nothing said."""
    _retained(mosquitto.port, "T-1", "status", b"online")
    before, lines = _watch_until(mosquitto.port, ["T-1", "online"], signum)
    summaries = _summaries(lines)
    assert len(summaries) == len(_summaries(before)) + 1, lines  # the last one, at the signal
    assert [line.split()[:2] for line in summaries[-1][1:]] == [["T-1", "online"]]


def test_the_pit_lists_each_alert_with_who_acknowledged_it_and_counts_a_repeat_once():
    """``floor watch``: an ``Alert`` heard on ``alerts`` is listed; the ``AlertAcknowledged`` naming its seat, kind
    of card and round marks it acknowledged by the supervisor it names; a repeat (same seq) counts once."""
    alert = {"seat": 2, "card": "middle", "round_no": 30, "rounds": 14, "evidence_log10_hundredths": 412,
             "loss": 4200, "first_round": 17, "share_percent": 100}
    other = {**alert, "seat": 5, "card": "down", "round_no": 31, "player": "P-5"}
    forged = {**alert, "seat": 6, "round_no": 32, "player": "x\nALERT T: seat 1"}  # not a player's id: shown as ?

    def message(seq: int, type_: str, data: dict) -> bytes:
        return topics.encode({"table": "T", "record": {"seq": seq, "time": "2026-12-01T05:00:00+00:00",
                                                       "kind": "event", "round": 31, "type": type_, "data": data}})

    pit = Pit()
    pit.take("T", "alerts", message(10, "Alert", alert))
    pit.take("T", "alerts", message(12, "Alert", other))
    acknowledgement = message(15, "AlertAcknowledged", {"round_no": 31, "alert": alert, "by": "sue",
                                                        "role": "supervisor", "source": "panel", "waiting": 1})
    pit.take("T", "alerts", acknowledgement)
    pit.take("T", "alerts", acknowledgement)  # a repeat after a reconnection
    pit.take("T", "alerts", message(16, "Alert", forged))
    table = pit.tables["T"]
    assert (table.alerts_heard, len(table.acknowledged)) == (3, 1)
    lines = pit.render().splitlines()
    assert lines[0].split()[-2:] == ["alerts", "acked"] and lines[1].split()[-2:] == ["3", "1"]
    assert lines[2].startswith("ALERT T: seat 2 plays as if it saw the middle card (round 30")
    assert lines[2].endswith("; acknowledged by sue")
    assert lines[3].startswith("ALERT T: seat 5 (player P-5) plays as if") and lines[3].endswith("; not acknowledged")
    assert lines[4].startswith("ALERT T: seat 6 (player ?) plays as if") and len(lines) == 5


def _alert_message(seq: int, type_: str, data) -> bytes:
    """A table's ``alerts`` message carrying its journal record ``seq`` of ``type_`` with ``data``."""
    return topics.encode({"table": "T", "record": {"seq": seq, "time": "2026-12-01T05:00:00+00:00", "kind": "event",
                                                   "round": 9, "type": type_, "data": data}})


def test_an_acknowledgement_not_as_the_table_writes_it_is_malformed_and_acknowledges_nothing(caplog):
    """The round machine writes an ``AlertAcknowledged`` with exactly its fields: the alert shown (a seat 1-6, a
    kind of card, whole figures), a supervisor's name, the role ``supervisor``, the source ``panel`` or
    ``control``, the alerts still waiting (controller/round/alerts.py). One that is not (a seat that is a list or
    text, a field missing or added, a dealer, a source or a count it never writes, data that is not an object),
    or a record on ``alerts`` of another type, is counted malformed, said in the log (a bounded number of lines),
    and acknowledges nothing: the ``acked`` count and the alerts' lines agree (docs/floor.md, "Watch")."""
    middle, down = Alert(7, 3, "middle", 412, 1, 30, 100, 4170), Alert(9, 5, "down", 455, 2, 40, 50, 1200, "P-5")
    table = TableDriver()
    table.start()
    table.open_betting()
    table.send(middle)
    table.send(down)
    table.send(ev.SupervisorKey(True, "SUP-7"))
    [by_key] = of_type(table.press(ACKNOWLEDGE_ALERT), cmd.AlertAcknowledged)  # middle: at the panel
    [on_screen] = of_type(table.send(OperatorAction(ACKNOWLEDGE_ALERT, "sue", "supervisor")), cmd.AlertAcknowledged)
    written = dataclasses.asdict(on_screen)  # the down alert, on the control interface: as the journal keeps it
    pit = Pit()
    pit.take("T", "alerts", _alert_message(10, "Alert", dataclasses.asdict(middle)))
    pit.take("T", "alerts", _alert_message(11, "Alert", dataclasses.asdict(down)))
    pit.take("T", "alerts", _alert_message(12, "AlertAcknowledged", dataclasses.asdict(by_key)))
    alert = written["alert"]
    malformed = [
        {**written, "alert": {**alert, "seat": []}},
        {**written, "alert": {**alert, "seat": "5"}},
        {**written, "alert": {**alert, "seat": 7}},
        {**written, "alert": {**alert, "card": "Ah"}},
        {**written, "alert": {**alert, "loss": 12.5}},
        {**written, "alert": {**alert, "hole": "Ah"}},
        {**written, "alert": {k: v for k, v in alert.items() if k != "round_no"}},
        {**written, "alert": [alert]},
        {k: v for k, v in written.items() if k != "by"},
        {k: v for k, v in written.items() if k != "alert"},
        {**written, "by": ""},
        {**written, "by": ["sue"]},
        {**written, "role": "dealer"},
        {**written, "source": "radio"},
        {**written, "waiting": -1},
        {**written, "waiting": MAX_WAITING},
        {**written, "waiting": True},
        {**written, "round_no": "9"},
        {**written, "note": "x"},
        [written],
        "acknowledged",
    ]
    with caplog.at_level("WARNING", logger="controller.floor.pit"):
        for seq, data in enumerate(malformed, start=20):
            pit.take("T", "alerts", _alert_message(seq, "AlertAcknowledged", data))
        pit.take("T", "alerts", _alert_message(50, "AlertNotShown", {"round_no": 9, "alert": alert, "reason": "x"}))
        pit.take("T", "alerts", _alert_message(51, ["Alert"], dataclasses.asdict(down)))
        lines = pit.render().splitlines()
    summary = pit.tables["T"]
    assert (summary.alerts_heard, len(summary.acknowledged), summary.malformed) == (2, 1, len(malformed) + 2)
    assert lines[1].split()[-2:] == ["2", "1"]
    assert lines[2].startswith("ALERT T: seat 3 plays as if it saw the middle card") and \
        lines[2].endswith("; acknowledged by SUP-7")
    assert lines[3].startswith("ALERT T: seat 5 (player P-5) plays as if it saw the down card") and \
        lines[3].endswith("; not acknowledged") and len(lines) == 4
    said = [r.getMessage() for r in caplog.records if r.name == "controller.floor.pit"]
    assert len(said) == floor_pit.MALFORMED_LINES < len(malformed) + 2  # the rest counted, not said
    assert said[0] == "floor watch: table 'T', record 20: an AlertAcknowledged: the seat is not a seat of the table"
    assert said[6] == "floor watch: table 'T', record 26: an AlertAcknowledged: the alert has no round_no"
    pit.take("T", "alerts", _alert_message(60, "AlertAcknowledged", written))  # as written: acknowledges it
    assert pit.render().splitlines()[3].endswith("; acknowledged by sue") and len(summary.acknowledged) == 2


#: Table ids of other scripts that table.yaml takes (controller/game/table.py refuses only controls, format
#: characters, surrogates and line or paragraph separators), each with what it holds beyond ASCII (Unicode
#: general categories): a letter with a diaeresis (Lu), CJK (Lo), Cyrillic and Greek letters (Lu, Ll), a no-break
#: space (Zs), a combining diaeresis (Mn), a currency sign (Sc).
OTHER_SCRIPTS = ["Tisch-Ü1", "桌-7", "Стол 3", "Τραπέζι-2", "Mesa\u00a0ñ", "Ta\u0308fel", "€-1"]
#: Text never shown as itself, by the category of one of its characters: controls (Cc: the escape, a C1 CSI that
#: is an escape of its own, next line, a tab), format characters (Cf: a right-to-left override, a zero-width
#: space), the line and paragraph separators (Zl, Zp), private use (Co, in the BMP and in plane 15) and an
#: unassigned code point (Cn: U+0378).
NEVER_SHOWN = ["T\x1b[2J", "T\x9b2J", "T\x85X", "T\tX", "T\u202eX", "T\u200bX", "T\u2028X", "T\u2029X", "T\ue000X",
               "T\U000F0001X", "T\u0378X"]


def test_a_table_id_of_any_script_is_shown_as_itself_and_a_control_or_format_character_never(tmp_path):
    """A table id table.yaml takes is the table's name on the floor: ``floor watch`` shows it as itself in its
    line and its alerts' lines (docs/floor.md, "Watch"), as it shows a supervisor's name of another script; text
    holding a character that can move the terminal's cursor, end a line or reorder it is ``?``, and never reaches
    the terminal, in the table's line or its alert's."""
    template = (CONFIG_DIR / "table.yaml").read_text()
    path = tmp_path / "table.yaml"
    alert = dataclasses.asdict(Alert(7, 3, "middle", 412, 1, 30, 100, 4170))
    pit = Pit()
    for table in OTHER_SCRIPTS + NEVER_SHOWN:
        if table in OTHER_SCRIPTS:  # the project's own rule takes it
            path.write_text(template.replace("table_id: CC-01\n", f"table_id: {json.dumps(table)}\n"))
            assert load_table_config(path).table_id == table
        pit.take(table, "status", b"online")
        pit.take(table, "alerts", topics.encode({"table": table, "record": {
            "seq": 1, "time": "2026-12-01T05:00:00+00:00", "kind": "event", "round": 8, "type": "Alert",
            "data": alert}}))
        pit.take(table, "alerts", topics.encode({"table": table, "record": {
            "seq": 2, "time": "2026-12-01T05:01:00+00:00", "kind": "event", "round": 8, "type": "AlertAcknowledged",
            "data": {"round_no": 8, "alert": alert, "by": "José", "role": "supervisor", "source": "control",
                     "waiting": 0}}}))
    text = pit.render()
    lines = text.splitlines()
    assert len(lines) == 1 + 2 * len(OTHER_SCRIPTS + NEVER_SHOWN)  # the heading, a line per table, one per alert
    rows = dict(_split_at_column(line, 17) for line in lines[1:1 + len(pit.tables)])
    assert {_columns(line) for line in lines[:1 + len(pit.tables)]} == {_columns(lines[0])}  # columns in line
    assert {table: rows.get(table) for table in OTHER_SCRIPTS} == {table: "online" for table in OTHER_SCRIPTS}
    assert rows["?"] == "online" and len(rows) == len(OTHER_SCRIPTS) + 1  # every other table: one line each
    alerts = lines[1 + len(pit.tables):]
    for table in OTHER_SCRIPTS:
        assert f"ALERT {table}: seat 3 plays as if it saw the middle card (round 7, 30 rounds, evidence 10^4.1, loss " \
               f"4170) at 2026-12-01T05:00:00+00:00; acknowledged by José" in alerts
    assert sum(line.startswith("ALERT ?: seat 3 ") for line in alerts) == len(NEVER_SHOWN)
    assert not [c for c in "".join(NEVER_SHOWN) if c not in "TXJ2[" and c in text]
    assert shown("T\ud800") == "?"  # a lone surrogate (Cs): no message of the floor's format holds one
    longest = "x" * 64  # the longest table.yaml takes: a 65th character is refused
    path.write_text(template.replace("table_id: CC-01\n", f"table_id: {longest}\n"))
    assert load_table_config(path).table_id == longest
    path.write_text(template.replace("table_id: CC-01\n", f"table_id: {longest}x\n"))
    with pytest.raises(ConfigError, match="65 characters"):
        load_table_config(path)
    simulated = longest + "-simulated"  # its simulated play's id on the floor (docs/floor.md)
    assert shown(simulated) == simulated and shown(simulated + "x") == "?" and shown("") == "?"


def _columns(text):
    """The terminal columns ``text`` takes, counted independently of the watch's own code, by Unicode's tables:
    East Asian wide and fullwidth characters 2, combining marks 0, any other 1."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
               for c in text)


def _split_at_column(line, column):
    """A table's line of the watch split where the terminal's ``column`` begins (``_columns``): ``(the table id,
    the status that starts there)``."""
    for index in range(len(line)):
        if _columns(line[:index]) == column - 1:
            return line[:index].rstrip(), line[index:].split()[0]
    raise AssertionError(f"no column {column} in {line!r}")


@pytest.mark.parametrize("encoding, first", [("utf-8", ["桌-7", "online"]), ("ascii", ["?-7", "online"])])
def test_the_watch_prints_a_table_id_of_another_script_as_its_terminal_can(mosquitto, encoding, first):
    """From the broker to the terminal: a table publishing under ``桌-7`` is ``桌-7`` on a UTF-8 terminal; on one
    whose locale cannot write the character (standard output in ASCII here) the character is ``?`` and the watch
    goes on, never stopped by an encoding error."""
    _retained(mosquitto.port, "桌-7", "status", b"online")
    _, lines = _watch_until(mosquitto.port, first, signal.SIGTERM, PYTHONIOENCODING=encoding)
    assert any(line.split()[:2] == first for line in _summaries(lines)[-1])


# ---------------------------------------------------------------------------------------------- the audit
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_audit_stopped_while_it_listens_checks_what_it_heard(mosquitto, signum):
    """``floor audit --for`` a long time, stopped by a service manager's SIGTERM or a Ctrl-C once it listens (its
    ``-v`` line says so): it ends its listening there and checks what it heard, as at the end of ``--for``
    (docs/floor.md), printing its count of tables and problems, status 0 (nothing published: nothing wrong);
    never killed with status 143 and nothing said."""
    process = subprocess.Popen([sys.executable, "-m", "controller", "floor", "audit", "-v", "--broker", "127.0.0.1",
                                "--port", str(mosquitto.port), "--for", "600"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        errors = Output(process.stderr)
        errors.wait_for(lambda lines: process.poll() is not None or any("listening to every table" in line
                                                                         for line in lines), 90, "the audit listening")
        assert process.poll() is None, (process.returncode, errors.lines)
        process.send_signal(signum)
        out, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(30)
    assert (process.returncode, out) == (0, "0 table(s), 0 problem(s)\n"), errors.lines


def test_an_audit_interrupted_while_it_checks_is_an_interrupt_never_nothing_wrong(mosquitto, monkeypatch):
    """A Ctrl-C while the audit checks what it heard (``KeyboardInterrupt`` inside the check) ends the command as
    an interrupt: ``crisscross: interrupted``, status 130 (128 + SIGINT), nothing printed as a result; it used to
    end with status 0, the audit's "nothing wrong"."""
    from controller.floor.audit import Auditor
    from tests.cli_helpers import crisscross

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(Auditor, "problems", interrupted)
    shown = crisscross("floor", "audit", "--broker", "127.0.0.1", "--port", mosquitto.port, "--for", "0")
    assert (shown.returncode, shown.stdout, shown.stderr) == (130, "", "crisscross: interrupted\n")


def _event_message(seq: int, after: int, type_: str, data) -> bytes:
    """A table's ``events`` message carrying its public record ``seq`` of ``type_`` with ``data``."""
    return topics.encode({"table": "T", "after": after, "record": {
        "seq": seq, "time": "2026-12-01T05:00:00+00:00", "kind": "record", "round": 9, "type": type_, "data": data}})


def test_a_state_not_text_is_shown_as_unknown_and_counted_malformed(caplog):
    """docs/floor.md, "Watch": a value other than a whole number or short text is shown as ``?``; a view whose
    ``state`` is not text (or whose ``round_no`` is not a whole number) is not the table's: counted malformed."""
    pit = Pit()
    pit.take("T", "state", b'{"table":"T","seq":4,"view":{"state":"betting","round_no":3}}')
    assert pit.render().splitlines()[1].split()[:4] == ["T", "?", "3", "betting"]
    pit.take("T", "state", b'{"table":"T","seq":5,"view":{"state":["x"],"round_no":3}}')
    pit.take("T", "state", b'{"table":"T","seq":6,"view":{"state":"dealing","round_no":{"a":1}}}')
    row = pit.render().splitlines()[1]
    assert row.split()[:4] == ["T", "?", "-", "?"] and "['x']" not in row and "dealing" not in row
    assert pit.tables["T"].malformed == 2
    assert caplog.text.count("a state whose view's state is not text") == 2


def test_an_alert_not_shaped_as_the_table_journals_it_is_neither_listed_nor_counted(caplog):
    """An ``Alert`` on ``alerts`` carries ``controller.round.alerts.Alert``'s fields, its seat and figures whole
    numbers: one whose seat is text, or that lacks its fields, is malformed (counted, said), never listed nor
    counted as heard; a well-formed one still is."""
    alert = {"seat": 2, "card": "middle", "round_no": 30, "rounds": 14, "evidence_log10_hundredths": 412,
             "loss": 4200, "first_round": 17, "share_percent": 100}
    pit = Pit()
    pit.take("T", "alerts", _alert_message(6, "Alert", {"seat": "x"}))
    pit.take("T", "alerts", _alert_message(7, "Alert", {**alert, "seat": "x"}))
    pit.take("T", "alerts", _alert_message(8, "Alert", {**alert, "card": 3}))
    pit.take("T", "alerts", _alert_message(9, "Alert", alert))
    table = pit.tables["T"]
    assert (table.alerts_heard, table.malformed) == (1, 3)
    alert_lines = [line for line in pit.render().splitlines() if line.startswith("ALERT")]
    assert len(alert_lines) == 1 and alert_lines[0].startswith("ALERT T: seat 2 plays as if it saw the middle card")
    assert "the alert's seat is not a whole number" in caplog.text


def test_a_mispay_accepted_not_as_the_table_writes_it_is_not_counted_accepted():
    """A ``MispayAccepted`` (``controller.round.commands.MispayAccepted``) names the seat, the spots that differ
    (``differences``) and ``short`` and ``over`` (whole minor units from 0). One with other fields (``spots``)
    is malformed, not an accepted mispay; one as the table writes it counts, its amount the spots' differences
    short and over alike: |-500| + |200| = 700."""
    good = {"round_no": 9, "seat": 4, "expected": {"ante_across": 1000}, "seen": {"ante_across": 500},
            "differences": [{"spot": "ante_across", "expected": 1000, "seen": 500, "difference": -500},
                            {"spot": "ante_down", "expected": 0, "seen": 200, "difference": 200}],
            "short": 500, "over": 200, "by": "sue", "role": "supervisor"}
    pit = Pit()
    pit.take("T", "events", _event_message(1, 0, "MispayAccepted", {"round_no": 9, "seat": 1,
                                                                      "spots": {"a": {"expected": "q"}}}))
    pit.take("T", "events", _event_message(2, 1, "MispayAccepted", {**good, "short": "q"}))
    pit.take("T", "events", _event_message(3, 2, "MispayAccepted", {**good, "seat": "x"}))
    day = date(2026, 12, 1)  # the records' UTC day
    assert pit.tables["T"].mispays_on(day)["accepted"] == [0, 0]
    assert pit.tables["T"].malformed == 3
    pit.take("T", "events", _event_message(4, 3, "MispayAccepted", good))
    assert pit.tables["T"].mispays_on(day)["accepted"] == [1, 700]
