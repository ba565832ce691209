"""Kernel and program configs, op enums, and global semaphores.

They steer how hardware runs an op (fidelity, core grids, block sizes), not what it
computes, so the emulator keeps their arguments (a trace and a report can show them) and
computes the same values whatever they say.
"""

from __future__ import annotations

from .errors import NotEmulatedAttributes, NotEmulatedEnumType

import enum
import itertools
from typing import TYPE_CHECKING, Any


class _Config(NotEmulatedAttributes):
    """A config object: keyword arguments kept as attributes, printed like ttnn's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            kwargs = {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}
        self.__dict__.update(kwargs)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        fields = ",".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


def _config(name: str) -> type:
    return type(name, (_Config,), {"__doc__": f"ttnn.{name}: kept, not interpreted by the emulator."})


CONFIG_NAMES = (
    "WormholeComputeKernelConfig",
    "BlackholeComputeKernelConfig",
    "GrayskullComputeKernelConfig",
    "MatmulMultiCoreReuseProgramConfig",
    "MatmulMultiCoreReuseMultiCastProgramConfig",
    "MatmulMultiCoreReuseMultiCast1DProgramConfig",
    "MatmulMultiCoreReuseMultiCastDRAMShardedProgramConfig",
    "SDPAProgramConfig",
    "LayerNormDefaultProgramConfig",
    "LayerNormShardedMultiCoreProgramConfig",
    "SoftmaxDefaultProgramConfig",
    "SoftmaxShardedMultiCoreProgramConfig",
    "Conv2dConfig",
    "Tile",
    "UnaryWithParam",
)
for _name in CONFIG_NAMES:
    globals()[_name] = _config(_name)
if TYPE_CHECKING:  # tells mypy the names made above exist (each one a class)
    def __getattr__(name: str) -> type: ...


class MathFidelity(enum.Enum, metaclass=NotEmulatedEnumType):
    LoFi = 0
    HiFi2 = 2
    HiFi3 = 3
    HiFi4 = 4


class UnaryOpType(enum.Enum, metaclass=NotEmulatedEnumType):
    """Activations ops accept as `input_tensor_a_activations` / fused activations."""

    RELU = 0
    GELU = 1
    SILU = 2
    SIGMOID = 3
    TANH = 4
    IDENTITY = 5


class Topology(enum.Enum, metaclass=NotEmulatedEnumType):
    Ring = 0
    Linear = 1
    Mesh = 2
    Torus = 3


class ReduceType(enum.Enum, metaclass=NotEmulatedEnumType):
    Sum = 0
    Max = 1
    Min = 2


def init_device_compute_kernel_config(arch: Any = None, device_kernel_config: Any = None, **kwargs: Any) -> Any:
    """The given `device_kernel_config`, else one built from the keyword settings."""
    if device_kernel_config is not None:
        return device_kernel_config
    return globals()["WormholeComputeKernelConfig"](**kwargs)


class GlobalSemaphore(NotEmulatedAttributes):
    """A semaphore on a set of cores, used by the async CCLs to synchronise chips; emulated
    CCLs complete inside the call, so it only has to exist and hold its value. Its address is
    a distinct L1 address per semaphore (not reserved in the allocator), so a trace that bakes
    it in can be told apart from one that bakes in another."""

    _ids = itertools.count()
    _ADDRESS_BASE = 0x10_0000

    def __init__(self, mesh_device: Any, cores: Any, initial_value: int) -> None:
        self.mesh_device = mesh_device
        self.cores = cores
        self.value = int(initial_value)
        self.id = next(GlobalSemaphore._ids)
        self.address = GlobalSemaphore._ADDRESS_BASE + 16 * self.id

    def __repr__(self) -> str:
        return f"GlobalSemaphore(id={self.id})"


def create_global_semaphore(mesh_device: Any, cores: Any, initial_value: int, buffer_type: Any = None) -> GlobalSemaphore:
    if buffer_type is not None and getattr(buffer_type, "name", "L1") != "L1":
        raise RuntimeError("TT_FATAL @ /project/tt_metal/impl/buffers/global_semaphore.cpp:0: "
                           "buffer_type == BufferType::L1\ninfo:\nGlobal semaphore can only be created for L1 buffer types")
    return GlobalSemaphore(mesh_device, cores, initial_value)


def reset_global_semaphore_value(global_semaphore: GlobalSemaphore, reset_value: int, *_: Any) -> None:
    global_semaphore.value = int(reset_value)


def get_global_semaphore_address(global_semaphore: GlobalSemaphore) -> int:
    return global_semaphore.address
