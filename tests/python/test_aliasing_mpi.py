"""Aliasing across processes over MPI: aliasing_mpi_ranks.py on 2 and 4 processes; one rank's
destination in the same bytes of a gdap shared-memory segment as another rank's source is refused
on every rank (it was a silent wrong answer), sections apart in one segment still work. Fails
instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pathlib

import pytest

from conftest import mpi_run


@pytest.mark.parametrize("nranks", [2, 4])
def test_a_destination_in_another_ranks_source_segment_is_refused(nranks):
    output = mpi_run(pathlib.Path(__file__).with_name("aliasing_mpi_ranks.py"), nranks, timeout=300)
    for r in range(nranks):
        assert "rank %d: ok" % r in output, output
