"""Hunt 15's SPMD agreement defects over MPI (hunt15_mpi_ranks.py on 2 and 4 processes): a plan only
one rank cannot build fails on every rank at once (RemoteError naming it), and ranks whose parts of
one new array differ in dtype, shape or layout (from_sections, load_dnpy, zeros) are refused on every
rank, naming them. Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_hunt15_spmd_agreements(nranks):
    every_rank_ok("hunt15_mpi_ranks.py", nranks, timeout=300)
