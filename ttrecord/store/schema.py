"""The session file's schema, in one place.

A session is one SQLite file. `PRAGMA user_version` holds SCHEMA_VERSION and the one-row
`session` table holds `format = 'ttrecord-session'`, so a reader can tell a ttrecord session
from any other SQLite file and refuse a newer schema with a clear message. docs/schema.md
documents every column for people who query sessions with sqlite3 or sqlite-utils.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # readers need only the constants; sqlite_utils (and numpy) load slowly
    import sqlite_utils

FORMAT = "ttrecord-session"
SCHEMA_VERSION = 2

TABLES: dict[str, dict] = {
    "session": dict(
        columns={
            "format": str,
            "schema_version": int,
            "id": str,
            "script": str,
            "argv": str,  # JSON list
            "cwd": str,
            "python": str,
            "ttnn_version": str,
            "backend": str,  # "ttnn" | "emulator"
            "backend_reason": str,
            "host": str,
            "pid": int,
            "started_at": float,  # unix time
            "ended_at": float,
            "status": str,  # events.SessionStatus
            "exit_code": int,
            "signal": int,
            "error_type": str,
            "error_message": str,
            "traceback": str,
            "last_call": int,  # seq of the call running when the program died or hung
            "options": str,  # JSON: recorder options (stack depth, audit regions, ...)
        },
        pk="format",
    ),
    "callsites": dict(
        columns={"id": int, "file": str, "line": int, "function": str, "stack": str},
        pk="id",
    ),
    "events": dict(
        columns={
            "seq": int,
            "parent": int,
            "t_ns": int,
            "dur_ns": int,
            "thread": int,
            "kind": str,
            "name": str,
            "phase": str,
            "device": int,
            "cq": int,
            "trace": int,
            "callsite": int,
            "status": str,
            "error": str,
            "args": str,  # JSON object of scalar arguments
            "region": str,
            "buffer": int,  # buffers.id for alloc/free events
        },
        pk="seq",
    ),
    "tensors": dict(
        columns={
            "seq": int,
            "role": str,  # "in" | "out"
            "pos": int,
            "tensor_id": int,
            "storage": str,
            "shape": str,  # JSON list
            "dtype": str,
            "layout": str,
            "memory_config": str,
            "buffer": int,  # buffers.id of the live buffer at that address, if known
            "device": int,
            "buffer_type": str,
            "address": int,
            "size": int,
        },
        pk=None,  # rowid table; (seq, role, pos) is unique and indexed by seq
    ),
    "buffers": dict(
        columns={
            "id": int,
            "device": int,
            "buffer_type": str,
            "address": int,
            "size": int,  # bank-local footprint in bytes
            "page_size": int,
            "num_pages": int,
            "tensor_id": int,
            "alloc_seq": int,
            "free_seq": int,  # NULL while live (or never freed)
            "alloc_phase": str,
        },
        pk="id",
    ),
    "traces": dict(
        columns={
            "id": int,
            "device": int,
            "trace_id": int,
            "cq": int,
            "begin_seq": int,
            "end_seq": int,
            "release_seq": int,
            "ops": int,  # ops captured
            "executions": int,
        },
        pk="id",
    ),
    "devices": dict(
        columns={
            "id": int,
            "arch": str,
            "num_dram_banks": int,
            "num_l1_banks": int,
            "trace_region_size": int,
            "open_seq": int,
            "close_seq": int,
            "info": str,  # JSON of whatever the backend reported
        },
        pk="id",
    ),
    "findings": dict(
        columns={
            "id": int,
            "rule": str,  # a registered rule id (analysis/catalog/)
            "severity": str,  # "error" | "warning" | "info"
            "title": str,
            "message": str,
            "file": str,
            "line": int,
            "function": str,
            "stack": str,  # JSON list of [file, line, function]
            "events": str,  # JSON list of seqs
            "evidence": str,  # JSON object
            "fix": str,
            "device": int,
            "trace": int,
        },
        pk="id",
    ),
    "sources": dict(columns={"file": str, "text": str}, pk="file"),
}

# Built when the session closes: maintaining them while events stream in would halve the
# writer's throughput, and a live viewer only pages by seq.
INDEXES: list[tuple[str, list[str]]] = [
    ("tensors", ["seq"]),
    ("events", ["kind"]),
    ("events", ["phase"]),
    ("events", ["callsite"]),
    ("events", ["parent"]),
    ("events", ["name"]),
    ("events", ["device", "trace"]),
    ("tensors", ["buffer"]),
    ("buffers", ["device", "buffer_type", "address"]),
    ("buffers", ["alloc_seq"]),
    ("findings", ["rule"]),
]


def create(db: sqlite_utils.Database) -> None:
    """Create every table; safe on a file that already has them."""
    for name, spec in TABLES.items():
        db.table(name).create(spec["columns"], pk=spec["pk"], if_not_exists=True)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def create_indexes(db: sqlite_utils.Database) -> None:
    """ttrecord's indexes, on the tables the file has (a reader's copy of an older or damaged
    session may lack one)."""
    have = set(db.table_names())
    for table, columns in INDEXES:
        if table in have:
            db.table(table).create_index(columns, if_not_exists=True)
