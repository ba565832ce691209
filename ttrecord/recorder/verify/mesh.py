"""Reading and copying tensors of a multi-chip mesh for replay verification.

A mesh tensor holds different values on each chip (weights and caches sharded over the
chips), so the verifier reads every chip (concatenated along dim 0) and its copies put each
chip's part back on that chip. On one chip this is plain to_torch / from_torch.
"""

from __future__ import annotations

from typing import Any


def _chips(device: Any) -> int:
    try:
        return int(device.get_num_devices())
    except Exception:
        return 1


def read(ttnn: Any, tensor: Any) -> Any:
    """Every chip's values, chip after chip along dim 0."""
    device = tensor.device()
    if device is None or _chips(device) == 1:
        return ttnn.to_torch(tensor)
    return ttnn.to_torch(tensor, mesh_composer=ttnn.ConcatMeshToTensor(device, dim=0))


def copy_spec(ttnn: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """from_torch arguments that undo `read`: split dim 0 back over the chips."""
    device = spec.get("device")
    if device is None or _chips(device) == 1:
        return spec
    return {**spec, "mesh_mapper": ttnn.ShardTensorToMesh(device, dim=0)}
