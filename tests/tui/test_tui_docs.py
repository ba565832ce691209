"""docs/tui.md lists every key each screen declares, so `?` and the docs never disagree."""

from pathlib import Path

from ttrecord.tui.app import TtrecordApp
from ttrecord.tui.screens.help import screen_classes, screen_keys, title_of

DOC = Path(__file__).resolve().parents[2] / "docs" / "tui.md"


def test_docs_list_every_key_of_every_screen():
    """GIVEN the keys each screen and its widgets declare WHEN docs/tui.md is read THEN its
    row for that screen names every one of them."""
    rows = {line.split("|")[1].strip(): line for line in DOC.read_text().splitlines()
            if line.startswith("| ") and line.count("|") >= 3}  # fmt: skip
    app = TtrecordApp()
    missing = []
    for cls in screen_classes():
        row = rows.get(title_of(cls), "")
        for keys, what in screen_keys(app, cls):
            missing += [f"{title_of(cls)}: `{k}` ({what})" for k in keys.split() if f"`{k}`" not in row]
    assert not missing, missing
