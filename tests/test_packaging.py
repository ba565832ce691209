"""The package list is discovered (setup.py), never kept by hand: every package folder is in
it, tui/'s as ttrecord.tui, and no top-level `tui` (PyPI has an unrelated one).

Discovery finds a folder only if it has an `__init__.py`, so a folder of modules without one
would be left out of a wheel while an editable install hides it: every folder holding Python
modules is a package, but the non-package data folders package-data names.
"""

import importlib.util
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project supports 3.10, where the same parser is the tomli package (test extra)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
# Folders of data that ship as package-data, not packages (see pyproject.toml).
DATA_FOLDERS = {"ttrecord/recorder/spawn_path"}


def _discovered() -> list[str]:
    spec = importlib.util.spec_from_file_location("ttrecord_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.packages()


def _package_folders() -> set[str]:
    names = set()
    for init in [*ROOT.glob("ttrecord/**/__init__.py"), *ROOT.glob("tui/**/__init__.py")]:
        rel = init.parent.relative_to(ROOT).parts
        if rel[0] == "tui":
            rel = ("ttrecord", *rel)
        names.add(".".join(rel))
    return names


def test_every_package_folder_is_discovered():
    # GIVEN the package list setup.py builds THEN it is exactly the package folders, tui/'s
    # under ttrecord.tui, and pyproject maps that name to the folder
    found = _discovered()
    assert sorted(found) == sorted(_package_folders()) and len(found) == len(set(found))
    assert {"ttrecord.tui", "ttrecord.tui.screens", "ttrecord.tui.widgets"} <= set(found)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"]["ttrecord.tui"] == "tui" and "packages" not in config


def test_every_folder_of_modules_is_a_package():
    # GIVEN every folder under ttrecord/ and tui/ holding a Python module THEN it has an
    # __init__.py (discovery would skip it), unless it ships as package data
    folders = {p.parent for d in ("ttrecord", "tui") for p in (ROOT / d).rglob("*.py")}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists())
    assert set(missing) == DATA_FOLDERS


def test_no_top_level_tui_module_is_installed():
    assert not any(p == "tui" or p.startswith("tui.") for p in _discovered())
