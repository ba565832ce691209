"""A buffer allocated after capture on an 8x4 Galaxy mesh is overwritten by replay (TR004),
on every chip.

What it shows: the finding of alloc_after_capture.py on a mesh, where it names the chips. A
mesh allocates in lockstep: a tensor of an 8x4 mesh sits at one address on each of its 32
chips, so the captured intermediate freed at the end of the capture is free on every chip, the
tensor made after the capture lands on it on every chip, and each replay overwrites it on
every chip. `ttrecord check` says so: "On chips (0,0)-(7,3), devices 0-31, of mesh 0 (8×4)",
and its JSON evidence lists each chip's mesh coordinate and device id.
Fix: allocate everything before the capture, or release the trace first.
"""

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

MESH = (8, 4)


def step(x, w):
    hidden = ttnn.add(x, w)  # intermediate: freed when step returns
    return ttnn.multiply(hidden, 0.5)


def main():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*MESH), trace_region_size=800768)
    chips = MESH[0] * MESH[1]

    def put(value):  # one 32x32 tile per chip: chip i holds value + i
        per_chip = torch.cat([torch.full((32, 32), value + i) for i in range(chips)])
        return ttnn.from_torch(per_chip, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                               mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))

    def first_values(t):
        return ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))[::32, 0].tolist()

    x, w = put(3.0), put(5.0)
    out = step(x, w)  # prep run
    trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = step(x, w)
    ttnn.end_trace_capture(mesh, trace_id, cq_id=0)

    per_chip = torch.cat([torch.full((32, 32), 1.0 + i) for i in range(chips)])
    bias = ttnn.from_torch(per_chip, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,  # expect: TR004
                           mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
    eager = first_values(bias)
    ttnn.execute_trace(mesh, trace_id, cq_id=0, blocking=True)
    replayed = first_values(bias)

    print(f"bias buffer address (every chip): {bias.buffer_address()}")
    print(f"bias on chips 0-3 before the replay: {eager[:4]}, after: {replayed[:4]}")
    print(f"chips corrupted: {sum(a != b for a, b in zip(eager, replayed))} of {chips}")
    ttnn.release_trace(mesh, trace_id)
    ttnn.close_mesh_device(mesh)


if __name__ == "__main__":
    main()
