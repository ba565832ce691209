"""The emulated chip's geometry, kept in one place.

Every number the allocator, the memory model and the reports use comes from a
`DeviceConfig`. The default, `P150`, is a Blackhole p150 as measured on the real
ttnn 0.81.1 mock device (see shared/notes/real-ttnn-mock-device.md): with it the
emulator reproduces the real allocator's address sequence exactly. Other chips
are one more instance of the dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The core (x, y) behind each L1 bank of a p150, in bank order: page k of an interleaved L1
# buffer goes to core P150_L1_BANK_CORES[k % 130] (ttnn 0.81.1 get_buffer_pages on the mock
# p150; tests/realttnn/scripts/sharded_sequence.py re-measures it).
P150_L1_BANK_CORES = (
    (7, 2), (7, 6), (8, 9), (6, 8), (12, 6), (5, 2), (8, 6), (6, 5), (10, 7), (11, 2),
    (6, 1), (5, 9), (1, 2), (4, 8), (10, 0), (12, 2), (7, 5), (1, 4), (9, 9), (2, 1),
    (8, 0), (0, 6), (11, 0), (3, 7), (12, 1), (2, 6), (8, 2), (6, 7), (11, 4), (4, 2),
    (3, 1), (8, 5), (7, 4), (5, 0), (4, 6), (9, 0), (1, 1), (1, 9), (2, 0), (9, 7),
    (7, 9), (0, 4), (12, 8), (12, 3), (1, 6), (1, 8), (7, 7), (8, 4), (11, 6), (9, 5),
    (5, 7), (6, 3), (4, 7), (9, 6), (12, 9), (9, 8), (5, 5), (1, 7), (2, 3), (9, 1),
    (2, 7), (6, 2), (9, 3), (1, 0), (3, 9), (11, 9), (3, 0), (12, 0), (11, 3), (10, 5),
    (10, 1), (10, 8), (5, 6), (0, 1), (0, 7), (3, 4), (11, 5), (0, 8), (2, 2), (3, 5),
    (8, 7), (0, 0), (3, 6), (7, 3), (9, 4), (10, 2), (0, 5), (8, 3), (5, 4), (10, 6),
    (6, 9), (4, 9), (6, 4), (4, 5), (6, 6), (4, 0), (11, 8), (3, 8), (4, 3), (7, 1),
    (12, 5), (3, 3), (10, 3), (8, 1), (2, 9), (11, 7), (3, 2), (0, 9), (0, 3), (4, 1),
    (5, 1), (8, 8), (2, 4), (7, 8), (12, 7), (0, 2), (2, 8), (5, 3), (7, 0), (11, 1),
    (5, 8), (4, 4), (10, 4), (6, 0), (12, 4), (2, 5), (1, 3), (1, 5), (10, 9), (9, 2),
)


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
    l1_bank_cores: tuple = field(default=P150_L1_BANK_CORES, repr=False)

    def l1_bank_of_core(self, core: tuple) -> int:
        """The L1 bank (row of emulated memory) of a worker core; KeyError off the grid."""
        table = _BANK_OF_CORE.get(self.l1_bank_cores)
        if table is None:
            table = _BANK_OF_CORE[self.l1_bank_cores] = {c: i for i, c in enumerate(self.l1_bank_cores)}
        return table[tuple(core)]

    def dram_bank_of_core(self, core: tuple) -> int:
        """DRAM-sharded buffers name DRAM banks as cores (bank, 0)."""
        x, y = core
        if y != 0 or not 0 <= x < self.num_dram_banks:
            raise KeyError(core)
        return x

    @property
    def l1_bank_size(self) -> int:
        """Allocatable L1 bytes per bank (what get_device_info reports)."""
        return self.worker_l1_size - self.l1_unreserved_base

    @property
    def num_compute_cores(self) -> int:
        return self.compute_grid[0] * self.compute_grid[1]


_BANK_OF_CORE: dict = {}

P150 = DeviceConfig()

# Real ttnn's defaults for open_device (tt_metal/api/tt-metalium/device.hpp).
DEFAULT_L1_SMALL_SIZE = 0
DEFAULT_TRACE_REGION_SIZE = 0
DEFAULT_WORKER_L1_SIZE = 0
