"""The emulated chip's geometry, kept in one place.

Every number the allocator, the memory model and the reports use comes from a
`DeviceConfig`. The default, `P150`, is a Blackhole p150 as measured on the real
ttnn 0.81.1 mock device (see shared/notes/real-ttnn-mock-device.md): with it the
emulator reproduces the real allocator's address sequence exactly. Other chips
are one more instance of the dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceConfig:
    """Address-space layout and costs of one emulated chip."""

    name: str = "p150"
    arch: str = "BLACKHOLE"
    # DRAM: interleaved buffers spread pages round-robin over these banks.
    num_dram_banks: int = 8
    dram_bank_size: int = 4_278_190_080  # blackhole soc descriptor dram_view_size
    dram_unreserved_base: int = 1_048_704  # first DRAM address the real allocator hands out
    dram_alignment: int = 64
    # L1: one bank per worker core; interleaved L1 buffers are allocated top-down.
    num_l1_banks: int = 130
    worker_l1_size: int = 1_572_864
    l1_unreserved_base: int = 111_744  # address_at_first_l1_cb_buffer on a p150
    l1_alignment: int = 16
    compute_grid: tuple[int, int] = (13, 10)  # (x, y): 130 compute cores
    full_grid: tuple[int, int] = (17, 12)  # (x, y) physical grid, approximate
    # Trace buffers: bytes of dispatch commands one captured op costs in the trace
    # region. Real traces cost a few KB per program (launch messages, runtime args,
    # go signals); 4 KiB per op makes a 1000-op decode step need about 4 MB, the
    # order of magnitude real models configure for trace_region_size.
    trace_bytes_per_op: int = 4096
    trace_page_min: int = 1024  # kExecBufPageMin in tt-metal's mesh_trace.cpp
    trace_page_max: int = 4096  # kExecBufPageMax

    @property
    def l1_bank_size(self) -> int:
        """Allocatable L1 bytes per bank (what get_device_info reports)."""
        return self.worker_l1_size - self.l1_unreserved_base

    @property
    def num_compute_cores(self) -> int:
        return self.compute_grid[0] * self.compute_grid[1]


P150 = DeviceConfig()

# Real ttnn's defaults for open_device (tt_metal/api/tt-metalium/device.hpp).
DEFAULT_L1_SMALL_SIZE = 0
DEFAULT_TRACE_REGION_SIZE = 0
DEFAULT_WORKER_L1_SIZE = 0
