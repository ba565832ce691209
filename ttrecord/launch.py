"""Which rank of a multi-process launch (`tt-run`, `mpirun`, `mpiexec`, `srun`) this is.

A program launched on several hosts runs one `ttrecord run` per rank; each writes its own
session. To merge them later, every session keeps its rank, the world size, its host and one
run id that all ranks of a launch share. The launchers say all of it in the environment:
Open MPI (which `tt-run` drives) sets OMPI_COMM_WORLD_RANK/SIZE and a PMIx namespace or job id;
MPICH's hydra sets PMI_RANK/PMI_SIZE and MPI_LOCALRANKID, and its proxy's command line holds
the launch's control port; PMIx launchers set PMIX_RANK/PMIX_NAMESPACE; Slurm sets
SLURM_PROCID/SLURM_NTASKS/SLURM_JOB_ID. `tt-run` adds TT_MESH_ID and TT_MESH_HOST_RANK.
TTRECORD_RUN_ID, when set, is the run id (a CI job can name its run).
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RUN_ID_ENV = "TTRECORD_RUN_ID"

# (launcher, rank variable, size variable, local rank variable), in precedence order
_RANK_VARS = (
    ("openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
    ("pmix", "PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK"),
)
# variables whose value is the same on every rank of one launch and differs between launches
_JOB_VARS = ("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid",
             "SLURM_JOB_ID")  # fmt: skip
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Launch:
    """One rank's place in a multi-process launch, as stored in its session's options."""

    rank: int
    size: int | None  # None when the launcher does not say (PMIx alone)
    host: str
    run_id: str
    launcher: str  # "tt-run", "openmpi", "mpich", "slurm" or "pmix"
    local_rank: int | None = None
    mesh_id: int | None = None  # tt-run's TT_MESH_ID
    mesh_host_rank: int | None = None  # tt-run's TT_MESH_HOST_RANK

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> Launch | None:
        """The launch a session stored, or None (a single-process run, or unreadable data)."""
        if not isinstance(data, dict):
            return None
        rank, size = data.get("rank"), data.get("size")
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
            return None
        if size is not None and (not isinstance(size, int) or size < 1):
            return None
        return cls(rank=rank, size=size, host=str(data.get("host") or "?"),
                   run_id=str(data.get("run_id") or ""), launcher=str(data.get("launcher") or "?"),
                   local_rank=_int_or_none(data.get("local_rank")),
                   mesh_id=_int_or_none(data.get("mesh_id")),
                   mesh_host_rank=_int_or_none(data.get("mesh_host_rank")))  # fmt: skip

    @property
    def label(self) -> str:
        """How findings name the rank: `rank 1 (host-b)`."""
        return f"rank {self.rank} ({self.host})"

    @property
    def name_part(self) -> str:
        """What a session file name carries: `rank1of2-host-b`."""
        of = f"of{self.size}" if self.size is not None else ""
        return f"rank{self.rank}{of}-{_SAFE.sub('_', self.host)}"


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None and text.strip() else None
    except ValueError:
        return None


def from_environment(env: Mapping[str, str] | None = None, *, program: str = "",
                     output_folder: Path | None = None) -> Launch | None:  # fmt: skip
    """This process's rank in a launch, or None when it was not started by a launcher."""
    env = os.environ if env is None else env
    for launcher, rank_var, size_var, local_var in _RANK_VARS:
        rank = _int(env.get(rank_var))
        if rank is None or rank < 0:
            continue
        size = _int(env.get(size_var))
        if size is not None and (size < 1 or rank >= size):
            size = None
        mesh_id, mesh_host_rank = _int(env.get("TT_MESH_ID")), _int(env.get("TT_MESH_HOST_RANK"))
        if mesh_id is not None or "TT_RUN_ORIGINAL_CWD" in env:
            launcher = "tt-run"
        host = _SAFE.sub("_", socket.gethostname().split(".")[0]) or "?"
        run_id = _run_id(env, launcher, size, program, output_folder)
        return Launch(rank, size, host, run_id, launcher, _int(env.get(local_var)), mesh_id,
                      mesh_host_rank)  # fmt: skip
    return None


def _run_id(env: Mapping[str, str], launcher: str, size: int | None, program: str,
            output_folder: Path | None) -> str:  # fmt: skip
    """One id for every rank of this launch: the user's, the launcher's job id, MPICH hydra's
    control port (every proxy of one mpiexec gets the same one), or else what the ranks share:
    the output folder, the program and the world size."""
    given = env.get(RUN_ID_ENV, "").strip()
    if given:
        return given[:128]
    for name in _JOB_VARS:
        value = env.get(name, "").strip()
        if value:
            return _digest(f"{name}={value}")
    if "PMI_FD" in env or "PMI_PORT" in env:
        port = _hydra_control_port(os.getppid())
        if port:
            return _digest(f"hydra={port}")
    folder = str((output_folder or Path.cwd()).resolve())
    return _digest(f"{launcher}|{size}|{folder}|{program}")


def _hydra_control_port(pid: int) -> str | None:
    """`host:port` from a hydra_pmi_proxy parent's command line (Linux), else None."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    if not args or not args[0].endswith(b"hydra_pmi_proxy"):
        return None
    for flag, value in zip(args, args[1:]):
        if flag == b"--control-port":
            return value.decode("utf-8", "replace")
    return None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
