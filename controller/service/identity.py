"""The software's identity (GLI-11 program verification): the SHA-256 of every file of the installed packages and
one digest over them, printed by ``crisscross identity`` and journaled at each start (``ServiceStarted.software``).

The files: as installed from the wheel, the ``controller`` and ``drivers`` files that the
``crisscross-controller`` distribution's record lists (``importlib.metadata``), bytecode (``.pyc``, compiled
at install for the interpreter at hand) left out. From a checkout (an editable install or none: the record does
not list the package files) the files under the package folders, with ``config/`` named ``controller/defaults/``
as the wheel names it, ``__pycache__`` and ``.pyc`` left out; ``Identity.origin`` says which.

The digest: SHA-256 over the UTF-8 lines ``"<sha256>  <path>\\n"`` (lower-case hex, two spaces, the path with
``/``), one per file, sorted by path (``sha256sum``'s format: ``sha256sum -c`` checks a listing).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DISTRIBUTION = "crisscross-controller"
#: The top-level packages of the distribution.
PACKAGES: tuple[str, ...] = ("controller", "drivers")
#: The checkout's folder installed as ``controller/defaults`` (pyproject.toml, ``package-dir``).
CHECKOUT_FOLDERS: dict[str, str] = {"controller": "controller", "drivers": "drivers", "config": "controller/defaults"}
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Identity:
    """``files``: ``(path, sha256)`` sorted by path; ``digest`` over them (module docstring); ``origin``
    ``installed`` (the distribution's record) or ``checkout`` (the package folders)."""

    files: tuple[tuple[str, str], ...]
    digest: str
    origin: str

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


def installed_files() -> list[tuple[str, Path]] | None:
    """The package files the distribution's record lists, as installed from a wheel; None when it lists none of
    them (an editable install, or the distribution not installed)."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    if dist.read_text("RECORD") is None:  # not installed from a wheel (an egg-info of a checkout's build)
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


def software_identity() -> Identity:
    """The identity of the software running now: installed, or from the checkout (module docstring)."""
    files = installed_files()
    if files is not None:
        return identity_of(files, "installed")
    return identity_of(checkout_files(), "checkout")
