"""Scenario files of the rig (docs/rig.md): the schema's errors name file:line and what is wrong, the shipped
library is valid, covers every paragraph of docs/compliance.md that concerns the round (each row names its
scenarios) and every fault cause of docs/architecture.md, and the console's expectations catch what they
are for (a face-down card shown, a record missing). No service runs here: see test_hil_scenario_run.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hil.expect import check_face_down, check_records, matches
from hil.scenario import ScenarioError, load_scenario, schema
from hil.scenario_main import load_all, parse_ports

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "hil" / "scenarios").glob("*.yaml"))


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    return caught.value.problems


def test_the_schema_is_a_valid_json_schema():
    assert schema()["$schema"].endswith("2020-12/schema")


def test_each_error_names_its_file_and_line_and_what_is_wrong(tmp_path):
    path = write(tmp_path, "bad", "\n".join([
        "name: bad",                                                # 1
        "seed: 3",                                                  # 2
        "steps:",                                                   # 3
        "  - press: open_betting",                                  # 4
        "  - place: {seat: 9, ante_across: 500}",                   # 5: seat 1-6
        "  - fault: {device: shoe, kind: jam, at: {after_stak: 1}}",  # 6: unknown key of the moment
        "  - expect:",                                              # 7
        "      state: betting",                                     # 8
        "      colour: red",                                        # 9: unknown expectation
        "  - press: open_betting",                                  # 10: two actions in one step
        "    key: true",                                            # 11
        "  - press: shuffle",                                       # 12: not a button
        "",
    ]))
    problems = problems_of(path)
    assert [p.split(": ", 1)[0] for p in problems] == [f"{path}:{n}" for n in (5, 6, 9, 10, 12)]
    assert "9 is greater than the maximum of 6" in problems[0]
    assert "'after_stak' was unexpected" in problems[1]
    assert "'colour' was unexpected" in problems[2]
    assert "exactly one action" in problems[3] and "press, key" in problems[3]
    assert "'shuffle' is not one of" in problems[4]


def test_a_state_or_record_type_the_controller_does_not_have_is_refused_before_the_run(tmp_path):
    """A misspelt type in ``absent`` would always hold, and a misspelt state would only time out: both are
    refused with their line, like the schema's errors."""
    path = write(tmp_path, "typos", "\n".join([
        "name: typos",                                                          # 1
        "steps:",                                                               # 2
        "  - wait: {state: beting}",                                            # 3
        "  - expect:",                                                          # 4
        "      state: [betting, closd]",                                        # 5
        "      journal: [{type: RoundOpened}, {type: RoundClozed}]",            # 6
        "      absent: [{type: Dispence}]",                                     # 7
        "  - expect: {state: betting, absent: [{type: Dispense}, {type: Alert}]}",  # 8: all known
        "",
    ]))
    problems = problems_of(path)
    assert [p.split(": ", 1)[0] for p in problems] == [f"{path}:{n}" for n in (3, 5, 6, 7)]
    assert "no state 'beting' in the round machine" in problems[0] and "'closd'" in problems[1]
    assert "journal: no record type 'RoundClozed'" in problems[2] and "absent: no record type 'Dispence'" in problems[3]


@pytest.mark.slow
def test_every_record_type_of_a_simulated_run_is_one_a_scenario_may_name(tmp_path):
    """The names a scenario is checked against (``hil.scenario.known_names``) cover what the service journals:
    a seeded run with mispays, a hand-dealt run, each journal's types all known."""
    import subprocess
    import sys

    from controller.journal.reader import read_records
    from hil.scenario import known_names

    seen = set()
    for name, extra in (("paid", ["--payout-errors", "0.5"]), ("manual", ["--manual"])):
        journal = tmp_path / f"{name}.db"
        run = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "2", "--seed", "5",
                              "--quiet", "--journal", str(journal), *extra], capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr
        seen |= {record["type"] for record in read_records(journal)}
    assert {"PayoutChecked", "CardsRecorded", "ServiceStopped", "Dispense"} <= seen
    assert seen <= known_names()[1], seen - known_names()[1]


def test_yaml_syntax_and_repeated_keys_are_named_by_line(tmp_path):
    broken = write(tmp_path, "broken", "name: broken\nsteps:\n  - press: [open_betting\n  - sleep: 1\n")
    (problem,) = problems_of(broken)
    assert problem.startswith(f"{broken}:4: not YAML")
    repeated = write(tmp_path, "repeated", "name: repeated\nseed: 1\nsteps:\n  - sleep: 1\nseed: 2\n")
    (problem,) = problems_of(repeated)
    assert problem == f"{repeated}:5: key 'seed' repeated (first at line 2)"


def test_a_device_a_folder_a_file_too_large_or_not_utf8_is_refused_before_it_is_read_whole(tmp_path):
    """``/dev/zero`` given as a scenario filled the rig's memory until the kernel killed it; a file over
    ``MAX_SCENARIO_BYTES`` (1 MiB; a scenario is a few thousand) is refused after reading that much; bytes that
    are not UTF-8 are named by their line."""
    from hil.scenario import MAX_SCENARIO_BYTES

    assert MAX_SCENARIO_BYTES == 1 << 20
    assert problems_of(Path("/dev/zero")) == ["/dev/zero:1: not a regular file; a scenario is a YAML file"]
    assert problems_of(tmp_path) == [f"{tmp_path}:1: not a regular file; a scenario is a YAML file"]
    large = tmp_path / "large.yaml"
    large.write_text("name: large\nsteps: [{sleep: 1}]\n" + "#" * (1 << 20) + "\n")
    assert problems_of(large) == [f"{large}:1: larger than 1,048,576 bytes: not a scenario (a scenario is a few "
                                  f"thousand)"]
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("name: latin\nsteps: [{sleep: 1}]\n# caf\u00e9\n".encode("latin-1"))
    assert problems_of(latin) == [f"{latin}:3: not UTF-8 text (byte 0xe9)"]


def test_a_missing_name_or_steps_and_a_name_unlike_the_file_are_refused(tmp_path):
    path = write(tmp_path, "other", "description: nothing\n")
    assert problems_of(path) == [f"{path}:1: the scenario: 'name' is a required property",
                                 f"{path}:1: the scenario: 'steps' is a required property"]
    path = write(tmp_path, "mine", "name: yours\nsteps: [{sleep: 1}]\n")
    assert problems_of(path) == [f"{path}:1: name 'yours' is not the file's name 'mine' (a test case is found by it)"]


def test_every_file_of_a_run_is_checked_before_any_runs(tmp_path):
    good = write(tmp_path, "good", "name: good\nsteps: [{sleep: 0}]\n")
    bad = write(tmp_path, "bad", "name: bad\nsteps: [{sleep: -1}]\n")
    with pytest.raises(ScenarioError) as caught:
        load_all([good, bad, tmp_path / "absent.yaml"])
    assert caught.value.problems[0].startswith(f"{bad}:2: steps/0/sleep: -1 is less than the minimum of 0")
    assert caught.value.problems[1].startswith(f"{tmp_path / 'absent.yaml'}: ")


def test_a_junit_report_in_a_missing_folder_is_refused_before_any_scenario_runs(tmp_path):
    import subprocess
    import sys

    good = write(tmp_path, "good", "name: good\nsteps: [{sleep: 0}]\n")
    proc = subprocess.run([sys.executable, "-m", "hil.rig", "--scenario", str(good), "--junit-xml",
                           str(tmp_path / "nodir" / "out.xml")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "its folder does not exist" in proc.stderr and "good:" not in proc.stdout


def test_a_table_override_the_controller_refuses_is_a_file_error_before_any_run(tmp_path):
    path = write(tmp_path, "table-bad", "name: table-bad\ntable:\n  manual_dealing: maybe\nsteps: [{sleep: 0}]\n")
    with pytest.raises(ScenarioError) as caught:
        load_all([path])
    assert caught.value.problems == [f"{path}:2: table: manual_dealing: expected true or false, got 'maybe'"]


def test_ports_are_device_equals_port():
    assert parse_ports(["shoe=/dev/ttyUSB0", "panel=sim://panel"]) == {"shoe": "/dev/ttyUSB0", "panel": "sim://panel"}
    for bad in (["shoe"], ["=/dev/x"], ["shoe=/a", "shoe=/b"]):
        with pytest.raises(ValueError):
            parse_ports(bad)


@pytest.fixture(scope="module")
def library():
    """The shipped scenarios, loaded and checked once (``load_all``: schema, table overrides, names) for the
    tests of this module that read them."""
    return load_all(SCENARIOS)


def test_the_shipped_library_is_valid_and_large_enough(library):
    assert len(library) >= 25 and len(library) == len(SCENARIOS)
    assert all(s.steps for s in library)


def _round_rows() -> dict[str, str]:
    """The rows of docs/compliance.md for the paragraphs that concern the round: NY (c)-(f) and PA 674a.11."""
    rows = {}
    for line in (ROOT / "docs" / "compliance.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 2 and re.fullmatch(r"(NY \([c-f]\)|PA \().*", cells[1]):
            rows[cells[1]] = line
    return rows


def test_every_round_paragraph_names_a_scenario_that_proves_it(library):
    """Each row of a paragraph that concerns the round names at least one scenario (`hil/scenarios/NAME.yaml`)
    in its last column, and each scenario named lists that paragraph in its ``regulations``; a heading row or a
    paragraph outside the controller names none and needs none."""
    by_name = {s.name: s for s in library}
    missing = []
    for paragraph, line in _round_rows().items():
        named = re.findall(r"hil/scenarios/([a-z0-9-]+)\.yaml", line)
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        outside = cells[2] == "heading" or not (cells[2] or cells[3])  # a heading, or nothing the controller does
        if not named and not outside:
            missing.append(f"{paragraph}: no scenario named")
        for name in named:
            if name not in by_name:
                missing.append(f"{paragraph}: {name} is not a scenario")
            elif paragraph not in by_name[name].data.get("regulations", ()):
                missing.append(f"{paragraph}: {name} does not list it in its regulations")
    rows = _round_rows()
    for scenario in by_name.values():
        for paragraph in scenario.data.get("regulations", ()):
            if f"hil/scenarios/{scenario.name}.yaml" not in rows.get(paragraph, ""):
                missing.append(f"{scenario.name} lists {paragraph}, whose row does not name it")
    assert missing == []


def test_every_fault_cause_of_the_architecture_has_a_scenario(library):
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text[text.index("| cause | resumable |"):text.index("Only a supervisor clears a fault")]
    causes = set(re.findall(r"`([a-z_]+)`", table)) - {"link_silence_s", "reconnect_max_s", "internal"}
    covered = {c for s in library for c in s.data.get("fault_causes", ())}
    # a wrong-size stack is the cause stack_size; "a foreign or repeated card" is card_count
    # (controller/round/machine.py)
    assert causes | {"stack_size"} <= covered, sorted(causes | {"stack_size"} - covered)
    assert "internal" in table  # a defect: not injectable from a device; docs/rig.md says so


def test_records_match_by_their_data_fields():
    records = [{"seq": 1, "type": "FaultRaised", "round": 2, "data": {"cause": "jam", "device": "shoe"}}]
    assert check_records(records, [{"type": "FaultRaised", "data": {"cause": "jam"}}], []) == []
    assert check_records(records, [{"type": "FaultRaised", "round": 2, "count": 1}], []) == []
    (problem,) = check_records(records, [{"type": "FaultRaised", "data": {"cause": "empty"}}], [])
    assert "no record FaultRaised" in problem and '"jam"' in problem
    (problem,) = check_records(records, [], [{"type": "FaultRaised"}])
    assert "present (seq 1)" in problem
    assert matches({"1": {"net": 5}}, {1: {"net": 5, "amount": 5}}) and not matches({"net": 5}, {"net": 6})


def _dealt(round_no=1):
    return [
        {"seq": 1, "type": "StackDealt", "round": round_no, "kind": "record",
         "data": {"stack": 0, "seat": None, "cards": ["As", "Ks", "2d", "7c", "Ah"]}},
        {"seq": 2, "type": "StackDealt", "round": round_no, "kind": "record",
         "data": {"stack": 1, "seat": 1, "cards": ["Ad", "9c"]}},
    ]


def test_a_face_down_card_shown_anywhere_is_caught():
    records = _dealt() + [{"seq": 3, "type": "Display", "round": 1, "kind": "command", "data": {"text": "seat 1 Ad"}}]
    (problem,) = check_face_down(records, [], None)
    assert "['Ad']" in problem and "record 3 Display" in problem
    assert check_face_down(_dealt(), ["Turn the across cards"], None) == []
    (problem,) = check_face_down(_dealt(), ["Turn the across cards", "hint 9c"], None)
    assert "['9c']" in problem and "panel" in problem
    (problem,) = check_face_down(_dealt(), [], {"round_no": 1, "community": ["As"]})
    assert "/state shows ['As']" in problem
    (problem,) = check_face_down(_dealt(), ["across: As Ks"], None)  # never turned in its round
    assert "['As', 'Ks']" in problem


def test_a_card_turned_is_no_secret():
    revealed = _dealt() + [
        {"seq": 3, "type": "CardsRevealed", "round": 1, "kind": "record",
         "data": {"step": "across", "cards": ["As", "Ks"], "round_no": 1}},
        {"seq": 4, "type": "Display", "round": 1, "kind": "command", "data": {"text": "across: As Ks"}},
    ]
    assert check_face_down(revealed, ["across: As Ks"], {"round_no": 1, "community": ["As", "Ks"]}) == []


def laughs(levels: int) -> str:
    """A YAML flow sequence of ``levels`` levels, each of ten copies of the level below through nine aliases
    ("billion laughs"): 10**levels values at the bottom, in about 60 bytes a level."""
    text = "&a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"
    for level in range(1, levels):
        text = f"&a{level} [{text}, " + ", ".join([f"*a{level - 1}"] * 9) + "]"
    return text


def refused_as_scenario_and_configuration(path: Path, bound: str) -> None:
    """``path`` is refused, before it is built, by the rig's file check at line 1 and by the configuration loader,
    both saying it holds more than ``bound`` (``"100,000 values"``) once its aliases are counted."""
    from controller.settings.files import ConfigError, load_yaml

    said = f"more than {bound} once its aliases are counted where they are named (an alias of aliases)"
    assert problems_of(path) == [f"{path}:1: not YAML: {said}: not a file to read"]
    with pytest.raises(ConfigError, match=re.escape(said)):
        load_yaml(path)


def test_a_file_whose_aliases_name_a_billion_values_is_refused_before_it_is_built(tmp_path):
    """Nine levels of ten aliases (10**9 values in some 500 bytes) filled the rig's memory when the scenario was
    walked (MemoryError at a 2 GB limit after 50 s); a configuration's value was expanded so when its error was
    written. Refused at once, as a scenario and as a configuration file; four levels (11,111 values) are read."""
    from controller.settings.files import MAX_NODES, load_yaml

    assert 10**9 > MAX_NODES > 11_111
    path = write(tmp_path, "laughs", f"name: laughs\nseed: {laughs(9)}\nsteps: []\n")
    refused_as_scenario_and_configuration(path, f"{MAX_NODES:,} values")
    few = write(tmp_path, "few", f"name: few\nseed: {laughs(4)}\nsteps: [{{sleep: 0}}]\n")
    (problem,) = problems_of(few)  # read, then checked as usual: a seed is a number
    assert problem.startswith(f"{few}:2: seed: ") and "not YAML" not in problem, problem
    assert len(problem) < len(str(few)) + 400 and problem.endswith("more characters)")  # the value quoted is cut
    assert len(load_yaml(few)["seed"]) == 10


def test_a_file_whose_aliases_name_a_long_text_ten_thousand_times_is_refused_before_it_is_built(tmp_path):
    """Four levels of ten aliases of one 400,000-character text (a 405 KB file, 11,111 values) name 4 GB of text:
    a refusal quoting the value ran out of memory (MemoryError at 2.4 GB) and a scenario's table hung the rig.
    Text is counted too, aliases where they are named, up to what a file of the largest size holds."""
    from controller.settings.files import MAX_CHARACTERS, MAX_CONFIG_BYTES, load_yaml

    assert MAX_CHARACTERS == MAX_CONFIG_BYTES < 10**4 * 400_000
    long = laughs(4).replace("&a0 [lol, lol", f"&a0 [&s {'x' * 400_000}, *s", 1)
    path = write(tmp_path, "long", f"name: long\nseed: {long}\nsteps: [{{sleep: 0}}]\n")
    refused_as_scenario_and_configuration(path, f"{MAX_CHARACTERS:,} characters of text")
    once = write(tmp_path, "once", f"name: once\nnote: {'x' * 400_000}\nsteps: [{{sleep: 0}}]\n")
    assert len(load_yaml(once)["note"]) == 400_000  # written out, the same text is read


def test_a_collection_that_contains_itself_is_refused_at_its_line_as_a_configuration_file_is(tmp_path):
    """docs/rig.md, "A scenario file": a recursive alias (``&a [*a]``, endless when walked) is a malformed file,
    named by file and line, as controller/settings/files.py's ``load_yaml`` refuses it in a configuration."""
    from controller.settings.files import ConfigError, load_yaml

    path = write(tmp_path, "loop", "name: loop\nseed: &a [*a]\nsteps: []\n")
    assert problems_of(path) == [f"{path}:2: not YAML: a collection that contains itself (a recursive alias)"]
    with pytest.raises(ConfigError, match="line 2, column 7 malformed YAML: a collection that contains itself"):
        load_yaml(path)
    shared = write(tmp_path, "shared", "name: shared\nsteps: &s [{sleep: 0}]\nmore: *s\n")
    assert problems_of(shared) == [f"{shared}:3: the scenario: Additional properties are not allowed ('more' was "
                                   f"unexpected)"]  # an alias of another node is read as usual, checked as usual


def test_a_scenario_nested_deeper_than_the_parser_goes_is_refused(tmp_path):
    path = write(tmp_path, "deep", "name: deep\nsteps: " + "[" * 3000 + "]" * 3000 + "\n")
    assert problems_of(path) == [f"{path}:1: nested too deep (hundreds of levels; a scenario has a few)"]


def test_the_rig_refuses_a_recursive_scenario_with_status_2_and_runs_none(tmp_path):
    """docs/rig.md: a malformed scenario file is refused before any scenario runs, exit status 2, its problem
    as file:line; no JUnit report is written."""
    import subprocess
    import sys

    good = write(tmp_path, "good", "name: good\nsteps: [{sleep: 0}]\n")
    loop = write(tmp_path, "loop", "name: &a [*a]\nsteps: []\n")
    report = tmp_path / "out.xml"
    proc = subprocess.run([sys.executable, "-m", "hil.rig", "--scenario", str(good), str(loop), "--junit-xml",
                           str(report)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert f"{loop}:1: not YAML: a collection that contains itself (a recursive alias)" in proc.stderr
    assert "Traceback" not in proc.stderr and "good:" not in proc.stdout and not report.exists()


def test_a_fault_step_asking_more_than_the_simulators_take_is_refused_at_its_line(tmp_path):
    """docs/protocol.md, "Fault injection": counts, nth and times at most 10,000, seconds at most 3,600, a
    flood's rate at most 100,000 a second; a scenario asking more is a file error, not a run that breaks."""
    path = write(tmp_path, "greedy", "\n".join([
        "name: greedy",                                                                      # 1
        "steps:",                                                                            # 2
        "  - fault: {device: shoe, kind: jam, count: 99999999999}",                          # 3
        "  - fault: {device: panel, kind: silent, seconds: 3601}",                           # 4
        "  - fault: {device: panel, kind: flood, rate: 100001}",                             # 5
        "  - fault: {device: shoe, kind: jam, at: {message: DISPENSE, nth: 10001}}",         # 6
        "  - fault: {device: shoe, kind: jam, count: 10000, at: {after_stack: 9999}}",       # 7
        ""]))
    problems = problems_of(path)
    assert problems[:3] == [
        f"{path}:3: steps/0/fault/count: 99999999999 is greater than the maximum of 10000",
        f"{path}:4: steps/1/fault/seconds: 3601 is greater than the maximum of 3600.0",
        f"{path}:5: steps/2/fault/rate: 100001 is greater than the maximum of 100000.0"]
    assert len(problems) == 4 and problems[3].startswith(f"{path}:6: steps/3/fault/at: ")  # the moment's nth


def test_a_wait_longer_than_an_hour_is_refused_at_its_line(tmp_path):
    """docs/rig.md: a step waits an hour at most (``timeout`` of ``wait``, ``expect``, ``pay`` and ``after``: 3,600
    s; ``after``'s ``within_ms``: 3,600,000 ms); ``timeout: 1000000000`` held the rig for ever. An hour itself is
    taken."""
    path = write(tmp_path, "patient", "\n".join([
        "name: patient",                                                                     # 1
        "steps:",                                                                            # 2
        "  - wait: {state: closed, timeout: 1000000000}",                                    # 3
        "  - expect: {state: closed, timeout: 3600.5}",                                      # 4
        "  - pay: {seat: 1, timeout: .inf}",                                                 # 5
        "  - press: no_more_bets",                                                           # 6
        "    after: {journal: {type: ButtonPressed}, within_ms: 3600001, timeout: 3601}",    # 7
        "  - wait: {state: closed, timeout: 3600}",                                          # 8
        "  - press: no_more_bets",                                                           # 9
        "    after: {journal: {type: ButtonPressed}, within_ms: 3600000, timeout: 3600}",    # 10
        ""]))
    assert problems_of(path) == [
        f"{path}:3: steps/0/wait/timeout: 1000000000 is greater than the maximum of 3600",
        f"{path}:4: steps/1/expect/timeout: 3600.5 is greater than the maximum of 3600",
        f"{path}:5: steps/2/pay/timeout: inf is greater than the maximum of 3600",
        f"{path}:7: steps/3/after/within_ms: 3600001 is greater than the maximum of 3600000",
        f"{path}:7: steps/3/after/timeout: 3601 is greater than the maximum of 3600"]
