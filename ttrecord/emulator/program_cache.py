"""The device's program cache, keyed the way ttnn keys it, and the kernel binaries it owns.

Real ttnn compiles an op's program the first time it sees its key (the op and the attributes
that shape the program: input shapes, dtypes, layouts and memory configs, the output's dtype,
layout and memory config) and reuses it afterwards; `device.num_program_cache_entries()` counts
the keys (measured on 0.81.1: 1 after a first `relu`, still 1 after a second `relu` of the same
spec, 2 after a first `gelu`). The emulator keeps the same count, so a recorder sees a compile
as growth of that count.

Kernel binaries, as tt-metal 0.81.1 places them on a card: the first enqueue of a program
(`MeshWorkloadImpl::load_binaries`, tt_metal/distributed/mesh_workload.cpp) allocates one
replicated DRAM MeshBuffer of the program's binary size with 2048-byte pages
(`HostMemDeviceCommand::PROGRAM_PAGE_SIZE`), *top-down* (`bottom_up = false`: "to minimize
fragmentation with other buffers in DRAM, which are typically allocated bottom up"), writes the
binaries into it, and keeps it as long as the cache entry lives. Inside a trace capture it
refuses instead: `TT_FATAL @ .../mesh_workload.cpp:200: !is_capturing_trace` "Cannot load new
binaries during trace capture.This program is not yet in program cache. ..." (text and line
read from libtt_metal.so of the 0.81.1 wheel). The cache entry itself is inserted before the
enqueue (ttnn's device_operation), so the count grows even when loading fails.

The 0.81.1 mock device loads no binaries at all (no host command queue; measured in the
real-ttnn lane: no buffer appears in `get_buffers` or in a graph capture, and the next tensor
lands where it would without the compile). The emulator models the card.

A trace replay writes wherever its captured addresses point, so a binary allocated after a
capture on memory the trace uses is overwritten by the next replay. A program whose binary no
longer holds the bytes its compile wrote runs garbage on a card (a hang, or wrong values); the
emulator writes the corrupted binary's words into the op's output instead of its result.
Checked only when a replay ran since the program's last check (nothing else writes over a live
buffer), so a steady run pays one integer comparison per op.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Optional
from collections.abc import Sequence

import numpy as np

from . import errors
from .types import BufferType

PROGRAM_PAGE_SIZE = 2048  # HostMemDeviceCommand::PROGRAM_PAGE_SIZE
# Bytes of kernel text one emulated program carries (BRISC, NCRISC and three TRISC kernels of
# an eltwise op are a few KB each): 8 pages, one per DRAM bank of a p150.
BINARY_BYTES = 8 * PROGRAM_PAGE_SIZE

# TTRECORD_EMULATOR_KERNEL_BINARIES=0 models the 0.81.1 mock device, which loads none (the
# real-ttnn lane compares allocations with it that way).
LOAD_BINARIES = os.environ.get("TTRECORD_EMULATOR_KERNEL_BINARIES", "1") != "0"
_MESH_WORKLOAD = "/project/tt_metal/distributed/mesh_workload.cpp"
CANNOT_LOAD_IN_CAPTURE = (
    "Cannot load new binaries during trace capture.This program is not yet in program cache."
    " Warm up before capturing a trace.See the operation's hash signature for arguments that"
    " must match."
)


@dataclass
class Program:
    """One cache entry: its binary buffer once loaded, and the bytes the compile wrote."""

    key: tuple
    binary: Any = None  # buffer.DeviceBuffer, None until loaded
    image: Optional[np.ndarray] = None  # (pages, PROGRAM_PAGE_SIZE) uint8
    checked_epoch: int = 0
    corrupted: bool = False
    loaded: bool = False


@dataclass
class _Cache:
    programs: dict = field(default_factory=dict)  # key -> Program
    replay_epoch: int = 0  # bumped by every execute_trace on the device


_caches: weakref.WeakKeyDictionary[Any, _Cache] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def key(name: str, inputs: Sequence[Any], dtype: Any, layout: Any, memory_config: Any) -> tuple:
    """The program-cache key of one op call: op, each input's spec, the output's spec."""
    specs = tuple(
        (tuple(t.shape), str(t.dtype), str(t.layout), repr(t.memory_config())) for t in inputs
    )
    if memory_config is None and inputs:  # the output defaults to input 0's config
        memory_config = inputs[0].memory_config()
    return (name, specs, str(dtype), str(layout), repr(memory_config))


def _cache(device: Any) -> _Cache:
    cache = _caches.get(device)
    if cache is None:
        cache = _caches[device] = _Cache()
    return cache


def lookup(device: Any, name: str, inputs: Sequence[Any], dtype: Any, layout: Any,
           memory_config: Optional[Any]) -> bool:  # fmt: skip
    """Whether the call's program was cached; a miss compiles it (adds the entry)."""
    return program(device, name, inputs, dtype, layout, memory_config)[1]


def program(device: Any, name: str, inputs: Sequence[Any], dtype: Any, layout: Any,
            memory_config: Optional[Any]) -> tuple[Program, bool]:  # fmt: skip
    """The call's cache entry and whether it was there; then its binaries are loaded (raises
    ttnn's TT_FATAL inside a capture when they are not yet)."""
    k = key(name, inputs, dtype, layout, memory_config)
    with _lock:
        cache = _cache(device)
        prog = cache.programs.get(k)
        hit = prog is not None
        if prog is None:
            prog = cache.programs[k] = Program(k, checked_epoch=cache.replay_epoch)
    if not prog.loaded:
        _load(device, prog)
    return prog, hit


def _load(device: Any, prog: Program) -> None:
    """MeshWorkloadImpl::load_binaries: refuse in capture, else allocate top-down and write."""
    if getattr(device, "capturing", None):
        errors.fatal_in_capture(errors.tt_fatal(_MESH_WORKLOAD, 200, "!is_capturing_trace",
                                                CANNOT_LOAD_IN_CAPTURE))  # fmt: skip
    prog.loaded = True
    if not LOAD_BINARIES:
        return
    from .tools.trace_allocation_tracker import PROGRAM_CACHE, allocation_context

    pages = BINARY_BYTES // PROGRAM_PAGE_SIZE
    token = allocation_context.set(PROGRAM_CACHE)
    try:
        buf = device.allocate_buffer(BufferType.DRAM, pages, PROGRAM_PAGE_SIZE, top_down=True)
    finally:
        allocation_context.reset(token)
    digest = np.frombuffer(hashlib.sha256(repr(prog.key).encode()).digest(), dtype=np.uint8)
    image = np.resize(digest, (pages, PROGRAM_PAGE_SIZE)).copy()
    for chip in range(getattr(device, "num_chips", 1)):
        device.write_pages(buf.desc, image, chip)
    prog.binary, prog.image = buf, image


def garbage(device: Any, prog: Optional[Program]) -> Optional[np.ndarray]:
    """The program's binary words when a replay overwrote them since the compile, else None."""
    if prog is None or prog.binary is None or prog.image is None or not prog.binary.is_allocated:
        return None
    cache = _caches.get(device)
    if cache is None or (not prog.corrupted and prog.checked_epoch == cache.replay_epoch):
        return None
    prog.checked_epoch = cache.replay_epoch
    now = device.read_pages(prog.binary.desc)
    if not prog.corrupted:
        prog.corrupted = not np.array_equal(now, prog.image)
    return now if prog.corrupted else None


def garbage_like(words: np.ndarray, result: Any) -> Any:
    """What a program running corrupted binaries leaves in its output: the binary's bytes as
    numbers (-128..127), repeated over the output's shape, in the output's dtype."""
    import torch

    flat = words.reshape(-1).astype(np.int8).astype(np.float32)
    values = np.resize(flat, max(int(result.numel()), 1))[: int(result.numel())]
    return torch.from_numpy(values).reshape(result.shape).to(result.dtype)


def replayed(device: Any) -> None:
    """A replay ran on the device: binaries are checked again at their next use."""
    with _lock:
        _cache(device).replay_epoch += 1


def entries(device: Any) -> int:
    with _lock:
        cache = _caches.get(device)
        return len(cache.programs) if cache is not None else 0


def clear(device: Any) -> None:
    """Empty the cache; the entries' binary buffers are freed with them."""
    with _lock:
        cache = _caches.pop(device, None)
    if cache is not None:
        for prog in cache.programs.values():
            if prog.binary is not None:
                prog.binary.release()
