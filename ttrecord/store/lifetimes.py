"""Which allocation a free ends: the one pairing rule, used by the writer (the `buffers`
table) and by the analysis of a plain event list (`EventFacts`), so the two cannot disagree.

A buffer is known by its place (device, buffer type, address) while it is live:
- an allocation at a place already live with the same size is the same buffer (seen first as a
  call's output, now confirmed by the allocator); with another size, a free was missed, and the
  old buffer ends where the new one begins;
- a free ends the live buffer at its place (a free of nothing known changes nothing);
- a tensor a call read or wrote at a place nothing is live on is a buffer begun by that call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ttrecord.events import BufferRef, Event, Kind, Phase

Place = tuple[int, str, int]  # (device, buffer type, address)
# Called with (buffer id, buffer, seq, phase) when a buffer begins, (buffer id, seq) when it ends.
Opened = Callable[[int, BufferRef, int, Phase], None]
Ended = Callable[[int, int], None]


class BufferPairing:
    """Live buffers by place, numbered 1.. in the order they begin."""

    __slots__ = ("live", "_next", "_opened", "_ended")

    def __init__(self, opened: Opened, ended: Ended) -> None:
        self.live: dict[Place, tuple[int, int]] = {}  # place -> (buffer id, size)
        self._next = 1
        self._opened = opened
        self._ended = ended

    def begin(self, buf: BufferRef, seq: int, phase: Phase) -> int:
        """A new buffer at `buf`'s place (a call's tensor where nothing was live)."""
        buffer_id = self._next
        self._next += 1
        self.live[(buf.device, buf.buffer_type, buf.address)] = (buffer_id, buf.size)
        self._opened(buffer_id, buf, seq, phase)
        return buffer_id

    def alloc(self, buf: BufferRef, seq: int, phase: Phase) -> int:
        """An allocation event: the buffer it confirms or begins."""
        live = self.live.get((buf.device, buf.buffer_type, buf.address))
        if live is not None:
            if live[1] == buf.size:
                return live[0]
            self._ended(live[0], seq)  # a free never seen: this allocation took the address
        return self.begin(buf, seq, phase)

    def free(self, buf: BufferRef, seq: int) -> int | None:
        """A free event: the buffer it ends, if one was live there."""
        live = self.live.pop((buf.device, buf.buffer_type, buf.address), None)
        if live is None:
            return None
        self._ended(live[0], seq)
        return live[0]

    def touch(self, buf: BufferRef, seq: int, phase: Phase) -> int:
        """A tensor a call read or wrote: the live buffer at its place, or one begun now."""
        live = self.live.get((buf.device, buf.buffer_type, buf.address))
        return live[0] if live is not None else self.begin(buf, seq, phase)

    def event(self, ev: Event) -> int | None:
        """Pair one event in the writer's order: an alloc or free event's own buffer, then the
        buffers of its inputs and outputs. Returns the alloc or free event's buffer id."""
        own = None
        if ev.buffer is not None and ev.kind is Kind.ALLOC:
            own = self.alloc(ev.buffer, ev.seq, ev.phase)
        elif ev.buffer is not None and ev.kind is Kind.FREE:
            own = self.free(ev.buffer, ev.seq)
        for ref in ev.inputs + ev.outputs:
            if ref.buffer is not None:
                self.touch(ref.buffer, ev.seq, ev.phase)
        return own


def lifetimes(events: Iterable[Event]) -> dict[Place, list[tuple[int, int | None, int]]]:
    """(alloc seq, free seq, buffer id) of every buffer of an event list, by place, in
    allocation order: what the writer stores in `buffers` for the same events."""
    lives: dict[Place, list[list]] = {}
    by_id: dict[int, list] = {}

    def opened(buffer_id: int, buf: BufferRef, seq: int, _phase: Phase) -> None:
        by_id[buffer_id] = life = [seq, None, buffer_id]
        lives.setdefault((buf.device, buf.buffer_type, buf.address), []).append(life)

    def ended(buffer_id: int, seq: int) -> None:
        by_id.pop(buffer_id)[1] = seq

    pairing = BufferPairing(opened, ended)
    for ev in events:
        pairing.event(ev)
    return {place: [(a, f, i) for a, f, i in ls] for place, ls in lives.items()}
