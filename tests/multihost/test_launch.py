"""Which rank a `ttrecord run` is, from the launcher's environment, and the file it writes."""

from pathlib import Path

import pytest

from ttrecord.cli.run import rank_output
from ttrecord.launch import RUN_ID_ENV, Launch, from_environment


def test_no_launcher_means_no_launch():
    assert from_environment({"HOME": "/root"}) is None


@pytest.mark.parametrize("env, launcher, rank, size, local", [
    ({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
      "PMIX_NAMESPACE": "prterun-a-1@1"}, "openmpi", 3, 4, 1),
    ({"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1"}, "mpich", 1, 2, 1),
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "8", "SLURM_LOCALID": "0", "SLURM_JOB_ID": "77"},
     "slurm", 0, 8, 0),
    ({"PMIX_RANK": "2", "PMIX_NAMESPACE": "ns"}, "pmix", 2, None, None),
])
def test_each_launcher_gives_rank_size_and_local_rank(env, launcher, rank, size, local):
    launch = from_environment(env)
    assert launch is not None
    assert (launch.launcher, launch.rank, launch.size, launch.local_rank) == (launcher, rank, size, local)
    assert launch.host and "/" not in launch.host


def test_tt_run_is_named_and_its_mesh_binding_kept():
    """tt-run drives Open MPI and adds TT_MESH_ID / TT_MESH_HOST_RANK per rank."""
    launch = from_environment({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2",
                               "TT_MESH_ID": "0", "TT_MESH_HOST_RANK": "1",
                               "TT_RUN_ORIGINAL_CWD": "/work"})
    assert launch is not None
    assert (launch.launcher, launch.mesh_id, launch.mesh_host_rank) == ("tt-run", 0, 1)


def test_ranks_of_one_job_share_the_run_id_and_another_job_differs():
    a = from_environment({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "PMIX_NAMESPACE": "job-1"})
    b = from_environment({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "PMIX_NAMESPACE": "job-1"})
    c = from_environment({"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "PMIX_NAMESPACE": "job-2"})
    assert a is not None and b is not None and c is not None
    assert a.run_id == b.run_id != c.run_id


def test_without_a_job_id_the_run_id_is_what_the_ranks_share(tmp_path):
    env = {"SLURM_PROCID": "0", "SLURM_NTASKS": "2"}
    a = from_environment(env, program="model.py", output_folder=tmp_path)
    b = from_environment({**env, "SLURM_PROCID": "1"}, program="model.py", output_folder=tmp_path)
    other = from_environment(env, program="model.py", output_folder=tmp_path / "x")
    assert a is not None and b is not None and other is not None
    assert a.run_id == b.run_id != other.run_id


def test_the_user_can_name_the_run():
    launch = from_environment({"PMI_RANK": "0", "PMI_SIZE": "2", RUN_ID_ENV: "ci-1234"})
    assert launch is not None and launch.run_id == "ci-1234"


@pytest.mark.parametrize("env", [
    {"PMI_RANK": "x", "PMI_SIZE": "2"},
    {"PMI_RANK": "-1", "PMI_SIZE": "2"},
])
def test_garbage_rank_is_no_launch(env):
    assert from_environment(env) is None


def test_a_size_smaller_than_the_rank_is_dropped():
    launch = from_environment({"PMI_RANK": "3", "PMI_SIZE": "2"})
    assert launch is not None and launch.size is None


def test_stored_launch_reads_back_and_garbage_reads_as_none():
    launch = Launch(1, 2, "host-b", "r1", "mpich", 1)
    assert Launch.from_json(launch.to_json()) == launch
    assert launch.label == "rank 1 (host-b)"
    for bad in (None, [], {"rank": "1"}, {"rank": True}, {"rank": 1, "size": 0}, {"rank": -2}):
        assert Launch.from_json(bad) is None


def test_each_rank_writes_its_own_file(tmp_path):
    """-o FILE gets the rank, size and host in its name; -o FOLDER/ holds one default-named file
    per rank; no -o gives the default name with the rank; a single process keeps -o as given."""
    launch = Launch(1, 2, "host-b", "r1", "mpich")
    assert rank_output("run.db", "model.py", launch) == Path("run-rank1of2-host-b.db")
    assert rank_output(str(tmp_path), "model.py", launch).parent == tmp_path
    named = rank_output(str(tmp_path), "model.py", launch).name
    assert named.startswith("ttrecord-model-") and named.endswith("-rank1of2-host-b.db")
    assert rank_output(None, "model.py", launch).name.endswith("-rank1of2-host-b.db")
    assert rank_output("run.db", "model.py", None) == Path("run.db")
    assert rank_output("run.db", "model.py", Launch(0, 1, "h", "r", "mpich")) == Path("run.db")
