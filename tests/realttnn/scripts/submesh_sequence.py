"""Submeshes of a 1x2 mesh (two mocked p150s: run with p150x2_cluster_desc.yaml): their ids,
chips and shapes, and where buffers land on the parent and on each submesh. One SEQ line of
JSON. RTTNN_DIRECT_EMULATOR=1 imports ttrecord.emulator as ttnn."""
import json
import os
import numpy as np
if os.environ.get("RTTNN_DIRECT_EMULATOR") == "1":
    import ttrecord.emulator as ttnn
else:
    import ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))


def mk(dev, mem=ttnn.DRAM_MEMORY_CONFIG):
    return ttnn.Tensor(np.zeros((64, 64), dtype=np.float32), ttnn.bfloat16, dev, ttnn.TILE_LAYOUT, mem)


out = {}
first = mk(mesh)
out["parent_first"] = first.buffer_address()
subs = mesh.create_submeshes(ttnn.MeshShape(1, 1))
out["submeshes"] = [[s.id() - mesh.id(), s.get_device_ids(), list(s.shape)] for s in subs]
a, b, c = mk(subs[0]), mk(subs[1]), mk(subs[0])
out["sub_dram"] = [a.buffer_address(), b.buffer_address(), c.buffer_address()]
l1 = [mk(subs[1], ttnn.L1_MEMORY_CONFIG), mk(mesh, ttnn.L1_MEMORY_CONFIG)]
out["l1_sub_then_parent"] = [t.buffer_address() for t in l1]
out["parent_second"] = mk(mesh).buffer_address()
out["get_submeshes"] = len(mesh.get_submeshes())
print("SEQ " + json.dumps(out))
ttnn.close_mesh_device(mesh)
