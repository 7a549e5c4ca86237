"""Saves whose writing fails for real on one of 2 MPI processes (io_failure_mpi_ranks.py): every old
file stays byte for byte, nothing is left beside it, and every rank raises the failing rank's
reason. Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pathlib

from conftest import mpi_run


def test_a_write_failing_on_one_rank_keeps_every_old_file():
    output = mpi_run(pathlib.Path(__file__).with_name("io_failure_mpi_ranks.py"), 2, timeout=120)
    for r in range(2):
        assert "rank %d: ok" % r in output, output
