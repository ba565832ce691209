"""`ttnn._ttnn.multi_device`: `open_device` returns a `MeshDevice` from here on real ttnn."""

from ..device import MeshDevice, MeshEvent, close_mesh_device, open_mesh_device  # noqa: F401
from ..types import MeshShape  # noqa: F401
