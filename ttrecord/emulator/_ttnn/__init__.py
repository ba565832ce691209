"""`ttnn._ttnn`: the native-extension namespace; the emulator provides `reports`."""

from . import reports

__all__ = ["reports"]
