"""The exit-code table: `ttrecord --help` and the README list the same codes (what each command
returns is tested with the command)."""

import re
from pathlib import Path

from ttrecord.cli.main import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_codes() -> dict[int, str]:
    text = README.read_text()
    section = text[text.index("## Exit codes"):]
    section = section[: section.index("\n## ", 1)]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| (\d+) \| (.+) \|$", section, re.M)}


def test_help_and_readme_list_the_same_exit_codes():
    help_text = build_parser().format_help()
    epilog = help_text[help_text.index("exit codes:"):]
    help_codes = {int(m.group(1)) for m in re.finditer(r"^  (\d+) ", epilog, re.M)}
    readme = _readme_codes()
    assert help_codes == set(readme) == {0, 1, 2, 3, 4, 125, 130}
    assert "ttrecord itself failed" in readme[125]  # run: its own errors apart from the program's
    assert "--fail-on" in readme[1] and "did not finish" in readme[3]
    assert "nothing to judge" in readme[4] and "--allow-empty" in readme[4]
    assert "program's own code" in epilog and "program's own code" in README.read_text()
    assert all(len(line) <= 80 for line in epilog.splitlines())


def test_each_code_means_the_same_in_help_and_readme():
    """The same words in both places (the README's backticks aside), so neither drifts."""
    from ttrecord.cli.main import EXIT_CODES

    help_rows = {int(m.group(1)): m.group(2)
                 for m in re.finditer(r"^  (\d+)\s+(.+)$", EXIT_CODES, re.M)}  # fmt: skip
    assert help_rows == {code: text.replace("`", "") for code, text in _readme_codes().items()}
