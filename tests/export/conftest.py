"""Session files to export: the sample decode loop written through the real writer."""

from __future__ import annotations

from pathlib import Path

import pytest

from export_helpers import MODEL_SOURCE, decode_loop
from ttrecord.findings import Finding, Severity
from ttrecord.testing import SessionBuilder, store_current_findings


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODEL_SOURCE)
    return path


@pytest.fixture
def sample_session(tmp_path: Path, model_file: Path) -> Path:
    """A written session of decode_loop with its TR001 finding stored."""
    b = SessionBuilder(file=str(model_file))
    facts = decode_loop(b)
    path = Path(b.write(tmp_path / "decode.db", script=str(model_file)))
    finding = Finding(
        rule="TR001", severity=Severity.ERROR, title="readback in capture",
        message="to_torch reads the device while trace 0 is being captured",
        fix="read the output after execute_trace", file=str(model_file), line=10,
        function="<module>", events=[facts["readback"]], trace=facts["trace"], device=0,
    )  # fmt: skip
    store_current_findings(path, [finding])
    return path
