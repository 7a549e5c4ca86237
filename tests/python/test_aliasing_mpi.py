"""Aliasing across processes over MPI: aliasing_mpi_ranks.py on 2 and 4 processes; one rank's
destination in the same bytes of a gdap shared-memory segment as another rank's source is refused
on every rank (it was a silent wrong answer), sections apart in one segment still work. Fails
instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_a_destination_in_another_ranks_source_segment_is_refused(nranks):
    every_rank_ok("aliasing_mpi_ranks.py", nranks, timeout=300)
