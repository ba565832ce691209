"""The recorder: what happens around every ttnn call the program makes.

For a call the user makes (not one ttnn makes internally) the recorder
1. finds the call site (first frame outside ttnn and ttrecord),
2. queues the buffers freed since the last call (their last Tensor owner died: `ledger.py`),
   so they come first,
3. writes the "call begins" record (op, kind, phase, device, trace, inputs, scalars) to the log
   in one system call, together with everything still queued, *before* entering ttnn,
4. runs the call, then queues its end (status, error, outputs) and the buffers it allocated
   (new buffers among its outputs) or freed as its children.
The allocator's full view is read only where a hazard is decided (see `ledger.py`), so a call
costs the same with 10 or 5,000 live buffers.
Calls ttnn makes while a user call runs are recorded with `parent` set to that user call.
Phase (eager / capture / replay) follows the trace calls per device; prep is derived later.
With the C hot path (hot_path.py), `call` for an eager op, a host transfer or `execute_trace`
outside a capture is ext/calls.c's: the same steps, the same records, in C.
"""

from __future__ import annotations

import functools
import itertools
import marshal
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

from ttrecord.events import REFERRERS, Kind, Phase
from ttrecord.recorder import lifetimes
from ttrecord.recorder.devices import Devices
from ttrecord.recorder.callsite import CallSites
from ttrecord.recorder import hot_path as hot_paths
from ttrecord.recorder import program_cache, sub_devices
from ttrecord.recorder.call_records import cache_miss_note, raised_end, returned_end
from ttrecord.recorder.referrers import Referrers
from ttrecord.recorder.classify import refine
from ttrecord.recorder.ledger import Ledger
from ttrecord.recorder import log as log_format
from ttrecord.recorder.log import LogWriter
from ttrecord.recorder.memory_records import MemoryRecords
from ttrecord.recorder.records import TENSOR_BUFFER as _BUF
from ttrecord.recorder.records import new_begin, new_point
from ttrecord.recorder.queues import SIGNATURES as QUEUE_SIGNATURES
from ttrecord.recorder.queues import EventNumbers, queue_facts
from ttrecord.recorder.temporaries import Temporaries
from ttrecord.store import vocabulary
from ttrecord.recorder.tensors import TensorDescriber, describe_torch
from ttrecord.recorder.traces import Traces, trace_id

_SCALARS = frozenset({int, float, bool, str})
_KEYS = tuple(str(i) for i in range(64))
_EAGER, _CAPTURE, _REPLAY = Phase.EAGER.value, Phase.CAPTURE.value, Phase.REPLAY.value
# Kinds are sets of ids: hashing a (str, Enum) member runs enum.py's Python __hash__.
# Calls that never allocate or free: a buffer change they reveal would be a free by garbage
# collection, which the next call's snapshot places just as well (snapshot-per-call fallback).
_NO_SNAPSHOT_AFTER = frozenset(map(id, (Kind.D2H, Kind.SYNC, Kind.TRACE_EXECUTE)))
# Where a hazard is decided: the allocator's full view is read before and after these calls.
_DECISIONS = frozenset(map(id, (Kind.TRACE_BEGIN, Kind.TRACE_END, Kind.TRACE_RELEASE,
                                Kind.DEVICE_OPEN, Kind.DEVICE_CLOSE)))  # fmt: skip
_OP = Kind.OP
# Calls whose queue, blocking flag or event TR012 needs (ops carry theirs as cq_id/queue_id).
_QUEUED = frozenset(map(id, (Kind.SYNC, Kind.H2D, Kind.D2H, Kind.TRACE_EXECUTE)))
_KIND_VALUES = vocabulary.KIND_TEXT_BY_ID
_now = time.monotonic_ns
_getframe = sys._getframe
_native_id = threading.get_native_id


class CallState(NamedTuple):
    """What `_begin` hands to `_end` (and the replay verifier) about a user call in flight."""

    seq: int
    kind: Kind
    phase: str
    trace: int | None
    device: int | None
    tid: int
    region: str | None
    graphed: bool  # temporaries are being captured (ttnn.graph) for this call
    held: list  # (device tensor, its buffer) of the inputs, to see which the call freed
    name: str  # the call's name (its queue facts are read by name)


# Builds a CallState without NamedTuple's Python-level __new__ (0.3 us per call saved).
_new_state = tuple.__new__


def _settle(kind: Kind, name: str, has_device_arg: bool, inputs: list) -> Kind:
    """The kind of a call of `kind` once its arguments are known (classify.refine)."""
    return refine(kind, name.rsplit(".", 1)[-1], has_device_arg, any(r[_BUF] for r in inputs))


def _bound(partial: Any) -> tuple:
    """The arguments a C function's partial binds (the C `call` calls the function itself)."""
    assert isinstance(partial, functools.partial)
    return partial.args


def _state_of(fields: tuple) -> CallState:
    return _new_state(CallState, fields)


class Recorder(MemoryRecords):
    """Records the calls of one program into one log. One per process."""

    def __init__(self, ttnn: Any, log: LogWriter, internal_dirs: list[str], stack_depth: int = 0,
                 callsites: bool = True, hot_path: str | None = None) -> None:  # fmt: skip
        self.ttnn = ttnn
        self.log = log
        hot, self.hot_path, self.hot_path_reason = hot_paths.choose(hot_path)
        self.hot_module = hot
        log.use_hot_path(hot)
        self.sites = CallSites(internal_dirs, stack_depth, log, hot)
        self.callsites = callsites
        reports = ttnn._ttnn.reports
        self.devices = Devices(reports)
        self.allocations = Ledger(reports, self.devices)
        self._watched = ttnn.Tensor
        # Frees by reference drop come from Tensor deaths; without them, a snapshot per call.
        self.per_call_snapshots = not lifetimes.watch(ttnn.Tensor, self.allocations.on_death)
        self.traces = Traces()
        self.cache_count = program_cache.EntryCount(self.devices)
        self.queues = EventNumbers()
        self.tensors = TensorDescriber(
            self.devices.id_of, self.allocations.size_of, self.devices.num_banks
        )
        self.tensor_type = ttnn.Tensor
        self.referrers = Referrers(self)
        for name in ("MeshDevice", "Device"):
            cls = getattr(ttnn, name, None)
            if isinstance(cls, type):
                self.devices.types.add(cls)
        self.tensors.use_hot_path(hot, self.devices._ids, self.allocations.entries,
                                  self.devices._banks)  # fmt: skip
        if hot is not None:  # the same scan in C (ext/hotpath.c)
            self._scan = functools.partial(  # type: ignore[method-assign]
                hot.scan, self.tensor_type, self.devices.types, _KEYS, {}, self.tensors.describer,
                describe_torch, self.devices.id_of)
        self._seq: Iterator[int] = itertools.count(1)
        self._tl = threading.local()
        self._lock = threading.RLock()
        self.t0 = _now()
        self.regions: Any = None  # audit regions, set by the runner when requested
        self.verifier: Any = None  # replay verification, set by the runner when requested
        self.temporaries = Temporaries(ttnn)
        self._region_counts: dict[str, int] = {}
        self._bugs: set[str] = set()
        # A forked child (multiprocessing) must not append to this process's log.
        self.off = False
        self._forked = False
        os.register_at_fork(before=self._before_fork, after_in_child=self._stop_in_fork)
        if hot is not None:  # eager ops and the replay loop's calls whole in C (ext/calls.c)
            self.call = functools.partial(hot.call, self._fast_context())  # type: ignore[method-assign]

    def _fast_context(self) -> tuple:
        """What the C `call` reads, in its CTX_* order: objects that live as long as this
        recorder (flags that change, such as `off` or `verifier`, it reads from the recorder)."""
        ledger, tensors = self.allocations, self.tensors
        return (self, _OP, self._tl, self.traces.capturing, self.traces.live, ledger,
                ledger._owner, ledger.entries, ledger.deaths, tensors.cache, tensors._by_buffer,
                self._seq, self.t0, _bound(self.sites.here), _bound(self._scan), tensors.describer,
                self.log, self.cache_count, self.call, _state_of, self.tensor_type,
                _KIND_VALUES, cache_miss_note, marshal.dumps, log_format.RESERVE,
                log_format._RELEASE_EVERY, Kind.H2D, Kind.D2H, Kind.TRACE_EXECUTE, _settle,
                self._on_execute, self._queue, {}, self.referrers._at_end, QUEUE_SIGNATURES,
                self._lock.acquire, self._lock.release)  # fmt: skip

    # -- helpers -------------------------------------------------------------------------

    def _stop_in_fork(self) -> None:
        self.off = True
        self.unwatch()
        self.log.detach()

    def unwatch(self) -> None:
        """Stop watching Tensor deaths (at the end of recording)."""
        lifetimes.unwatch(self._watched, self.allocations.on_death)

    def _before_fork(self) -> None:
        """A forked process's ttnn calls are not recorded: say so in the session (once)."""
        if self._forked or self.off:
            return
        self._forked = True
        try:
            self.point("note", "fork", {"message": "the program forked; ttnn calls in the"
                                        " forked process are not recorded"}, write=True)  # fmt: skip
        except Exception:
            pass

    def next_seq(self) -> int:
        return next(self._seq)

    def _thread(self) -> threading.local:
        tl = self._tl
        if not hasattr(tl, "tid"):
            tl.tid = _native_id()
            tl.call = None
            tl.phase = _EAGER
            tl.trace = None
            tl.device = None
            tl.regions = []
        return tl

    def current_region(self) -> str | None:
        tl = self._thread()
        return tl.regions[-1] if tl.regions else None

    def _scan(self, instance: Any, args: tuple, kwargs: dict) -> tuple:
        """Tensors, scalar arguments, device and cq of a call, from its arguments."""
        T = self.tensor_type
        describe = self.tensors.describe
        dev_types = self.devices.types
        inputs: list[tuple] = []
        held: list[tuple] = []  # (device tensor, its buffer) for the ledger
        scalars: dict[str, Any] | None = None
        device = cq = None
        has_device_arg = False
        items = list(zip(_KEYS, args))
        if instance is not None and type(instance) is T:
            items.insert(0, ("self", instance))
        if kwargs:
            items += kwargs.items()
        for key, a in items:
            ta = type(a)
            if ta is T:
                d = describe(a)
                inputs.append(d)
                if d[_BUF] is not None:
                    held.append((a, d[_BUF]))
            elif ta in _SCALARS:
                if key == "cq_id":
                    cq = a
                if scalars is None:
                    scalars = {}
                scalars[key] = a
            elif ta in dev_types:
                device = self.devices.id_of(a)
                has_device_arg = True
            elif ta is list or ta is tuple:
                if a and type(a[0]) is T:
                    for x in a:
                        if type(x) is T:
                            d = describe(x)
                            inputs.append(d)
                            if d[_BUF] is not None:
                                held.append((x, d[_BUF]))
                elif len(a) <= 16 and all(type(x) in _SCALARS for x in a):
                    if scalars is None:
                        scalars = {}
                    scalars[key] = tuple(a)
            elif ta.__name__ == "Tensor" and ta.__module__ == "torch":
                inputs.append(describe_torch(a))
        if device is None:
            for ref in inputs:
                if ref[_BUF] is not None:
                    device = ref[_BUF][0]
                    break
        return inputs, scalars, device, cq, has_device_arg, held

    # -- the wrapper ---------------------------------------------------------------------

    def call(self, name: str, kind: Kind, wrapped: Any, instance: Any, args: tuple,
             kwargs: dict) -> Any:  # fmt: skip
        if self.off:
            return wrapped(*args, **kwargs)
        tl = self._tl
        try:
            parent = tl.call
        except AttributeError:
            tl = self._thread()
            parent = None
        if parent is not None:
            return self._nested(tl, parent, name, kind, wrapped, instance, args, kwargs)
        verifier = self.verifier
        if verifier is not None:
            try:
                pending = verifier.before(tl, kind, args, kwargs, instance)
            except Exception as exc:
                self._broken(exc)
                pending = None
        try:
            state = self._begin(tl, name, kind, instance, args, kwargs)
        except Exception as exc:  # a recorder bug must not break the program
            self._broken(exc)
            return wrapped(*args, **kwargs)
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:
            tl.call = None
            try:
                self._end(state, None, exc, args, kwargs)
            except Exception as bug:
                self._broken(bug)
            raise
        tl.call = None
        try:
            self._end(state, result, None, args, kwargs)
            if verifier is not None:
                verifier.after(tl, state, pending, name, wrapped, result)
        except Exception as bug:
            self._broken(bug)
        return result

    def _begin(self, tl: threading.local, name: str, kind: Kind, instance: Any, args: tuple,
               kwargs: dict) -> CallState:  # fmt: skip
        """Everything before entering ttnn; the begin record is durable when this returns."""
        tid = tl.tid
        if self.regions is not None:
            self.regions.on_call(self, tl)
        regions = tl.regions
        region = regions[-1] if regions else None
        # frame 2 is the wrapper (or the user's frame when wrapt calls `call` directly)
        site = self.sites.here(_getframe(2)) if self.callsites else None
        ledger = self.allocations
        with self._lock:
            # Frees since the last call go first, then buffers first seen as inputs.
            changes = self._frees_since(None)
            inputs, scalars, device, cq, has_dev, held = self._scan(instance, args, kwargs)
            if held:
                n = len(changes)
                observe = ledger.observe
                for t, buf in held:
                    observe(t, buf, changes)
                if len(changes) > n:
                    ledger.dirty = True  # a buffer no recorded call returned: look closer
            if kind is _OP:
                phase, trace = (_EAGER, None) if not self.traces.capturing else (None, None)
            else:
                kind = _settle(kind, name, has_dev, inputs)
                phase = None
            if (self.per_call_snapshots or id(kind) in _DECISIONS
                    or (kind is Kind.TRACE_EXECUTE and ledger.dirty)):  # fmt: skip
                self._reconcile(changes)
            if changes:
                self.log.defer_many(self._change_records(changes, None, _EAGER, None, tid, region))
            if phase is None:
                phase, trace, device = self.traces.phase(kind, device, args, kwargs)
            seq = next(self._seq)
            self.log.write(new_begin(
                seq=seq, parent=None, t_ns=_now() - self.t0, thread=tid,
                kind=_KIND_VALUES[id(kind)], name=name, phase=phase, device=device, cq=cq,
                trace=trace, site_id=site, args=scalars, inputs=tuple(inputs), region=region))
        tl.call, tl.phase, tl.trace, tl.device = seq, phase, trace, device
        if kind is Kind.TRACE_EXECUTE:
            self._on_execute(device, trace)
        graphed = phase == _CAPTURE and kind is _OP and self.temporaries.begin()
        return _new_state(CallState, (seq, kind, phase, trace, device, tid, region, graphed, held, name))

    def _end(self, state: CallState, result: Any, exc: BaseException | None, args: tuple,
             kwargs: dict) -> None:  # fmt: skip
        """Write the end record and the buffers the call allocated or freed; durable when the
        call returns (a crash between calls then names no call)."""
        if exc is not None:
            self._end_raised(state, exc)
            return
        seq, kind, phase, trace, device, tid, region, graphed, held, name = state
        end = _now() - self.t0
        temporaries = self.temporaries.end() if graphed else ()
        extra = None
        if kind is not _OP:
            extra, device, trace = self._lifecycle(kind, result, args, kwargs, device, trace)
        queue = self._queue(kind, name, args, kwargs, result)
        if queue is not None:  # TR012: the call's queue, blocking flag and event
            extra = {**(extra or {}), "queue": queue}
        with self._lock:
            changes = self._frees_since(held)
            outputs = self._outputs(result, changes)
            # A compile leaves kernel binaries (buffers no tensor names): looked for now, so
            # they are this call's allocations; noted only while a trace is live (TR013/TR014)
            grew = self.cache_count.grew() if kind is _OP else 0
            if self.per_call_snapshots:
                if kind is _OP or id(kind) not in _NO_SNAPSHOT_AFTER:
                    self._reconcile(changes)
            elif id(kind) in _DECISIONS or grew:
                self._reconcile(changes)
            if temporaries:
                self._temporary_records(temporaries, seq, phase, trace, tid, region)
            records = []
            if changes:
                records = self._change_records(changes, seq, phase, trace, tid, region)
            if grew and self.traces.live:
                records.append(cache_miss_note(next(self._seq), seq, end, tid, phase, device,
                                               trace, region, grew))  # fmt: skip
            records.append(returned_end(seq, end, outputs, device, trace, extra))
            self.log.write_many(records)

    def _end_raised(self, state: CallState, exc: BaseException) -> None:
        seq, kind, phase, trace, device, tid, region, graphed, held, _ = state
        end = _now() - self.t0
        if graphed:
            self.temporaries.end()
        with self._lock:
            records = [raised_end(seq, end, exc, device, trace)]
            changes = self._frees_since(held)
            self.allocations.dirty = True  # a failed call may have left anything behind
            if self.per_call_snapshots or id(kind) in _DECISIONS:
                self._reconcile(changes)
            if changes:
                records += self._change_records(changes, seq, phase, trace, tid, region)
            # ttnn inserts the program-cache entry before loading binaries, so a compile that
            # a capture refused ("Cannot load new binaries") still grew the cache
            compiled = self.cache_count.grew() if self.traces.live and kind is _OP else 0
            if compiled:
                records.append(cache_miss_note(next(self._seq), seq, end, tid, phase, device,
                                               trace, region, compiled))  # fmt: skip
            self.log.write_many(records)

    def _on_execute(self, device: int | None, trace: int | None) -> None:
        """Note who holds the buffers allocated since the replayed trace's capture."""
        holders = self.referrers.on_execute(device, trace)
        if holders is not None:
            self.point("note", REFERRERS, holders)

    def _queue(self, kind: Kind, name: str, args: tuple, kwargs: dict, result: Any) -> dict | None:
        """The queue facts TR012 needs of a call (its queue, blocking flag, event), if any."""
        if kind is not _OP:
            if id(kind) not in _QUEUED:
                return None
            return queue_facts(name, args, kwargs, result, self.queues)
        if kwargs and ("cq_id" in kwargs or "queue_id" in kwargs):
            return queue_facts("", args, kwargs, result, self.queues)
        return None

    def _frees_since(self, held: tuple | list | None) -> list:
        """("free", buffer) changes: tensors that died since the last call, and the inputs the
        call freed (`held`: its inputs, checked with is_allocated())."""
        ledger = self.allocations
        changes = [("free", b) for b in ledger.drain()] if ledger.deaths else []
        if held:
            ledger.freed_inputs([t for t, _ in held], changes)
        return changes

    def _broken(self, exc: Exception) -> None:
        """Report a recorder failure once per kind (as a NOTE event and on stderr)."""
        key = f"{type(exc).__name__}: {exc}"
        if key in self._bugs:
            return
        self._bugs.add(key)
        import sys
        import traceback

        where = traceback.extract_tb(exc.__traceback__)[-1]
        text = f"recorder error {key} at {where.filename}:{where.lineno}; recording continues"
        print(f"ttrecord: {text}", file=sys.stderr)
        try:
            self.point("note", "recorder_error", {"message": text})
        except Exception:
            pass

    def _nested(self, tl: threading.local, parent: int, name: str, kind: Kind, wrapped: Any,
                instance: Any, args: tuple, kwargs: dict) -> Any:  # fmt: skip
        """A call ttnn makes while a user call runs: recorded as that call's child.
        (`parent` 0: a call the replay verifier makes, not recorded.)"""
        if not parent:
            return wrapped(*args, **kwargs)
        inputs, scalars, device, cq, has_dev, _ = self._scan(instance, args, kwargs)
        if kind is not _OP:
            kind = _settle(kind, name, has_dev, inputs)
        seq = next(self._seq)
        region = tl.regions[-1] if tl.regions else None
        self.log.write(new_begin(
            seq=seq, parent=parent, t_ns=_now() - self.t0, thread=tl.tid,
            kind=_KIND_VALUES[id(kind)], name=name, phase=tl.phase,
            device=device if device is not None else tl.device, cq=cq, trace=tl.trace,
            site_id=None, args=scalars, inputs=tuple(inputs), region=region))
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as exc:
            self.log.defer(raised_end(seq, _now() - self.t0, exc, None, None))
            raise
        self.log.defer(returned_end(seq, _now() - self.t0, self._outputs(result), None, None,
                                    None))  # fmt: skip
        return result

    def _outputs(self, result: Any, changes: list | None = None) -> tuple:
        """Descriptions of a call's output tensors; with `changes`, the new buffers among them
        are appended as ("alloc", buffer) (a user call's outputs: its allocations)."""
        T = self.tensor_type
        if type(result) is T:
            tensors: Any = (result,)
        elif type(result) in (list, tuple) and result and type(result[0]) is T:
            tensors = [r for r in result if type(r) is T]
        else:
            return ()
        describe = self.tensors.describe
        out = tuple(describe(r) for r in tensors)
        if changes is not None:
            observe = self.allocations.observe
            for t, d in zip(tensors, out):
                if d[_BUF] is not None:
                    observe(t, d[_BUF], changes, True)
        return out

    def _lifecycle(self, kind: Kind, result: Any, args: tuple, kwargs: dict, device: int | None,
                   trace: int | None) -> tuple:  # fmt: skip
        """Update device and trace state after a non-op call; (extra args, device, trace)."""
        extra = None
        if kind is Kind.DEVICE_OPEN and result is not None:
            opened = result if isinstance(result, (list, tuple)) else [result]
            if isinstance(result, dict):
                opened = list(result.values())
            for dev in opened:
                extra = self.devices.add(dev)
                program_cache.watch(type(dev), self)
                sub_devices.watch(type(dev), self)
            device = self.devices.id_of(opened[0]) if opened else device
            with self._lock:
                self.cache_count.rebase()  # the count the device's compiles are measured from
            if extra is not None and "trace_region_size" in kwargs:
                try:
                    extra["trace_region_size"] = int(kwargs["trace_region_size"])
                except (TypeError, ValueError):
                    pass
        elif kind is Kind.DEVICE_CLOSE:
            target = args[0] if args else kwargs.get("device", kwargs.get("mesh_device"))
            self.traces.close_device(self.devices.id_of(target))
            self.devices.remove(target)
        elif kind is Kind.TRACE_BEGIN:
            trace = trace_id(result)
            with self._lock:
                self.traces.begin(device, trace)
                self.cache_count.rebase()  # the count the calls while it lives compare against
        elif kind is Kind.TRACE_RELEASE:
            self.referrers.on_release(device, trace)
            self.traces.release(device, trace)
        elif kind is Kind.TRACE_END:
            with self._lock:
                self.traces.end(device)
                self.referrers.on_end(device, trace)
        return extra, device, trace

    # -- point events ----------------------------------------------------------------------

    def point(self, kind: str, name: str, args: dict | None = None, site: int | None = None,
              region: str | None = None, write: bool = False) -> int:  # fmt: skip
        """Record a warning / region boundary / note; returns its seq."""
        tl = self._thread()
        if tl.call is not None:
            phase, device, trace = tl.phase, tl.device, tl.trace
        else:
            phase, device, trace = self.traces.between_calls()
        with self._lock:
            seq = next(self._seq)
            record = new_point(seq=seq, parent=tl.call, t_ns=_now() - self.t0, thread=tl.tid,
                               kind=kind, name=name, phase=phase, device=device, trace=trace,
                               site_id=site, args=args, region=region, buffer=None)
            (self.log.write if write else self.log.defer)(record)
        return seq

    def region_begin(self, name: str) -> int:
        """Enter an audit region (a would-be capture); returns its instance number."""
        with self._lock:
            counts = self._region_counts
            counts[name] = instance = counts.get(name, 0) + 1
        site = self.sites.site_id(self.sites.user_frame(1)) if self.callsites else None
        self.point("region_begin", name, {"region": name, "instance": instance}, site, name)
        self._thread().regions.append(name)
        return instance

    def region_end(self, name: str, instance: int) -> None:
        regions = self._thread().regions
        if name in regions:
            del regions[len(regions) - 1 - regions[::-1].index(name)]
        self.point("region_end", name, {"region": name, "instance": instance}, None, name)

    def finish(self, unwatch: bool = True) -> None:
        """Record the buffers freed since the last call (and any the allocator's full view
        shows the ledger missed), stop watching Tensor deaths (unless `unwatch` is False: the
        pytest plugin records on after each test), then flush the log."""
        try:
            tl = self._thread()
            if self.verifier is not None:
                self.verifier.sweep()
            sub_devices.finish(self)
            with self._lock:
                records = self._memory_records(None, _EAGER, None, tl.tid, None)
                if records:
                    self.log.defer_many(records)
        except Exception:
            pass
        if unwatch:
            self.unwatch()
        self.log.flush()
