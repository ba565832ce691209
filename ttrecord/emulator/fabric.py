"""The fabric configuration of ttnn 0.81.1 (`ttnn.set_fabric_config`, `ttnn.FabricConfig`
and its companion enums). The emulator's CCLs move data between chips directly, so the
configuration changes no result; it is kept so `get_fabric_config` reports what was set, as
multi-chip programs set it before opening a mesh."""

from __future__ import annotations

from .errors import NotEmulatedAttributes, NotEmulatedEnumType

import enum
from typing import Any, Optional


class FabricConfig(enum.Enum, metaclass=NotEmulatedEnumType):
    DISABLED = 0
    FABRIC_1D_NEIGHBOR_EXCHANGE = 1
    FABRIC_1D = 2
    FABRIC_1D_RING = 3
    FABRIC_2D = 4
    FABRIC_2D_TORUS_X = 5
    FABRIC_2D_TORUS_Y = 6
    FABRIC_2D_TORUS_XY = 7
    CUSTOM = 8


class FabricReliabilityMode(enum.Enum, metaclass=NotEmulatedEnumType):
    STRICT_INIT = 0
    RELAXED_INIT = 1
    DYNAMIC_RECONFIG = 2


class FabricTensixConfig(enum.Enum, metaclass=NotEmulatedEnumType):
    DISABLED = 0
    MUX = 1


class FabricUDMMode(enum.Enum, metaclass=NotEmulatedEnumType):
    DISABLED = 0
    ENABLED = 1


class FabricManagerMode(enum.Enum, metaclass=NotEmulatedEnumType):
    ENABLED = 0
    INIT_FABRIC = 1
    TERMINATE_FABRIC = 2
    DEFAULT = 3


class FabricRouterConfig(NotEmulatedAttributes):
    """Router tuning knobs; accepted and kept, they change nothing in the emulator."""

    def __init__(self, **settings: Any) -> None:
        self.__dict__.update(settings)


_current = {"config": FabricConfig.DISABLED}


def set_fabric_config(
    config: FabricConfig,
    reliability_mode: FabricReliabilityMode = FabricReliabilityMode.STRICT_INIT,
    num_planes: Optional[int] = None,
    fabric_tensix_config: FabricTensixConfig = FabricTensixConfig.DISABLED,
    fabric_udm_mode: FabricUDMMode = FabricUDMMode.DISABLED,
    fabric_manager_mode: FabricManagerMode = FabricManagerMode.DEFAULT,
    router_config: Optional[FabricRouterConfig] = None,
) -> None:
    if not isinstance(config, FabricConfig):
        raise TypeError(f"set_fabric_config(): config must be a ttnn.FabricConfig, got {type(config).__name__}")
    _current["config"] = config


def get_fabric_config() -> FabricConfig:
    return _current["config"]
