"""Allocator events through ttnn.graph, and the active-trace allocation warning."""

from __future__ import annotations

import warnings

import pytest

from ttrecord import emulator as ttnn
from ttrecord.emulator.errors import TRACE_ALLOCATION_UNSAFE


def test_graph_capture_records_allocate_and_deallocate_nodes(device, tile):
    x = tile(device, 1.0)
    ttnn.relu(ttnn.add(x, x))  # compiled first: a compile allocates kernel binaries
    ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
    out = ttnn.relu(ttnn.add(x, x))  # the add's output is allocated then freed
    nodes = ttnn.graph.end_graph_capture()
    kinds = [n["node_type"] for n in nodes]
    assert kinds == ["capture_start", "buffer_allocate", "buffer_allocate", "buffer_deallocate", "capture_end"]
    assert nodes[1]["params"]["address"] == nodes[3]["params"]["address"]
    assert nodes[2]["params"]["address"] == out.buffer_address()
    assert nodes[2]["params"]["max_size_per_bank"] == 2048 and nodes[2]["params"]["type"] == "DRAM"


def test_allocating_while_a_trace_exists_warns_at_the_user_line(device, tile):
    """GIVEN a captured, unreleased trace WHEN a buffer is allocated THEN ttnn's warning is issued at this file."""
    x = tile(device, 1.0)
    ttnn.relu(x)  # warm-up
    tid = ttnn.begin_trace_capture(device)
    ttnn.relu(x)
    ttnn.end_trace_capture(device, tid)
    with pytest.warns(ttnn.TraceAllocationWarning) as record:
        ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT, device=device)
    assert str(record[0].message) == TRACE_ALLOCATION_UNSAFE
    assert record[0].filename == __file__


def test_no_warning_during_capture_or_after_release(device, tile):
    x = tile(device, 1.0)
    ttnn.relu(x)  # warm-up
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tid = ttnn.begin_trace_capture(device)
        ttnn.relu(x)  # allocation inside the capture: not warned
        ttnn.end_trace_capture(device, tid)
        ttnn.release_trace(device, tid)
        tile(device, 2.0)  # no trace left: safe again
