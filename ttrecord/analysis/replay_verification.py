"""TR011 replay differs from eager run (sessions recorded with `ttrecord run --verify-replay`).

Rule: a `verify` event whose result is "diverged": after a replay, an output the program holds
differs from the same op's output in the recorder's eager re-run on the same inputs, an input
an op updates in place differs from its re-run copy, or a tensor the trace does not own changed
during the replay. One finding per execute_trace line and trace, at the first diverging replay,
naming the first diverging op (capture order). A verification the recorder had to skip is an
info finding, so a silent pass is never mistaken for a checked one.

Why replay breaks: a replay reads and writes the addresses baked in at capture. When memory
there no longer holds what the capture assumed (an input freed and reused, a tensor allocated
over an intermediate), the replay computes on foreign data or overwrites a live tensor, and
nothing reports it. The static rules (TR004, TR005, TR010) say it can happen; this one shows
the values it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ttrecord.analysis.context import Context, buffer_key
from ttrecord.analysis.rules import finding, hexdec, where
from ttrecord.events import BufferRef, Event, Kind
from ttrecord.findings import Finding, Severity


def detect(events: Sequence[Event], ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    reported: set[tuple] = set()
    for ev in events:
        if ev.kind is not Kind.VERIFY or not ev.args:
            continue
        result = ev.args.get("result")
        if result not in ("diverged", "skipped"):
            continue
        execute = ctx.calls.get(ev.parent) if ev.parent is not None else None
        culprit = execute or ev
        site = ctx.site(culprit)
        key = (site.file, site.line, ev.trace, result) if site else (ev.seq,)
        if key in reported:
            continue
        reported.add(key)
        if result == "skipped":
            findings.append(_skipped(ctx, culprit, ev))
        else:
            findings.append(_diverged(ctx, culprit, ev))
    return findings


def _skipped(ctx: Context, culprit: Event, ev: Event) -> Finding:
    a = ev.args or {}
    return finding(
        "TR011", ctx, culprit,
        f"Replay {a.get('replay')} of trace {ev.trace} was not verified: {a.get('reason')}.",
        fix="Nothing to change in the program; this replay is simply unchecked.",
        related=[ev.seq], evidence={"trace": ev.trace, "replay": a.get("replay"),
                                    "reason": a.get("reason")},
        severity=Severity.INFO, trace=ev.trace,
    )  # fmt: skip


def _diverged(ctx: Context, culprit: Event, ev: Event) -> Finding:
    a: dict[str, Any] = ev.args or {}
    replay, trace = a.get("replay"), ev.trace
    parts: list[str] = []
    related: list[int] = [ev.seq]
    evidence: dict[str, Any] = {"trace": trace, "replay": replay, "device": ev.device}
    outputs, written, corrupted = a.get("outputs", []), a.get("inputs_written", []), a.get("corrupted", [])
    fix = "Keep every captured input alive and allocate nothing over trace memory while the trace lives."
    if outputs or written:
        first = min(outputs + written, key=lambda o: o.get("op_seq", o.get("reader_seq", 0)))
        op_seq = first.get("op_seq", first.get("reader_seq"))
        name, at = _call(ctx, op_seq)
        parts.append(
            f"Replay {replay} of trace {trace} gave a different result than its ops give eagerly"
            f" on the same inputs. First diverging op: `{name}` at {at}: its output"
            f" {_range(first)} holds {first.get('value')} at {first.get('index')} after the"
            f" replay, {first.get('expected')} in the eager re-run"
            f" ({first.get('mismatched')} of {first.get('elements')} elements differ)."
        )  # fmt: skip
        related.append(op_seq)
        evidence.update(first_diverging_op=name, op_line=at, output=_values(first))
    execute_seq = ev.parent if ev.parent is not None else ev.seq
    for freed in a.get("freed_inputs", []):
        reader, reader_at = _call(ctx, freed.get("reader_seq"))
        now = _allocated_at(ctx, _buf(freed), execute_seq)
        now_at = f", and a buffer allocated at {where(ctx, now)} now sits there" if now else ""
        wrote = _last_write(ctx, _buf(freed), freed.get("reader_seq") or 0, execute_seq)
        parts.append(
            f"The captured input {_range(freed)} read by `{reader}` at {reader_at} was freed"
            f" before this replay{now_at}; the replay read whatever is there"
            + (f" ({wrote} last wrote that range before it)" if wrote else "")
            + ", the eager re-run the data it held at capture."
        )  # fmt: skip
        if wrote:
            evidence.setdefault("changed_by", []).append(wrote)
        evidence.setdefault("freed_inputs", []).append(_range(freed))
        related.append(freed.get("reader_seq"))
        fix = ("Keep every captured input alive until release_trace, and write new data into it"
               " with ttnn.copy_host_to_device_tensor(host, captured_input).")  # fmt: skip
    for victim in corrupted:
        writer, writer_at = _call(ctx, victim.get("writer_seq"))
        owner = _allocated_at(ctx, _buf(victim), execute_seq)
        owner_at = f" (allocated at {where(ctx, owner)})" if owner else ""
        use = ctx.flow.first_use(_buf(victim), execute_seq)
        used = f" The program then used the changed value: {use.describe(ctx)}." if use else ""
        parts.append(
            f"Replay {replay} of trace {trace} changed a tensor it does not own: {_range(victim)}"
            f"{owner_at} held {victim.get('expected')} at {victim.get('index')} before the replay"
            f" and {victim.get('value')} after it ({victim.get('mismatched')} of"
            f" {victim.get('elements')} elements changed); the trace's"
            f" `{writer}` at {writer_at} writes that range.{used}"
        )  # fmt: skip
        evidence.setdefault("changed_by", []).append(f"the replay's `{writer}` at {writer_at}")
        evidence.setdefault("corrupted", []).append(_values(victim))
        related += [s for s in (victim.get("writer_seq"), owner.seq if owner else None) if s]
        if not outputs:
            evidence.setdefault("first_diverging_op", writer)
            evidence.setdefault("op_line", writer_at)
        fix = ("Allocate every buffer before capture, or release the trace (ttnn.release_trace)"
               " before allocating; deallocate post-capture tensors before the next"
               " execute_trace.")  # fmt: skip
    evidence["compared"] = a.get("compared")
    return finding("TR011", ctx, culprit, " ".join(parts), fix=fix, related=related,
                   evidence=evidence, trace=trace)  # fmt: skip


def _call(ctx: Context, seq: int | None) -> tuple[str, str]:
    """(name, file:line) of a recorded call; "?" for a seq the session does not hold."""
    ev = ctx.calls.get(seq) if seq is not None else None
    return (ev.name, where(ctx, ev)) if ev else ("?", "?")


def _buf(entry: dict[str, Any]) -> BufferRef:
    return BufferRef(entry.get("device") or 0, entry.get("buffer_type") or "?",
                     entry.get("address") or 0, entry.get("size") or 0)  # fmt: skip


def _range(entry: dict[str, Any]) -> str:
    buf = _buf(entry)
    return f"{buf.buffer_type} [{buf.address:#x}, {buf.end:#x})"


def _allocated_at(ctx: Context, buf: BufferRef, before: int) -> Event | None:
    """The allocation of the buffer at `buf`'s address that was live at seq `before`."""
    live = [alloc for alloc, free, _ in ctx.facts.lifetimes(buffer_key(buf))
            if alloc < before and (free is None or free > before)]  # fmt: skip
    return (ctx.calls.get(live[-1]) or ctx.facts.event(live[-1])) if live else None


def _last_write(ctx: Context, buf: BufferRef, after: int, before: int) -> str | None:
    """Which write last changed the value at `buf`'s range before seq `before`, asked of the
    value-flow model: an op, a host write, or another trace's replay."""
    from ttrecord.analysis.value_flow import WRITE

    writes = [s for s in ctx.flow.steps(buf, after, before) if s[1] == WRITE]
    if not writes:
        return None
    seq, _, trace, execute = writes[-1]
    if trace is not None:
        return f"trace {trace.trace_id}'s replay at {where(ctx, execute) if execute else seq}"
    ev = ctx.calls.get(seq) or ctx.facts.event(seq)
    return f"`{ev.name}` at {where(ctx, ev)}" if ev is not None else f"event {seq}"


def _values(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "buffer": _range(entry),
        "address": hexdec(entry.get("address") or 0),
        "index": entry.get("index"),
        "value": entry.get("value"),
        "expected": entry.get("expected"),
        "mismatched": entry.get("mismatched"),
        "elements": entry.get("elements"),
        "max_abs_diff": entry.get("max_abs_diff"),
    }
