"""Sub-device managers of a mesh device, as ttnn 0.81.1 keeps them.

A device starts with a default manager (one sub-device over the whole worker grid). A program
creates others (`create_sub_device_manager([SubDevice, ...], local_l1_size)`), loads one,
sets a stall group (the sub-devices `synchronize_device` waits for), and clears it at the end
(tt-metal's async CCL tests and demos). What matters for traces, from tt-metal's
`sub_device_manager_tracker.cpp` and `mesh_device.cpp`:

* a trace belongs to the manager active at `begin_trace_capture`; `end_trace_capture` and
  `execute_trace` look it up in the active manager and raise "Trace instance N must exist on
  ... active sub-device manager M" when another one is loaded; `release_trace` under another
  manager finds nothing and does nothing (the trace stays in its manager);
* loading or clearing a manager resets the dispatch state of every command queue, which a
  capture cannot record: "Cannot reset worker state during trace capture"; loading the active
  manager (and clearing while the default is active) returns before that, so it is allowed;
* removing a manager drops its traces with it (their trace buffers are freed).
Sub-device allocators (`local_l1_size`) and per-sub-device dispatch are not modelled: every op
still runs on the whole device.
"""

from __future__ import annotations

import itertools
from typing import Any

from . import errors

# tt-metal numbers managers with one process-wide counter; the emulator gives every device's
# default manager 0 (what ttnn 0.81.1's messages say for a first mesh device) and counts the
# created ones from 1.
_manager_ids = itertools.count(1)
_TRACKER = "/project/tt_metal/impl/sub_device/sub_device_manager_tracker.cpp"
_MANAGER = "/project/tt_metal/impl/sub_device/sub_device_manager.cpp"
_MESH_CQ = "/project/tt_metal/distributed/fd_mesh_command_queue.cpp"
_MESH_DEVICE = "/project/tt_metal/distributed/mesh_device.cpp"


class SubDeviceManagerId(errors.NotEmulatedAttributes):
    """What `create_sub_device_manager` returns and `load_sub_device_manager` takes."""

    _ttnn_name = "ttnn.SubDeviceManagerId"

    def __init__(self, value: int = 0) -> None:
        self.value = int(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SubDeviceManagerId) and other.value == self.value

    def __hash__(self) -> int:
        return hash(("SubDeviceManagerId", self.value))

    def __int__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"SubDeviceManagerId({self.value})"


class Manager:
    """One sub-device manager: its sub-devices, stall group and the traces captured under it."""

    def __init__(self, sub_devices: list[Any], local_l1_size: int, default: bool = False) -> None:
        self.id = SubDeviceManagerId(0 if default else next(_manager_ids))
        self.sub_devices = sub_devices
        self.local_l1_size = int(local_l1_size)
        self.stall_group = list(range(len(sub_devices)))


class Tracker:
    """The managers of one mesh device (tt-metal's SubDeviceManagerTracker)."""

    def __init__(self) -> None:
        default = Manager([None], 0, default=True)
        self.default = default
        self.active = default
        self.managers: dict[SubDeviceManagerId, Manager] = {default.id: default}


def tracker(device: Any) -> Tracker:
    """The device's tracker, made with its default manager the first time it is asked for."""
    found = device.__dict__.get("_sub_device_tracker")
    if found is None:
        found = device.__dict__["_sub_device_tracker"] = Tracker()
    return found


def active_id(device: Any) -> int:
    """The active manager's id (the one a new trace belongs to)."""
    return tracker(device).active.id.value


def trace_not_in_active(trace_id: int, device: Any, *, replay: bool) -> RuntimeError:
    """ttnn's error for a trace looked up under a manager it was not captured under."""
    active = active_id(device)
    where = "Mesh device" if replay else "device"
    return errors.tt_fatal(
        _MESH_DEVICE, 1124 if replay else 1101, "trace_buffer != nullptr",
        f"Trace instance {int(trace_id)} must exist on {where} {device.mesh_id}'s active"
        f" sub-device manager {active}",
    )  # fmt: skip


def _manager_id(value: Any) -> SubDeviceManagerId:
    if isinstance(value, SubDeviceManagerId):
        return value
    raise TypeError(
        "load_sub_device_manager(): incompatible function arguments; takes a"
        f" ttnn.SubDeviceManagerId, got {type(value).__name__}"
    )


def create_sub_device_manager(self: Any, sub_devices: Any, local_l1_size: int) -> SubDeviceManagerId:
    """A new manager of these sub-devices (not loaded)."""
    subs = list(sub_devices)
    if not subs:
        raise TypeError("create_sub_device_manager(): sub_devices must not be empty")
    track = tracker(self)
    manager = Manager(subs, local_l1_size)
    track.managers[manager.id] = manager
    return manager.id


def _reset_worker_state(device: Any) -> None:
    """What a load does to every command queue: refused while one is capturing."""
    if device.capturing:
        errors.fatal_in_capture(errors.tt_fatal(
            _MESH_CQ, 0, "!device->sysmem_manager().get_bypass_mode()",
            "Cannot reset worker state during trace capture"))  # fmt: skip


def load_sub_device_manager(self: Any, sub_device_manager_id: Any) -> None:
    """Make a manager the active one (its sub-devices and stall group apply from now on)."""
    track = tracker(self)
    wanted = _manager_id(sub_device_manager_id)
    if track.active.id == wanted:
        return  # tt-metal returns before resetting anything
    manager = track.managers.get(wanted)
    if manager is None:
        raise errors.tt_fatal(_TRACKER, 0, "sub_device_manager != sub_device_managers_.end()",
                              "Sub device manager does not exist")  # fmt: skip
    _reset_worker_state(self)
    manager.stall_group = list(range(len(manager.sub_devices)))
    track.active = manager


def clear_loaded_sub_device_manager(self: Any) -> None:
    """Load the default manager again."""
    load_sub_device_manager(self, tracker(self).default.id)


def remove_sub_device_manager(self: Any, sub_device_manager_id: Any) -> None:
    """Forget a manager that is not active; its traces go with it."""
    track = tracker(self)
    wanted = _manager_id(sub_device_manager_id)
    if wanted == track.active.id:
        raise errors.tt_fatal(_TRACKER, 0, "sub_device_manager_id != active_sub_device_manager_->id()",
                              f"Cannot remove active sub device manager {wanted.value}")  # fmt: skip
    if wanted == track.default.id:
        raise errors.tt_fatal(_TRACKER, 0, "sub_device_manager_id != default_sub_device_manager_->id()",
                              f"Cannot remove default sub device manager {wanted.value}")  # fmt: skip
    if track.managers.pop(wanted, None) is None:
        raise errors.tt_fatal(_TRACKER, 0, "sub_device_manager != sub_device_managers_.end()",
                              "Sub device manager does not exist")  # fmt: skip
    from .trace import drop_trace

    for trace_id in [t for t, trace in self.traces.items() if getattr(trace, "manager", 0) == wanted.value]:
        drop_trace(self, trace_id)


def set_sub_device_stall_group(self: Any, sub_device_ids: Any) -> None:
    """The sub-devices `synchronize_device` and blocking calls wait for."""
    ids = [int(getattr(s, "id", s)) for s in sub_device_ids]
    if not ids:
        raise errors.tt_fatal(_MANAGER, 0, "!sub_device_ids.empty()",
                              "sub_device_ids to stall must not be empty")  # fmt: skip
    count = len(tracker(self).active.sub_devices)
    for index in ids:
        if not 0 <= index < count:
            raise errors.tt_fatal(_MANAGER, 173, "*sub_device_id < sub_devices_.size()",
                                  f"SubDevice index {index} out of bounds {count}")  # fmt: skip
    tracker(self).active.stall_group = ids


def reset_sub_device_stall_group(self: Any) -> None:
    """Every sub-device of the active manager again."""
    manager = tracker(self).active
    manager.stall_group = list(range(len(manager.sub_devices)))


METHODS = {
    "create_sub_device_manager": create_sub_device_manager,
    "load_sub_device_manager": load_sub_device_manager,
    "clear_loaded_sub_device_manager": clear_loaded_sub_device_manager,
    "remove_sub_device_manager": remove_sub_device_manager,
    "set_sub_device_stall_group": set_sub_device_stall_group,
    "reset_sub_device_stall_group": reset_sub_device_stall_group,
}


def install(cls: type) -> None:
    """Give the emulated MeshDevice class the manager methods."""
    for name, method in METHODS.items():
        setattr(cls, name, method)
