"""Which chips a session's device is: a mesh's shape and its chips' device ids.

ttnn numbers what a program opens as meshes: `open_mesh_device` returns a mesh of every chip,
`open_device(device_id=0)` a 1×1 mesh whose own id is not the chip's (1 on ttnn 0.81.1). The
session's `device` column holds the mesh's id, as `get_buffers` and `tensor.device().id()`
report it. A mesh allocates in lockstep (one address on every chip), so what happens at an
address of a mesh happens on each of its chips. The recorder stores the mesh's shape and
device ids (row-major) with the device (`devices.info["mesh"]`); this module names the chips
from them: `chip (0,3) device 3`, `chips (0,0)-(7,3), devices 0-31`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_LISTED = 4  # chips named one by one up to this many


@dataclass(frozen=True)
class Mesh:
    """One device of a session as chips: its shape and the device id of each chip, row-major."""

    device: int
    shape: tuple[int, int]
    device_ids: tuple[int, ...]

    @classmethod
    def from_info(cls, device: int, info: Any) -> Mesh | None:
        """From a device's recorded facts (`devices.info`, or a device_open's `args["info"]`);
        None when it has none (an older session) or they do not add up."""
        mesh = info.get("mesh") if isinstance(info, dict) else None
        if not isinstance(mesh, dict):
            return None
        shape, ids = mesh.get("shape"), mesh.get("device_ids")
        if not isinstance(shape, list) or not isinstance(ids, list) or not ids:
            return None
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (*shape, *ids)):
            return None
        rows, cols = (1, shape[0]) if len(shape) == 1 else (shape[0], shape[-1]) if shape else (0, 0)
        if rows * cols != len(ids) or len(ids) > 1 << 12:
            return None
        return cls(device, (rows, cols), tuple(ids))

    @property
    def single(self) -> bool:
        """One chip (what `open_device` opens): nothing to name beyond the device."""
        return len(self.device_ids) == 1

    def chips(self) -> list[tuple[tuple[int, int], int]]:
        """((row, column), device id) of every chip, row-major."""
        cols = self.shape[1]
        return [((i // cols, i % cols), chip) for i, chip in enumerate(self.device_ids)]

    @property
    def shape_text(self) -> str:
        return f"{self.shape[0]}×{self.shape[1]}"

    def chips_text(self) -> str:
        """`chip (0,3) device 3`, `chips (0,0) device 0 and (0,1) device 1`, or for a larger
        mesh `chips (0,0)-(7,3), devices 0-31`."""
        chips = self.chips()
        if len(chips) == 1:
            (r, c), chip = chips[0]
            return f"chip ({r},{c}) device {chip}"
        if len(chips) <= _LISTED:
            named = [f"({r},{c}) device {chip}" for (r, c), chip in chips]
            return "chips " + ", ".join(named[:-1]) + f" and {named[-1]}"
        (r0, c0), (r1, c1) = chips[0][0], chips[-1][0]
        return f"chips ({r0},{c0})-({r1},{c1}), devices {_id_ranges(self.device_ids)}"

    def ids_text(self) -> str:
        """`0` for one chip, `8×4: 0-31` for a mesh: its chips' device ids, short."""
        ids = _id_ranges(self.device_ids)
        return ids if self.single else f"{self.shape_text}: {ids}"

    def label(self) -> str:
        """How a viewer names the device: `device 0` for a one-chip device (the chip the
        program opened, whatever the mesh's own id), else `mesh 0 (8×4, devices 0-31)`: a mesh
        allocates in lockstep, so its memory map is each of its chips' map."""
        if self.single:
            chip = self.device_ids[0]
            return f"device {chip}" if chip == self.device else f"device {chip} (mesh {self.device})"
        return f"mesh {self.device} ({self.shape_text}, devices {_id_ranges(self.device_ids)})"

    def evidence(self) -> dict[str, Any]:
        """What a finding's JSON evidence says of the chips (docs/check-json.md)."""
        return {"mesh": {"device": self.device, "shape": list(self.shape)},
                "chips": [{"coord": [r, c], "device_id": chip} for (r, c), chip in self.chips()]}  # fmt: skip


def _id_ranges(ids: tuple[int, ...]) -> str:
    """`0-7, 12, 14-15`: runs of consecutive ids."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def meshes_of(devices: Any) -> dict[int, Mesh]:
    """Meshes by device id from rows with `id` and `info` (`store.rows.DeviceRow`)."""
    out: dict[int, Mesh] = {}
    for d in devices:
        mesh = Mesh.from_info(d.id, d.info) if d.id is not None else None
        if mesh is not None:
            out[d.id] = mesh
    return out


def device_label(device: int | None, meshes: dict[int, Mesh]) -> str:
    """`device N` (unchanged without mesh facts), or what `Mesh.label` says."""
    mesh = meshes.get(device) if device is not None else None
    return mesh.label() if mesh is not None else f"device {device}"
