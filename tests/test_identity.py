"""The software's identity (GLI-11 program verification): ``crisscross identity`` and
controller.service.identity. Hashes are checked against coreutils' ``sha256sum``, the file list against a walk of
the package folders made here; the wheel's own listing is checked by .ci/wheel-check from an installed wheel."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.service.identity import checkout_files, identity_of, software_identity

ROOT = Path(__file__).resolve().parent.parent


def _walk(root: Path) -> set[str]:
    names = set()
    for folder, installed in (("controller", "controller"), ("drivers", "drivers"), ("config", "controller/defaults")):
        for top, dirs, files in os.walk(root / folder):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in files:
                if not name.endswith(".pyc"):
                    names.add(f"{installed}/{Path(top, name).relative_to(root / folder).as_posix()}")
    return names


def test_the_checkout_listing_is_sorted_complete_and_hashed_as_sha256sum_hashes():
    identity = software_identity()
    assert identity.origin == "checkout"  # the suite runs from an editable install
    paths = [path for path, _ in identity.files]
    assert paths == sorted(paths) and set(paths) == _walk(ROOT)
    assert "controller/round/significant.py" in paths and "controller/defaults/table.yaml" in paths
    sample = dict(checkout_files(ROOT))
    names = ["controller/__init__.py", "drivers/events.py", "controller/defaults/jurisdictions/ny.yaml"]
    out = subprocess.run(["sha256sum", *(str(sample[n]) for n in names)], capture_output=True, text=True, check=True)
    theirs = [line.split()[0] for line in out.stdout.splitlines()]
    assert theirs == [dict(identity.files)[n] for n in names]
    assert identity.digest == hashlib.sha256(identity.listing().encode()).hexdigest()


def test_the_digest_changes_when_one_byte_of_one_file_changes(tmp_path):
    copy = tmp_path / "copy"
    for folder in ("controller", "drivers", "config"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    before = identity_of(checkout_files(copy), "checkout")
    assert before.digest == identity_of(checkout_files(ROOT), "checkout").digest  # the copy is the same software
    target = copy / "controller" / "game" / "paytable.py"
    data = bytearray(target.read_bytes())
    data[100] ^= 0x01
    target.write_bytes(bytes(data))
    after = identity_of(checkout_files(copy), "checkout")
    assert after.digest != before.digest
    changed = [p for (p, a), (_, b) in zip(before.files, after.files) if a != b]
    assert changed == ["controller/game/paytable.py"]


def test_a_name_listed_twice_is_refused(tmp_path):
    file = tmp_path / "a.py"
    file.write_text("x = 1\n")
    try:
        identity_of([("a.py", file), ("a.py", file)], "checkout")
    except ValueError as exc:
        assert "a.py listed twice" in str(exc)
    else:
        raise AssertionError("a name listed twice was taken")


def test_the_command_prints_the_listing_and_the_digest_as_text_and_json():
    text = subprocess.run([sys.executable, "-m", "controller", "identity"], capture_output=True, text=True,
                          check=True).stdout
    listed = json.loads(subprocess.run([sys.executable, "-m", "controller", "identity", "--format", "json"],
                                       capture_output=True, text=True, check=True).stdout)
    lines = text.splitlines()
    assert lines[-1].startswith(f"digest {listed['digest']} ") and "checkout" in lines[-1]
    assert "".join(line + "\n" for line in lines[:-1]) == "".join(
        f"{f['sha256']}  {f['path']}\n" for f in listed["files"])
    assert hashlib.sha256("".join(line + "\n" for line in lines[:-1]).encode()).hexdigest() == listed["digest"]


def _plant(source: Path, extra: str) -> Path:
    """Bytecode of ``source`` with ``extra`` lines added, under the header Python checks (the source's size and
    time, PEP 552's timestamp form), where the interpreter looks for it: run in the source's place."""
    import importlib.util
    import marshal

    code = compile(source.read_text() + extra, str(source), "exec", dont_inherit=True)
    stat = source.stat()
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir(parents=True, exist_ok=True)
    pyc.write_bytes(importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
                    + (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                    + (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little") + marshal.dumps(code))
    return pyc


def test_bytecode_compiled_from_its_source_stale_or_of_another_interpreter_is_no_problem(tmp_path):
    import py_compile

    from controller.service.identity import code_problems

    package = tmp_path / "pkg"
    package.mkdir()
    module = package / "mod.py"
    module.write_text("def net():\n    return 0\n")
    for mode in (py_compile.PycInvalidationMode.TIMESTAMP, py_compile.PycInvalidationMode.CHECKED_HASH,
                 py_compile.PycInvalidationMode.UNCHECKED_HASH):
        py_compile.compile(str(module), doraise=True, invalidation_mode=mode)
        assert code_problems([package], [module]) == [], mode
    planted = _plant(module, "\nNET = -1500\n")
    planted.rename(planted.with_name("mod.cpython-27.pyc"))  # another interpreter's: never loaded here
    assert code_problems([package], [module]) == []
    _plant(module, "\nNET = -1500\n")
    os.utime(module, ns=(0, 10**9))  # the source's time no longer the header's: Python compiles it again
    assert code_problems([package], [module]) == []


def test_planted_bytecode_and_unlisted_modules_are_named_and_a_faithful_copy_has_none(tmp_path):
    from controller.service.identity import code_problems

    package = tmp_path / "pkg"
    package.mkdir()
    module = package / "mod.py"
    module.write_text("def net():\n    return 0\n")
    assert code_problems([package], [module]) == []
    pyc = _plant(module, "\ndef net():\n    return -1500\n")
    assert code_problems([package], [module]) == [
        f"{pyc}: bytecode that is not {module} compiled, and Python would run it in its place"]
    pyc.unlink()
    for name in ("other.py", "mod.cpython-311-x86_64-linux-gnu.so", "mod.pyc"):
        (package / name).write_bytes(b"")
    notes = code_problems([package], [module])
    assert notes == sorted(f"{package / n}: not one of the software's files, and Python could import it"
                           for n in ("other.py", "mod.cpython-311-x86_64-linux-gnu.so", "mod.pyc"))
    (package / "notes.txt").write_text("x")
    assert code_problems([package], [module]) == notes  # a checkout lists every file but bytecode
    assert code_problems([package], [module], unlisted="any") == sorted(
        [*notes, f"{package / 'notes.txt'}: not one of the software's files"])  # an installed package: its record


def test_bytecode_planted_beside_a_source_is_named_by_identity_and_the_service_does_not_start(tmp_path):
    copy = tmp_path / "copy"
    for folder in ("controller", "drivers", "config"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", copy)  # a checkout
    env = {**os.environ, "PYTHONPATH": str(copy), "XDG_STATE_HOME": str(tmp_path / "state"),
           "PYTHONDONTWRITEBYTECODE": "1"}

    def crisscross(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True, text=True, cwd=copy,
                              env=env, timeout=120)

    assert crisscross("identity").returncode == 0
    source = copy / "controller" / "game" / "settlement.py"
    pyc = _plant(source, "\nPLANTED = True\n")
    ran = subprocess.run([sys.executable, "-c", "import controller.game.settlement as s; print(s.PLANTED)"],
                         capture_output=True, text=True, cwd=copy, env=env, timeout=60)
    assert ran.stdout.strip() == "True"  # Python runs the planted bytecode, the source unchanged
    listed = crisscross("identity")
    assert listed.returncode == 1, listed.stderr
    assert f"{pyc}: bytecode that is not {source} compiled" in listed.stderr
    as_json = crisscross("identity", "--format", "json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["problems"] == [
        f"{pyc}: bytecode that is not {source} compiled, and Python would run it in its place"]
    started = crisscross("run", "--simulate", "--rounds", "1", "--journal", str(tmp_path / "j.db"))
    assert started.returncode == 2, started.stderr
    assert "the code that would run is not the software's files, not starting" in started.stderr
    assert str(pyc) in started.stderr
    assert not (tmp_path / "j.db").exists()  # refused before anything was opened


def test_links_in_place_of_folders_a_prefix_and_a_time_of_whole_seconds_do_not_hide_bytecode(tmp_path, monkeypatch):
    """Bytecode the interpreter loads wherever it looks: through a ``__pycache__`` that is a link to a folder
    elsewhere, a package folder linked in beside a module (imported in its place), under ``sys.pycache_prefix``,
    and with the source's time at .999999999 s (CPython's float reading rounds it up a second)."""
    from controller.service.identity import code_problems

    package = tmp_path / "pkg"
    package.mkdir()
    module = package / "mod.py"
    module.write_text("def net():\n    return 0\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (package / "__pycache__").symlink_to(elsewhere)
    _plant(module, "\nNET = -1500\n")
    assert (elsewhere / Path(_plant(module, "\nNET = -1500\n")).name).is_file()
    notes = code_problems([package], [module])
    assert any(n.startswith(f"{package / '__pycache__'}: a symbolic link (to {elsewhere})") for n in notes), notes
    (package / "__pycache__").unlink()
    (package / "other").symlink_to(elsewhere)  # a package folder ``pkg.other`` from elsewhere
    assert code_problems([package], [module]) == [
        f"{package / 'other'}: a symbolic link (to {elsewhere}): what it names is not among the software's files, "
        f"and Python would follow it"]
    (package / "other").unlink()

    os.utime(module, ns=(1764968400_999_999_999, 1764968400_999_999_999))
    assert int(module.stat().st_mtime) == 1764968401  # the header Python checks against
    pyc = _plant(module, "\nNET = -1500\n")
    assert code_problems([package], [module]) == [
        f"{pyc}: bytecode that is not {module} compiled, and Python would run it in its place"]
    pyc.unlink()

    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    pyc = _plant(module, "\nNET = -1500\n")
    assert str(pyc).startswith(str(tmp_path / "prefix"))
    assert code_problems([package], [module]) == [
        f"{pyc}: bytecode that is not {module} compiled, and Python would run it in its place"]


def test_run_refuses_before_it_loads_the_command_line_and_the_check_runs_apart_from_source(tmp_path):
    """Bytecode planted for a module the command line imports (``controller.settings.argtypes``) never runs
    under ``run``: the check comes first (``controller.cli.entry``). The check run apart, ``python -I`` on
    ``controller/service/identity.py`` (compiled from its source, the standard library alone), names it too."""
    copy = tmp_path / "copy"
    for folder in ("controller", "drivers", "config"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", copy)
    marker = tmp_path / "ran"
    source = copy / "controller" / "settings" / "argtypes.py"
    pyc = _plant(source, f"\nopen({str(marker)!r}, 'a').write('ran')\n")
    env = {**os.environ, "PYTHONPATH": str(copy), "XDG_STATE_HOME": str(tmp_path / "state"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    started = subprocess.run([sys.executable, "-m", "controller", "run", "--simulate", "--rounds", "1", "--journal",
                              str(tmp_path / "j.db")], capture_output=True, text=True, cwd=copy, env=env, timeout=120)
    assert started.returncode == 2 and str(pyc) in started.stderr, started.stderr
    assert not marker.exists() and not (tmp_path / "j.db").exists()
    apart = subprocess.run([sys.executable, "-I", str(copy / "controller" / "service" / "identity.py")],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert apart.returncode == 1 and f"identity: {pyc}: bytecode that is not {source} compiled" in apart.stderr
    assert not marker.exists()


def test_a_cache_in_the_software_s_pycache_is_named_and_the_compiled_loops_keep_theirs_elsewhere(tmp_path):
    """numba's index of compiled loops (``.nbi``, a pickle: code loaded at the next start) was kept in the
    package's ``__pycache__``, where the check passed over every file but bytecode: such a file is named, and
    the loops' cache has no place there (``controller.analysis.kernel_loops``: numba's in-tree locator left
    out, the user's cache folder taken)."""
    from numba.core import caching

    from controller.analysis.kernel_loops import _KernelCacheImpl
    from controller.service.identity import code_problems

    package = tmp_path / "pkg"
    (package / "__pycache__").mkdir(parents=True)
    module = package / "kernel.py"
    module.write_text("X = 1\n")
    (package / "__pycache__" / "kernel.class_table-45.py311.nbi").write_bytes(b"\x80\x04N.")
    assert code_problems([package], [module]) == [
        f"{package / '__pycache__' / 'kernel.class_table-45.py311.nbi'}: not bytecode, in the software's "
        f"__pycache__ (a cache numba or another loader could load code from)"]
    locators = _KernelCacheImpl._locator_classes
    assert not any(issubclass(locator, caching.InTreeCacheLocator) for locator in locators)
    assert any(issubclass(locator, caching.UserWideCacheLocator) for locator in locators)


def test_identity_is_answered_before_the_command_line_is_loaded_and_a_copy_that_is_no_checkout_is_named(tmp_path):
    """``crisscross identity`` ran 28 modules of the command line before its check (bytecode planted in one of
    them ran and could hide itself): it is answered first (``controller.cli.entry``). Package folders with no
    record of their files and no checkout's ``pyproject.toml`` (an empty one will not do) are named."""
    timed = subprocess.run([sys.executable, "-X", "importtime", "-m", "controller", "identity"], capture_output=True,
                           text=True, cwd=ROOT, timeout=120)
    assert timed.returncode == 0
    loaded = {line.rsplit("|", 1)[-1].strip() for line in timed.stderr.splitlines() if "|" in line}
    assert {m for m in loaded if m.startswith(("controller", "drivers"))} <= {
        "controller", "controller.cli", "controller.cli.entry", "controller.service", "controller.service.identity"}
    copy = tmp_path / "copy"
    for folder in ("controller", "drivers", "config"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (copy / "pyproject.toml").write_text("")
    apart = subprocess.run([sys.executable, "-I", "-S", str(copy / "controller" / "service" / "identity.py")],
                           capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert apart.returncode == 1
    assert f"identity: {copy / 'controller'}: installed without the record of its files" in apart.stderr


def test_run_verifies_the_software_once_before_its_command_line_and_its_service_reuses_it(tmp_path, monkeypatch):
    """``crisscross run`` read and compiled every file of the software twice at each start: once before its
    command line was loaded, once more at the service's start. The service now gets the identity verified
    before the command line; a refused check is made again."""
    from controller.cli import entry
    from controller.service import identity

    checks: list[int] = []
    real = identity.software_identity

    def counted():
        checks.append(1)
        return real()

    monkeypatch.setattr(identity, "_verified", None)
    monkeypatch.setattr(identity, "software_identity", counted)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert entry._command(["run", "--simulate", "--rounds", "1", "--quiet"]) == 0
    assert len(checks) == 1
    refused = dataclasses.replace(real(), problems=("x.pyc: bytecode that is not x.py compiled",))
    monkeypatch.setattr(identity, "_verified", None)
    monkeypatch.setattr(identity, "software_identity", lambda: checks.append(1) or refused)
    for _ in range(2):
        with pytest.raises(identity.SoftwareIdentityError, match="x.pyc"):
            identity.verified_software_identity()
    assert len(checks) == 3
