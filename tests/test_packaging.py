"""Every package folder is listed in pyproject.toml, so a wheel install has all of ttrecord.

The list is kept by hand because tui/ installs as ttrecord.tui, which automatic discovery
cannot express; an editable install hides a missing entry, a wheel does not.
"""

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project supports 3.10, where the same parser is the tomli package (test extra)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _package_folders() -> set[str]:
    names = set()
    for init in [*ROOT.glob("ttrecord/**/__init__.py"), *ROOT.glob("tui/**/__init__.py")]:
        rel = init.parent.relative_to(ROOT).parts
        if rel[0] == "tui":
            rel = ("ttrecord", *rel)
        names.add(".".join(rel))
    return names


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(config["packages"]) == _package_folders()
    assert config["package-dir"]["ttrecord.tui"] == "tui"


def test_no_top_level_tui_module_is_installed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert not any(p == "tui" or p.startswith("tui.") for p in config["packages"])
