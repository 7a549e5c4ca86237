"""Review 13's SPMD findings over MPI (review13_mpi_ranks.py on 2 and 4 processes): pending partners
in a replicated layout, one context per communicator, no hang in the first wrap of a communicator,
devices= told, the communicator cache. Fails instead of skipping when the build has MPI
(GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_review13_spmd_findings(nranks):
    every_rank_ok("review13_mpi_ranks.py", nranks, timeout=300)
