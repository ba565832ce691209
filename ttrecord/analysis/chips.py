"""Every finding on a mesh names its chips: mesh coordinates and device ids.

A finding's `device` is the session's device id, the mesh's own (`ttrecord.meshes`). On a
mesh of several chips that number names none of them, and a model engineer on a T3K or a
Galaxy debugs one chip at a time. A mesh allocates in lockstep, so an address hazard on a mesh
is on each of its chips: the finding says which ones ("On chips (0,0)-(7,3), devices 0-31, of
mesh 0 (8×4).") and its evidence lists them (`mesh`, `chips`). A one-chip device (what
`open_device` opens) keeps its text and evidence as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ttrecord.events import Event, Kind, Status
from ttrecord.findings import Finding
from ttrecord.meshes import Mesh

if TYPE_CHECKING:
    from ttrecord.analysis.context import Context


def meshes_opened(events: Sequence[Event]) -> dict[int, Mesh]:
    """Meshes by device id, from the facts the recorder stored with each device open."""
    out: dict[int, Mesh] = {}
    for ev in events:
        if ev.kind is Kind.DEVICE_OPEN and ev.status is Status.OK and ev.device is not None:
            mesh = Mesh.from_info(ev.device, (ev.args or {}).get("info"))
            if mesh is not None:
                out[ev.device] = mesh
    return out


def name_chips(findings: list[Finding], ctx: Context) -> None:
    """Add the chips of its device to each finding on a mesh of more than one chip."""
    meshes = {d: m for d, m in meshes_opened(ctx.events).items() if not m.single}
    if not meshes:
        return
    for f in findings:
        device = f.device if f.device is not None else f.evidence.get("device")
        mesh = meshes.get(device) if isinstance(device, int) else None
        if mesh is None or "chips" in f.evidence:
            continue
        f.message = f"{f.message.rstrip()} On {mesh.chips_text()}, of mesh {mesh.device} ({mesh.shape_text})."
        f.evidence.update(mesh.evidence())
