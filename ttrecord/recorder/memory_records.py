"""ALLOC/FREE records: what the ledger (ledger.py) and graph capture (temporaries.py) found,
placed in the event order. A mixin of `Recorder`, apart so each module reads in one sitting."""

from __future__ import annotations

import time
from typing import Any

from ttrecord.events import Phase
from ttrecord.recorder.call_records import buffer_point
from ttrecord.recorder.records import new_point

_EAGER, _CAPTURE, _REPLAY = Phase.EAGER.value, Phase.CAPTURE.value, Phase.REPLAY.value
_now = time.monotonic_ns
_SNAPSHOT = {"snapshot": True}  # args of a buffer event only the allocator's full view showed


class MemoryRecords:
    """Needs from the recorder: t0, _seq, traces, tensors, allocations, log."""

    t0: int
    _seq: Any
    traces: Any
    tensors: Any
    allocations: Any
    devices: Any
    log: Any

    def _change_records(self, changes: list, parent: int | None, phase: str, trace: int | None,
                        tid: int, region: str | None) -> list[tuple]:  # fmt: skip
        """ALLOC/FREE records for `changes` [("free"|"alloc", buffer[, args])] (the caller
        queues them). Records between calls (`parent` None) take the phase of the buffer's
        device."""
        t = _now() - self.t0
        records = []
        seqs = self._seq
        capturing = self.traces.capturing if phase != _REPLAY and parent is None else None
        freed = [c[1] for c in changes if c[0] == "free"]
        if freed:
            self.tensors.forget(freed)
        for change in changes:
            kind, buf = change[0], change[1]
            dev = buf[0]
            if capturing is not None:
                tr = capturing.get(dev)
                ph, tr = (_CAPTURE, tr) if tr is not None else (_EAGER, None)
            else:
                ph, tr = phase, trace
            args = change[2] if len(change) > 2 else None
            # buffer_point's record, built inline: two per op, one Python call each saved
            records.append(new_point(seq=next(seqs), parent=parent, t_ns=t, thread=tid, kind=kind,
                                     name=kind, phase=ph, device=dev, trace=tr, site_id=None,
                                     args=args, region=region, buffer=buf))  # fmt: skip
        return records

    def _reconcile(self, changes: list) -> None:
        """Append what the allocator's full view shows and the ledger missed (frees first).
        They are marked: they happened at or before this point, since the previous full view
        (`{"snapshot": true}`), not necessarily right here."""
        found = self.allocations.reconcile()
        if found is not None:
            changes += [("free", b, _SNAPSHOT) for b in found[0]]
            changes += [("alloc", b, _SNAPSHOT) for b in found[1]]

    def _memory_records(self, parent: int | None, phase: str, trace: int | None, tid: int,
                        region: str | None) -> list[tuple]:  # fmt: skip
        """Records for the frees by reference drop since the last call, plus a full reconcile
        (used at the end of recording)."""
        changes = [("free", b) for b in self.allocations.drain()]
        self._reconcile(changes)
        return self._change_records(changes, parent, phase, trace, tid, region) if changes else []

    def _temporary_records(self, buffers: Any, parent: int, phase: str, trace: int | None,
                           tid: int, region: str | None) -> None:  # fmt: skip
        """ALLOC + FREE children for scratch buffers an op made and freed inside the call
        (skipping any address a surviving buffer now holds: the ledger reports that one)."""
        t = _now() - self.t0
        live = self.allocations.entries
        for buf in buffers:
            if (buf[0], buf[1], buf[2]) in live:
                continue
            for kind in ("alloc", "free"):
                self.log.defer(buffer_point(next(self._seq), parent, t, tid, kind, phase, trace,
                                            region, buf, {"temporary": True}))  # fmt: skip
