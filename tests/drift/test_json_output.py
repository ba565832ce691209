"""`--format json` follows the documented structure in docs/diff-json.md."""

import json
import re
from pathlib import Path

import jsonschema
import pytest

from drift_programs import new_input_for_capture, one_capture, two_captures

SCHEMA = json.loads(
    (Path(__file__).parents[2] / "docs/diff-json.schema.json").read_text()
)
DOC = (Path(__file__).parents[2] / "docs/diff-json.md").read_text()


@pytest.mark.parametrize("case", ["drift", "same", "prep", "inserted", "all_ops"])
def test_every_report_validates_against_the_schema(run_diff_json, tmp_path, case):
    """GIVEN reports of every shape WHEN printed as JSON THEN they validate against the schema."""
    if case == "drift":
        path = two_captures(tmp_path / "s.db", extra_before_second=True)
        args = [f"{path}:1", f"{path}:2"]
    elif case == "same":
        args = [one_capture(tmp_path / "a.db"), one_capture(tmp_path / "b.db")]
    elif case == "prep":
        args = [new_input_for_capture(tmp_path / "s.db"), "--prep"]
    else:
        args = [one_capture(tmp_path / "a.db"),
                one_capture(tmp_path / "b.db", extra_op=True, skip_relu=True)]  # fmt: skip
        if case == "all_ops":
            args.append("--all-ops")
    _, report = run_diff_json(*args)
    jsonschema.validate(report, SCHEMA)
    if case == "all_ops":
        assert len(report["ops"]) == sum(report["alignment"][k]
                                         for k in ("same", "changed", "only_a", "only_b"))  # fmt: skip


def test_the_document_describes_every_field_of_the_schema():
    """GIVEN the schema WHEN the documentation is read THEN every property name appears in it
    as `name`, so the two cannot drift apart silently."""
    names = set()

    def walk(node):
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(SCHEMA)
    documented = set(re.findall(r"`([a-z_]+)`", DOC))
    assert names - documented == set()
