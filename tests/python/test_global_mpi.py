"""gdap.GlobalArray in SPMD mode: global_mpi_ranks.py on 4 MPI processes (mpi4py communicators),
every method called collectively, and the bad-input cases where one rank errs or never arrives.
Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
from conftest import every_rank_ok


def test_global_array_spmd_on_four_mpi_processes():
    every_rank_ok("global_mpi_ranks.py", 4, timeout=400)
