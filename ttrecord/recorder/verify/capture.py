"""A capture as the replay verifier keeps it: each op with its callable and arguments, where
every device tensor argument is a `Slot` naming a captured input or an earlier op's result.

Data flow follows buffer addresses, as the trace does: an argument whose buffer an earlier
captured op produced is that op's result; any other device buffer is a captured input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from ttrecord.recorder.records import TENSOR_BUFFER
from ttrecord.recorder.verify.holds import Held, Holds

Key = tuple  # (device, buffer type, address)
# Calls that only allocate: nothing for a replay to compute. One that lands on a captured
# input's freed address gives that input its buffer back (tt-metal's traced demos free the
# input inside the model and allocate it again before end_trace_capture).
ALLOCATES_ONLY = frozenset({"allocate_tensor_on_device", "empty", "empty_like"})


class Slot:
    """A tensor argument: a captured input (`ref` is its key) or an earlier op's result
    (`ref` is (op index, position))."""

    __slots__ = ("input", "ref")

    def __init__(self, is_input: bool, ref: tuple) -> None:
        self.input = is_input
        self.ref = ref


class Pending:
    """A device tensor argument seen before a call, made a Slot once the call succeeded."""

    __slots__ = ("obj", "buf")

    def __init__(self, obj: Any, buf: tuple) -> None:
        self.obj = obj
        self.buf = buf


@dataclass
class Input:
    held: Held
    buf: tuple  # (device, buffer type, address, size, ...)
    spec: dict[str, Any]  # what from_torch needs to make a copy
    reader: int  # seq of the first captured op that read it
    baseline: Any = None  # host data right after end_trace_capture
    shape: tuple | None = None  # to recognise a tensor of the same spec on its range later


@dataclass
class CapturedOp:
    seq: int
    name: str
    fn: Any  # for a method, the unbound function: a bound one would keep its tensor alive
    instance: Any
    args: tuple
    kwargs: dict


@dataclass
class TraceRecord:
    device: int | None
    trace: int | None
    ops: list[CapturedOp] = field(default_factory=list)
    inputs: dict[Key, Input] = field(default_factory=dict)
    # the latest op result at each buffer: (op index, position, tensor, buffer)
    outputs: dict[Key, tuple[int, int, Held, tuple]] = field(default_factory=dict)
    writes: list[tuple[int, str, int, int, int]] = field(default_factory=list)  # + op seq
    complete: bool = False
    replays: int = 0
    verified_live: tuple | None = None  # (allocator generation, live buffers)
    problem: str | None = None  # why this trace cannot be re-run

    def writer_of(self, buf: tuple) -> tuple | None:
        """The first captured write that overlaps `buf`'s bank-local range, if any."""
        device, btype, start, end = buf[0], buf[1], buf[2], buf[2] + buf[3]
        for w in self.writes:
            if w[0] == device and w[1] == btype and w[2] < end and start < w[3]:
                return w
        return None


def pend(value: Any, tensor_type: type, describe: Callable[[Any], tuple]) -> Any:
    """Arguments with device tensors marked, before the call can change them."""
    t = type(value)
    if isinstance(value, tensor_type):
        buf = describe(value)[TENSOR_BUFFER]
        return value if buf is None else Pending(value, buf)
    if t is list or t is tuple:
        return t(pend(v, tensor_type, describe) for v in value)
    if t is dict:
        return {k: pend(v, tensor_type, describe) for k, v in value.items()}
    return value


def add_op(rec: TraceRecord, holds: Holds, seq: int, name: str, wrapped: Any, pending: tuple,
           outputs: list[tuple[Any, tuple]]) -> None:  # fmt: skip
    """Append one captured op; `outputs` are its result tensors with their buffers."""
    short = name.rsplit(".", 1)[-1]
    if short == "deallocate":
        return  # frees are what the replay leaves out, not work it repeats
    if short in ALLOCATES_ONLY:
        for out, buf in outputs:
            inp = rec.inputs.get(buf[:3])
            if inp is not None and inp.buf[3] == buf[3]:
                inp.held = holds.hold(out)
        return
    instance, args, kwargs = (_slots(rec, holds, p, seq) for p in pending)
    fn = wrapped
    if instance is not None:
        fn = getattr(wrapped, "__func__", None)
        if fn is None:
            rec.problem = f"{name} is a method ttrecord cannot call on a copy"
    index = len(rec.ops)
    rec.ops.append(CapturedOp(seq, name, fn, instance, args, kwargs))
    for pos, (out, buf) in enumerate(outputs):
        key = buf[:3]
        rec.outputs[key] = (index, pos, holds.hold(out), buf)
        rec.writes.append((buf[0], buf[1], buf[2], buf[2] + buf[3], seq))


def _slots(rec: TraceRecord, holds: Holds, value: Any, seq: int) -> Any:
    t = type(value)
    if t is Pending:
        key = value.buf[:3]
        made = rec.outputs.get(key)
        if made is not None:
            return Slot(False, made[:2])
        if key not in rec.inputs:
            rec.inputs[key] = Input(holds.hold(value.obj), value.buf, _spec(value.obj), seq,
                                    shape=_shape(value.obj))  # fmt: skip
        return Slot(True, key)
    if t is list or t is tuple:
        return t(_slots(rec, holds, v, seq) for v in value)
    if t is dict:
        return {k: _slots(rec, holds, v, seq) for k, v in value.items()}
    return value


def _spec(obj: Any) -> dict[str, Any]:
    return {"dtype": obj.dtype, "layout": obj.layout, "device": obj.device(),
            "memory_config": obj.memory_config()}  # fmt: skip


def _shape(obj: Any) -> tuple | None:
    try:
        return tuple(obj.shape)
    except Exception:
        return None
