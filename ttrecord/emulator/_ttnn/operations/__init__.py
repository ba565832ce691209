"""`ttnn._ttnn.operations`: the emulator provides `trace`, where real ttnn's trace calls live."""

from . import trace

__all__ = ["trace"]
