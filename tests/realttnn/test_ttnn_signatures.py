"""docs/emulator-ttnn-signatures.json, the reference the emulator's signature-conformance
test (tests/emulator/test_signature_conformance.py) checks against, is what the installed
ttnn 0.81.1 really exports: every name's call signatures, its classes' attributes and its
enums' members."""

from __future__ import annotations

import json
import sys

from realttnn_helpers import ROOT, describe, run_script


def test_the_signature_reference_is_what_the_real_library_exports(tmp_path):
    proc = run_script(sys.executable, "ttnn_signatures.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    committed = (ROOT / "docs" / "emulator-ttnn-signatures.json").read_text()
    assert proc.stdout == committed, (
        "regenerate: python tests/realttnn/scripts/ttnn_signatures.py > docs/emulator-ttnn-signatures.json")
    names = json.loads(committed)["names"]
    assert names["ttnn.reallocate"]["overloads"] == [
        [["tensor", "positional_or_keyword", False], ["memory_config", "positional_or_keyword", True]]]
    assert "create_sub_device_manager" in names["ttnn.MeshDevice"]["attributes"]
