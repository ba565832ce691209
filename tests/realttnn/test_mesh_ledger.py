"""The ledger on a real 1x2 mesh (two mocked p150s joined by ethernet): a tensor's device id is
the id `get_buffers` reports its buffers under, for the mesh and for each submesh, and the
recorder asks `get_buffers` of every mesh a tensor lives on.

Measured on ttnn 0.81.1: a submesh (`create_submeshes`) has its own id and allocator, and
`get_buffers([mesh])` does not list its buffers. A recorder that asked only the opened mesh saw
every submesh buffer freed at the next snapshot (and a trace's buffer on the submesh never).
The session also stores the mesh's shape and chips, and a sharded tensor's shard grid.
"""

from __future__ import annotations

import json
import sys

import pytest

from realttnn_helpers import HERE, describe, marks, rows, run_script, seq_output, ttrecord_run

ENV = {"TT_METAL_MOCK_CLUSTER_DESC_PATH": str(HERE / "p150x2_cluster_desc.yaml")}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("mesh_ledger")
    proc, db = ttrecord_run(sys.executable, "mesh_ledger.py", cwd, env=ENV)
    assert proc.returncode == 0, describe(proc)
    return seq_output(proc), db


def test_tensor_device_ids_are_get_buffers_device_ids(tmp_path, lane_python):
    proc = run_script(lane_python, "mesh_ledger.py", tmp_path, env=ENV)
    assert proc.returncode == 0, describe(proc)
    seq = seq_output(proc)
    mesh_id, shape, chips = seq["mesh"]
    assert (shape, chips) == ([1, 2], [0, 1])
    assert seq["parent_get_buffers"] == [seq["parent_tensor_device"]] == [mesh_id]
    sub_id, sub_shape, sub_chips = seq["sub"]
    assert (sub_shape, sub_chips) == ([1, 1], [1]) and sub_id != mesh_id
    assert seq["sub_get_buffers"] == [seq["sub_tensor_device"]] == [sub_id]
    assert seq["parent_get_buffers_after_sub"] == [mesh_id]  # the submesh's buffers are not there


def test_a_submesh_buffer_lives_until_its_free_and_its_trace_buffer_is_seen(recorded):
    seq, db = recorded
    sub_id = seq["sub"][0]
    (free_line,) = [marks("mesh_ledger.py")["free_sub"]]
    sub_dram = rows(db, "SELECT b.free_seq, c.line FROM buffers b JOIN events f ON f.seq = b.free_seq"
                        " JOIN events p ON p.seq = f.parent JOIN callsites c ON c.id = p.callsite"
                        " WHERE b.device = ? AND b.buffer_type = 'DRAM'", (sub_id,))
    assert [r["line"] for r in sub_dram] == [free_line]  # one buffer, freed by its deallocate
    trace = rows(db, "SELECT * FROM buffers WHERE device = ? AND buffer_type = 'TRACE'", (sub_id,))
    assert len(trace) == 1 and trace[0]["free_seq"] is not None


def test_the_session_stores_the_mesh_and_the_shard_grid(recorded):
    seq, db = recorded
    (device,) = rows(db, "SELECT id, info FROM devices")
    assert device["id"] == seq["mesh"][0]
    assert json.loads(device["info"])["mesh"] == {"shape": [1, 2], "device_ids": [0, 1]}
    configs = {r["memory_config"] for r in rows(db, "SELECT memory_config FROM tensors WHERE buffer_type = 'L1'")}
    assert configs == {"L1 height_sharded on (0,0)-(3,0)"}
