"""`ttnn._ttnn`: the native-extension namespace, mirrored where tools reach into it:
`reports` (allocator view), `graph`, `device`, `tensor`, `multi_device`, `operations.trace`."""

from . import device, graph, multi_device, operations, reports, tensor

__all__ = ["device", "graph", "multi_device", "operations", "reports", "tensor"]
