"""ttrecord's hardware-free, ttnn-compatible backend.

`from ttrecord import emulator as ttnn` behaves like `import ttnn` (0.81.1 API
names, signatures and error texts) for the subset implemented here, with the
semantics trace debugging depends on made real: a p150-like allocator with
bank-local interleaved and per-core sharded buffers, byte-addressed device
memory per chip, and trace replay against captured addresses. `install()` makes
plain `import ttnn` (and `ttnn.experimental`, `ttnn.transformer`, `ttnn._ttnn`,
`ttnn._ttnn.reports`, `ttnn.graph`, `ttnn.decorators`, `ttnn.device`,
`ttnn.types`) resolve to it. docs/emulator.md says what is emulated (with a
coverage table of every name ttnn 0.81.1 exports) and how to add an op.

Where to look:
  config.py       the chip geometry (`DeviceConfig`; `P150` is the default)
  allocator.py    first-fit bank-local allocation (DRAM bottom-up, L1 top-down)
  sharding.py     core ranges, shard specs, and the core/slot of every sharded page
  memory.py       per-bank byte storage; codec.py turns values into pages and back
  tensor.py       `Tensor` (no weakrefs; the buffer is freed with its last reference)
  device.py       open/close, per-chip memory, allocation, synchronize and events
  distributed.py  mesh mappers/composers, get_device_tensors
  ops/            one decorated function per op, registered by name (ops/_dispatch.py runs them)
  trace.py        capture, replay, trace region accounting (4 KiB per captured op)
  faults.py       TTRECORD_EMULATOR_FAULT=segv@replay:N | hang@replay:N[:seconds]
  _ttnn/reports.py, graph.py   the introspection a recorder uses

It is an honest stand-in: `ttnn.__emulator__` is True and `__version__` is not
a ttnn version. A name it lacks raises `ttnn emulator: ttnn.X is not emulated
(see docs/emulator.md)` (an AttributeError). Known differences from real ttnn:
ops inside a capture run once (on hardware they only record); every op output
is a fresh buffer (ttnn may return views); the active-trace allocation warning
goes through Python's `warnings` (`TraceAllocationWarning`, shown on stderr at
the user's line) instead of tt-metal's logger.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from . import _ttnn, decorators, experimental, graph, tools
from . import device as device  # noqa: PLC0414 - ttnn.device exists in real ttnn
from . import types as types  # noqa: PLC0414
from .config import (
    DEFAULT_L1_SMALL_SIZE,
    DEFAULT_TRACE_REGION_SIZE,
    DEFAULT_WORKER_L1_SIZE,
    P150,
    DeviceConfig,
)
from .device import (
    Arch,
    MeshDevice,
    ReadDeviceProfiler,
    SubDevice,
    SubDeviceId,
    MeshEvent,
    close_device,
    close_mesh_device,
    event_synchronize,
    get_device_ids,
    get_num_devices,
    open_device,
    open_mesh_device,
    record_event,
    synchronize_device,
    wait_for_event,
)
from .sub_devices import SubDeviceManagerId, install as _install_sub_devices
from .distributed import (
    ConcatMesh2dToTensor,
    ConcatMeshToTensor,
    MeshComposerConfig,
    MeshMapperConfig,
    PlacementReplicate,
    PlacementShard,
    ReplicateTensorToMesh,
    ShardTensor2dMesh,
    ShardTensorToMesh,
    concat_mesh_to_tensor_composer,
    create_mesh_composer,
    create_mesh_mapper,
    combine_device_tensors,
    distribute,
    from_host_shards,
    get_device_tensors,
    manage_device,
    replicate_tensor_to_mesh_mapper,
    shard_tensor_to_mesh_mapper,
)
from .sharding import (
    CoreCoord,
    CoreRange,
    CoreRangeSet,
    ShardDistributionStrategy,
    ShardOrientation,
    ShardSpec,
    ShardStrategy,
    num_cores_to_corerangeset,
)
from .ops.sharded import create_sharded_memory_config, create_sharded_memory_config_
from .configs import (  # noqa: F401 - ttnn names
    BlackholeComputeKernelConfig,
    Conv2dConfig,
    GlobalSemaphore,
    GrayskullComputeKernelConfig,
    LayerNormDefaultProgramConfig,
    LayerNormShardedMultiCoreProgramConfig,
    MathFidelity,
    MatmulMultiCoreReuseMultiCast1DProgramConfig,
    MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig,
    MatmulMultiCoreReuseMultiCastProgramConfig,
    MatmulMultiCoreReuseProgramConfig,
    ReduceType,
    SDPAProgramConfig,
    SoftmaxDefaultProgramConfig,
    SoftmaxShardedMultiCoreProgramConfig,
    Tile,
    Topology,
    UnaryOpType,
    UnaryWithParam,
    WormholeComputeKernelConfig,
    create_global_semaphore,
    get_global_semaphore_address,
    init_device_compute_kernel_config,
    reset_global_semaphore_value,
)
from .fabric import (
    FabricConfig,
    FabricManagerMode,
    FabricReliabilityMode,
    FabricRouterConfig,
    FabricTensixConfig,
    FabricUDMMode,
    get_fabric_config,
    set_fabric_config,
)
from .errors import NotEmulatedError, TraceAllocationWarning, not_emulated
from .faults import ENV_VAR as FAULT_ENV_VAR
from .ops.data_movement import (
    clone,
    concat,
    copy,
    embedding,
    permute,
    reshape,
    slice,
    to_layout,
    transpose,
)
from .ops.eltwise import (
    abs,
    add,
    divide,
    eq,
    exp,
    ge,
    gelu,
    gt,
    le,
    lt,
    maximum,
    minimum,
    mul,
    multiply,
    ne,
    neg,
    relu,
    rsqrt,
    sigmoid,
    silu,
    sqrt,
    sub,
    subtract,
    tanh,
    typecast,
)
from .ops.matmul import linear, matmul
from .ops.normalization import layer_norm, rms_norm, softmax
from .ops.reduction import argmax, max, mean, sum
from .tensor import Tensor
from .trace import (
    MeshTraceId,
    begin_trace_capture,
    end_trace_capture,
    is_trace_capture_active,
    release_trace,
)
from .trace import execute_trace as _ttnn_execute_trace
from .tools import trace_allocation_tracker as _trace_allocation_tracker

if _trace_allocation_tracker.TRACE_ALLOC_TRACKING:

    def execute_trace(mesh_device, trace_id, *, cq_id=None, blocking=True):  # type: ignore[no-untyped-def]
        """Execute a captured trace, with automatic allocation-safety verification (as
        ttnn 0.81.1 under TT_METAL_TRACE_ALLOC_TRACKING=1)."""
        _trace_allocation_tracker.TraceAllocationTracker.verify_before_replay(mesh_device, trace_id)
        return _ttnn_execute_trace(mesh_device, trace_id, cq_id=cq_id, blocking=blocking)

else:
    execute_trace = _ttnn_execute_trace
from .transfers import (
    allocate_tensor_on_device,
    arange,
    copy_device_to_host_tensor,
    copy_host_to_device_tensor,
    deallocate,
    empty,
    from_device,
    from_torch,
    full,
    get_memory_config,
    is_tensor_storage_on_device,
    full_like,
    ones,
    ones_like,
    rand,
    to_device,
    to_torch,
    zeros,
    zeros_like,
)
from .types import (
    DRAM_MEMORY_CONFIG,
    L1_BLOCK_SHARDED_MEMORY_CONFIG,
    L1_HEIGHT_SHARDED_MEMORY_CONFIG,
    L1_MEMORY_CONFIG,
    L1_WIDTH_SHARDED_MEMORY_CONFIG,
    TILE_SIZE,
    BufferType,
    CoreGrid,
    DataType,
    Layout,
    MemoryConfig,
    MeshCoordinate,
    MeshShape,
    Shape,
    StorageType,
    TensorMemoryLayout,
)

__emulator__ = True
__version__ = "0+ttrecord.emulator"  # deliberately not a ttnn version
API_VERSION = "0.81.1"  # the ttnn release whose API this emulates

bfloat16 = DataType.BFLOAT16
float32 = DataType.FLOAT32
uint32 = DataType.UINT32
int32 = DataType.INT32
uint16 = DataType.UINT16
uint8 = DataType.UINT8
bfloat8_b = DataType.BFLOAT8_B
bfloat4_b = DataType.BFLOAT4_B
Device = MeshDevice  # ttnn 0.81.1: ttnn.Device is ttnn.MeshDevice
ROW_MAJOR_LAYOUT = Layout.ROW_MAJOR
TILE_LAYOUT = Layout.TILE

# Submodules a program or a recorder may import as `ttnn.<name>`.
SUBMODULES = [
    "experimental",
    "_ttnn",
    "_ttnn.reports",
    "_ttnn.graph",
    "_ttnn.device",
    "_ttnn.tensor",
    "_ttnn.multi_device",
    "_ttnn.operations",
    "_ttnn.operations.trace",
    "graph",
    "decorators",
    "device",
    "types",
    "tools",
    "tools.trace_allocation_tracker",
]


def _export_registered_ops() -> None:
    """Put every registered op under its fully qualified name (ttnn.x, ttnn.experimental.x,
    ttnn.transformer.x); a namespace that does not exist yet becomes a submodule."""
    from . import ops  # noqa: F401 - importing the package registers every op
    from .call_forms import adapt_ops
    from .decorators import REGISTRY

    adapt_ops(sys.modules[__name__])

    module = sys.modules[__name__]
    for qualified, op in REGISTRY.items():
        parts = qualified.split(".")[1:]
        target = module
        for depth, part in enumerate(parts[:-1], start=1):
            child = getattr(target, part, None) if part in vars(target) else None
            if child is None:
                child = _namespace(".".join(parts[:depth]))
                setattr(target, part, child)
                if ".".join(parts[:depth]) not in SUBMODULES:
                    SUBMODULES.append(".".join(parts[:depth]))
            target = child
        setattr(target, parts[-1], op)


def _namespace(path: str) -> ModuleType:
    namespace = ModuleType(f"{__name__}.{path}", f"`ttnn.{path}` as emulated")
    namespace.__getattr__ = _missing(f"ttnn.{path}")  # type: ignore[method-assign]
    return namespace


def _missing(prefix: str) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise not_emulated(f"{prefix}.{name}")

    return __getattr__


__getattr__ = _missing("ttnn")
_export_registered_ops()
experimental.__getattr__ = _missing("ttnn.experimental")  # type: ignore[method-assign]


def install() -> ModuleType:
    """Make `import ttnn` (and its submodules) resolve to the emulator; returns it."""
    module = sys.modules[__name__]
    sys.modules["ttnn"] = module
    for name in SUBMODULES:
        target = module
        for part in name.split("."):
            target = getattr(target, part)
        sys.modules[f"ttnn.{name}"] = target
    return module


def uninstall() -> None:
    """Undo install() (for tests)."""
    module = sys.modules[__name__]
    if sys.modules.get("ttnn") is module:
        del sys.modules["ttnn"]
        for name in SUBMODULES:
            sys.modules.pop(f"ttnn.{name}", None)

_install_sub_devices(MeshDevice)  # create/load/clear/remove_sub_device_manager, stall groups
