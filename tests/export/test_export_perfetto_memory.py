"""Rule: allocations and frees are instants, and a counter tracks live bytes per buffer type."""

from ttrecord.export import perfetto
from ttrecord.store.reader import Session
from ttrecord.testing import SessionBuilder


def test_counter_follows_live_bytes_per_buffer_type(tmp_path):
    # GIVEN two DRAM buffers and one L1 buffer allocated, then one DRAM buffer freed
    b = SessionBuilder()
    b.open_device()
    a = b.alloc(1048704, size=2048)
    b.alloc(1050752, size=4096)
    b.alloc(1_400_000, size=1024, buffer_type="L1")
    b.free(a)
    path = b.write(tmp_path / "s.db")
    # WHEN exported
    with Session.open(path) as s:
        trace = perfetto.build(s)
    events = trace["traceEvents"]
    counters = [e["args"] for e in events if e["ph"] == "C"]
    instants = [e for e in events if e["ph"] == "i"]
    # THEN the counter steps through the live totals, per buffer type, never below zero
    assert counters == [
        {"DRAM": 2048},
        {"DRAM": 6144},
        {"DRAM": 6144, "L1": 1024},
        {"DRAM": 4096, "L1": 1024},
    ]
    # AND each allocation and free is an instant naming the buffer, at the counter's time
    assert [e["name"] for e in instants] == [
        "alloc DRAM 2048B @ 0x100080",
        "alloc DRAM 4096B @ 0x100880",
        "alloc L1 1024B @ 0x155cc0",
        "free DRAM 2048B @ 0x100080",
    ]
    assert [e["ts"] for e in instants] == [e["ts"] for e in events if e["ph"] == "C"]
    assert instants[0]["args"]["address"] == 1048704
