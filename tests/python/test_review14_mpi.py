"""Review 14's SPMD findings over MPI (review14_mpi_ranks.py on 2 and 4 processes): periodic layouts'
boundary cells in element-wise calls and statistics; an element-wise call or assignment refused on
some ranks only raises on every rank and writes nothing. Fails instead of skipping when the build
has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_review14_spmd_findings(nranks):
    every_rank_ok("review14_mpi_ranks.py", nranks, timeout=300)
