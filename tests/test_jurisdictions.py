"""The three jurisdiction files and the regulation's minimums (NY 9 NYCRR 5324.39(f) "no less than").

Expected tables are written out here from the regulation texts (NY (f)(1)-(3)); Pennsylvania (58 Pa. Code
674a.12) and New Jersey (N.J.A.C. 13:69F-25.11) pay tables are not in our texts, and their files state the
reading taken (New York's figures). Line numbers in expected errors are found by reading the file's text here,
not from the loader.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.game.paytable import load_jurisdiction
from controller.settings.files import CONFIG_DIR, ConfigError
from tests.cli_helpers import crisscross
from tests.examples import examples

JURISDICTIONS = ("ny", "pa", "nj")
HANDS = ("pair_6s_to_10s", "pair_jacks_or_better", "two_pair", "three_of_a_kind", "straight", "flush",
         "full_house", "four_of_a_kind", "straight_flush", "royal_flush")

# NY 5324.39(f)(1): jacks or better 1:1, 6s-10s push.
NY_ANTE = dict(zip(HANDS, ["push"] + [1] * 9))
# NY 5324.39(f)(2): push, 1, 2, 3, 5, 8, 12, 40, 100, 500.
NY_BET = dict(zip(HANDS, ["push", 1, 2, 3, 5, 8, 12, 40, 100, 500]))
# NY 5324.39(f)(3): pair of 6s or better 1, two pair 3, trips 4, straight 6, flush 10, full house 15, quads 40,
# straight flush 100, royal flush 250.
NY_BONUS = dict(zip(HANDS, [1, 1, 3, 4, 6, 10, 15, 40, 100, 250]))
NY_TABLES = {"ante": NY_ANTE, "bet": NY_BET, "five_card_bonus": NY_BONUS}


def file_of(code: str):
    return CONFIG_DIR / "jurisdictions" / f"{code}.yaml"


def hand_line(text: str, table: str, hand: str) -> int:
    """1-based line of ``hand:`` inside ``pay_tables.<table>.pays`` of a jurisdiction file's text."""
    lines = text.splitlines()
    start = lines.index("pay_tables:")
    table_at = next(i for i in range(start, len(lines)) if lines[i] == f"  {table}:")
    return next(i for i in range(table_at, len(lines)) if lines[i].startswith(f"      {hand}:")) + 1


def with_line(text: str, line: int, new_value: str) -> str:
    lines = text.splitlines(keepends=True)
    key = lines[line - 1].split(":")[0]
    lines[line - 1] = f"{key}: {new_value}\n"
    return "".join(lines)


def lower(odds):
    """One step below: N -> N-1 (1 -> push), push -> 0 (zero odds are not a table entry either)."""
    if odds == "push":
        return "0"
    return "push" if odds == 1 else str(odds - 1)


def text_of(odds) -> str:
    return "push" if odds == "push" else f"{odds} to 1"


@pytest.mark.parametrize("code", JURISDICTIONS)
def test_each_jurisdiction_has_its_own_file_with_the_tables_it_cites(code):
    """NY 5324.39(f)(1)-(3); PA and NJ keep their own files (their tables are a stated reading of NY's)."""
    jurisdiction = load_jurisdiction(code)
    assert jurisdiction.code == code
    assert jurisdiction.source == file_of(code)
    for name, expected in NY_TABLES.items():
        assert getattr(jurisdiction, name).pays == expected, (code, name)
    assert jurisdiction.wheel is True
    assert jurisdiction.bet_multiples == (1, 2, 3)


@pytest.mark.parametrize("code", ("pa", "nj"))
def test_silent_texts_are_said_so_with_the_reading_taken(code):
    """PA 674a.12 and NJ 13:69F-25.11 are not in our texts: each pay table of those files names the missing
    section and the reading taken; so does the file's top level."""
    data = yaml.safe_load(file_of(code).read_text())
    missing = {"pa": "674a.12", "nj": "13:69F-25.11"}[code]
    assert "reading" in data
    for name in NY_TABLES:
        table = data["pay_tables"][name]
        assert missing in table["reading"] and "not in our texts" in table["reading"], (code, name)
        assert load_jurisdiction(code).__getattribute__(name).reading == table["reading"]


def test_every_value_carries_a_citation():
    """Each configured value (ranking flags, multiples, each pay table) comes with its citation."""
    for code in JURISDICTIONS:
        data = yaml.safe_load(file_of(code).read_text())
        entries = [data["ranking"]["wheel"], data["ranking"]["wrap_around"], data["bet_multiples"],
                   *data["pay_tables"].values()]
        for entry in entries:
            assert isinstance(entry["citation"], str) and entry["citation"].strip(), (code, entry)


def test_ny_file_cites_the_ny_paragraphs():
    data = yaml.safe_load(file_of("ny").read_text())
    assert "5324.39(f)(1)" in data["pay_tables"]["ante"]["citation"]
    assert "5324.39(f)(2)" in data["pay_tables"]["bet"]["citation"]
    assert "5324.39(f)(3)" in data["pay_tables"]["five_card_bonus"]["citation"]


# --------------------------------------------------------------------------- minimums


CASES = [(code, table, hand) for code in JURISDICTIONS for table in NY_TABLES for hand in HANDS]


@pytest.mark.parametrize("code,table,hand", CASES)
def test_paying_less_than_the_minimum_is_refused_naming_file_line_hand_odds_minimum(tmp_path, code, table, hand):
    """NY 5324.39(f) "no less than" (PA, NJ: the reading): one step below the minimum on any hand is refused.
    The error names the file, the line of the hand, the hand, the configured odds and the minimum."""
    text = file_of(code).read_text()
    line = hand_line(text, table, hand)
    minimum = NY_TABLES[table][hand]
    configured = lower(minimum)
    path = tmp_path / f"{code}.yaml"
    path.write_text(with_line(text, line, configured))
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line {line}: pay_tables.{table}.pays.{hand}:"), message
    if configured == "0":
        assert "0 is below the minimum 1" in message  # zero odds are not odds at all
    else:
        assert f"{hand} pays {text_of(lower(minimum))}, below the minimum {text_of(minimum)}" in message


@pytest.mark.parametrize("code", JURISDICTIONS)
def test_paying_more_than_the_minimum_is_accepted(tmp_path, code):
    """A facility may pay more than the minimum on every hand (NY 5324.39(f) "no less than")."""
    text = file_of(code).read_text()
    raised = {}
    for table, hands in NY_TABLES.items():
        for hand, odds in hands.items():
            raised[table, hand] = 1 if odds == "push" else odds + 1
            text = with_line(text, hand_line(text, table, hand), str(raised[table, hand]))
    path = tmp_path / f"{code}.yaml"
    path.write_text(text)
    jurisdiction = load_jurisdiction(path)
    for (table, hand), odds in raised.items():
        assert getattr(jurisdiction, table).pays[hand] == odds


def test_the_minimums_are_not_in_the_editable_file():
    """The regulation floor lives in code, not beside the pay table it polices: editing a file's odds up or
    down cannot move the floor (the same edit is judged against the same minimum)."""
    from controller.game import minimums

    for code in JURISDICTIONS:
        assert "minimum" not in yaml.safe_load(file_of(code).read_text())
        with pytest.raises(TypeError):
            minimums.REGULATIONS[code].minimums["bet"].pays["royal_flush"] = 1  # read-only mapping
    with pytest.raises(TypeError):
        minimums.REGULATIONS["zz"] = minimums.REGULATIONS["ny"]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=st.sampled_from(JURISDICTIONS), table=st.sampled_from(tuple(NY_TABLES)), hand=st.sampled_from(HANDS),
       odds=st.one_of(st.integers(min_value=-5, max_value=1000), st.just("push")))
def test_property_any_odds_accepted_iff_at_least_the_minimum(tmp_path_factory, code, table, hand, odds):
    """Parser property: a single hand set to any integer or push loads iff it is a positive integer or push
    and is no less than the NY (f) minimum (push counts below 1 to 1); otherwise the error names its line."""
    text = file_of(code).read_text()
    line = hand_line(text, table, hand)
    path = tmp_path_factory.mktemp("j") / "edited.yaml"
    path.write_text(with_line(text, line, str(odds)))
    minimum = NY_TABLES[table][hand]
    value = 0 if odds == "push" else odds
    valid = (odds == "push" or odds >= 1) and value >= (0 if minimum == "push" else minimum)
    if valid:
        assert getattr(load_jurisdiction(path), table).pays[hand] == odds
    else:
        with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: pay_tables.{table}.pays.{hand}: ")):
            load_jurisdiction(path)


# --------------------------------------------------------------------------- malformed files, with lines


def ny_text():
    return file_of("ny").read_text()


def line_containing(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


@pytest.mark.parametrize("edit,where,reason", [
    (lambda t: t.replace("      flush: 8\n", "      flush: 8\n      five_aces: 9\n"), "pay_tables.bet.pays",
     "unknown key(s) five_aces"),
    (lambda t: t.replace("      flush: 8\n", "      flush: -8\n"), "pay_tables.bet.pays.flush", "-8 is below the minimum 1"),
    (lambda t: t.replace("      flush: 8\n", "      flush: 8.5\n"), "pay_tables.bet.pays.flush",
     "expected an integer, got 8.5"),
    (lambda t: t.replace("      flush: 8\n", "      flush: eight\n"), "pay_tables.bet.pays.flush",
     "expected an integer, got \"eight\""),
    (lambda t: t.replace("  value: [1, 2, 3]\n", "  value: [1, 2, 3, 4]\n"), "bet_multiples.value",
     "1x, 2x, 3x, 4x given; New York gives the player 1x, 2x, 3x"),
    (lambda t: t.replace("  value: [1, 2, 3]\n", "  value: [1, 2]\n"), "bet_multiples.value",
     "1x, 2x given; New York gives the player 1x, 2x, 3x"),
    (lambda t: t.replace("    value: true\n", "    value: false\n", 1), "ranking.wheel",
     "false is not the ranking of New York"),
    (lambda t: t.replace("jurisdiction: ny\n", "jurisdiction: zz\n"), "jurisdiction", "no regulation known for 'zz'"),
])
def test_a_bad_value_is_refused_with_file_and_line(tmp_path, edit, where, reason):
    """Unknown keys, negative or non-integer odds, multiples beyond 3x the ante (NY 5324.39(c)(4)), a ranking
    other than the regulation's (NY (b)) and an unknown jurisdiction are refused naming file and line."""
    text = edit(ny_text())
    assert text != ny_text()
    changed = next(i for i, (a, b) in enumerate(zip(text.splitlines(), ny_text().splitlines()), 1) if a != b)
    path = tmp_path / "custom.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line {changed}: {where}: "), message
    assert reason in message


def test_a_missing_hand_is_refused_with_the_line_of_its_table(tmp_path):
    text = ny_text().replace("      flush: 8\n", "")
    path = tmp_path / "custom.yaml"
    path.write_text(text)
    pays_line = hand_line(text, "bet", "pair_6s_to_10s")  # a mapping's line is that of its first key
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {pays_line}: pay_tables.bet.pays: missing key(s) flush")):
        load_jurisdiction(path)


def test_malformed_yaml_is_refused_with_its_line(tmp_path):
    text = ny_text().replace("      flush: 8\n", "      flush: [8\n")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"bad.yaml: line \d+, column \d+ malformed YAML"):
        load_jurisdiction(path)


def test_a_file_loaded_by_code_must_carry_that_code(tmp_path):
    """``pa`` must load the Pennsylvania rules: a file named pa.yaml that says ``jurisdiction: ny`` is refused."""
    shutil.copytree(CONFIG_DIR, tmp_path / "config")
    pa = tmp_path / "config" / "jurisdictions" / "pa.yaml"
    pa.write_text(pa.read_text().replace("jurisdiction: pa\n", "jurisdiction: ny\n"))
    line = line_containing(pa.read_text(), "jurisdiction: ny")
    with pytest.raises(ConfigError, match=re.escape(f"{pa}: line {line}: jurisdiction: 'ny' in a file loaded as jurisdiction 'pa'")):
        load_jurisdiction("pa", tmp_path / "config")


@pytest.mark.parametrize("name", ["New York", "", 7])
def test_a_name_that_is_not_the_jurisdictions_is_refused(tmp_path, name):
    """A Pennsylvania file headed "New York" would title Pennsylvania's tables and minimums with another
    state's name in every report; a longer name that contains the state's ("Pennsylvania, high-limit room")
    is fine."""
    path = tmp_path / "pa.yaml"
    text = (CONFIG_DIR / "jurisdictions" / "pa.yaml").read_text()
    path.write_text(text.replace("name: Pennsylvania\n", "name: Pennsylvania, high-limit room\n"))
    assert load_jurisdiction(path).name == "Pennsylvania, high-limit room"
    path.write_text(text.replace("name: Pennsylvania\n", f"name: {name!r}\n"))
    line = line_containing(path.read_text(), f"name: {name!r}")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: name: {name!r} does not name "
                                                    "Pennsylvania, whose regulation the code 'pa' selects")):
        load_jurisdiction(path)


def test_the_service_refuses_to_start_below_the_minimum(tmp_path):
    """`crisscross run` on a table whose jurisdiction file pays below the minimum: exit status 2, one line
    naming the file, the line and the hand; no journal is created, no device is opened."""
    shutil.copytree(CONFIG_DIR, tmp_path / "config")
    ny = tmp_path / "config" / "jurisdictions" / "ny.yaml"
    text = ny.read_text()
    line = hand_line(text, "bet", "royal_flush")
    ny.write_text(with_line(text, line, "400"))
    table = tmp_path / "config" / "table.yaml"
    proc = subprocess.run([sys.executable, "-m", "controller", "run", "--config", str(table), "--rounds", "1",
                           "--journal", str(tmp_path / "j.jsonl")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    (message,) = proc.stderr.splitlines()
    assert f"{ny}: line {line}: pay_tables.bet.pays.royal_flush: royal_flush pays 400 to 1, below the minimum 500 to 1" in message
    assert not (tmp_path / "j.jsonl").exists()


def test_a_code_in_capitals_is_the_same_jurisdiction():
    """``crisscross paytable NY`` and ``ny`` load the same file (codes are case-blind)."""
    assert load_jurisdiction("NY") == load_jurisdiction("ny")


# --------------------------------------------------------------------------- odds ceiling, citations, code case


@pytest.mark.parametrize("table,hand", [("ante", "royal_flush"), ("bet", "royal_flush"), ("five_card_bonus", "flush")])
def test_odds_above_a_million_to_one_are_refused_naming_file_line_hand_and_bound(tmp_path, table, hand):
    """The one ceiling on odds, for every command that loads a pay table: 1,000,000 to 1 (the par sheet's exact
    arithmetic keeps every sum an integer below 2**53 up to it). The bound itself loads; one above is refused."""
    text = ny_text()
    line = hand_line(text, table, hand)
    path = tmp_path / "custom.yaml"
    path.write_text(with_line(text, line, "1000000"))
    assert getattr(load_jurisdiction(path), table).pays[hand] == 1_000_000
    path.write_text(with_line(text, line, "1000001"))
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: pay_tables.{table}.pays.{hand}: {hand} "
                                                    "pays 1000001 to 1, above the largest odds 1000000 to 1")):
        load_jurisdiction(path)


@pytest.mark.parametrize("fragment", [
    'citation: "9 NYCRR 5324.39"',                                        # the file's own
    "citation: \"NY 5324.39(b)(2)(ii),(vi)",                              # ranking.wheel
    'citation: "NY 5324.39(c)(4), (e)(3)',                                # bet_multiples
    'citation: "NY 5324.39(f)(1)',                                        # pay_tables.ante
    'citation: "NY 5324.39(f)(3)"',                                       # pay_tables.five_card_bonus
])
@pytest.mark.parametrize("empty", ['""', '"   "', "''", "7"])
def test_an_empty_citation_is_refused_with_file_and_line(tmp_path, fragment, empty):
    """Every configured value carries the text it comes from: an empty or blank citation (or a number) is none."""
    text = ny_text()
    line = line_containing(text, fragment)
    lines = text.splitlines(keepends=True)
    indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    lines[line - 1] = f"{indent}citation: {empty}\n"
    path = tmp_path / "custom.yaml"
    path.write_text("".join(lines))
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line {line}: "), message
    assert "citation: expected the regulation text this value comes from" in message


@pytest.mark.parametrize("code", JURISDICTIONS)
def test_a_code_in_capitals_inside_the_file_is_the_same_jurisdiction(tmp_path, code):
    """``jurisdiction: NY`` in the file is ``ny``, as on the command line and in table.yaml; kept lower case."""
    config = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, config)
    path = config / "jurisdictions" / f"{code}.yaml"
    path.write_text(path.read_text().replace(f"jurisdiction: {code}\n", f"jurisdiction: {code.upper()}\n"))
    by_path = load_jurisdiction(path)
    assert by_path.code == code
    assert load_jurisdiction(code.upper(), config).code == code
    assert by_path.ante.pays == NY_ANTE and by_path.bet.pays == NY_BET


def test_a_file_named_as_a_code_is_read_only_as_a_path_and_the_refusal_says_how(tmp_path, monkeypatch):
    """Two to eight letters are a jurisdiction code, never a file of the current folder (a file ``ny`` there
    changed what ``ny`` paid): a file so named is refused as a code, with the way to give it as a path."""
    (tmp_path / "custom").write_text((CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text())
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as refused:
        load_jurisdiction("custom")
    assert str(refused.value).startswith("unknown jurisdiction 'custom' (known: ")
    assert str(refused.value).endswith("; the file 'custom' is given as ./custom")
    assert load_jurisdiction("./custom").code == "ny"


# ----------------------------------------------------------------- what is read as a jurisdiction file

#: docs/analysis.md, "Jurisdictions and pay tables": a pay-table file holds at most 1 MiB.
MAX_BYTES = 1024 * 1024
#: Lines a file named by mistake may hold (the shape of /etc/shadow's: a password hash in the second field).
SHADOW = "cashier:$6$Xy12$SECRETHASH0:19000:0:99999:7:::\nvault:*:19000:0:99999:7:::\n"


@pytest.mark.parametrize("make,says", [
    (lambda p: os.mkfifo(p), "not a regular file"),  # a pipe with no writer: read, it would wait for ever
    (lambda p: p.mkdir(), "Is a directory"),
    (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),  # read, it would fill the memory
])
def test_what_is_not_a_regular_file_is_refused_unread(tmp_path, make, says):
    path = tmp_path / "named.yaml"
    make(path)
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction(str(path))
    assert str(caught.value).startswith(f"{path}: ") and says in str(caught.value)


@pytest.mark.parametrize("make,says", [
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: p.mkdir(), "cannot read: Is a directory"),
    (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),
    (lambda p: p.symlink_to(p.parent / "gone.yaml"), "a symbolic link to {folder}/gone.yaml, which does not exist"),
])
def test_a_code_whose_file_is_not_a_regular_one_is_refused_saying_what_is_wrong_with_it(tmp_path, make, says):
    """A code's file of the configuration's jurisdictions/ folder that is there but is not a regular file (or a
    link to one) is named with what is wrong with it. It was "unknown jurisdiction 'ny' (known: nj, ny, pa)":
    a code the same line listed as known."""
    config = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, config)
    path = config / "jurisdictions" / "ny.yaml"
    path.unlink()
    make(path)
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction("ny", config)
    assert str(caught.value) == f"{path}: " + says.format(folder=path.parent)
    path.unlink() if path.is_symlink() or not path.is_dir() else path.rmdir()  # no file at all: unknown
    with pytest.raises(ConfigError, match=re.escape("unknown jurisdiction 'ny' (known: nj, pa)")):
        load_jurisdiction("ny", config)


def test_a_file_over_1_mib_is_refused_and_one_of_1_mib_is_read(tmp_path):
    """A jurisdiction file of 1 MiB (its tables and a long comment) loads; one byte more is refused by its size,
    not read into memory and parsed (it was: any size, /dev/zero behind a regular name included)."""
    text = ny_text()
    path = tmp_path / "long.yaml"
    path.write_text(text + "#" * (MAX_BYTES - len(text.encode()) - 1) + "\n")
    assert path.stat().st_size == MAX_BYTES and load_jurisdiction(path).code == "ny"
    path.write_text(text + "#" * (MAX_BYTES - len(text.encode())) + "\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: larger than 1,048,576 bytes")):
        load_jurisdiction(path)


def test_a_file_not_in_utf8_is_refused_naming_the_byte(tmp_path):
    path = tmp_path / "latin.yaml"
    path.write_bytes(ny_text().encode() + "# pay\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=re.escape(f"{path}: not UTF-8 text (") + ".* at byte "
                       + str(len(ny_text().encode()) + len("# pay"))):
        load_jurisdiction(path)


def test_a_link_to_a_jurisdiction_file_is_read_as_the_file(tmp_path):
    link = tmp_path / "ours.yaml"
    link.symlink_to(file_of("ny"))
    assert load_jurisdiction(link).bet.pays == NY_BET


def test_a_file_that_is_no_jurisdiction_is_refused_without_its_text(tmp_path):
    """/etc/shadow named as the jurisdiction (as root): its lines read as YAML keys, and the message listed them,
    hashes and all. The keys the file lacks are named; its own are counted."""
    path = tmp_path / "shadow"
    path.write_text(SHADOW)
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line 1: top level: missing key(s) bet_multiples, citation, jurisdiction"), \
        message
    assert not any(word in message for word in ("cashier", "SECRETHASH", "vault", "99999")), message
    assert "unknown key(s) 2 that are not names" in message


@pytest.mark.parametrize("line_text,problem", [
    ("token: *hunter2\n", "found undefined alias"),  # an alias that names no anchor
    ('token: "\\qhunter2"\n', "found unknown escape character"),
    ("token: hunter2: more\n", "mapping values are not allowed here"),
])
def test_malformed_yaml_names_file_line_column_and_problem_without_the_text(tmp_path, line_text, problem):
    """A YAML error quoted what it found (an alias, an escape character): the file's own text. It now says
    where (line and column) and what is wrong, and nothing of the text."""
    path = tmp_path / "secret.yaml"
    path.write_text("user: admin\n" + line_text)
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction(path)
    message = str(caught.value)
    assert re.fullmatch(re.escape(f"{path}: line 2, column ") + r"\d+ malformed YAML: " + re.escape(problem)
                        + r".*", message), message
    assert "hunter2" not in message and "more" not in message and "'" not in message.partition("YAML: ")[2]


def test_an_alias_error_points_at_the_alias_and_a_tab_is_named_by_its_code_point(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nother: *gone\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line 2, column {'other: *gone'.index('*') + 1} "
                                                    f"malformed YAML: found undefined alias")):
        load_jurisdiction(path)
    path.write_text("name: x\n\tother: y\n")  # a tab where YAML wants spaces (U+0009, CHARACTER TABULATION)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line 2, column 1 malformed YAML: found character "
                                                    "U+0009 that cannot start any token")):
        load_jurisdiction(path)


def test_paytable_and_settle_refuse_a_file_that_is_no_jurisdiction_without_its_text(tmp_path):
    """Both commands that take a jurisdiction's file (paytable's argument, settle's ``jurisdiction``): exit 2,
    one line naming the file, none of its text."""
    path = tmp_path / "shadow"
    path.write_text(SHADOW)
    round_ = {"jurisdiction": str(path), "community": {"across": ["7d", "2c"], "down": ["9s", "3h"], "middle": "Kc"},
              "seats": [{"seat": 1, "cards": ["Jh", "Jd"], "wagers": {"ante_across": 500, "ante_down": 500}}]}
    for done in (crisscross("paytable", path), crisscross("settle", stdin=json.dumps(round_))):
        assert done.returncode == 2 and done.stdout == "", done
        assert done.stderr.count("\n") == 1 and str(path) in done.stderr, done.stderr
        assert not any(word in done.stderr for word in ("cashier", "SECRETHASH", "vault")), done.stderr
