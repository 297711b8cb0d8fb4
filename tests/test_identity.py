"""The software's identity (GLI-11 program verification): ``crisscross identity`` and
controller.service.identity. Hashes are checked against coreutils' ``sha256sum``, the file list against a walk of
the package folders made here; the wheel's own listing is checked by .ci/wheel-check from an installed wheel."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

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
