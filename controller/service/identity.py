"""The software's identity (GLI-11 program verification): the SHA-256 of every file of the installed packages and
one digest over them, printed by ``crisscross identity`` and journaled at each start (``ServiceStarted.software``).

The files: as installed from the wheel, the ``controller`` and ``drivers`` files that the
``crisscross-controller`` distribution's record lists (``importlib.metadata``), bytecode (``.pyc``, compiled
at install for the interpreter at hand) left out. From a checkout (an editable install or none: the record does
not list the package files) the files under the package folders, with ``config/`` named ``controller/defaults/``
as the wheel names it, ``__pycache__`` and ``.pyc`` left out; ``Identity.origin`` says which.

The digest: SHA-256 over the UTF-8 lines ``"<sha256>  <path>\\n"`` (lower-case hex, two spaces, the path with
``/``), one per file, sorted by path (``sha256sum``'s format: ``sha256sum -c`` checks a listing).

What runs is not always those files: Python runs a module's bytecode from ``__pycache__`` in its source's place
when the bytecode's header matches the source (its size and time, or its hash), whatever the code in it, and it
imports an extension module, a folder or bytecode without a source beside a module of the same name before or
instead of it. ``Identity.problems`` names each such file that does not vouch for itself (``code_problems``):
bytecode Python would load that is not its source compiled, a cache or other file in a ``__pycache__``, a symbolic
link, and a file Python could import that the listing leaves out. ``crisscross run`` refuses to start on any
before it loads the command line (``controller.cli.entry``, ``SoftwareIdentityError``), ``crisscross identity``
names them. Run as a program (``python -I -S <this file> [--format json]``) the check runs apart, compiled from
this source, with the standard library alone (docs/commands.md, "crisscross identity").
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import marshal
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

DISTRIBUTION = "crisscross-controller"
#: The top-level packages of the distribution.
PACKAGES: tuple[str, ...] = ("controller", "drivers")
#: The checkout's folder installed as ``controller/defaults`` (pyproject.toml, ``package-dir``).
CHECKOUT_FOLDERS: dict[str, str] = {"controller": "controller", "drivers": "drivers", "config": "controller/defaults"}
_ROOT = Path(__file__).resolve().parents[2]


#: What Python imports as a module besides its source: extension modules and bytecode without a source.
IMPORTED_SUFFIXES: tuple[str, ...] = (*importlib.machinery.SOURCE_SUFFIXES, *importlib.machinery.EXTENSION_SUFFIXES,
                                      *importlib.machinery.BYTECODE_SUFFIXES)


class SoftwareIdentityError(ValueError):
    """The code that would run is not the software's files (``Identity.problems``): the service does not start."""


@dataclass(frozen=True)
class Identity:
    """``files``: ``(path, sha256)`` sorted by path; ``digest`` over them (module docstring); ``origin``
    ``installed`` (the distribution's record) or ``checkout`` (the package folders); ``problems``: one line for
    each file under the package folders by which other code than ``files`` would run (``code_problems``)."""

    files: tuple[tuple[str, str], ...]
    digest: str
    origin: str
    problems: tuple[str, ...] = ()

    def listing(self) -> str:
        """The files as ``sha256sum`` lines (the text the digest is taken over)."""
        return "".join(f"{sha}  {path}\n" for path, sha in self.files)


def file_sha256(path: Path) -> str:
    """The SHA-256 of the file at ``path`` (hex). Raises ``OSError`` naming the file when it cannot be read."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def identity_of(files: Iterable[tuple[str, Path]], origin: str) -> Identity:
    """The identity of ``files`` (``(name, file)``: the name listed, the file hashed). Raises ``ValueError`` for
    a name listed twice and ``OSError`` for a file that cannot be read."""
    named: dict[str, Path] = {}
    for name, path in files:
        if name in named:
            raise ValueError(f"software identity: {name} listed twice")
        named[name] = path
    listed = tuple((name, file_sha256(named[name])) for name in sorted(named))
    digest = hashlib.sha256("".join(f"{sha}  {name}\n" for name, sha in listed).encode()).hexdigest()
    return Identity(listed, digest, origin)


def _distribution() -> importlib.metadata.Distribution | None:
    """The distribution whose record lies in the folder holding the packages running now (found there, not
    through ``sys.path``: a check run with ``python -I -S`` reads no ``.pth`` file of ``site-packages``), or
    None."""
    return next(iter(importlib.metadata.distributions(name=DISTRIBUTION, path=[str(_ROOT)])), None)


def _is_checkout(root: Path) -> bool:
    """True when ``root`` is a checkout of this project: its ``pyproject.toml`` names the distribution."""
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return f'name = "{DISTRIBUTION}"' in text


def installed_files() -> list[tuple[str, Path]] | None:
    """The package files the distribution's record lists, as installed from a wheel; None when it lists none of
    them (an editable install, or the distribution not installed)."""
    dist = _distribution()
    if dist is None or dist.read_text("RECORD") is None:  # not installed from a wheel (an egg-info of a checkout's build)
        return None
    files = [(str(f).replace("\\", "/"), Path(str(dist.locate_file(f)))) for f in dist.files or ()
             if f.parts and f.parts[0] in PACKAGES and f.suffix != ".pyc" and "__pycache__" not in f.parts]
    here = Path(__file__).resolve()
    if not any(path.resolve() == here for _, path in files):  # the record is not of the code running now
        return None
    return files


def checkout_files(root: Path = _ROOT) -> list[tuple[str, Path]]:
    """The files of the package folders of the checkout at ``root`` under their installed names."""
    out = []
    for folder, name in CHECKOUT_FOLDERS.items():
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and path.suffix != ".pyc" and "__pycache__" not in path.parts:
                out.append((f"{name}/{path.relative_to(root / folder).as_posix()}", path))
    return out


def code_problems(folders: Iterable[Path], listed: Iterable[Path], *, unlisted: str = "importable") -> list[str]:
    """What under ``folders`` (the package folders) would run other code than the files ``listed``, one line
    each, sorted: a symbolic link (what it names is not among the files hashed: a ``__pycache__`` or a package
    folder elsewhere), bytecode that the running interpreter would load in a source's place and that is not
    that source compiled (``bytecode_problem``, for every source, wherever that bytecode is looked for), and a
    file not in ``listed``: with ``unlisted`` ``importable`` one Python could import (``IMPORTED_SUFFIXES``: a
    module, an extension module, bytecode without a source; a checkout lists every other file), with ``any``
    every file outside ``__pycache__`` (an installed package holds only what its record lists, and its
    bytecode). Raises ``OSError`` naming a file that cannot be read."""
    known = {path.resolve() for path in listed}
    out = []
    for folder in folders:
        for top, folders_in, files in os.walk(folder):  # never into a linked folder: it is named instead
            here = Path(top)
            for name in folders_in + files:
                if (here / name).is_symlink():
                    out.append(f"{here / name}: a symbolic link (to {os.readlink(here / name)}): what it names "
                               f"is not among the software's files, and Python would follow it")
            folders_in[:] = [name for name in folders_in if not (here / name).is_symlink()]
            if here.name == "__pycache__":  # bytecode of a source, checked with it; nothing else belongs here
                out += [f"{here / name}: not bytecode, in the software's __pycache__ (a cache numba or another "
                        f"loader could load code from)" for name in files
                        if not name.endswith(tuple(importlib.machinery.BYTECODE_SUFFIXES))]
                continue
            for name in files:
                path = here / name
                if path.is_symlink():
                    continue
                if name.endswith(tuple(importlib.machinery.SOURCE_SUFFIXES)):
                    out += filter(None, (bytecode_problem(pyc, path, level) for pyc, level in bytecode_of(path)))
                if path.resolve() not in known and (unlisted == "any" or name.endswith(IMPORTED_SUFFIXES)):
                    out.append(f"{path}: not one of the software's files" + (
                        ", and Python could import it" if name.endswith(IMPORTED_SUFFIXES) else ""))
    return sorted(set(out))


def bytecode_of(source: Path) -> list[tuple[Path, int]]:
    """Where the running interpreter looks for the bytecode of ``source`` (a ``.py`` file), that exists, with
    its optimization level (0, 1: ``-O``, 2: ``-OO``): in ``__pycache__`` beside the source, and under
    ``sys.pycache_prefix`` when one is set (``PYTHONPYCACHEPREFIX``, ``-X pycache_prefix``; PEP 3147, PEP 488)."""
    found = []
    for level in (0, 1, 2):
        suffix = f".{sys.implementation.cache_tag}{'' if level == 0 else f'.opt-{level}'}.pyc"
        places = {source.parent / "__pycache__" / f"{source.stem}{suffix}",
                  Path(importlib.util.cache_from_source(str(source), optimization="" if level == 0 else level))}
        found += [(place, level) for place in sorted(places) if place.is_file()]
    return found


def bytecode_problem(pyc: Path, source: Path, optimize: int) -> str | None:
    """What is wrong with the bytecode file ``pyc`` of ``source`` at the optimization level ``optimize``, or
    None: bytecode this interpreter would load in the source's place (its magic number, and a header naming the
    source as it is: size and time as CPython reads them, or the hash of a checked or unchecked hash-based file,
    PEP 552) must be that source compiled (code objects compared, as ``compile`` gives them at that level).
    Bytecode of another version or stale is never loaded (Python compiles the source again), so it is no
    problem. A verdict is kept for the files' sizes and times (``_bytecode_verdict``). Raises ``OSError`` naming
    a file that cannot be read."""
    pyc_stat, source_stat = pyc.stat(), source.stat()
    return _bytecode_verdict(str(pyc), str(source), optimize,
                             (pyc_stat.st_size, pyc_stat.st_mtime_ns, pyc_stat.st_ino),
                             (source_stat.st_size, source_stat.st_mtime_ns, source_stat.st_ino),
                             int(source_stat.st_mtime))  # CPython's reading: the float's whole seconds


@functools.lru_cache(maxsize=4096)
def _bytecode_verdict(pyc: str, source: str, optimize: int, pyc_stat: tuple[int, int, int],
                      source_stat: tuple[int, int, int], source_seconds: int) -> str | None:
    data = Path(pyc).read_bytes()
    if data[:4] != importlib.util.MAGIC_NUMBER or len(data) < 16:
        return None  # another version's, or cut short: Python compiles the source again
    code = Path(source).read_bytes()
    flags = int.from_bytes(data[4:8], "little")
    if flags & 0b1:  # hash-based (PEP 552): checked ones only while the source hash matches
        if flags & 0b10 and data[8:16] != importlib.util.source_hash(code):
            return None
    elif (int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")) != (
            source_seconds & 0xFFFFFFFF, source_stat[0] & 0xFFFFFFFF):
        return None  # stale: Python compiles the source again
    try:
        loaded = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return f"{pyc}: bytecode that cannot be read in the place of {source}"
    if loaded != compile(code, source, "exec", dont_inherit=True, optimize=optimize):
        return f"{pyc}: bytecode that is not {source} compiled, and Python would run it in its place"
    return None


def software_identity() -> Identity:
    """The identity of the software running now: installed, or from the checkout (module docstring), with the
    files by which other code would run (``code_problems``)."""
    files = installed_files()
    if files is not None:
        folders = [_ROOT / name for name in PACKAGES]
        identity, unlisted = identity_of(files, "installed"), "any"
    else:
        files = checkout_files()
        folders = [_ROOT / folder for folder in CHECKOUT_FOLDERS]
        identity, unlisted = identity_of(files, "checkout"), "importable"
    problems = code_problems(folders, (path for _, path in files), unlisted=unlisted)
    if identity.origin == "checkout" and not _is_checkout(_ROOT):
        problems.append(f"{_ROOT / 'controller'}: installed without the record of its files (the distribution's "
                        f"RECORD) and not a checkout: which files are the software's is not known")
    return Identity(identity.files, identity.digest, identity.origin, tuple(problems))



#: What mends a refusal: bytecode is compiled again once removed; a file the package did not install stays
#: through a reinstall.
REMEDY = ("remove each file named (bytecode is compiled again from its source; a reinstall leaves files the "
          "package did not install, and links in place of its folders), then check again")


#: The identity this process verified (``verified_software_identity``), once it passed.
_verified: Identity | None = None


def verified_software_identity() -> Identity:
    """``software_identity``, refused when other code than its files would run: raises ``SoftwareIdentityError``
    naming each file (``Identity.problems``; GLI-11 program verification: the code that runs is the code
    identified). The service's start, before it opens anything. Once per process: ``crisscross run`` verifies
    before it loads its command line (``controller.cli.entry``), and the service's start then gets that identity
    back, every file read and compiled once, not twice; a refusal is checked again at the next call."""
    global _verified
    if _verified is not None:
        return _verified
    software = software_identity()
    if software.problems:
        raise SoftwareIdentityError(
            "the code that would run is not the software's files, not starting: " + "; ".join(software.problems)
            + f" ({REMEDY})")
    _verified = software
    return software


#: The forms ``report`` writes.
FORMATS: tuple[str, ...] = ("text", "json")


def form_of(arguments: list[str]) -> str | None:
    """The form asked by ``arguments`` (none: ``text``; ``--format F``: F, one of ``FORMATS``), or None for any
    other arguments."""
    if not arguments:
        return "text"
    return arguments[1] if len(arguments) == 2 and arguments[0] == "--format" and arguments[1] in FORMATS else None


def report(identity: Identity, form: str, out: TextIO, err: TextIO, name: str) -> int:
    """Write ``identity`` to ``out`` as ``form`` (``text``: ``sha256sum`` lines, then the digest and where the
    files came from; ``json``: ``{"digest", "origin", "files": [{"path", "sha256"}], "problems"}``) and each of
    its problems to ``err`` (each line begun with ``name``); 0, or 1 when it has problems."""
    if form == "json":
        out.write(json.dumps({"digest": identity.digest, "origin": identity.origin,
                              "files": [{"path": path, "sha256": sha} for path, sha in identity.files],
                              "problems": list(identity.problems)}, indent=1) + "\n")
    else:
        out.write(identity.listing())
        out.write(f"digest {identity.digest} (SHA-256 of the {len(identity.files)} lines above; files "
                  f"{'as installed' if identity.origin == 'installed' else 'of the checkout, not an installed wheel'})\n")
    for problem in identity.problems:
        err.write(f"{name}: {problem}\n")
    if identity.problems:
        err.write(f"{name}: other code or data than the files listed would be used ({len(identity.problems)} "
                  f"file(s)): the digest does not vouch for what runs; {REMEDY}\n")
    return 1 if identity.problems else 0


if __name__ == "__main__":  # the check run apart: ``python -I <this file>``, compiled from this source (module docstring)
    _form = form_of(sys.argv[1:])
    if _form is None:
        sys.stderr.write(f"usage: python -I -S {__file__} [--format {'|'.join(FORMATS)}]\n")
        raise SystemExit(2)
    raise SystemExit(report(software_identity(), _form, sys.stdout, sys.stderr, "identity"))
