"""gdap.Comm.from_mpi with a real mpi4py communicator: mpi_ranks.py on 2 MPI processes. Skipped
where mpi4py or an MPI launcher is missing; libgdap must be built with the MPI that mpi4py loads."""
import pathlib

from conftest import mpi_run


def test_block_to_cyclic_on_two_mpi_processes():
    output = mpi_run(pathlib.Path(__file__).with_name("mpi_ranks.py"), 2, timeout=120)
    assert "rank 0: ok" in output and "rank 1: ok" in output, output
