"""End-to-end tests of `crisscross settle [FILE]` / `python -m controller settle [FILE]`.

Expected payouts are worked out by hand from NY 5324.39(e)(9) and (f); the error contract (exit status 2,
exactly one stderr line naming the seat and the field, nothing on stdout) comes from the API contract.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import crisscross

ROOT = Path(__file__).resolve().parent.parent

EXAMPLE = {
    "jurisdiction": "ny",
    "community": {"across": ["7d", "2c"], "down": ["9s", "3h"], "middle": "Kc"},
    "seats": [
        {
            "seat": 1,
            "cards": ["Jh", "Jd"],
            "wagers": {"ante_across": 500, "ante_down": 500, "across": 1500, "down": 500, "middle": 1500,
                       "five_card_bonus": 500},
        }
    ],
}

# Worked by hand:
# across hand Jh Jd 7d 2c Kc = pair of jacks -> ante_across 1:1 (+500), across 1:1 (+1500)  NY (f)(1),(2)
# down hand   Jh Jd 9s 3h Kc = pair of jacks -> ante_down 1:1 (+500), down 1:1 (+500)        NY (f)(1),(2)
# middle: both win, higher-ranking hand is a pair of jacks -> 1:1 (+1500)                   NY (e)(9)(ii)
# board 7d 2c 9s 3h Kc = high card -> five-card bonus loses (-500)                          NY (f)(3)
EXAMPLE_WAGERS = {
    "ante_across": {"amount": 500, "outcome": "win", "net": 500},
    "ante_down": {"amount": 500, "outcome": "win", "net": 500},
    "across": {"amount": 1500, "outcome": "win", "net": 1500},
    "down": {"amount": 500, "outcome": "win", "net": 500},
    "middle": {"amount": 1500, "outcome": "win", "net": 1500},
    "five_card_bonus": {"amount": 500, "outcome": "lose", "net": -500},
}
EXAMPLE_NET = 4000


def run_file(tmp_path, data, name="round.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return subprocess.run(
        [sys.executable, "-m", "controller", "settle", str(path)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )


def run_stdin(data):
    return subprocess.run(
        [sys.executable, "-m", "controller", "settle"],
        input=json.dumps(data), capture_output=True, text=True, cwd=ROOT, timeout=60,
    )


def settle_in_process(data, tmp_path=None) -> subprocess.CompletedProcess:
    """``crisscross settle`` in this process (``tests.cli_helpers``), from a file in ``tmp_path`` or, without it,
    from standard input; the tests above run the real process."""
    text = json.dumps(data) if not isinstance(data, str) else data
    if tmp_path is None:
        return crisscross("settle", stdin=text)
    path = tmp_path / "round.json"
    path.write_text(text)
    return crisscross("settle", str(path))


def check_example_output(proc):
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["jurisdiction"] == "ny"
    (seat,) = out["seats"]
    assert seat["seat"] == 1
    assert seat["across_hand"]["category"] == "pair"
    assert sorted(seat["across_hand"]["cards"]) == sorted(["Jh", "Jd", "7d", "2c", "Kc"])
    assert seat["down_hand"]["category"] == "pair"
    assert sorted(seat["down_hand"]["cards"]) == sorted(["Jh", "Jd", "9s", "3h", "Kc"])
    assert seat["five_card_bonus_hand"]["category"] == "high_card"
    assert sorted(seat["five_card_bonus_hand"]["cards"]) == sorted(["7d", "2c", "9s", "3h", "Kc"])
    assert seat["wagers"] == EXAMPLE_WAGERS
    assert seat["net"] == EXAMPLE_NET


def test_example_from_file_ny_5324_39_e_9_f(tmp_path):
    """The issue's example via FILE: pairs of jacks across and down win 1:1 (NY (f)(1),(2)), middle 1:1
    (NY (e)(9)(ii)), high-card board loses the bonus (NY (f)(3)); net +4000."""
    check_example_output(run_file(tmp_path, EXAMPLE))


def test_example_from_stdin_ny_5324_39_e_9_f():
    """The same example read from stdin gives the same settlement."""
    check_example_output(run_stdin(EXAMPLE))


def test_console_script_example(tmp_path):
    """The `crisscross` console script (pyproject [project.scripts]) settles the example from a file."""
    exe = shutil.which("crisscross")
    if exe is None:
        pytest.skip("crisscross console script not installed (pip install -e .)")
    path = tmp_path / "round.json"
    path.write_text(json.dumps(EXAMPLE))
    proc = subprocess.run([exe, "settle", str(path)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    check_example_output(proc)


def test_cli_settlement_order_ny_5324_39_e_9_pa_674a_11_g(tmp_path):
    """NY 5324.39(e)(9), PA 674a.11(g): the printed seats are in settlement order, highest seat first.
    Seat 4 (Ah Ad): pairs of aces both ways -> 1:1 everywhere: +100 x 5 = +500.
    Seat 2 (5h 5d): pairs of 5s both ways -> all lose: -500. Board high card: no bonus placed."""
    data = copy.deepcopy(EXAMPLE)
    wagers = {"ante_across": 100, "ante_down": 100, "across": 100, "down": 100, "middle": 100}
    data["seats"] = [
        {"seat": 2, "cards": ["5h", "5d"], "wagers": dict(wagers)},
        {"seat": 4, "cards": ["Ah", "Ad"], "wagers": dict(wagers)},
    ]
    proc = run_file(tmp_path, data)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [s["seat"] for s in out["seats"]] == [4, 2]
    nets = {s["seat"]: s["net"] for s in out["seats"]}
    assert nets == {4: 500, 2: -500}


# --------------------------------------------------------------------------- invalid input


def with_seat(**changes):
    data = copy.deepcopy(EXAMPLE)
    seat = data["seats"][0]
    seat["seat"] = changes.pop("seat", 3)
    for key, value in changes.pop("wagers", {}).items():
        if value is None:
            seat["wagers"].pop(key, None)
        else:
            seat["wagers"][key] = value
    if "cards" in changes:
        seat["cards"] = changes.pop("cards")
    assert not changes
    return data


def community(**changes):
    data = copy.deepcopy(EXAMPLE)
    data["community"].update(changes)
    data["seats"][0]["seat"] = 3
    return data


INVALID = [
    # id, data, expected "seat N" (or None), substring(s) the line must contain (the field)
    ("unknown_seat_card", with_seat(cards=["Jh", "10d"]), 3, ["cards[1]"]),
    ("lowercase_seat_card", with_seat(cards=["jh", "Jd"]), 3, ["cards[0]"]),
    ("unknown_community_card", community(down=["9x", "3h"]), None, ["community.down[0]"]),
    ("duplicate_seat_vs_community", with_seat(cards=["Jh", "Kc"]), 3, ["cards"]),
    ("duplicate_in_community", community(down=["9s", "2c"]), None, ["community"]),
    ("unequal_antes", with_seat(wagers={"ante_down": 1000}), 3, ["wagers.ante_"]),
    ("bet_four_times_ante", with_seat(wagers={"across": 2000}), 3, ["wagers.across"]),
    ("bet_not_a_multiple", with_seat(wagers={"middle": 750}), 3, ["wagers.middle"]),
    ("down_after_across_fold", with_seat(wagers={"across": None}), 3, ["wagers.down"]),
    ("middle_after_down_fold", with_seat(wagers={"down": None}), 3, ["wagers.middle"]),
    ("bonus_without_antes",
     with_seat(wagers={"ante_across": None, "ante_down": None, "across": None, "down": None, "middle": None}),
     3, ["wagers."]),
    ("float_amount", with_seat(wagers={"down": 500.5}), 3, ["wagers.down"]),
    ("string_amount", with_seat(wagers={"five_card_bonus": "500"}), 3, ["wagers.five_card_bonus"]),
    ("zero_amount", with_seat(wagers={"five_card_bonus": 0}), 3, ["wagers.five_card_bonus"]),
    ("negative_amount", with_seat(wagers={"five_card_bonus": -500}), 3, ["wagers.five_card_bonus"]),
    ("unknown_wager_name", with_seat(wagers={"insurance": 500}), 3, ["wagers.insurance"]),
    ("seat_zero", with_seat(seat=0), None, ["seat"]),
    ("seat_seven", with_seat(seat=7), None, ["seat"]),
]


def repeated_seat():
    data = with_seat(seat=5)
    data["seats"].append({"seat": 5, "cards": ["Ah", "Ad"], "wagers": dict(data["seats"][0]["wagers"])})
    return data


def unknown_jurisdiction():
    data = copy.deepcopy(EXAMPLE)
    data["jurisdiction"] = "zz"
    return data


INVALID += [
    ("repeated_seat", repeated_seat(), 5, ["seat"]),
    ("unknown_jurisdiction", unknown_jurisdiction(), None, ["jurisdiction"]),
]


def check_error(proc, seat, fields):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    if seat is not None:
        assert f"seat {seat}" in line, line
    for field in fields:
        assert field in line, line


@pytest.mark.parametrize("case", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_input_from_file_exits_2_with_one_line(tmp_path, case):
    """Contract: invalid input -> exit 2, exactly one stderr line naming "seat N" (when a seat is at fault)
    and the field, nothing on stdout. Rules behind the classes: one deck (NY 5324.39(a)(1)), equal antes
    and 1x-3x bets (NY (c)(4)), no bet after a fold (PA 674a.11(b),(d),(f)), seats 1-6 (NY (a)(1))."""
    _, data, seat, fields = case
    check_error(settle_in_process(data, tmp_path), seat, fields)


@pytest.mark.parametrize("case", INVALID[:6], ids=[c[0] for c in INVALID[:6]])
def test_invalid_input_from_stdin_exits_2_with_one_line(case):
    """The same error contract holds when the round is read from stdin."""
    _, data, seat, fields = case
    check_error(settle_in_process(data), seat, fields)


def without(key, where="seat"):
    data = copy.deepcopy(EXAMPLE)
    data["seats"][0]["seat"] = 3
    (data["seats"][0] if where == "seat" else data["community"]).pop(key)
    return data


@pytest.mark.parametrize("data, expected", [
    (without("cards"), "<stdin>: seat 3: cards: missing"),
    (without("across", "community"), "<stdin>: community.across: missing"),
    (without("down", "community"), "<stdin>: community.down: missing"),
    (without("middle", "community"), "<stdin>: community.middle: missing"),
])
def test_a_missing_key_is_reported_as_missing(data, expected):
    """A key left out is "missing", as for every other key, not a wrong type."""
    proc = settle_in_process(data)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [expected]


# --------------------------------------------------------------------------- several rounds, one per line


def test_lines_settle_each_round_and_name_the_line_of_a_refused_one():
    """``--lines`` (a checker's batch): one output line per round, in order, with its input's line; the rounds
    are the worked examples above (NY 5324.39(e)(9), (f)). A refused round is one ``error`` naming its line, on
    standard output and standard error, the exit status is 2, and the rounds after it are still settled."""
    order = copy.deepcopy(EXAMPLE)
    wagers = {"ante_across": 100, "ante_down": 100, "across": 100, "down": 100, "middle": 100}
    order["seats"] = [{"seat": 2, "cards": ["5h", "5d"], "wagers": dict(wagers)},
                      {"seat": 4, "cards": ["Ah", "Ad"], "wagers": dict(wagers)}]
    refused = copy.deepcopy(EXAMPLE)
    refused["seats"][0]["cards"] = ["Kc", "Jd"]  # the middle card again: one deck (NY 5324.39(a)(1))
    text = "\n".join([json.dumps(EXAMPLE), "", json.dumps(refused), json.dumps(order), '{"jurisdiction": "ny",'])
    proc = crisscross("settle", "--lines", stdin=text + "\n")
    assert proc.returncode == 2
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["line"] for a in answers] == [1, 3, 4, 5]  # the blank line 2 is no round
    assert answers[0]["seats"][0]["wagers"] == EXAMPLE_WAGERS and answers[0]["seats"][0]["net"] == EXAMPLE_NET
    assert "error" not in answers[0] and "error" not in answers[2]
    assert answers[1]["error"].startswith("<stdin>: line 3: seat 1: ") and "Kc" in answers[1]["error"]
    assert {s["seat"]: s["net"] for s in answers[2]["seats"]} == {4: 500, 2: -500}
    assert [s["seat"] for s in answers[2]["seats"]] == [4, 2]
    assert answers[3]["error"].startswith("<stdin>: line 5, column ") and "invalid JSON" in answers[3]["error"]
    assert proc.stderr.splitlines() == [answers[1]["error"], answers[3]["error"]]


def test_lines_from_a_real_process_give_what_one_round_at_a_time_gives(tmp_path):
    """The batch and the one-round form are the same settlement (the process, as ``hil.checks`` runs it)."""
    path = tmp_path / "rounds.jsonl"
    path.write_text(json.dumps(EXAMPLE) + "\n" + json.dumps(EXAMPLE) + "\n")
    proc = subprocess.run([sys.executable, "-m", "controller", "settle", "--lines", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    single = json.loads(run_file(tmp_path, EXAMPLE).stdout)
    assert [json.loads(line) for line in proc.stdout.splitlines()] == [{"line": 1, **single}, {"line": 2, **single}]


# --------------------------------------------------------------------------- the jurisdiction of a batch


def _house_file(tmp_path: Path, jacks_bet_odds: int) -> Path:
    """``ny.yaml`` copied to ``tmp_path``, its bet table paying a pair of jacks or better ``jacks_bet_odds`` to 1
    (New York's minimum is 1 to 1, NY 5324.39(f)(2): more is allowed)."""
    text = (ROOT / "config" / "jurisdictions" / "ny.yaml").read_text(encoding="utf-8")
    head, bet, rest = text.partition("  bet:\n")
    rest = rest.replace("pair_jacks_or_better: 1\n", f"pair_jacks_or_better: {jacks_bet_odds}\n", 1)
    path = tmp_path / "house.yaml"
    path.write_text(head + bet + rest, encoding="utf-8")
    return path


def test_lines_read_the_jurisdiction_once_and_the_next_command_reads_it_anew(tmp_path, mocker):
    """A batch reads its pay-table file once, and a file changed between two commands is read anew, even at
    the same size. Worked by hand (NY 5324.39(e)(9), (f), the example above): the pair of jacks across and
    down pays the antes 1 to 1 (+500 +500), the bonus loses (-500); at 1 to 1 the across, down and middle
    bets win 1500 + 500 + 1500 (net 4000), at 2 to 1 they win 3000 + 1000 + 3000 (net 7500)."""
    from controller.game import settlement

    path = _house_file(tmp_path, 1)
    line = json.dumps({**EXAMPLE, "jurisdiction": str(path)})
    loads = mocker.spy(settlement, "load_jurisdiction")
    first = crisscross("settle", "--lines", stdin="\n".join([line] * 3) + "\n")
    assert first.returncode == 0, first.stderr
    assert [json.loads(a)["seats"][0]["net"] for a in first.stdout.splitlines()] == [4000] * 3
    assert loads.call_count == 1
    size = path.stat().st_size
    _house_file(tmp_path, 2)
    assert path.stat().st_size == size  # a change a cache keyed by the file's size alone would miss
    second = crisscross("settle", "--lines", stdin=line + "\n")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["seats"][0]["net"] == 7500
    assert loads.call_count == 2


def test_lines_refuse_a_bad_jurisdiction_file_on_every_line_that_names_it(tmp_path):
    """A pay-table file that cannot be loaded is not kept: every round naming it is refused with the same
    message (its line: below New York's minimum, NY 5324.39(f)(2) "no less than" 1 to 1), the others settle."""
    path = _house_file(tmp_path, 1)
    path.write_text(path.read_text(encoding="utf-8").replace("two_pair: 2\n", "two_pair: 1\n"), encoding="utf-8")
    bad = json.dumps({**EXAMPLE, "jurisdiction": str(path)})
    proc = crisscross("settle", "--lines", stdin="\n".join([bad, json.dumps(EXAMPLE), bad]) + "\n")
    assert proc.returncode == 2
    answers = [json.loads(a) for a in proc.stdout.splitlines()]
    assert answers[1]["seats"][0]["net"] == EXAMPLE_NET
    assert answers[0]["error"].startswith(f"<stdin>: line 1: jurisdiction: {path}: line ")
    assert "pay_tables.bet.pays.two_pair: two_pair pays 1 to 1, below the minimum 2 to 1" in answers[0]["error"]
    assert answers[2]["error"] == answers[0]["error"].replace("line 1:", "line 3:", 1)


def test_lines_output_is_the_compact_json_of_each_settlement(tmp_path):
    """Each answer of ``--lines`` is spelled exactly as ``json.dumps(..., separators=(",", ":"))`` spells the
    settlement of its round, ``"line"`` first: with a jurisdiction code, a path with a quote and a backslash,
    and a path outside ASCII (escaped as \\uXXXX); seats of every number, folds at each decision, bonuses."""
    import random

    from controller.game.settlement import settle_round

    ny = (ROOT / "config" / "jurisdictions" / "ny.yaml").read_text(encoding="utf-8")
    quoted, accented = tmp_path / 'a"b\\c.yaml', tmp_path / "maison-é.yaml"
    quoted.write_text(ny, encoding="utf-8")
    accented.write_text(ny, encoding="utf-8")
    rng = random.Random(33)
    rounds = []
    for number in range(60):
        deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
        rng.shuffle(deck)
        seats = []
        for i, seat in enumerate(sorted(rng.sample(range(1, 7), 1 + number % 6))):
            ante = rng.choice((100, 500, 2500))
            wagers = {"ante_across": ante, "ante_down": ante}
            for decision in ("across", "down", "middle")[: rng.randint(0, 3)]:
                wagers[decision] = rng.randint(1, 3) * ante
            if rng.random() < 0.5:
                wagers["five_card_bonus"] = 500
            seats.append({"seat": seat, "cards": deck[5 + 2 * i: 7 + 2 * i], "wagers": wagers})
        jurisdiction = ("ny", "NY", str(quoted), str(accented))[number % 4]
        rounds.append({"jurisdiction": jurisdiction, "community": {"across": deck[:2], "down": deck[2:4],
                                                                    "middle": deck[4]}, "seats": seats})
    proc = crisscross("settle", "--lines", stdin="".join(json.dumps(r) + "\n" for r in rounds))
    assert proc.returncode == 0, proc.stderr
    expected = [json.dumps({"line": n, **settle_round(r)}, separators=(",", ":")) for n, r in enumerate(rounds, 1)]
    assert proc.stdout.splitlines() == expected
    assert "\\u00e9" in proc.stdout and '\\"b\\\\c' in proc.stdout


READ_CASES = [
    json.dumps(EXAMPLE), json.dumps(EXAMPLE, indent=2), json.dumps(EXAMPLE, separators=(",", ":")),
    '{"jurisdiction": "ny", "jurisdiction": "pa"}',  # a key twice
    '{"a": {"b": 1, "b": 1}, "c": "x:y"}',  # a key twice, and a colon in a string to hide it
    '{"a:b": 1, "c": [1, 2, {"d": "e"}]}', '{"amount": 18446744073709551615}', '{"amount": 18446744073709551616}',
    '{"amount": -9223372036854775809}', '{"amount": 500.0}', '{"amount": 1e400}', '{"amount": NaN}', '[-0, -0.0]',
    '"\\ud800"', '"\ud800"', "\ufeff{}", "{}", "[]", "3", "1.5", "null", '"a:b"', "", "[1,]", "{'a': 1}", "01",
    '{"a": 1}x', "[" * 1020 + "]" * 1020, "[" * 5000 + "]" * 5000, '{"seats": [{"seat": 1, "seat": 1}]}',
]


@pytest.mark.parametrize("text", READ_CASES, ids=range(len(READ_CASES)))
def test_a_round_is_read_as_json_reads_it(text):
    """``read_round`` (orjson first, json where they could differ) gives what ``json.loads`` with the
    repeated-key check gives: the same value, the same types (an integer, a float), the same keys in the same
    order, or the same exception and message."""
    from controller.cli.settle import _unique_keys, read_round

    def outcome(read):
        try:
            return "value", repr(read(text))
        except RecursionError:
            return "RecursionError", ""
        except ValueError as exc:  # json.JSONDecodeError, or a key written twice
            return type(exc).__name__, str(exc)

    assert outcome(read_round) == outcome(lambda t: json.loads(t, object_pairs_hook=_unique_keys))


def test_a_closed_standard_output_is_one_line_and_status_2(tmp_path):
    """Started with its standard output closed (``>&-``), settle says so in one line, without a traceback."""
    import os

    path = tmp_path / "round.json"
    path.write_text(json.dumps(EXAMPLE))
    proc = subprocess.run([sys.executable, "-m", "controller", "settle", "--lines", str(path)], cwd=ROOT,
                          stderr=subprocess.PIPE, text=True, timeout=60, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "crisscross: settle: standard output is closed: nowhere to write the settlements"]


def test_an_input_without_end_or_not_utf8_is_refused_in_one_line_and_never_held(tmp_path):
    """Input is read at most ``MAX_ROUND_BYTES`` (1 MiB) a round: ``/dev/zero`` (no end) is refused after that
    much, a file that is not UTF-8 names its first such byte; one line each, exit 2, no traceback."""
    from controller.cli.settle import MAX_ROUND_BYTES

    assert MAX_ROUND_BYTES == 1 << 20
    proc = crisscross("settle", "/dev/zero")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "/dev/zero: longer than 1,048,576 bytes: not one round (a round's JSON is a few thousand)\n"
    latin = tmp_path / "latin-1.json"
    latin.write_bytes(json.dumps(EXAMPLE).replace('"ny"', '"n\u00e9"').encode("latin-1"))
    proc = crisscross("settle", str(latin))
    at = json.dumps(EXAMPLE).index('"ny"') + 3  # the byte 0xe9, counted from 1
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"{latin}: not UTF-8 text: byte 0xe9 at byte {at}\n"


def test_lines_refuse_a_line_too_long_or_not_utf8_alone_and_settle_the_others(tmp_path, monkeypatch):
    """With ``--lines`` a line longer than the bound (here 4,096 bytes) or not UTF-8 is refused by its number,
    read to its end without being held; the lines around it are settled, numbered as before (a carriage return
    also ends a line)."""
    from controller.cli import settle as settle_cli

    monkeypatch.setattr(settle_cli, "MAX_ROUND_BYTES", 4096)
    good = json.dumps(EXAMPLE).encode()
    path = tmp_path / "rounds.jsonl"
    path.write_bytes(b"\n".join([good, b"x" * 10_000, b"\xff" + good, good + b"\r" + good, good]) + b"\n")
    proc = crisscross("settle", "--lines", str(path))
    assert proc.returncode == 2
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["line"] for a in answers] == [1, 2, 3, 4, 5, 6]
    assert answers[1]["error"] == (f"{path}: line 2: longer than 4,096 bytes: not one round (a round's JSON is a "
                                   f"few thousand)")
    assert answers[2]["error"] == f"{path}: line 3: not UTF-8 text: byte 0xff at byte 1"
    assert all(answers[n]["seats"][0]["net"] == EXAMPLE_NET for n in (0, 3, 4, 5))
    assert proc.stderr.splitlines() == [answers[1]["error"], answers[2]["error"]]


def test_a_code_is_a_code_whatever_file_of_that_name_the_current_folder_holds(tmp_path, monkeypatch):
    """A pay-table file named ``ny`` in the current folder, paying two pair 200 to 1, was read for the code ``ny``
    (and the output still said ``"jurisdiction": "ny"``): a code is now always the jurisdiction's own file, and
    the file is read when given as a path (``./ny``)."""
    text = (ROOT / "config" / "jurisdictions" / "ny.yaml").read_text()
    assert text.count("two_pair: 2\n") == 1
    (tmp_path / "ny").write_text(text.replace("two_pair: 2\n", "two_pair: 200\n"))
    monkeypatch.chdir(tmp_path)
    # down hand Kh 4h 9s 9h 4c: two pair, the down bet paid 2 to 1 (NY 9 NYCRR 5324.39(f)(2)); every decision
    # bet (a missing middle bet is a fold, which forfeits the rest)
    round_ = {"jurisdiction": "ny", "community": {"across": ["2c", "3d"], "down": ["9s", "9h"], "middle": "4c"},
              "seats": [{"seat": 1, "cards": ["Kh", "4h"],
                         "wagers": {"ante_across": 500, "ante_down": 500, "across": 500, "down": 500,
                                     "middle": 500}}]}
    for given, net in (("ny", 1000), ("./ny", 100000)):
        proc = crisscross("settle", stdin=json.dumps({**round_, "jurisdiction": given}))
        assert proc.returncode == 0, proc.stderr
        seat = json.loads(proc.stdout)["seats"][0]
        assert seat["down_hand"]["category"] == "two_pair"
        assert seat["wagers"]["down"] == {"amount": 500, "outcome": "win", "net": net}, seat


def test_a_line_that_never_ends_is_named_at_once(tmp_path):
    """``settle --lines /dev/zero`` read on for ever (as ``wc -l`` would: a line has no end) in bounded memory, but
    said nothing until the line's end: the line is named as soon as it is longer than a round may be, then read on
    (and dropped) to its end."""
    import select

    proc = subprocess.Popen([sys.executable, "-m", "controller", "settle", "--lines", "/dev/zero"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        said = proc.stderr.readline().decode() if ready else ""
        assert proc.poll() is None  # still reading the line to its end
    finally:
        proc.kill()
        proc.wait(30)
        proc.stderr.close()
    assert said == "/dev/zero: line 1: longer than 1,048,576 bytes: not one round (a round's JSON is a few thousand)\n"


def test_lines_read_a_refused_line_to_its_end_only_within_a_bound(tmp_path, monkeypatch):
    """With ``--lines`` a line too long (here 4,096 bytes) is read on to its end within ``MAX_LINE_BYTES`` (here
    65,536): its end within them, the next line is settled; not within them, the input ends there, said in one
    more line on standard error, exit 2, and nothing after is read (the following line, a good round, is never
    answered)."""
    from controller.cli import settle as settle_cli

    monkeypatch.setattr(settle_cli, "MAX_ROUND_BYTES", 4096)
    monkeypatch.setattr(settle_cli, "MAX_LINE_BYTES", 65_536)
    good = json.dumps(EXAMPLE).encode()
    path = tmp_path / "rounds.jsonl"
    path.write_bytes(b"\n".join([good, b"x" * 65_535, good, b"x" * 65_536, good]) + b"\n")
    proc = crisscross("settle", "--lines", str(path))
    assert proc.returncode == 2
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["line"] for a in answers] == [1, 2, 3, 4]
    assert answers[0]["seats"][0]["net"] == answers[2]["seats"][0]["net"] == EXAMPLE_NET
    too_long = "longer than 4,096 bytes: not one round (a round's JSON is a few thousand)"
    assert (answers[1]["error"], answers[3]["error"]) == (f"{path}: line 2: {too_long}", f"{path}: line 4: {too_long}")
    assert proc.stderr.splitlines() == [answers[1]["error"], answers[3]["error"],
                                        f"{path}: line 4: no line end within 65,536 bytes: the rest of the input is "
                                        f"not read"]


@pytest.mark.parametrize("source", ["/dev/zero", "pipe"])
def test_lines_of_an_input_without_end_stop(source):
    """``settle --lines /dev/zero`` read on for ever after refusing line 1, and so did a pipe that never ends:
    each now stops after ``MAX_LINE_BYTES`` (64 MiB) with the refusal, exit 2, well within the deadline. The pipe
    gives a good round first, settled as line 1."""
    import os
    import threading

    command = [sys.executable, "-m", "controller", "settle", "--lines"]
    if source == "pipe":
        reading, writing = os.pipe()
        proc = subprocess.Popen(command, cwd=ROOT, stdin=reading, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.close(reading)

        def feed() -> None:  # until the command ends (its end of the pipe closed)
            try:
                os.write(writing, json.dumps(EXAMPLE).encode() + b"\n")
                while True:
                    os.write(writing, b"{" * 65_536)
            except OSError:  # BrokenPipeError
                pass
            finally:
                os.close(writing)

        threading.Thread(target=feed, name="endless-feed", daemon=True).start()
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        first, name = 2, "<stdin>"
    else:
        done = subprocess.run([*command, source], cwd=ROOT, capture_output=True, timeout=60)
        proc, out, err, first, name = done, done.stdout, done.stderr, 1, source
    assert proc.returncode == 2
    answers = [json.loads(line) for line in out.decode().splitlines()]
    assert [a["line"] for a in answers] == list(range(1, first + 1))
    assert err.decode().splitlines() == [
        f"{name}: line {first}: longer than 1,048,576 bytes: not one round (a round's JSON is a few thousand)",
        f"{name}: line {first}: no line end within 67,108,864 bytes: the rest of the input is not read"]
