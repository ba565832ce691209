"""The one mapping between the event vocabulary (`ttrecord.events`) and its stored text.

The recorder's decoder, the writer and the reader turn kinds, phases and statuses into text
and back only through here, so a member added to `ttrecord.events` is known everywhere at
once. Lookups are plain dicts: calling an Enum class per row costs more than the rest of the
row. A kind's text this ttrecord does not know decodes to an unknown `Kind` member (readers
carry it through, docs/schema.md "Format policy"); an unknown phase or status is damage.
"""

from __future__ import annotations

from ttrecord.events import Kind, Phase, Status

KINDS: dict[str, Kind] = {k.value: k for k in Kind}
PHASES: dict[str, Phase] = {p.value: p for p in Phase}
STATUSES: dict[str, Status] = {s.value: s for s in Status}
# Member -> text by identity, for the recorder's hot path (`Enum.value` is a Python property).
KIND_TEXT_BY_ID: dict[int, str] = {id(k): k.value for k in Kind}


def kind(text: str) -> Kind:
    """The member for a stored kind, an unknown member for one this ttrecord does not know."""
    return KINDS.get(text) or Kind(text)

