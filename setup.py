"""The package list, discovered: every folder with an `__init__.py` under ttrecord/, and under
tui/ as `ttrecord.tui` (pyproject.toml's package-dir maps the folder; PyPI already has an
unrelated `tui`, so it is never installed as a top-level module). Everything else about the
build is in pyproject.toml."""

from setuptools import find_packages, setup


def packages() -> list[str]:
    return [*find_packages(include=["ttrecord", "ttrecord.*"]),
            "ttrecord.tui", *(f"ttrecord.tui.{p}" for p in find_packages("tui"))]  # fmt: skip


if __name__ == "__main__":
    setup(packages=packages())
