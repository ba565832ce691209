"""The event log keeps every record written before a crash: records reach the file (its shared
mapping) each time a call begins (queued ones first), and a reader ignores a truncated last
record instead of failing."""

from __future__ import annotations

import os

from ttrecord.recorder.log import LogReader, LogWriter


def test_queued_records_reach_the_file_with_the_next_write(tmp_path):
    """GIVEN records queued with defer WHEN nothing else happens THEN the file is empty; WHEN
    a record is written THEN the queued ones precede it, in order."""
    path = str(tmp_path / "log")
    log = LogWriter(path)
    log.defer(("E", 1))
    log.defer(("P", 2))
    assert os.path.getsize(path) == 0
    log.write(("B", 3, {"x": 1.5}, (1, "host", (32, 32))))
    assert list(LogReader(path).read()) == [("E", 1), ("P", 2), ("B", 3, {"x": 1.5}, (1, "host", (32, 32)))]
    log.close()


def test_truncated_last_record_is_ignored_and_tailing_resumes(tmp_path):
    """GIVEN a log whose last record was cut mid-write WHEN read THEN the complete records
    come back and the partial one is held; WHEN the rest arrives THEN it is read."""
    path = str(tmp_path / "log")
    log = LogWriter(path)
    log.write(("B", 1))
    log.write(("B", 2, "a" * 100))
    log.close()
    with open(path, "rb") as fh:
        data = fh.read()
    cut = len(data) - 40
    with open(path, "wb") as fh:
        fh.write(data[:cut])
    reader = LogReader(path)
    assert list(reader.read()) == [("B", 1)]
    assert reader.truncated_bytes > 0
    with open(path, "ab") as fh:
        fh.write(data[cut:])
    assert list(reader.read()) == [("B", 2, "a" * 100)]
    assert reader.truncated_bytes == 0


def test_reading_in_bounded_chunks_returns_every_record(tmp_path):
    """GIVEN 200 records WHEN read 100 bytes at a time until the reader has no more THEN every
    record comes back once, in order (a huge log never has to fit in memory at once)."""
    path = str(tmp_path / "log")
    log = LogWriter(path)
    for i in range(200):
        log.write(("P", i, "x" * (i % 7)))
    log.close()
    reader = LogReader(path)
    got = list(reader.read(max_bytes=100))
    while reader.more:
        got += list(reader.read(max_bytes=100))
    assert got == [("P", i, "x" * (i % 7)) for i in range(200)]
