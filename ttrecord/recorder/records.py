"""The event log's record formats, declared once: the recorder builds records from these
declarations and the decoder reads them back through the same ones.

Each record kind is a NamedTuple whose first field is its one-letter tag; a record on disk is
the plain tuple of its fields in this order (`marshal` writes only exact tuples, and a plain
tuple costs nothing to build). Producers call the kind's builder (`new_begin(...)`, ...) with
every field by name; it is generated from the field table, so a missing, extra or misspelt
field is a TypeError at the producer instead of a shifted column in the decoder. Decoders turn
a record back into its NamedTuple with `decode()` and read fields by name.

Adding a record kind is a change to this module only: its tag in `RecordType`, its class, and
one `declare()` line (plus, where it becomes events, one branch in `decode.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

RECORDS: dict[str, Any] = {}  # tag -> record class
BUILDERS: dict[str, Callable[..., tuple]] = {}  # tag -> its builder


class RecordType:
    """The tag of each record kind: the first item of every record tuple."""

    HEADER = "H"
    SITE = "S"
    BEGIN = "B"
    END = "E"
    POINT = "P"
    EXCEPTION = "X"
    EXIT = "Z"
    STOPPED = "T"  # recording stopped (the log cannot grow); nothing follows


def _builder(tag: str, fields: tuple[str, ...]) -> Callable[..., tuple]:
    """A keyword-only function returning the plain tuple (tag, *fields): as cheap as a tuple
    literal plus one Python call (see benchmarks/RESULTS.md, record builders)."""
    params = ", ".join(fields)
    src = f"def new(*, {params}):\n    return ({tag!r}, {params})\n"
    namespace: dict[str, Any] = {}
    exec(src, namespace)  # noqa: S102 -- the source is built from identifiers declared here
    return namespace["new"]  # type: ignore[no-any-return]


def declare(tag: str, cls: Any) -> Callable[..., tuple]:
    """Register record class `cls` under `tag`; returns its builder."""
    if tag in RECORDS or len(tag) != 1:
        raise ValueError(f"record tag {tag!r} is not a new single letter")
    if cls._fields[0] != "tag":
        raise ValueError(f"{cls.__name__}: the first field must be `tag`")
    RECORDS[tag] = cls
    BUILDERS[tag] = new = _builder(tag, cls._fields[1:])
    return new


def decode(rec: tuple) -> Any:
    """The NamedTuple of a raw record (KeyError: unknown tag; TypeError: wrong field count)."""
    return RECORDS[rec[0]]._make(rec)


class Header(NamedTuple):
    """First record of a log: which backend the child chose and why."""

    tag: str
    backend: str
    backend_reason: str
    ttnn_version: str | None
    pid: int


class Site(NamedTuple):
    """A call site, written once before the first record that names its `site_id`."""

    tag: str
    site_id: int
    file: str
    line: int
    function: str
    stack: tuple  # ((file, line, function), ...) of the callers kept (stack depth)


class Begin(NamedTuple):
    """A call begins: durable before control enters ttnn."""

    tag: str
    seq: int
    parent: int | None  # the user call a nested (ttnn-internal) call runs under
    t_ns: int  # since the recorder started
    thread: int
    kind: str  # Kind value
    name: str
    phase: str  # Phase value
    device: int | None
    cq: int | None
    trace: int | None
    site_id: int | None
    args: dict | None  # scalar arguments
    inputs: tuple  # TensorDesc tuples
    region: str | None  # audit region


class End(NamedTuple):
    """A call ended (returned or raised)."""

    tag: str
    seq: int  # of its Begin
    t_ns: int
    status: str  # Status value
    error: str | None
    outputs: tuple  # TensorDesc tuples
    device: int | None  # learnt by the call (an opened device), else None
    trace: int | None  # learnt by the call (a captured trace id), else None
    extra: dict | None  # arguments learnt by the call (device facts), merged into args


class Point(NamedTuple):
    """A point event: a buffer allocated or freed, a warning, a note, a region boundary."""

    tag: str
    seq: int
    parent: int | None
    t_ns: int
    thread: int
    kind: str
    name: str
    phase: str
    device: int | None
    trace: int | None
    site_id: int | None
    args: dict | None
    region: str | None
    buffer: tuple | None  # BufferSpan, or a BufferDesc (whose first four fields are one)


class ProgramException(NamedTuple):
    """The program ended with an uncaught exception."""

    tag: str
    type: str
    message: str
    traceback: str


class Exit(NamedTuple):
    """The program's exit code."""

    tag: str
    exit_code: int


class Stopped(NamedTuple):
    """Recording stopped (the log cannot grow); nothing follows."""

    tag: str
    reason: str


class TensorDesc(NamedTuple):
    """How a tensor appears in Begin.inputs and End.outputs (built by tensors.py)."""

    tensor_id: int | None
    storage: str  # "host" / "device"
    shape: tuple
    dtype: str | None
    layout: str | None
    memory_config: str | None
    buffer: tuple | None  # BufferDesc


class BufferDesc(NamedTuple):
    """A device buffer in a TensorDesc or a Point."""

    device: int
    buffer_type: str
    address: int
    size: int
    page_size: int | None
    num_pages: int | None


class BufferSpan(NamedTuple):
    """A buffer as the allocator's view and the ledger know it: the first four fields of a
    BufferDesc."""

    device: int
    buffer_type: str
    address: int
    size: int


TENSOR_BUFFER = TensorDesc._fields.index("buffer")  # hot paths index the plain tuple


new_header = declare(RecordType.HEADER, Header)
new_site = declare(RecordType.SITE, Site)
new_begin = declare(RecordType.BEGIN, Begin)
new_end = declare(RecordType.END, End)
new_point = declare(RecordType.POINT, Point)
new_exception = declare(RecordType.EXCEPTION, ProgramException)
new_exit = declare(RecordType.EXIT, Exit)
new_stopped = declare(RecordType.STOPPED, Stopped)
