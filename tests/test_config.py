"""Configuration files are checked on load and refused with an error that names the file and the key."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.game.hands import evaluate
from controller.game.paytable import PAY_HANDS, load_jurisdiction, pay_hand
from controller.game.table import load_table_config
from controller.settings.files import CONFIG_DIR, ConfigError, load_yaml
from tests.cli_helpers import crisscross
from tests.examples import examples


def test_ny_file_holds_the_regulated_tables():
    """NY 9 NYCRR 5324.39(f)(1)-(3) as configured; (c)(4) bets of one to three times the ante."""
    ny = load_jurisdiction("ny")
    assert ny.bet_multiples == (1, 2, 3)
    assert ny.wheel is True
    assert ny.ante.pays == {"pair_6s_to_10s": "push", **{h: 1 for h in PAY_HANDS[1:]}}
    assert ny.bet.pays == {"pair_6s_to_10s": "push", "pair_jacks_or_better": 1, "two_pair": 2,
                           "three_of_a_kind": 3, "straight": 5, "flush": 8, "full_house": 12,
                           "four_of_a_kind": 40, "straight_flush": 100, "royal_flush": 500}
    assert ny.five_card_bonus.pays == {"pair_6s_to_10s": 1, "pair_jacks_or_better": 1, "two_pair": 3,
                                       "three_of_a_kind": 4, "straight": 6, "flush": 10, "full_house": 15,
                                       "four_of_a_kind": 40, "straight_flush": 100, "royal_flush": 250}


@pytest.mark.parametrize("cards, expected", [
    (["5h", "5d", "Ac", "Kd", "Qs"], None),            # pair of 5s: below the push band
    (["6h", "6d", "Ac", "Kd", "Qs"], "pair_6s_to_10s"),
    (["Th", "Td", "Ac", "Kd", "Qs"], "pair_6s_to_10s"),
    (["Jh", "Jd", "Ac", "Kd", "Qs"], "pair_jacks_or_better"),
    (["Ah", "Jd", "9c", "5d", "3s"], None),
])
def test_pay_hand_splits_pairs_at_6s_and_jacks(cards, expected):
    """NY 5324.39(f)(1): a pair of 6s through 10s pushes; jacks or better win."""
    assert pay_hand(evaluate(cards)) == expected


def _copy_ny(tmp_path, edit):
    data = yaml.safe_load((CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text())
    edit(data)
    path = tmp_path / "custom.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["pay_tables"]["bet"]["pays"].pop("flush"), "pay_tables.bet.pays: missing key(s) flush"),
    (lambda d: d["pay_tables"]["bet"]["pays"].update(five_aces=9), "unknown key(s) five_aces"),
    (lambda d: d["pay_tables"]["bet"]["pays"].update(flush=-8), "pay_tables.bet.pays.flush: -8 is below"),
    (lambda d: d["pay_tables"]["bet"]["pays"].update(flush=8.5), "pay_tables.bet.pays.flush: expected an integer"),
    (lambda d: d["ranking"]["wrap_around"].update(value=True), "wrap_around: true is not supported"),
    (lambda d: d.update(bet_multiples={"value": [], "citation": "x"}), "bet_multiples.value"),
    (lambda d: d.update(extra=1), "unknown key(s) extra"),
])
def test_a_bad_pay_table_is_refused_naming_file_and_key(tmp_path, edit, message):
    path = _copy_ny(tmp_path, edit)
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_malformed_yaml_is_refused_with_its_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("jurisdiction: ny\npay_tables: [1, 2\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: line \d+, column \d+ malformed YAML"):
        load_jurisdiction(path)


def test_unknown_jurisdiction_names_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown jurisdiction 'zz' \(known: .*ny"):
        load_jurisdiction("zz")


def test_the_shipped_table_config_loads():
    config = load_table_config()
    assert config.seats == (1, 2, 3, 4, 5, 6)
    assert config.ante_limits.min <= config.ante_limits.max
    assert set(config.devices) == {"shoe", "sensors", "panel"}
    assert config.timing.retransmit_waits() == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert (config.timing.heartbeat_interval, config.timing.link_silence) == (1.0, 3.5)


def test_device_identity_and_search_are_read(tmp_path):
    text = (CONFIG_DIR / "table.yaml").read_text().replace(
        "shoe:    {driver: shoe, port: simulator}",
        'shoe:    {driver: shoe, port: /dev/ttyUSB0, identity: SHOE-42, search: ["/dev/serial/by-id/*"]}')
    path = tmp_path / "table.yaml"
    path.write_text(text)
    shoe = load_table_config(path).devices["shoe"]
    assert (shoe.identity, shoe.search) == ("SHOE-42", ("/dev/serial/by-id/*",))


@pytest.mark.parametrize("old, new, message", [
    ("seats: [1, 2, 3, 4, 5, 6]", "seats: [1, 2, 7]", "seats: 7 is not a seat"),
    ("ante: {min: 500, max: 50000}", "ante: {min: 600, max: 500}", "limits.ante: min 600 is above max 500"),
    ("shoe:    {driver: shoe, port: simulator}", "shoe:    {driver: toaster, port: simulator}",
     "devices.shoe.driver: unknown driver 'toaster'"),
    ("response_timeout_s: 0.5 ", "response_timeout_s: 0 ", "timing.response_timeout_s"),
    ("link_silence_s: 3.5 ", "link_silence_s: yes ", "timing.link_silence_s: expected a number of seconds above 0"),
    ("response_timeout_max_s: 4.0", "response_timeout_max_s: .inf", "timing.response_timeout_max_s: expected a number"),
    ("table_id: CC-01", "table_id: 12", "table_id: expected the table's name"),
    ("shoe:    {driver: shoe,", "shoe:    {driver: panel,", "devices.shoe.driver: the shoe needs the shoe driver"),
    ("max: 50000", "max: 100000000000000000000000", "limits.ante: max 100000000000000000000000 is above"),
    ("link_silence_s: 3.5 ", "link_silence_s: 0.5 ", "timing: link_silence_s 0.5 must exceed heartbeat_interval_s 1.0"),
    ("reconnect_max_s: 8.0 ", "reconnect_max_s: 0.1 ", "timing: reconnect_max_s 0.1 is below reconnect_min_s 0.5"),
    ("response_timeout_max_s: 4.0 ", "response_timeout_max_s: 0.25 ",
     "timing: response_timeout_max_s 0.25 is below response_timeout_s 0.5"),
    ("retries: 4 ", "retries: 1.5 ", "timing.retries: expected an integer"),
    ("  heartbeat_interval_s: 1.0 ", "  heartbeat_s: 1.0 ", "timing: unknown key(s) heartbeat_s"),
    ("shoe:    {driver: shoe, port: simulator}", "shoe:    {driver: shoe, port: simulator, identity: 7}",
     "devices.shoe.identity: expected a device id"),
    ("shoe:    {driver: shoe, port: simulator}", "shoe:    {driver: shoe, port: simulator, search: /dev/tty*}",
     "devices.shoe.search: expected a list of glob patterns"),
    ("shoe:    {driver: shoe, port: simulator}", 'shoe:    {driver: shoe, port: simulator, search: ["/dev/*", ""]}',
     "devices.shoe.search[1]: expected a glob pattern (text), got ''"),
    ("shoe:    {driver: shoe, port: simulator}", "shoe:    {driver: shoe, port: simulator, identity: }",
     "devices.shoe.identity: expected a device id (text), got None"),
    ("seats: [1, 2, 3, 4, 5, 6]", "seats: [1, 1]", "seats: expected a list of distinct seat numbers, got [1, 1]"),
    ("seats: [1, 2, 3, 4, 5, 6]", "seats: []", "seats: expected a list of distinct seat numbers, got []"),
    ("link_silence_s: 3.5 ", "link_silence_s: 1e3 ", "timing.link_silence_s: expected a number of seconds above 0 "
     "and below 3600, got '1e3'"),  # YAML 1.1 reads 1e3 (no dot) as text
    ("link_silence_s: 3.5 ", "link_silence_s: .nan ", "timing.link_silence_s: expected a number of seconds"),
    ("  enabled: false\n", "  enabled: off\n", "control.enabled: expected true or false, got 'off'"),
    ("  port: 8740 ", "  port: 65536 ", "control.port: 65536 is above 65535"),
    ("  port: 8740 ", "  port: 80.5 ", "control.port: expected an integer, got 80.5"),
])
def test_a_bad_table_config_is_refused_naming_the_key(tmp_path, old, new, message):
    """Each refusal names the file, the line of the value written and the key path, in the file's own names."""
    path, line, refusal = _refusal_of_edited_table(tmp_path, old, new)
    assert f"{path}: line {line}: {message}" in refusal, refusal


def _refusal_of_edited_table(tmp_path, old: str, new: str) -> tuple[Path, int, str]:
    """Write the shipped table.yaml with ``old`` replaced by ``new``; return its path, the line of ``new`` and
    the message of the ConfigError loading it must raise."""
    text = (CONFIG_DIR / "table.yaml").read_text()
    assert old in text
    edited = text.replace(old, new)
    path = tmp_path / "table.yaml"
    path.write_text(edited)
    with pytest.raises(ConfigError) as caught:
        load_table_config(path)
    return path, _line_of(edited, new.strip()), str(caught.value)


# Each value is what YAML makes of the text: an empty key is None, a flow list a list, 12 an integer, a date a
# date; none of them names a file or a port, and str() of them would (a journal named "None").
@pytest.mark.parametrize("old, new, where, what, got", [
    ("# journal: /srv/crisscross/journal.db", "journal: ", "journal", "a file path", "None"),
    ("# journal: /srv/crisscross/journal.db", "journal: [a, b] ", "journal", "a file path", "['a', 'b']"),
    ("# journal: /srv/crisscross/journal.db", "journal: 12 ", "journal", "a file path", "12"),
    ("# journal: /srv/crisscross/journal.db", "journal: '  ' ", "journal", "a file path", "'  '"),
    ("# journal: /srv/crisscross/journal.db", "journal: 2024-01-31 ", "journal", "a file path", "datetime.date(2024, 1, 31)"),
    ("shoe:    {driver: shoe, port: simulator}", "shoe:    {driver: shoe, port: }", "devices.shoe.port",
     "a port", "None"),
    ("sensors: {driver: sensors, port: simulator}", "sensors: {driver: sensors, port: 0}", "devices.sensors.port",
     "a port", "0"),
    ("  operators: operators.yaml ", "  operators: ", "control.operators", "a file path", "None"),
    ("  operators: operators.yaml ", "  operators: [a] ", "control.operators", "a file path", "['a']"),
])
def test_a_path_or_port_that_is_not_text_is_refused_not_named_after_its_value(tmp_path, old, new, where, what, got):
    path, line, refusal = _refusal_of_edited_table(tmp_path, old, new)
    assert refusal.startswith(f"{path}: line {line}: {where}: expected {what}"), refusal
    assert refusal.endswith(f"(text), got {got}")


@pytest.mark.parametrize("host", ["", "[127.0.0.1]", "2130706433"])
def test_a_control_host_that_is_not_a_loopback_address_written_as_text_is_refused_with_its_line(tmp_path, host):
    """2130706433 is 127.0.0.1 as one number, but YAML reads it as an integer, not an address written as text."""
    text = (CONFIG_DIR / "table.yaml").read_text()
    assert "  host: 127.0.0.1\n" in text
    edited = text.replace("  host: 127.0.0.1\n", f"  host: {host}\n")
    path = tmp_path / "table.yaml"
    path.write_text(edited)
    with pytest.raises(ConfigError) as caught:
        load_table_config(path)
    line = _line_of(edited, f"  host: {host}")
    assert str(caught.value).startswith(f"{path}: line {line}: control.host: "), str(caught.value)
    assert "is not a loopback address" in str(caught.value)


def test_paths_and_ports_written_as_text_are_kept_as_written(tmp_path):
    text = (CONFIG_DIR / "table.yaml").read_text()
    edited = text.replace("# journal: /srv/crisscross/journal.db", "journal: 'None' ").replace(
        "shoe:    {driver: shoe, port: simulator}", "shoe:    {driver: shoe, port: /dev/ttyUSB0}")
    path = tmp_path / "table.yaml"
    path.write_text(edited)
    config = load_table_config(path)
    assert config.journal == tmp_path / "None"  # quoted: the name really is None
    assert config.devices["shoe"].port == "/dev/ttyUSB0"


def test_an_empty_timing_section_takes_the_defaults_and_a_list_is_refused(tmp_path):
    text = (CONFIG_DIR / "table.yaml").read_text()
    body = text[text.index("timing:\n"):text.index("\n\n", text.index("timing:\n"))]
    path = tmp_path / "table.yaml"
    path.write_text(text.replace(body, "timing:"))
    timing = load_table_config(path).timing  # the defaults of docs/protocol.md, "Timing"
    assert (timing.heartbeat_interval, timing.retries, timing.reconnect_max) == (1.0, 4, 8.0)
    edited = text.replace(body, "timing: []")
    path.write_text(edited)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: timing: expected a mapping, got list")):
        load_table_config(path)


def test_the_service_refuses_to_start_on_a_refused_configuration(tmp_path):
    """Nothing talks to a device when the configuration is refused: exit status 2 and one clear line."""
    import subprocess
    import sys

    shutil.copytree(CONFIG_DIR, tmp_path / "config")
    table = tmp_path / "config" / "table.yaml"
    table.write_text(table.read_text().replace("jurisdiction: ny ", "jurisdiction: zz "))
    proc = subprocess.run([sys.executable, "-m", "controller", "run", "--config", str(table), "--rounds", "1",
                           "--journal", str(tmp_path / "j.jsonl")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "unknown jurisdiction 'zz'" in proc.stderr
    assert not (tmp_path / "j.jsonl").exists()


def test_a_repeated_key_is_refused_not_silently_overwritten(tmp_path):
    text = (CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text().replace("      flush: 8\n", "      flush: 8\n      flush: 9\n")
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"dup.yaml: line \d+, column \d+ malformed YAML: duplicate key 'flush'"):
        load_jurisdiction(path)


def test_a_misspelt_hand_is_named_with_the_missing_one(tmp_path):
    path = _copy_ny(tmp_path, lambda d: d["pay_tables"]["bet"]["pays"].update(flushy=d["pay_tables"]["bet"]["pays"].pop("flush")))
    with pytest.raises(ConfigError, match="missing key.s. flush; unknown key.s. flushy"):
        load_jurisdiction(path)


@pytest.mark.parametrize("key", ["? [1, 2]\n: 3\n", "? {a: 1}\n: 3\n"])
def test_a_yaml_key_that_is_not_a_plain_value_is_refused_in_one_line(tmp_path, key):
    """A hostile table file whose key is a list or a mapping: a ConfigError naming the file and line, no
    traceback (``crisscross run`` prints it and exits 2)."""
    path = tmp_path / "table.yaml"
    path.write_text((CONFIG_DIR / "table.yaml").read_text() + key)
    with pytest.raises(ConfigError, match=r"table.yaml: line \d+.*a key must be a plain value"):
        load_table_config(path)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from(list("ab:-?[]{}!&*,|> \n\t'\"#%@`0123")), max_size=60))
def test_any_text_is_read_or_refused_with_a_config_error(tmp_path, text):
    """The YAML reader of every configuration file (property test): whatever the text, the outcome is a mapping
    or a ``ConfigError`` naming the file, never another exception."""
    path = tmp_path / "any.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        data = load_yaml(path)
    except ConfigError as exc:
        assert str(exc).startswith(str(path))
    else:
        assert isinstance(data, dict)


# --------------------------------------------------------------------------- YAML 1.1 numbers and booleans


def _line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if fragment in line)


# Each text is an integer to YAML 1.1 (PyYAML) without being a plain decimal; the value YAML 1.1 gives it is
# worked out by hand: octal 01000 = 8**3 = 512, base 60 8:20 = 8*60+20 = 500, hex 0x1f4 = 256+15*16+4 = 500.
@pytest.mark.parametrize("text, yaml11", [
    ("01000", 512), ("8:20", 500), ("0x1f4", 500), ("1_000", 1000), ("+1000", 1000), ("0b1111101000", 1000),
])
def test_an_integer_that_is_not_plain_decimal_is_refused_with_file_line_and_text(tmp_path, text, yaml11):
    """A facility meaning 1000 to 1 for a royal flush must not be paid 512 to 1 (YAML 1.1 octal): every form
    other than a plain decimal is refused, naming the file, the line, the text and the key."""
    ny = (CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text()
    assert "      royal_flush: 500\n" in ny
    edited = ny.replace("      royal_flush: 500\n", f"      royal_flush: {text}\n")
    line = _line_of(edited, f"royal_flush: {text}")
    path = tmp_path / "ny.yaml"
    path.write_text(edited)
    with pytest.raises(ConfigError) as caught:
        load_jurisdiction(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line {line}: {text!r} is not a plain decimal integer"), message
    assert "pay_tables.bet.pays.royal_flush" in message and f"would read it as {yaml11}" in message


@pytest.mark.parametrize("old, new, text", [
    ("seats: [1, 2, 3, 4, 5, 6]", "seats: [1, 2, 03]", "03"),
    ("retries: 4 ", "retries: 0x4 ", "0x4"),
    ("ante: {min: 500, max: 50000}", "ante: {min: 500, max: 50_000}", "50_000"),
    ("link_silence_s: 3.5 ", "link_silence_s: 0:3.5 ", "0:3.5"),  # base-60 float: 3.5 to YAML 1.1
])
def test_every_configuration_file_refuses_numbers_that_are_not_plain_decimal(tmp_path, old, new, text):
    """The loader is shared: table.yaml refuses the same YAML 1.1 forms, with file, line and text."""
    table = (CONFIG_DIR / "table.yaml").read_text()
    assert old in table
    edited = table.replace(old, new)
    path = tmp_path / "table.yaml"
    path.write_text(edited)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {_line_of(edited, new)}: {text!r} is not a "
                                                    "plain decimal")):
        load_table_config(path)


@pytest.mark.parametrize("tagged, message", [
    ("!!int 0x10", "'0x10' is not a plain decimal integer"), ("!!int '0x10'", "explicit tag"),
    ("!!float 1_0.5", "'1_0.5' is not a plain decimal number"), ("!!float abc", "explicit tag"),
    ("!!str 12", "explicit tag"), ("!!binary aGk=", "explicit tag"), ("!!set {a, b}", "explicit tag"),
    ("!!timestamp x", "explicit tag"),
])
def test_an_explicit_yaml_tag_is_refused_with_its_line(tmp_path, tagged, message):
    """A tag would bring back what the loader refuses (``!!int`` on quoted hex text) or build values no key
    expects; configuration files write values as themselves."""
    path = tmp_path / "any.yaml"
    path.write_text(f"a: 1\nb: {tagged}\n")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line 2: {message}")):
        load_yaml(path)


def test_a_tag_that_agrees_with_the_value_changes_nothing(tmp_path):
    """``!!int 4`` is the integer 4 with or without its tag, ``!!bool true`` is true: such a tag is accepted and
    the value is what the untagged text gives; a tag that would change it (``!!bool yes``, ``!!float 1``) is
    refused above."""
    path = tmp_path / "any.yaml"
    path.write_text("retries: !!int 4\nvalue: !!bool true\nname: !!str CC-01\nseats: !!seq [1, 2]\n")
    assert load_yaml(path) == {"retries": 4, "value": True, "name": "CC-01", "seats": [1, 2]}
    for tagged in ("!!bool yes", "!!float 1", "!!int 4.0"):
        path.write_text(f"a: 1\nb: {tagged}\n")
        with pytest.raises(ConfigError, match=re.escape(f"{path}: line 2: explicit tag")):
            load_yaml(path)


@pytest.mark.parametrize("text, line", [
    ("base: &base {min: 500, max: 50000}\nante:\n  <<: *base\n  max: 40000\n", 3),
    ("base: &base {min: 500, max: 50000}\nante: {<<: *base}\n", 2),
    ("a: 1\n<<: {b: 2}\n", 2),
])
def test_a_yaml_merge_key_is_refused_with_file_and_line(tmp_path, text, line):
    """``<<`` would copy keys from elsewhere, overridden silently by the keys written beside it; configuration
    files write each key where it applies."""
    path = tmp_path / "any.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_yaml(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: line {line}: merge keys (<<) are not used in configuration files"), message
    assert "\n" not in message and "constructor" not in message
    path.write_text('ante: {"<<": 1}\n')  # quoted, it is an ordinary key
    assert load_yaml(path) == {"ante": {"<<": 1}}


def test_a_merge_key_in_table_yaml_is_refused_with_its_line(tmp_path):
    text = (CONFIG_DIR / "table.yaml").read_text()
    old = "  five_card_bonus: {min: 100, max: 10000}\n"
    assert old in text
    edited = text.replace(old, old + "  <<: {extra: 1}\n")
    path = tmp_path / "table.yaml"
    path.write_text(edited)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {_line_of(edited, '<<:')}: merge keys (<<) "
                                                    "are not used in configuration files (limits)")):
        load_table_config(path)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(min_value=-10**30, max_value=10**30))
def test_property_a_plain_decimal_integer_is_read_as_itself(tmp_path, n):
    """Any integer written in plain decimal (``str(n)``: a minus or not, no leading zero) loads as that integer."""
    path = tmp_path / "n.yaml"
    path.write_text(f"a: x\nn: {n}\nl: [{n}]\n")
    assert load_yaml(path) == {"a": "x", "n": n, "l": [n]}


def _yaml11_forms(n: int) -> list[str]:
    """Texts YAML 1.1 reads as the integer n > 0, none of them plain decimal."""
    forms = [f"0{n:o}", f"0x{n:x}", f"0b{n:b}", f"+{n}", f"-0{n:o}", f"-0x{n:x}"]
    if n >= 10:
        digits = str(n)
        forms.append(f"{digits[0]}_{digits[1:]}")
    if n >= 60:
        forms.append(f"{n // 60}:{n % 60:02d}")
    return forms


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), n=st.integers(min_value=1, max_value=10**12))
def test_property_yaml11_integer_forms_are_refused(tmp_path, data, n):
    """Octal, hexadecimal, binary, base 60, underscores and a leading ``+``: each is refused, naming the file,
    the line and the text, wherever it stands (a mapping value or a list item)."""
    text = data.draw(st.sampled_from(_yaml11_forms(n)))
    assert yaml.safe_load(f"v: {text}")["v"] == (-n if text.startswith("-") else n)  # YAML 1.1 reads it as n
    path = tmp_path / "n.yaml"
    for body, line in ((f"a: x\nn: {text}\n", 2), (f"a: x\nb: y\nl: [1, {text}]\n", 3)):
        path.write_text(body)
        with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: {text!r} is not a plain decimal "
                                                        "integer")):
            load_yaml(path)


def test_yes_no_on_off_are_text_and_true_false_are_booleans(tmp_path):
    """YAML 1.2 booleans: only true and false (as ``True``, ``TRUE``...). YAML 1.1's yes, no, on and off stay the
    text written, so a name like ``NO`` is kept and a key that expects true or false refuses them by name."""
    path = tmp_path / "any.yaml"
    path.write_text("a: yes\nb: No\nc: ON\nd: off\ne: true\nf: False\ng: TRUE\n")
    assert load_yaml(path) == {"a": "yes", "b": "No", "c": "ON", "d": "off", "e": True, "f": False, "g": True}


def test_a_yes_where_true_or_false_is_expected_is_refused_with_its_line(tmp_path):
    ny = (CONFIG_DIR / "jurisdictions" / "ny.yaml").read_text()
    assert "    value: true\n" in ny
    edited = ny.replace("    value: true\n", "    value: yes\n", 1)
    path = tmp_path / "ny.yaml"
    path.write_text(edited)
    line = _line_of(edited, "value: yes")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: ranking.wheel: expected true or false, "
                                                    "got 'yes'")):
        load_jurisdiction(path)
    table = (CONFIG_DIR / "table.yaml").read_text()
    path = tmp_path / "table.yaml"
    path.write_text(table.replace("  enabled: false\n", "  enabled: on\n"))
    line = _line_of(table, "  enabled: false")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: control.enabled: expected true or false, "
                                                    "got 'on'")):
        load_table_config(path)
    path.write_text(table.replace("table_id: CC-01\n", "table_id: NO\n"))
    assert load_table_config(path).table_id == "NO"


# --------------------------------------------------------------------------- table.yaml


@pytest.mark.parametrize("value, message", [
    ('"CC\\n01"', "'CC\\n01' holds the control character U+000A"),
    ('"CC\\001"', "'CC\\x0001' holds the control character U+0000"),
    ('"CC\\u202e10"', "holds the control character U+202E"),  # a direction override
    ("C" * 65, "65 characters, above the maximum 64"),
    ("C" * 5000, "5000 characters, above the maximum 64"),
])
def test_a_table_id_with_control_characters_or_too_long_is_refused(tmp_path, value, message):
    """The table's name goes on the panel and into every journal record: one line of at most 64 characters."""
    text = (CONFIG_DIR / "table.yaml").read_text()
    path = tmp_path / "table.yaml"
    path.write_text(text.replace("table_id: CC-01\n", f"table_id: {value}\n"))
    line = _line_of(text, "table_id: CC-01")
    with pytest.raises(ConfigError) as caught:
        load_table_config(path)
    assert str(caught.value).startswith(f"{path}: line {line}: table_id: "), str(caught.value)
    assert message in str(caught.value)
    path.write_text(text.replace("table_id: CC-01\n", f"table_id: {'C' * 64}\n"))
    assert load_table_config(path).table_id == "C" * 64


@pytest.mark.parametrize("old, new, where, code", [
    ("shoe:    {driver: shoe, port: simulator}", 'shoe:    {driver: shoe, port: "/dev/tty\\e[2JS0"}',
     "devices.shoe.port", "U+001B"),
    ("shoe:    {driver: shoe, port: simulator}",
     'shoe:    {driver: shoe, port: /dev/ttyS0, identity: "SHOE\\u202e24"}', "devices.shoe.identity", "U+202E"),
    ("shoe:    {driver: shoe, port: simulator}",
     'shoe:    {driver: shoe, port: /dev/ttyS0, search: ["/dev/serial/\\n*"]}', "devices.shoe.search[0]", "U+000A"),
    ("shoe:    {driver: shoe, port: simulator}", 'shoe:    {driver: shoe, port: "sim\\0"}', "devices.shoe.port",
     "U+0000"),
])
def test_a_port_an_identity_or_a_pattern_with_a_control_character_is_refused(tmp_path, old, new, where, code):
    """A device's port, id and search patterns are logged and shown; an escape in one was written raw to the
    operator's terminal. Refused at load with the file, the line and the key."""
    text = (CONFIG_DIR / "table.yaml").read_text()
    assert old in text
    path = tmp_path / "table.yaml"
    path.write_text(text.replace(old, new))
    with pytest.raises(ConfigError, match=re.escape(f"{where}: ") + ".*" + re.escape(f"holds the control character {code}")):
        load_table_config(path)


@pytest.mark.parametrize("retries, accepted", [(1, True), (20, True), (21, False), (100000000000, False)])
def test_link_retries_are_bounded(tmp_path, retries, accepted):
    """docs/protocol.md, "Timing": retries from 1 to 20."""
    text = (CONFIG_DIR / "table.yaml").read_text()
    path = tmp_path / "table.yaml"
    path.write_text(text.replace("retries: 4 ", f"retries: {retries} "))
    if accepted:
        assert load_table_config(path).timing.retries == retries
        return
    line = _line_of(text, "retries: 4 ")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: timing.retries: {retries} is above the "
                                                    "maximum 20")):
        load_table_config(path)


@pytest.mark.parametrize("seats, bad", [("[0, 1]", 0), ("[1, 7]", 7), ("[-1, 2]", -1)])
def test_a_seat_outside_1_to_6_is_refused_with_one_message(tmp_path, seats, bad):
    """NY 5324.39(a)(1): no more than six player positions; a seat below or above says the same thing."""
    text = (CONFIG_DIR / "table.yaml").read_text()
    path = tmp_path / "table.yaml"
    path.write_text(text.replace("seats: [1, 2, 3, 4, 5, 6]", f"seats: {seats}"))
    line = _line_of(text, "seats: [1, 2, 3, 4, 5, 6]")
    with pytest.raises(ConfigError, match=re.escape(f"{path}: line {line}: seats: {bad} is not a seat (1-6, "
                                                    "NY 5324.39(a)(1))")):
        load_table_config(path)


def test_a_jurisdiction_path_is_relative_to_the_table_file(tmp_path, monkeypatch):
    """Like ``journal`` and ``control.operators``: the folder of table.yaml, not the current directory."""
    from controller.service.opening import jurisdiction_for

    folder = tmp_path / "site"
    (folder / "rules").mkdir(parents=True)
    shutil.copy(CONFIG_DIR / "jurisdictions" / "pa.yaml", folder / "rules" / "pa-floor.yaml")
    table = folder / "table.yaml"
    table.write_text((CONFIG_DIR / "table.yaml").read_text().replace("jurisdiction: ny ", "jurisdiction: rules/pa-floor.yaml "))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    jurisdiction = jurisdiction_for(load_table_config(table))
    assert jurisdiction.code == "pa"
    assert jurisdiction.source.resolve() == (folder / "rules" / "pa-floor.yaml").resolve()


@pytest.mark.parametrize("written", ["rules/missing.yaml", "rules/", "rules/" + "x" * 5000])
def test_an_unreadable_jurisdiction_path_names_the_table_file_and_line(tmp_path, written):
    folder = tmp_path / "site"
    (folder / "rules").mkdir(parents=True)
    text = (CONFIG_DIR / "table.yaml").read_text().replace("jurisdiction: ny ", f"jurisdiction: {written} ")
    table = folder / "table.yaml"
    table.write_text(text)
    line = _line_of(text, f"jurisdiction: {written}")
    with pytest.raises(ConfigError, match=re.escape(f"{table}: line {line}: jurisdiction: cannot read "
                                                    f"{folder / written}: ")):
        load_table_config(table)


@pytest.mark.parametrize("beside", [False, True], ids=["config-folder", "beside-the-table"])
def test_an_unknown_jurisdiction_code_names_the_table_file_and_line(tmp_path, beside):
    """A code with no file where the service would look for it (the jurisdictions folder beside table.yaml
    when there is one, else config/) is refused with table.yaml's line, not later by the service."""
    folder = tmp_path / "site"
    folder.mkdir()
    if beside:
        shutil.copytree(CONFIG_DIR / "jurisdictions", folder / "jurisdictions")
        (folder / "jurisdictions" / "nj.yaml").unlink()
    text = (CONFIG_DIR / "table.yaml").read_text().replace("jurisdiction: ny ", "jurisdiction: nj ")
    table = folder / "table.yaml"
    table.write_text(text)
    line = _line_of(text, "jurisdiction: nj")
    if not beside:
        assert load_table_config(table).jurisdiction == "nj"
        table.write_text(text.replace("jurisdiction: nj ", "jurisdiction: zz "))
    known = "ny, pa" if beside else "nj, ny, pa"
    where = folder / "jurisdictions" if beside else CONFIG_DIR / "jurisdictions"
    wrong = "nj" if beside else "zz"
    with pytest.raises(ConfigError, match=re.escape(f"{table}: line {line}: jurisdiction: unknown jurisdiction "
                                                    f"'{wrong}' (known in {where}: {known})")):
        load_table_config(table)


def test_timing_values_not_written_take_the_protocols_defaults(tmp_path):
    """docs/protocol.md "Timing" gives each default (response_timeout_s 0.5 s, retries 4, ...): a table.yaml
    without a timing section must get exactly those, not values of its own."""
    text = (CONFIG_DIR / "table.yaml").read_text()
    start = text.index("\ntiming:\n") + 1
    end = text.index("\n\n", start) + 1
    path = tmp_path / "table.yaml"
    path.write_text(text[:start] + text[end:])
    timing = load_table_config(path).timing
    documented = {"handshake_timeout": 3.0, "response_timeout": 0.5, "response_timeout_max": 4.0, "retries": 4,
                  "heartbeat_interval": 1.0, "link_silence": 3.5, "reconnect_min": 0.5, "reconnect_max": 8.0,
                  "write_timeout": 1.0}
    assert {name: getattr(timing, name) for name in documented} == documented


@pytest.mark.parametrize("text", [
    "limits: " + "[" * 400 + "]" * 400 + "\n",
    "limits:\n" + "".join("  " * depth + "a:\n" for depth in range(1, 400)),
])
def test_a_file_nested_hundreds_deep_is_refused_in_one_line(tmp_path, text):
    """PyYAML composes nested collections recursively: 400 levels raised ``RecursionError`` (a traceback from
    ``run --config``, ``operator list``, ``settle --table``)."""
    path = tmp_path / "table.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: nested too deep")):
        load_table_config(path)
    proc = crisscross("run", "--simulate", "--rounds", "1", "--config", str(path))
    assert proc.returncode == 2 and proc.stderr == f"crisscross: {path}: nested too deep (hundreds of levels; a " \
                                                   f"configuration has a few)\n"


def test_a_document_of_null_is_not_called_empty(tmp_path):
    path = tmp_path / "table.yaml"
    for text in ("null\n", "~\n", "--- null\n"):
        path.write_text(text)
        with pytest.raises(ConfigError, match=re.escape(f"{path}: expected a mapping at the top level, got null")):
            load_table_config(path)


def test_an_empty_file_or_section_says_so_naming_what_is_wanted(tmp_path):
    """An empty table.yaml or operators file (nothing, or comments alone) and a section left without a value say
    so: the message was ``expected a mapping ..., got NoneType``."""
    from controller.control.operators import load_operators

    for name, load in (("table.yaml", load_table_config), ("operators.yaml", load_operators)):
        path = tmp_path / name
        path.write_text("# nothing yet\n")
        path.chmod(0o600)
        with pytest.raises(ConfigError, match=re.escape(f"{path}: the file is empty")):
            load(path)
    text = (CONFIG_DIR / "table.yaml").read_text()
    start = text.index("limits:")
    body = text[start:text.index("\n\n", start)]
    path = tmp_path / "table.yaml"
    path.write_text(text.replace(body, "limits:"))
    with pytest.raises(ConfigError, match="limits: nothing given: expected a mapping with "):
        load_table_config(path)
