"""What a call says about command queues: which queue it goes to, whether the host waits, which
event it records or waits for (TR012's happens-before edges).

ttnn 0.81.1 takes these as plain arguments, often positionally (`record_event(device, 1)`,
`wait_for_event(1, event)`, `Tensor.cpu(False, 1)`), and an event is an opaque `MeshEvent`
whose only binding is `__repr__`: "MeshEvent(id=0, device_id=1, mesh_cq_id=1, device_range=…)"
on 0.81.1, where the id is 0 for every event on a mock device, so the repr is no identity.
Each event `record_event` returns gets a serial number, keyed by the object's id() (an event
waited for is alive, and a new event at a dead one's address is numbered anew when it is
recorded); its key is "<serial> <repr>". Everything here reads arguments and results only: it
never touches the device, never waits, and keeps no reference to an event.

The facts go into the call's END record as `args["queue"]`: {"cq": int, "blocking": False,
"event": str}, each key only when the call has it ("blocking" only for a non-blocking call:
reads and execute_trace block by default).
"""

from __future__ import annotations

import itertools
from typing import Any

# name -> (positional index of cq_id, positional index of blocking, positional index of the
# event argument, default of blocking). Indices count the call's arguments (not `self`).
SIGNATURES: dict[str, tuple[int | None, int | None, int | None, bool | None]] = {
    "record_event": (1, None, None, None),  # record_event(mesh_device, cq_id, sub_device_ids=…)
    "wait_for_event": (0, None, 1, None),  # wait_for_event(cq_id, event)
    "event_synchronize": (None, None, 0, None),  # event_synchronize(event)
    "synchronize_device": (1, None, None, None),  # synchronize_device(device, cq_id=None, …)
    "execute_trace": (None, None, None, True),  # execute_trace(device, tid, *, cq_id, blocking)
    "cpu": (1, 0, None, True),  # Tensor.cpu(blocking=True, cq_id=None)
    "from_device": (None, 1, None, True),  # from_device(tensor, blocking=True, *, cq_id)
    "copy_device_to_host_tensor": (3, 2, None, True),  # (device_t, host_t, blocking, cq_id)
    "copy_host_to_device_tensor": (2, None, None, None),  # (host_t, device_t, cq_id=…)
    "to_torch": (None, None, None, True),
    "to_device": (None, None, None, None),
    "from_torch": (None, None, None, None),
}
_EVENT_KWARGS = ("event", "mesh_event")


_MAX_SERIALS = 1 << 20


class EventNumbers:
    """Serial numbers of ttnn events, keyed by the object's id() (one table per recording)."""

    def __init__(self) -> None:
        self._serials: dict[int, int] = {}  # id(event object) -> its serial number
        self._next = itertools.count(1)

    def key(self, event: Any, recorded: bool = False) -> str | None:
        """The identity of a ttnn event: "<serial> <repr>" (`recorded`: it was just returned
        by record_event, so it gets a new serial)."""
        if event is None:
            return None
        try:
            text = repr(event)
        except Exception:
            return None
        if "event" not in text.lower():
            return None
        serials = self._serials
        serial = None if recorded else serials.get(id(event))
        if serial is None:
            if len(serials) > _MAX_SERIALS:  # a run that keeps few events alive: old ids died
                serials.clear()
            serial = serials[id(event)] = next(self._next)
        return f"{serial} {text[:160]}"


_NUMBERS = EventNumbers()  # the process's table, for callers without a recording of their own


def event_key(event: Any, recorded: bool = False) -> str | None:
    """`EventNumbers.key` on the process's table."""
    return _NUMBERS.key(event, recorded)


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def queue_facts(name: str, args: tuple, kwargs: dict, result: Any,
                numbers: EventNumbers = _NUMBERS) -> dict[str, Any] | None:  # fmt: skip
    """{"cq", "blocking", "event"} for a call that has any of them, else None (events
    numbered in `numbers`)."""
    short = name.rsplit(".", 1)[-1]
    sig = SIGNATURES.get(short)
    if sig is None:
        cq = _int(kwargs.get("cq_id", kwargs.get("queue_id")))
        return {"cq": cq} if cq is not None else None
    cq_at, blocking_at, event_at, blocking_default = sig
    facts: dict[str, Any] = {}
    cq = kwargs.get("cq_id", kwargs.get("queue_id"))
    if cq is None and cq_at is not None and len(args) > cq_at:
        cq = args[cq_at]
    cq_value = _int(cq)
    if cq_value is not None:
        facts["cq"] = cq_value
    if blocking_default is not None:
        blocking = kwargs.get("blocking")
        if blocking is None and blocking_at is not None and len(args) > blocking_at:
            blocking = args[blocking_at]
        if not (blocking_default if blocking is None else bool(blocking)):
            facts["blocking"] = False
    if short == "record_event":
        key = numbers.key(result, recorded=True)
        if key is not None:
            facts["event"] = key
    elif event_at is not None:
        event = next((kwargs[k] for k in _EVENT_KWARGS if k in kwargs), None)
        if event is None and len(args) > event_at:
            event = args[event_at]
        key = numbers.key(event)
        if key is not None:
            facts["event"] = key
    return facts or None
