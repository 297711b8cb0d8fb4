"""The wheel ships every package and the default configuration: pyproject.toml lists its packages by hand
(``controller.defaults`` is ``config/`` mapped into the package), so a package added to the source tree must be
added there too; this test says which. The wheel itself is built and run from a virtualenv away from the
checkout by ``.ci/wheel-check``."""

from __future__ import annotations

import tomllib
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent


def test_every_package_of_the_source_tree_is_in_the_wheel():
    setup = tomllib.loads((TOP / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setup["packages"])
    found = {".".join(init.parent.relative_to(TOP).parts) for top in ("controller", "drivers")
             for init in (TOP / top).rglob("__init__.py")}
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
    assert setup["package-dir"] == {"controller.defaults": "config"}
    assert {"controller.defaults", "controller.defaults.jurisdictions"} <= listed
    data = setup["package-data"]
    shipped = {p.name for p in (TOP / "config").glob("*.yaml")} | {
        f"jurisdictions/{p.name}" for p in (TOP / "config" / "jurisdictions").glob("*.yaml")}
    assert shipped == {"table.yaml", "jurisdictions/ny.yaml", "jurisdictions/pa.yaml", "jurisdictions/nj.yaml"}
    assert data["controller.defaults"] == ["table.yaml"]
    assert data["controller.defaults.jurisdictions"] == ["*.yaml"]
    assert data["controller.defaults.systemd"] == ["crisscross.service"]
    # a folder of data files (no __init__.py) is listed as a package with its files, so that the build names it
    folders = {".".join(path.parent.relative_to(TOP).parts) for top in ("controller", "drivers")
               for path in (TOP / top).rglob("*") if path.is_file() and path.suffix not in (".py", ".pyc")
               and "__pycache__" not in path.parts and not (path.parent / "__init__.py").exists()}
    assert folders <= listed, f"folders of data files missing from pyproject.toml's packages: {sorted(folders - listed)}"
    assert all(folder in data for folder in folders), sorted(folders - set(data))
    assert (TOP / "config" / "systemd" / "crisscross.service").is_file()  # `crisscross config unit` prints it
