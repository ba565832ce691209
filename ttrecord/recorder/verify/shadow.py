"""The reference a replay is compared with: the captured ops run eagerly on fresh copies of
the trace's inputs, everything they made freed before the replay runs."""

from __future__ import annotations

import warnings
from typing import Any
from collections.abc import Callable

from ttrecord.recorder.verify.capture import Key, Slot, TraceRecord
from ttrecord.recorder.verify.compare import difference
from ttrecord.recorder.verify.holds import alive
from ttrecord.recorder.verify.mesh import copy_spec
from ttrecord.recorder.verify.mesh import read as read_chips


class Quiet:
    """The verifier's own ttnn calls (reads, copies, the re-run) are not recorded: the
    recorder passes a call made while `tl.call` is 0 straight through."""

    __slots__ = ("tl", "saved")

    def __init__(self, tl: Any) -> None:
        self.tl = tl

    def __enter__(self) -> None:
        self.saved = self.tl.call
        self.tl.call = 0

    def __exit__(self, *exc: Any) -> None:
        self.tl.call = self.saved


def run(ttnn: Any, rec: TraceRecord, data: dict[Key, Any],
        tensors_in: Callable[[Any], list]) -> tuple[dict, dict]:  # fmt: skip
    """(host results of the outputs the program holds, inputs the ops changed in place)."""
    made: list[Any] = []
    copies: dict[Key, Any] = {}
    results: list[list[Any]] = []

    def resolve(value: Any) -> Any:
        t = type(value)
        if t is Slot:
            return copies[value.ref] if value.input else results[value.ref[0]][value.ref[1]]
        if t is list or t is tuple:
            return t(resolve(v) for v in value)
        if t is dict:
            return {k: resolve(v) for k, v in value.items()}
        return value

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the emulator's own allocation warning
            for key, inp in rec.inputs.items():
                copies[key] = copy = ttnn.from_torch(data[key], **copy_spec(ttnn, inp.spec))
                made.append(copy)
            for op in rec.ops:
                if op.instance is not None:
                    out = op.fn(resolve(op.instance), *resolve(op.args), **resolve(op.kwargs))
                else:
                    out = op.fn(*resolve(op.args), **resolve(op.kwargs))
                outs = tensors_in(out)
                made.extend(outs)
                results.append(outs)
        def read(t: Any) -> Any:
            return read_chips(ttnn, t)

        expected = {key: read(results[index][pos])
                    for key, (index, pos, held, buf) in rec.outputs.items()
                    if alive(held, buf) is not None}  # fmt: skip
        in_place = {}
        for key, copy in copies.items():
            if key in expected:
                continue  # an op returned the input it updated: compared as its output
            after = read(copy)
            if difference(after, data[key]) is not None:
                in_place[key] = after
        return expected, in_place
    finally:
        for t in made:
            try:
                ttnn.deallocate(t)
            except Exception:
                pass
