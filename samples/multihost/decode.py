"""A traced, tensor-parallel decode step run once per rank of a multi-host launch.

Run it under MPI, one process per host (each rank drives its own 1x2 mesh):
    mpiexec -n 2 ttrecord run --backend emulator -o runs/ samples/multihost/decode.py
    ttrecord check runs/

What it shows: every rank captures the same ops (a matmul on its weight shard, an all_gather
of the partial activations across the mesh, a softmax) and replays them in lockstep: zero
hazards on every rank and no cross-rank finding.

With --diverge, rank 1 takes another branch inside the capture: its users fit in one tile
row, so it skips the all_gather "it does not need" and runs the softmax on its partial
activations. Each rank alone is correct; together, rank 0's replay waits in an all_gather
that rank 1 never replays. `ttrecord check runs/` reports it before any replay hangs (TR019),
naming the first divergent op on each rank with its line.
"""

import os
import sys

import torch

try:
    import ttnn
except ImportError:  # no ttnn installed: use ttrecord's hardware-free emulator
    from ttrecord import emulator as ttnn

HIDDEN, CHIPS, STEPS = 64, 2, 3


def launch_rank():
    """This process's rank, as MPI launchers (Open MPI, tt-run, MPICH, Slurm) set it."""
    for name in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "PMIX_RANK"):
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def decode_step(x, w, gather):
    partial = ttnn.matmul(x, w)
    if gather:
        partial = ttnn.all_gather(partial, dim=-1)
    return ttnn.softmax(partial, dim=-1)


def main():
    rank, diverge = launch_rank(), "--diverge" in sys.argv[1:]
    gather = not (diverge and rank == 1)  # rank 1's data-dependent shortcut
    torch.manual_seed(0)  # every rank holds the same weights
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, CHIPS), trace_region_size=400000)
    replicate = ttnn.ReplicateTensorToMesh(mesh)
    w = ttnn.from_torch(torch.randn(HIDDEN, HIDDEN) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=-1))

    def x_host(step):
        return ttnn.from_torch(torch.full((32, HIDDEN), 0.01 * (step + 1)), dtype=ttnn.bfloat16,
                               layout=ttnn.TILE_LAYOUT, mesh_mapper=replicate)

    x_in = ttnn.to_device(x_host(0), mesh)
    out = decode_step(x_in, w, gather)  # prep run: compiles and allocates
    trace_id = ttnn.begin_trace_capture(mesh, cq_id=0)
    out = decode_step(x_in, w, gather)
    ttnn.end_trace_capture(mesh, trace_id, cq_id=0)
    sums = []
    for step in range(STEPS):
        ttnn.copy_host_to_device_tensor(x_host(step), x_in)
        ttnn.execute_trace(mesh, trace_id, cq_id=0, blocking=False)
        result = ttnn.to_torch(out, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
        sums.append(round(float(result.float().sum()), 2))
    ttnn.release_trace(mesh, trace_id)
    ttnn.close_mesh_device(mesh)
    print(f"rank {rank}: replayed {STEPS} steps, output sums {sums}")


if __name__ == "__main__":
    main()
