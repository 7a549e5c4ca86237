"""gdap.Comm.from_mpi with a real mpi4py communicator: mpi_ranks.py on 2 MPI processes. Skipped
where mpi4py or an MPI launcher is missing; libgdap must be built with the MPI that mpi4py loads."""
from conftest import every_rank_ok


def test_block_to_cyclic_on_two_mpi_processes():
    every_rank_ok("mpi_ranks.py", 2, timeout=120)
