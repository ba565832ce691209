"""Rule: the log's written pages do not stay in the recording process's memory (a model run
writes millions of events), and releasing them loses nothing."""

from __future__ import annotations

import sys

import pytest

from ttrecord.recorder.log import LogReader, LogWriter

pytestmark = pytest.mark.slow

RECORD = ("B", 1234, None, 987654321, 4242, "op", "ttnn.relu", "eager", 0, None, None, 3, None,
          ((17, "device", (32, 32), "BFLOAT16", "TILE", "DRAM interleaved",
            (0, "DRAM", 1048704, 2048, None, None)),), None)  # fmt: skip


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_written_log_pages_leave_the_writer_and_every_record_reads_back(tmp_path):
    """GIVEN 600,000 records (about 24 MB of log) WHEN written as the recorder writes them
    (three deferred, one written) THEN the writer's resident memory grows by less than 10 MB
    and the reader gets every record back intact."""
    path = str(tmp_path / "events.log")
    writer = LogWriter(path)
    writer.write(RECORD)
    before = _rss_mb()
    for i in range(600_000):
        if i % 4:
            writer.defer(RECORD)
        else:
            writer.write((*RECORD[:1], i, *RECORD[2:]))
    writer.flush()
    grown = _rss_mb() - before
    assert writer._end > 20 << 20
    assert grown < 10, f"writer RSS grew {grown:.1f} MB"
    records = list(LogReader(path).read(1 << 30))
    writer.close()
    assert len(records) == 600_001
    assert [r[1] for r in records[1::4][:3]] == [0, 4, 8]
    assert all(r == RECORD for r in records[2:4])
