"""Findings seen in keep-going mode (`ttrecord run --keep-going`, emulator only).

Real ttnn stops the program at the first TT_FATAL inside a capture (a read, a write, an event
wait, a compile); the emulator in keep-going mode instead issues ttnn's text as a
`FatalInCapture` warning, which the recorder keeps as a warning event under the call, and goes
on. Each finding whose calls carry one says so, with the message ttnn would have stopped with,
so nobody mistakes a finding after the first for something real ttnn would have reached.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ttrecord.findings import Finding
    from ttrecord.store.reader import Session

WARNING_NAME = "FatalInCapture"  # ttrecord.emulator.errors.FatalInCapture


def ttnn_message(text: str) -> str:
    """The message of a TT_FATAL text (between `info:` and `backtrace:`), else the text."""
    _head, sep, rest = text.partition("\ninfo:\n")
    return rest.split("\nbacktrace:", 1)[0].strip() if sep else text.strip()


def messages(session: Session, findings: list[Finding]) -> list[str | None]:
    """Per finding, the TT_FATAL message real ttnn would have stopped with at one of its
    calls, when the run went past it in keep-going mode; else None."""
    from ttrecord.store.finding_rows import warnings_by_call

    by_call = {seq: ttnn_message(text) for seq, text in warnings_by_call(session, WARNING_NAME).items()}
    if not by_call:
        return [None] * len(findings)
    return [next((by_call[s] for s in f.events if s in by_call), None) for f in findings]


def line(message: str) -> str:
    return f"seen in keep-going mode: real ttnn stops here with TT_FATAL \"{message}\""
