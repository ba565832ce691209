"""`ttnn._ttnn.graph`: the C++ graph capture (the emulator's has no Python I/O recording)."""

from ..graph import RunMode, begin_graph_capture, end_graph_capture  # noqa: F401
