"""The queries behind the Perfetto export, and the JSON text of their rows.

Rows come from SQLite narrow and already in output order (see `perfetto`); each becomes the
JSON text of one trace event, written with f-strings from pieces encoded once: names, call
sites, argument texts and tensor lists repeat thousands of times in a loop, and building a
dict per event for `json.dumps` cost six times as much as the text itself. The text is the
one `json.dumps(..., separators=(",", ":"))` writes for the same event (ASCII-escaped strings,
`repr` floats), which the export tests check byte for byte against the dict encoder.
"""

from __future__ import annotations

import json
from typing import Any


from ttrecord.store.perfetto_rows import DEVICE_PID_BASE, HOST_PID, HOST_TID  # noqa: F401

_SEP = (",", ":")


def value(v: Any) -> str:
    """Any JSON value as the export writes it."""
    return json.dumps(v, separators=_SEP, default=str)


def number(v: Any) -> str:
    """An integer column (an address, a size) as JSON: `str` for ints, no encoder call."""
    return str(v) if type(v) is int else value(v)


def fields(args: dict[str, Any]) -> list[str]:
    """A dict's members as `"key":value` texts (the args of the few enclosing slices)."""
    return [f"{json.dumps(k)}:{value(v)}" for k, v in args.items()]


class Encoder:
    """JSON texts of event rows, each repeated text encoded once."""

    _MAX_CACHE = 50_000  # distinct texts kept; a long run repeats a few thousand at most

    def __init__(self, callsites: dict[int, Any]) -> None:
        self.sites = {
            cid: json.dumps(f"{s.file}:{s.line} ({s.function})") for cid, s in callsites.items()
        }
        self._strings: dict[str, str] = {}
        self._args: dict[str, str | None] = {}
        self._tensors: dict[str, str] = {}

    def string(self, text: str) -> str:
        """A repeated string (names, kinds, phases) as JSON."""
        found = self._strings.get(text)
        if found is None:
            if len(self._strings) > self._MAX_CACHE:
                self._strings.clear()
            found = self._strings[text] = json.dumps(text)
        return found

    def args(self, row: tuple, at: int) -> list[str]:
        """The `COMMON` columns (`store.perfetto_rows`) starting at `at` as the members of an event's args object."""
        (seq, kind, _name, phase, site, trace, parent, region, status, error, args,
         tensors) = row[at : at + 12]  # fmt: skip
        string = self.string
        out = [f'"seq":{seq},"kind":{string(kind)},"phase":{string(phase)}']
        if site is not None and site in self.sites:
            out.append(f'"callsite":{self.sites[site]}')
        if trace is not None:
            out.append(f'"trace":{trace}')
        if parent is not None:
            out.append(f'"parent":{parent}')
        if region is not None:
            out.append(f'"region":{json.dumps(region)}')
        if status != "ok":
            out.append(f'"status":{string(status)}')
        if error:
            out.append(f'"error":{json.dumps(error)}')
        if args:
            encoded = self._encoded_args(args)
            if encoded is not None:
                out.append(encoded)
        if tensors != "[]":
            encoded_tensors = self._tensor_lists(tensors)
            if encoded_tensors:
                out.append(encoded_tensors)
        return out

    def _encoded_args(self, text: str) -> str | None:
        if text in self._args:
            return self._args[text]
        if len(self._args) > self._MAX_CACHE:
            self._args.clear()
        parsed = json.loads(text)
        found = self._args[text] = f'"args":{value(parsed)}' if parsed else None
        return found

    def _tensor_lists(self, text: str) -> str:
        """`"inputs":[...],"outputs":[...]` (each only when not empty) from a tensors text."""
        found = self._tensors.get(text)
        if found is None:
            if len(self._tensors) > self._MAX_CACHE:
                self._tensors.clear()
            ins: list[str] = []
            outs: list[str] = []
            for role, _pos, storage, shape, dtype, layout, btype, addr, size in sorted(
                json.loads(text), key=lambda r: (r[0], r[1])
            ):
                dims = "x".join(str(d) for d in json.loads(shape)) if shape else ""
                meta = " ".join(p for p in (dims or "scalar", dtype, layout) if p)
                if addr is None or btype is None:
                    desc = f"{storage} {meta}"
                else:
                    desc = f"{btype}@{addr:#x} {size}B/bank {meta}"
                (ins if role == "in" else outs).append(desc)
            parts = []
            if ins:
                parts.append(f'"inputs":{value(ins)}')
            if outs:
                parts.append(f'"outputs":{value(outs)}')
            found = self._tensors[text] = ",".join(parts)
        return found


def slice_text(name: str, cat: str, ts: float, dur: float, pid: int, tid: int,
               args: list[str]) -> str:  # fmt: skip
    """A complete slice ("X"); `name` and `cat` already JSON."""
    return (f'{{"name":{name},"cat":{cat},"ph":"X","ts":{ts!r},"dur":{dur!r},"pid":{pid},'
            f'"tid":{tid},"args":{{{",".join(args)}}}}}')  # fmt: skip


def instant_text(name: str, cat: str, ts: float, pid: int, tid: int, args: list[str]) -> str:
    """A thread-scoped instant ("i") of an event; `name` and `cat` already JSON."""
    return (f'{{"name":{name},"cat":{cat},"ph":"i","s":"t","ts":{ts!r},"pid":{pid},'
            f'"tid":{tid},"args":{{{",".join(args)}}}}}')  # fmt: skip
