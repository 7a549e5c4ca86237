"""Saves and loads whose ranks pass another dtype, map, path or prefix over MPI
(disagree_io_mpi_ranks.py on 2 processes): every rank raises InvalidArgumentError at once naming
rank 1 and the argument, nothing written. Fails instead of skipping when the build has MPI
(GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
from conftest import every_rank_ok


def test_disagreeing_saves_and_loads_are_refused_on_every_rank():
    every_rank_ok("disagree_io_mpi_ranks.py", 2, timeout=120)
