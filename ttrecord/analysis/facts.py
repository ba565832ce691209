"""Questions about the whole run that detectors ask besides scanning their events.

Two answers to the same questions: `EventFacts` works them out from a complete event list (what
tests build by hand), `SessionFacts` asks the session file with set-based SQL, so that the
analysis of a million-event session does not have to materialise every eager op, allocation
and free. Both must agree; the tests run every hazard case through both.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ttrecord.events import CALL_KINDS, Event, Kind, Phase, TensorRef
from ttrecord.store.lifetimes import lifetimes

if TYPE_CHECKING:
    from ttrecord.store.reader import Session

Key = tuple[int, str, int]  # (device, buffer type, address)
# Calls that make a tensor without writing its data: not a write of what the buffer holds.
ALLOCATES_ONLY = ("allocate_tensor_on_device", "empty", "empty_like")
SiteKey = tuple[str, int, str, str]  # (file, line, function, op name)
_CALL_KIND_TEXTS = [str(k.value) for k in CALL_KINDS]


class EventFacts:
    def __init__(self, events: Sequence[Event]) -> None:
        self._events = events
        self._lives: dict[Key, list[tuple[int, int | None, int]]] | None = None
        self._eager: dict[tuple, list[tuple[dict[str, Any], int, int]]] | None = None
        self._by_seq: dict[int, Event] | None = None
        self._calls: list[Event] | None = None

    def lifetimes(self, key: Key) -> list[tuple[int, int | None, int]]:
        """(alloc seq, free seq, buffer id) of every buffer at `key`, in allocation order,
        paired by the writer's own rule (`store.lifetimes`)."""
        if self._lives is None:
            self._lives = lifetimes(self._events)
        return self._lives.get(key, [])

    def existed_before(self, key: Key, before: int, at: int) -> bool:
        """A buffer at `key` was allocated before seq `before` and still allocated at `at`."""
        return _existed(self.lifetimes(key), before, at)

    def reads(self, keys: set[Key], after: int = -1) -> dict[Key, list[int]]:
        """Seqs of the device-to-host reads (outside captures) of buffers at these addresses,
        after seq `after`."""
        out: dict[Key, list[int]] = {}
        for ev in self._events:
            if ev.kind is Kind.D2H and ev.phase is not Phase.CAPTURE and ev.seq > after:
                _note(out, ev.seq, ev.inputs, keys)
        return out

    def uses(self, keys: set[Key]) -> dict[Key, list[int]]:
        """Seqs of the calls (outside captures) that take buffers at these addresses as input."""
        out: dict[Key, list[int]] = {}
        for ev in self._events:
            if ev.phase is not Phase.CAPTURE and ev.inputs:
                _note(out, ev.seq, ev.inputs, keys)
        return out

    def writes(self, keys: set[Key]) -> dict[Key, list[int]]:
        """Seqs of the calls (outside captures) that write buffers at these addresses: outputs,
        and the device tensor a host-to-device copy fills (passed as an argument)."""
        out: dict[Key, list[int]] = {}
        for ev in self._events:
            if ev.phase is not Phase.CAPTURE and (ev.outputs or ev.kind is Kind.H2D):
                if ev.name.rsplit(".", 1)[-1] in ALLOCATES_ONLY:
                    continue
                _note(out, ev.seq, ev.outputs + (ev.inputs if ev.kind is Kind.H2D else ()), keys)
        return out

    def calls_around(self, seq: int) -> tuple[Event | None, Event | None]:
        """The user's calls (top level, with a call site) right before and right after `seq`."""
        if self._calls is None:
            self._calls = [e for e in self._events
                           if e.parent is None and e.callsite is not None and e.kind in CALL_KINDS]  # fmt: skip
        i = bisect.bisect_left(self._calls, seq, key=lambda e: e.seq)
        before = self._calls[i - 1] if i > 0 else None
        j = i + 1 if i < len(self._calls) and self._calls[i].seq == seq else i
        return before, self._calls[j] if j < len(self._calls) else None

    def event(self, seq: int) -> Event | None:
        if self._by_seq is None:
            self._by_seq = {ev.seq: ev for ev in self._events}
        return self._by_seq.get(seq)

    def eager_calls(self, site: tuple) -> list[tuple[dict[str, Any], int, int]]:
        """Distinct arguments of the eager/prep calls at a call site: (args, first seq, count).
        `site` is (file, line, function, op) or, for one call path, that plus `callers_key(stack)`."""
        if self._eager is None:
            eager: dict[tuple, dict[str, list]] = {}
            for ev in self._events:
                if (ev.kind is Kind.OP and ev.parent is None and ev.args
                        and ev.phase in (Phase.EAGER, Phase.PREP) and ev.callsite):  # fmt: skip
                    s = ev.callsite
                    canon = json.dumps(ev.args, sort_keys=True, default=repr)
                    for key in _path_keys((s.file, s.line, s.function, ev.name), callers_key(s.stack)):
                        by_args = eager.setdefault(key, {})
                        if canon in by_args:
                            by_args[canon][2] += 1
                        else:
                            by_args[canon] = [ev.args, ev.seq, 1]
            self._eager = {k: [tuple(v) for v in d.values()] for k, d in eager.items()}
        return self._eager.get(site, [])

    def eager_sequence(self, path: tuple) -> list[dict[str, Any]]:
        """The arguments of the eager/prep calls along one call path, in order
        (`path` = (file, line, function, op, `callers_key(stack)`))."""
        out = []
        for ev in self._events:
            s = ev.callsite
            if (ev.kind is Kind.OP and ev.parent is None and ev.args and s is not None
                    and ev.phase in (Phase.EAGER, Phase.PREP)
                    and (s.file, s.line, s.function, ev.name) == path[:4]
                    and callers_key(s.stack)[:len(path[4])] == path[4]):  # fmt: skip
                out.append(ev.args)
        return out

    def call_paths(self, site: SiteKey) -> list[tuple[int, tuple]]:
        """(seq, callers) of each eager/prep call of op `site[3]` at a call site: the paths a
        finding's location is chosen among (`call_paths.place`)."""
        out = []
        for ev in self._events:
            s = ev.callsite
            if (ev.parent is None and s is not None and ev.phase in (Phase.EAGER, Phase.PREP)
                    and (s.file, s.line, s.function, ev.name) == site):  # fmt: skip
                out.append((ev.seq, callers_key(s.stack)))
        return out

    def last_prep_call(self, name: str, device: int | None, after: int, before: int) -> Event | None:
        """The last prep-run call of op `name` on `device` with after < seq < before: the
        warm-up of a captured call written at another line (a copied block)."""
        found = None
        for ev in self._events:
            if ev.seq >= before:
                break
            if (ev.seq > after and ev.phase is Phase.PREP and ev.kind is Kind.OP
                    and ev.parent is None and ev.name == name and ev.device == device):  # fmt: skip
                found = ev
        return found

    def last_call_at(self, site: SiteKey, before: int) -> Event | None:
        """The last eager/prep call of op `site[3]` at a call site before `before` (a warm-up)."""
        found = None
        for ev in self._events:
            if ev.seq >= before:
                break
            s = ev.callsite
            if (ev.kind is Kind.OP and ev.parent is None and s is not None and ev.phase in
                    (Phase.EAGER, Phase.PREP) and (s.file, s.line, s.function, ev.name) == site):  # fmt: skip
                found = ev
        return found


def _path_keys(site: tuple, stack: tuple) -> list[tuple]:
    """The keys a call is indexed under: its line, and its line with each prefix of its callers
    (the nearest caller, the two nearest, ...), so a capture can be compared along the longest
    path the eager run shared with it."""
    return [site] + [(*site, stack[:d]) for d in range(1, len(stack) + 1)]


def callers_key(stack: Sequence) -> tuple:
    """A call site's callers as a hashable key (file, line, function per frame)."""
    return tuple((str(f[0]), int(f[1]), str(f[2])) for f in stack)


def _note(out: dict[Key, list[int]], seq: int, refs: Iterable[TensorRef], keys: set[Key]) -> None:
    for ref in refs:
        b = ref.buffer
        if b is not None and ref.storage == "device":
            key = (b.device, b.buffer_type, b.address)
            if key in keys and (not out.get(key) or out[key][-1] != seq):
                out.setdefault(key, []).append(seq)


def _existed(lives: Sequence, before: int, at: int) -> bool:
    """Lifetimes at one address never overlap, so only the last one begun before counts."""
    i = bisect.bisect_left(lives, before, key=lambda life: life[0]) - 1
    return i >= 0 and (lives[i][1] is None or lives[i][1] > at)


class SessionFacts:
    """The same answers from a session file's tables (`store.queries`)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._eager: dict[tuple, list[tuple[dict[str, Any], int, int]]] | None = None
        self._lives: dict[Key, list[tuple[int, int | None, int]]] = {}

    def prefetch(self, keys: Iterable[Key]) -> None:
        """Read the lifetimes of every buffer ever at these addresses in one query."""
        wanted = sorted(set(keys) - self._lives.keys())
        if not wanted:
            return
        by_type: dict[tuple[int, str], list[int]] = {}
        for key in wanted:
            self._lives[key] = []
            by_type.setdefault((key[0], key[1]), []).append(key[2])
        for (device, btype), addresses in by_type.items():
            # By device and type too, so the (device, buffer_type, address) index answers it:
            # by address alone each call scanned every buffer of the session. One type's rows
            # come in allocation order, and one address's buffers are all of one type.
            lives = self._lives
            for address, alloc, free, buffer_id in self._session.lifetimes_at(device, btype, addresses):
                lives[(device, btype, address)].append((alloc, free, buffer_id))

    def lifetimes(self, key: Key) -> list[tuple[int, int | None, int]]:
        """(alloc seq, free seq, buffer id) of every buffer at `key`, in allocation order."""
        if key not in self._lives:
            self.prefetch([key])
        return self._lives[key]

    def existed_before(self, key: Key, before: int, at: int) -> bool:
        return _existed(self.lifetimes(key), before, at)

    def _by_buffer(self, keys: set[Key], which: str, skip: Iterable[str] = (),
                   after: int = -1) -> dict[Key, list[int]]:  # fmt: skip
        self.prefetch(keys)
        owner = {life[2]: key for key in keys for life in self._lives[key]
                 if life[1] is None or life[1] > after}  # fmt: skip
        out: dict[Key, list[int]] = {}
        if not owner:
            return out
        for seq, buffer_id in self._session.buffer_accesses(owner, which, skip, after):
            seqs = out.setdefault(owner[buffer_id], [])
            if not seqs or seqs[-1] != seq:
                seqs.append(seq)
        return out

    def reads(self, keys: set[Key], after: int = -1) -> dict[Key, list[int]]:
        return self._by_buffer(keys, "reads", after=after)

    def uses(self, keys: set[Key]) -> dict[Key, list[int]]:
        return self._by_buffer(keys, "uses")

    def writes(self, keys: set[Key]) -> dict[Key, list[int]]:
        return self._by_buffer(keys, "writes", [f"{p}{n}" for n in ALLOCATES_ONLY for p in ("", "ttnn.")])

    def calls_around(self, seq: int) -> tuple[Event | None, Event | None]:
        before, after = self._session.user_calls_around(seq, _CALL_KIND_TEXTS)
        found = {e.seq: e for e in self._session.events_at([s for s in (before, after) if s])}
        return (found.get(before) if before else None), (found.get(after) if after else None)

    def event(self, seq: int) -> Event | None:
        found = self._session.events_at([seq])
        return found[0] if found else None

    def eager_calls(self, site: tuple) -> list[tuple[dict[str, Any], int, int]]:
        if self._eager is None:
            eager: dict[tuple, dict[str, list]] = {}
            for g in self._session.eager_call_groups():
                parsed = json.loads(g.args)
                if not parsed:
                    continue
                canon = json.dumps(parsed, sort_keys=True, default=repr)
                stack = callers_key(tuple(tuple(f) for f in json.loads(g.stack))) if g.stack else ()
                for key in _path_keys((g.file, g.line, g.function, g.name), stack):
                    by_args = eager.setdefault(key, {})
                    if canon in by_args:
                        entry = by_args[canon]
                        entry[1], entry[2] = min(entry[1], g.first_seq), entry[2] + g.calls
                    else:
                        by_args[canon] = [parsed, g.first_seq, g.calls]
            self._eager = {k: sorted((tuple(v) for v in d.values()), key=lambda v: v[1])
                           for k, d in eager.items()}  # fmt: skip
        return self._eager.get(site, [])

    def eager_sequence(self, path: tuple) -> list[dict[str, Any]]:
        file, line, function, name, stack = path
        out = []
        for _seq, args, text in self._session.eager_calls_at(file, line, function, name):
            if (callers_key(tuple(tuple(f) for f in json.loads(text))) if text else ())[:len(stack)] == stack:
                parsed = json.loads(args)
                if parsed:
                    out.append(parsed)
        return out

    def call_paths(self, site: SiteKey) -> list[tuple[int, tuple]]:
        return [(seq, callers_key(tuple(tuple(f) for f in json.loads(text))) if text else ())
                for seq, text in self._session.call_paths_at(*site)]  # fmt: skip

    def last_call_at(self, site: SiteKey, before: int) -> Event | None:
        seq = self._session.last_eager_call(*site, before)
        return self.event(seq) if seq is not None else None

    def last_prep_call(self, name: str, device: int | None, after: int, before: int) -> Event | None:
        seq = self._session.last_prep_call(name, device, after, before)
        return self.event(seq) if seq is not None else None
