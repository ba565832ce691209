"""Which kind of event each ttnn call is, in one table.

Module functions and `ttnn.Tensor` methods are classified by name. A few names depend on their
arguments (`from_torch` and the creation calls (`zeros`, `full`, `arange`, ...) are host->device
writes only when given a device; `Tensor.to` moves data
only when given a device; a readback of a host tensor reads nothing from a device); the recorder
settles those with `refine()` once it knows the call's tensors.
"""

from __future__ import annotations

from ttrecord.events import Kind

MODULE_KINDS: dict[str, Kind] = {
    # host -> device writes
    "to_device": Kind.H2D,
    "copy_host_to_device_tensor": Kind.H2D,
    "from_torch": Kind.H2D,  # only with a device, see refine()
    "as_tensor": Kind.H2D,  # only with a device
    # creation calls: filled on the host, then written to the device given (see CREATION)
    **dict.fromkeys(("zeros", "ones", "full", "arange", "zeros_like", "ones_like", "full_like"),
                    Kind.H2D),
    # device -> host reads
    "to_torch": Kind.D2H,
    "from_device": Kind.D2H,
    "copy_device_to_host_tensor": Kind.D2H,
    "read_buffer": Kind.D2H,
    # synchronisation
    "synchronize_device": Kind.SYNC,
    "synchronize_devices": Kind.SYNC,
    "wait_for_event": Kind.SYNC,
    "record_event": Kind.SYNC,  # a queue command; raises inside a capture like the waits
    "event_synchronize": Kind.SYNC,
    "Synchronize": Kind.SYNC,
    # trace lifecycle
    "begin_trace_capture": Kind.TRACE_BEGIN,
    "end_trace_capture": Kind.TRACE_END,
    "execute_trace": Kind.TRACE_EXECUTE,
    "release_trace": Kind.TRACE_RELEASE,
    # devices
    "open_device": Kind.DEVICE_OPEN,
    "open_mesh_device": Kind.DEVICE_OPEN,
    "CreateDevice": Kind.DEVICE_OPEN,
    "close_device": Kind.DEVICE_CLOSE,
    "close_mesh_device": Kind.DEVICE_CLOSE,
    "CloseDevice": Kind.DEVICE_CLOSE,
}

# Transfer and lifetime methods of ttnn.Tensor, wrapped on the class.
TENSOR_METHODS: dict[str, Kind] = {
    "cpu": Kind.D2H,
    "to_torch": Kind.D2H,
    "to_list": Kind.D2H,
    "item": Kind.D2H,
    "to_numpy": Kind.D2H,
    "numpy": Kind.D2H,
    "to": Kind.H2D,  # only with a device, see refine()
    "to_device": Kind.H2D,
    "deallocate": Kind.OP,
}

# Module callables that are not device work: queries and configuration. Recording them would
# make a harmless `ttnn.is_trace_capture_active()` inside a capture look like a host op.
_NOT_OPS_PREFIXES = ("is_", "get_", "Get", "set_", "manage_", "dump_", "load_", "enable_",
                     "disable_", "print_", "register_", "attach_", "query_")  # fmt: skip
_NOT_OPS = frozenset({"tensor_id", "visualize", "format_args", "format_kwargs", "MeshShape",
                      "init_device_compute_kernel_config", "create_sharded_memory_config",
                      "CoreCoord", "CoreRange", "CoreRangeSet"})  # fmt: skip


def module_kind(name: str) -> Kind | None:
    """The kind of a module-level callable, or None when it is not device work to record."""
    kind = MODULE_KINDS.get(name)
    if kind is not None:
        return kind
    if name.startswith(_NOT_OPS_PREFIXES) or name in _NOT_OPS or name.startswith("_"):
        return None
    return Kind.OP


# Host->device names that only write to a device when given one (`from_torch(t)` converts on
# the host, `Tensor.to(layout)` changes layout).
NEEDS_DEVICE_ARG = frozenset({"from_torch", "as_tensor", "to", "to_device"})

# ttnn's creation calls build the tensor on the host and write it to the device they are given
# (`ttnn::full` -> `Tensor::to_device`): inside a capture real ttnn refuses them as writes
# ("Writes are not supported during trace capture", tt-mlir #8173 from `ttnn::zeros`). Without
# a device they make a host tensor. The `_like` forms write only when they copy a host tensor
# to a device; of a device tensor they run a fill op on it. On ttnn 0.81.1's mock device
# (tests/realttnn/test_creation_calls.py) these return inside a capture like the other host
# writes, while `rand`, `randn` and the `_like` forms of a device tensor are ops (they crash
# it, as every op in a capture does); `empty` and `empty_like` only allocate (ops here).
CREATION = frozenset({"zeros", "ones", "full", "arange"})
CREATION_LIKE = frozenset({"zeros_like", "ones_like", "full_like"})
ALLOCATING = frozenset({"empty", "empty_like"})
DEVICE_OPS = frozenset({"rand", "randn"})


def refine(kind: Kind, name: str, has_device_arg: bool, has_device_input: bool) -> Kind:
    """Settle argument-dependent kinds once the call's arguments are known."""
    if kind is Kind.H2D and not has_device_arg and (
        name in NEEDS_DEVICE_ARG or name in CREATION or name in CREATION_LIKE
    ):
        return Kind.OP
    if kind is Kind.H2D and name in CREATION_LIKE and has_device_input:
        return Kind.OP  # a fill op on the device tensor's device
    if kind is Kind.D2H and not has_device_input:
        return Kind.OP  # reading a host tensor reads nothing from a device
    return kind
