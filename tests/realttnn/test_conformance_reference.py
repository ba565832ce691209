"""The conformance reference (tests/conformance/ttnn-0.81.1.json) is what the real ttnn 0.81.1
does on the mock p150 today: the whole corpus runs again here and must give the same file.

To regenerate it after changing the corpus (from the repository root):

    PY=$(bash tests/realttnn/setup) && (set -a; . .realttnn/env; cd "$(mktemp -d)" && \\
        "$PY" "$OLDPWD/tests/conformance/runner.py" --backend real --out "$OLDPWD/tests/conformance/ttnn-0.81.1.json")
"""

from __future__ import annotations

import json
import subprocess
import sys

from realttnn_helpers import ROOT

RUNNER = ROOT / "tests" / "conformance" / "runner.py"
REFERENCE = ROOT / "tests" / "conformance" / "ttnn-0.81.1.json"


def test_the_committed_reference_is_what_ttnn_does_now(tmp_path):
    out = tmp_path / "now.json"
    proc = subprocess.run([sys.executable, str(RUNNER), "--backend", "real", "--out", str(out)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    now = json.loads(out.read_text())
    committed = json.loads(REFERENCE.read_text())
    assert now["version"] == committed["version"] == "ttnn 0.81.1"
    assert set(now["cases"]) == set(committed["cases"]), (
        f"cases only now: {sorted(set(now['cases']) - set(committed['cases']))[:10]}; "
        f"only committed: {sorted(set(committed['cases']) - set(now['cases']))[:10]}")
    changed = sorted(k for k in now["cases"] if now["cases"][k] != committed["cases"][k])
    assert not changed, f"{len(changed)} cases changed, e.g. {changed[:10]}: regenerate the reference (see above)"
