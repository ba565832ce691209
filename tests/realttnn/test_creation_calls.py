"""On the real ttnn 0.81.1 (mock p150), every creation function it exports behaves inside a
capture as ttrecord classifies it: the host writes (`zeros`, `ones`, `full`, `arange` with a
device) and allocations (`empty`, `empty_like`) return, the device ops (`rand`, `randn`, the
`_like` fill of a device tensor) crash the mock as every op in a capture does; and a recorded
`zeros(device=)` in a capture is an h2d event that `check` reports as TR002."""

from __future__ import annotations

import subprocess
import sys

import pytest
from realttnn_helpers import describe, events, marks, ttrecord_run

from ttrecord.events import Kind
from ttrecord.recorder.classify import ALLOCATING, CREATION, CREATION_LIKE, DEVICE_OPS, module_kind, refine

NAMES = sorted(CREATION | CREATION_LIKE | ALLOCATING | DEVICE_OPS)


def _exported() -> list[str]:
    import ttnn

    return [n for n in NAMES if hasattr(ttnn, n)]


def test_every_known_creation_function_is_exported():
    assert _exported() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_creation_call_in_a_capture_behaves_as_classified(tmp_path, name):
    proc = subprocess.run([sys.executable, str(_script()), name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    like = name in CREATION_LIKE  # the script passes a device tensor, no device=
    kind = module_kind(name)
    recorded = refine(kind, name, has_device_arg=not like, has_device_input=like) if kind else None
    if proc.returncode == 0:
        assert f"RETURNED {name} True" in proc.stdout, describe(proc)
        assert recorded is Kind.H2D or name in ALLOCATING
    else:
        assert proc.returncode == -11, describe(proc)  # SIGSEGV: an op in a capture
        assert recorded is Kind.OP and name not in ALLOCATING


def test_recorded_zeros_in_a_capture_is_a_host_write(tmp_path):
    proc, db = ttrecord_run(sys.executable, "creation_in_capture.py", tmp_path)
    assert proc.returncode == 0, describe(proc)
    (ev,) = events(db, "e.name = 'zeros' AND e.phase = 'capture'")
    assert ev["kind"] == "h2d" and ev["cs_line"] == marks("creation_in_capture.py")["create"]
    check = subprocess.run([sys.executable, "-m", "ttrecord", "check", str(db)], capture_output=True, text=True)
    assert check.returncode == 1 and "TR002" in check.stdout, check.stdout


def _script():
    from realttnn_helpers import script

    return script("creation_in_capture.py")
