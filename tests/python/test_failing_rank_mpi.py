"""A rank whose own arguments are bad, over MPI: failing_rank_mpi_ranks.py on 2 and 4 processes;
every rank must report the failing rank's own status and text (Comm.fail_next). Fails instead of
skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_every_rank_reports_the_failing_ranks_own_error(nranks):
    every_rank_ok("failing_rank_mpi_ranks.py", nranks, timeout=300)
