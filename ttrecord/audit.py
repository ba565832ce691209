"""`ttrecord.region(name)`: mark a would-be capture region in your own code.

Under `ttrecord run` every ttnn call inside the `with` block is tagged with the region, and
REGION_BEGIN / REGION_END events bracket it, so the analysis can report every hazard a trace
capture of that block would hit, in one eager run. Outside the recorder it does nothing.
"""

from __future__ import annotations

from typing import Any

# Set by the recorder's child process; None when the program runs without ttrecord.
_recorder: Any = None


class region:  # noqa: N801 - used like a function: `with ttrecord.region("decode"):`
    """Context manager (and decorator-free marker) for an audit region named `name`."""

    __slots__ = ("name", "_instance")

    def __init__(self, name: str) -> None:
        self.name = name
        self._instance: int | None = None

    def __enter__(self) -> region:
        if _recorder is not None:
            self._instance = _recorder.region_begin(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        if _recorder is not None and self._instance is not None:
            _recorder.region_end(self.name, self._instance)
            self._instance = None
