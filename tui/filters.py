"""The timeline's filter line: `phase:capture kind:op,h2d op:matmul device:0 trace:1 words`."""

from __future__ import annotations

from ttrecord.events import Kind, Phase
from ttrecord.store.reader import EventFilter

FILTER_HELP = "phase:capture  kind:op,h2d  op:matmul  device:0  trace:1  any other word: text"
_PHASES = {p.value for p in Phase}
_KINDS = {k.value for k in Kind}


class FilterError(ValueError):
    """A filter word the timeline cannot use; its message is shown under the filter line."""


def parse_filter(line: str) -> EventFilter:
    phases: set[str] = set()
    kinds: set[str] = set()
    fields: dict[str, object] = {}
    words: list[str] = []
    for word in line.split():
        key, sep, value = word.partition(":")
        key = key.lower()
        if not sep or key not in ("phase", "kind", "op", "device", "dev", "trace"):
            words.append(word)
            continue
        if key == "phase":
            values = set(value.lower().split(","))
            if not values <= _PHASES:
                raise FilterError(f"unknown phase {', '.join(sorted(values - _PHASES))}"
                                  f" (phases: {', '.join(sorted(_PHASES))})")  # fmt: skip
            phases |= values
        elif key == "kind":
            values = set(value.lower().split(","))
            if not values <= _KINDS:
                raise FilterError(f"unknown kind {', '.join(sorted(values - _KINDS))}")
            kinds |= values
        elif key == "op":
            fields["name"] = value
        else:
            try:
                fields["device" if key in ("device", "dev") else "trace"] = int(value)
            except ValueError:
                raise FilterError(f"{key} needs a number, not {value!r}") from None
    if words:
        fields["text"] = " ".join(words)
    return EventFilter(phases=frozenset(phases), kinds=frozenset(kinds), **fields)  # type: ignore[arg-type]
