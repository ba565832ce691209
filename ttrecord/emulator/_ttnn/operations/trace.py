"""`ttnn._ttnn.operations.trace`: the trace calls (plain functions, as real ttnn's nanobind ones)."""

from ...trace import (  # noqa: F401
    MeshTraceId,
    begin_trace_capture,
    end_trace_capture,
    execute_trace,
    release_trace,
)
