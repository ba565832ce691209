"""`ttnn.tools` of the emulator: the trace allocation tracker ttnn 0.81.1 ships."""

from . import trace_allocation_tracker  # noqa: F401
