"""The rule tables of README.md, docs/check.md and docs/check-json.md (evidence keys) and
`check --help`'s rule list, generated
from the rules' declarations (`ttrecord.analysis.registry`), so no list of rules is kept by hand.

    python -m ttrecord.report.rule_docs           # exit 1 naming each file that is out of date
    python -m ttrecord.report.rule_docs --write   # rewrite the tables in place

A table sits between `<!-- rules:begin -->` and `<!-- rules:end -->`; the test suite fails when
a committed file differs from what this generates.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ttrecord.analysis.rules import Rule

BEGIN = "<!-- rules:begin -->"
END = "<!-- rules:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def readme_table(rules: Iterable[Rule]) -> str:
    rows = [f"| {r.id} | {_cell(r.summary)} | {_cell(r.levels)} |" for r in rules]
    return "\n".join(["| id | hazard | severity |", "|---|---|---|", *rows])


def check_table(rules: Iterable[Rule]) -> str:
    rows = [f"| {r.id} | {_cell(r.levels)} | {_cell(r.reported_when)} | {_cell(r.at)} |" for r in rules]
    return "\n".join(["| id | severity | reported when | at the line of |", "|---|---|---|---|", *rows])


def evidence_table(rules: Iterable[Rule]) -> str:
    """docs/check-json.md's evidence keys, one row per rule, as each declares them."""
    rows = [f"| {r.id} | {_cell(r.evidence)} |" for r in rules]
    return "\n".join(["| rule | keys |", "|---|---|", *rows])


def help_list(rules: Iterable[Rule]) -> str:
    """For `check --help`: one line per rule."""
    return "rules:\n" + "\n".join(f"  {r.id}  {r.title} ({r.levels})" for r in rules)


TABLES: dict[str, Callable[[Iterable[Rule]], str]] = {
    "README.md": readme_table,
    "docs/check.md": check_table,
    "docs/check-json.md": evidence_table,
}


def replace_block(text: str, table: str) -> str:
    """`text` with what lies between the markers replaced by `table`."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no {BEGIN} … {END} block")
    return text[: start + len(BEGIN)] + "\n" + table + "\n" + text[end:]


def generate(root: Path, rules: Sequence[Rule]) -> dict[Path, tuple[str, str]]:
    """path -> (its text now, its text with generated tables)."""
    out = {}
    for name, make in TABLES.items():
        path = root / name
        text = path.read_text(encoding="utf-8")
        out[path] = (text, replace_block(text, make(rules)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from ttrecord.analysis.registry import rules

    parser = argparse.ArgumentParser(prog="python -m ttrecord.report.rule_docs")
    parser.add_argument("--write", action="store_true", help="rewrite out-of-date tables")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2],
                        help="the repository (default: the one this module is in)")  # fmt: skip
    args = parser.parse_args(argv)
    stale = 0
    for path, (now, wanted) in generate(args.root, list(rules().values())).items():
        if now == wanted:
            continue
        if args.write:
            path.write_text(wanted, encoding="utf-8")
            print(f"rewrote {path}")
        else:
            print(f"{path}: rule table out of date (python -m ttrecord.report.rule_docs --write)",
                  file=sys.stderr)  # fmt: skip
            stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
