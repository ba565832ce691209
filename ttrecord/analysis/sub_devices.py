"""Sub-device managers and global semaphores against the traces that depend on them.

The recorder leaves a `sub_device_manager` note per manager call and a `global_semaphore` note
per semaphore creation, reset, use by a captured collective and free (recorder/sub_devices.py).
Following them in order, per device, gives the active manager at every trace call and the
semaphores each trace bakes in. Three rules use that (from tt-metal's
sub_device_manager_tracker.cpp and mesh_device.cpp, the same texts in ttnn 0.81.1):

* TR003: loading or clearing a manager inside a capture resets every command queue's worker
  state, which ttnn refuses ("Cannot reset worker state during trace capture"); loading the
  manager already active is a no-op and allowed;
* TR009: a trace belongs to the manager active at its `begin_trace_capture`; ending or
  replaying it under another raises "Trace instance N must exist on ... active sub-device
  manager M", and releasing it under another does nothing (it keeps its trace memory);
* TR005: a trace bakes in the address of every global semaphore its collectives were given, as
  it does a tensor input's. Freed after the capture (its last Python reference dropped) and
  then replayed, the trace signals and waits on L1 that belongs to nobody or to another
  buffer; reset to another value than it was created with, the replay counts from the wrong
  value. Either hangs or corrupts a multi-chip replay (tt-metal #40382, #48469, #49353).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ttrecord.analysis.context import Context
from ttrecord.analysis.rules import finding, where
from ttrecord.events import Event, Kind, NoteKind, Phase
from ttrecord.findings import Finding

MANAGER_NOTE = NoteKind.SUB_DEVICE_MANAGER.value
SEMAPHORE_NOTE = NoteKind.GLOBAL_SEMAPHORE.value
RESET_IN_CAPTURE = "Cannot reset worker state during trace capture"
_SWITCHES = ("load_sub_device_manager", "clear_loaded_sub_device_manager")
_TRACE_CALLS = (Kind.TRACE_BEGIN, Kind.TRACE_END, Kind.TRACE_EXECUTE, Kind.TRACE_RELEASE)


def _note(ev: Event, name: str) -> dict[str, Any] | None:
    if ev.kind is Kind.NOTE and ev.name == name and isinstance(ev.args, dict):
        return ev.args
    return None


def _manager_name(manager: int | None) -> str:
    return "the default sub-device manager" if manager is None else f"sub-device manager {manager}"


def _switch_target(args: dict[str, Any]) -> tuple[bool, int | None]:
    """(is a switch, the manager it loads: None for the default)."""
    method = args.get("method")
    if method == "clear_loaded_sub_device_manager":
        return True, None
    if method == "load_sub_device_manager":
        manager = args.get("manager")
        return True, manager if isinstance(manager, int) else None
    return False, None


def detect_switch_in_capture(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR003: a manager load or clear that would change the active manager inside a capture."""
    findings: list[Finding] = []
    active: dict[Any, int | None] = {}
    for ev in events:
        args = _note(ev, MANAGER_NOTE)
        if args is None:
            continue
        switch, target = _switch_target(args)
        if not switch:
            continue
        device = args.get("device")
        current = active.get(device)
        refused = "error" in args
        if ev.phase is Phase.CAPTURE and target != current:
            what = "clear_loaded_sub_device_manager" if args.get("method") == _SWITCHES[1] else (
                f"load_sub_device_manager({_manager_name(target)})")  # fmt: skip
            outcome = ("ttnn refused it" if refused else
                       "real ttnn refuses it (TT_FATAL), the emulator went on")  # fmt: skip
            findings.append(finding(
                "TR003", ctx, ev,
                f"{what} runs on device {device} while trace {ev.trace} is being captured. Switching"
                " sub-device managers resets the worker state of every command queue, which a"
                f" trace cannot record: \"{RESET_IN_CAPTURE}\" ({outcome}).",
                fix="Load the sub-device manager before begin_trace_capture (or split the capture at"
                    " the switch: end one trace, switch, begin the next) and clear it after the last"
                    " execute_trace and release_trace of traces captured under it.",
                trace=ev.trace,
                evidence={"device": device, "method": args.get("method"),
                          "active_manager": current, "loads": target,
                          "ttnn_message": RESET_IN_CAPTURE, "refused": refused},
            ))  # fmt: skip
        if not refused:
            active[device] = target
    return findings


def detect_trace_under_other_manager(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR009: end, execute or release of a trace while another manager than its own is active."""
    findings: list[Finding] = []
    active: dict[Any, int | None] = {}
    owner: dict[tuple, tuple[int | None, Event]] = {}  # (device, trace) -> (manager, its begin)
    # device -> the trace inside whose capture the active manager was switched (TR003's
    # finding: what it does to that trace's end and replays is its consequence, not reported)
    switched_in: dict[Any, int | None] = {}
    for ev in events:
        args = _note(ev, MANAGER_NOTE)
        if args is not None:
            switch, target = _switch_target(args)
            if switch and "error" not in args:
                device = args.get("device")
                if target != active.get(device):
                    switched_in[device] = ev.trace if ev.phase is Phase.CAPTURE else None
                active[device] = target
            continue
        if ev.kind not in _TRACE_CALLS or ev.parent is not None or ev.trace is None:
            continue
        key = (ev.device, ev.trace)
        current = active.get(ev.device)
        if ev.kind is Kind.TRACE_BEGIN:
            owner[key] = (current, ev)
            continue
        known = owner.get(key)
        if known is None or known[0] == current or switched_in.get(ev.device) == ev.trace:
            continue
        manager, begin = known
        verb = {Kind.TRACE_END: "end_trace_capture ends", Kind.TRACE_EXECUTE: "execute_trace replays",
                Kind.TRACE_RELEASE: "release_trace releases"}[ev.kind]  # fmt: skip
        if ev.kind is Kind.TRACE_RELEASE:
            effect = (" ttnn looks the trace up in the active manager only, finds nothing and"
                      " returns: the trace stays alive in its own manager, keeping its trace-region"
                      " memory, and the program believes it released.")  # fmt: skip
        else:
            place = "Mesh device" if ev.kind is Kind.TRACE_EXECUTE else "device"
            effect = (f" ttnn raises \"Trace instance {ev.trace} must exist on {place} {ev.device}'s"
                      " active sub-device manager …\" (naming the manager active now).")  # fmt: skip
        findings.append(finding(
            "TR009", ctx, ev,
            f"{verb} trace {ev.trace} on device {ev.device} under {_manager_name(current)}, but it was"
            f" captured under {_manager_name(manager)} (begun at {where(ctx, begin)}). A trace"
            " belongs to the sub-device manager active when its capture began." + effect,
            fix=f"Load {_manager_name(manager)} before ending, replaying or releasing trace"
                f" {ev.trace}; release traces before clearing or switching their manager.",
            trace=ev.trace, related=[begin.seq],
            evidence={"trace": ev.trace, "device": ev.device, "captured_under": manager,
                      "active_manager": current, "captured_at": where(ctx, begin)},
        ))  # fmt: skip
    return findings


def traces_freed_by_removal(events: Sequence[Event]) -> set[tuple]:
    """(device, trace) of the traces whose manager `remove_sub_device_manager` removed: ttnn
    frees them with it, so they are released without a `release_trace`."""
    active: dict[Any, int | None] = {}
    owner: dict[tuple, int | None] = {}
    freed: set[tuple] = set()
    for ev in events:
        args = _note(ev, MANAGER_NOTE)
        if args is None:
            if ev.kind is Kind.TRACE_BEGIN and ev.parent is None and ev.trace is not None:
                owner[(ev.device, ev.trace)] = active.get(ev.device)
            continue
        if "error" in args:
            continue
        switch, target = _switch_target(args)
        device = args.get("device")
        if switch:
            active[device] = target
        elif args.get("method") == "remove_sub_device_manager" and isinstance(args.get("manager"), int):
            freed |= {key for key, manager in owner.items() if key[0] == device and manager == args["manager"]}
    return freed


def detect_semaphores(events: Sequence[Event], ctx: Context) -> list[Finding]:
    """TR005: a global semaphore a live trace uses, freed or reset to another value after its
    capture, with a replay of that trace afterwards."""
    created: dict[int, tuple[dict[str, Any], Event]] = {}
    used: dict[tuple, dict[int, Event]] = {}  # (device, trace) -> semaphore -> its use note
    changes: list[tuple[Event, dict[str, Any]]] = []
    for ev in events:
        args = _note(ev, SEMAPHORE_NOTE)
        if args is None:
            continue
        what, number = args.get("event"), args.get("semaphore")
        if what == "create" and isinstance(number, int):
            created[number] = (args, ev)
        elif what == "use" and ev.phase is Phase.CAPTURE:
            for n in args.get("semaphores") or ():
                used.setdefault((ev.device, ev.trace), {}).setdefault(n, ev)
        elif what in ("free", "reset") and isinstance(number, int):
            changes.append((ev, args))
    groups: dict[tuple, list[tuple]] = {}  # one finding per trace, change and line
    for trace in ctx.traces:
        if trace.end is None:
            continue
        mine = used.get(trace.key, {})
        for ev, args in changes:
            number = args["semaphore"]
            use = mine.get(number)
            if use is None or ev.seq < use.seq:
                continue
            if trace.release is not None and trace.release.seq < ev.seq:
                continue
            made: tuple[dict[str, Any], Event | None] = created.get(number, ({}, None))
            if args.get("event") == "reset" and args.get("value") == made[0].get("initial_value"):
                continue  # back to the value the trace was captured with
            replay = next((x for x in trace.executes if x.seq > ev.seq), None)
            if replay is None:
                continue
            site = ctx.site(ev)
            line = (site.file, site.line) if site else ev.seq
            group = groups.setdefault((trace.key, args.get("event"), line), [])
            if all(g[1]["semaphore"] != number for g in group):
                group.append((ev, args, made, use, trace, replay))
    return [_semaphore_finding(ctx, sorted(group, key=lambda g: g[1]["semaphore"])) for group in groups.values()]


def _semaphore_name(ctx: Context, number: int, made: tuple) -> str:
    info, create = made
    parts = []
    if isinstance(info.get("address"), int):
        parts.append(f"L1 address {info['address']:#x}")
    if create is not None:
        parts.append(f"created at {where(ctx, create)}")
    return f"#{number}" + (f" ({', '.join(parts)})" if parts else "")


def _semaphore_finding(ctx: Context, group: list[tuple]) -> Finding:
    ev, args, made, use, trace, replay = group[0]
    names = [_semaphore_name(ctx, g[1]["semaphore"], g[2]) for g in group]
    many = len(names) > 1
    name = ("global semaphores " + ", ".join(names[:-1]) + " and " + names[-1]) if many else (
        "global semaphore " + names[0])  # fmt: skip
    info = made[0]
    op = (use.args or {}).get("op", "a collective op")
    it, its = ("them", "their") if many else ("it", "its")
    if args.get("event") == "free":
        change = f"{'are' if many else 'is'} freed here ({its} last Python reference went)"
        effect = (" makes that op signal and wait on semaphores that no longer exist: their L1 is"
                  " free or holds another buffer, so the replay hangs or corrupts that memory.")
        fix = ("Keep every global semaphore a captured collective uses referenced (e.g. in a list"
               " the program holds) until ttnn.release_trace; create them once, before the capture.")
    else:
        change = (f"{'are' if many else 'is'} reset here to {args.get('value')!r} (created with"
                  f" {info.get('initial_value')!r})")
        effect = (" makes that op count from the new value: the chips wait for signals that never"
                  " come (a hang) or go on before their peers wrote (corrupt output).")
        fix = ("Reset a semaphore a live trace uses only to the value it was captured with, or"
               " release the trace first and capture again.")
    return finding(
        "TR005", ctx, ev,
        f"The {name} {change} while trace {trace.trace_id} (captured at {where(ctx, trace.begin)})"
        f" still uses {it}: the trace baked {its} address{'es' if many else ''} into `{op}` at"
        f" {where(ctx, use)}, and the execute_trace at {where(ctx, replay)}{effect}",
        fix=fix, trace=trace.trace_id, related=[g[0].seq for g in group[1:]] + [use.seq, replay.seq],
        evidence={"semaphores": [g[1]["semaphore"] for g in group],
                  "addresses": [g[2][0].get("address") for g in group], "event": args.get("event"),
                  "trace": trace.trace_id, "device": trace.device, "used_by": op,
                  "replayed_at": where(ctx, replay)},
    )  # fmt: skip
