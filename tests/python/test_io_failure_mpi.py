"""Saves whose writing fails for real on one of 2 MPI processes (io_failure_mpi_ranks.py): every old
file stays byte for byte, nothing is left beside it, and every rank raises the failing rank's
reason. Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
from conftest import every_rank_ok


def test_a_write_failing_on_one_rank_keeps_every_old_file():
    every_rank_ok("io_failure_mpi_ranks.py", 2, timeout=120)
