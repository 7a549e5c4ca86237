"""A Python-side check that raises on one rank before a collective call, over MPI, for every
collective entry point (spmd_refusal_mpi_ranks.py on 2 and 4 processes): the failing rank raises its
own error and every other rank RemoteError quoting it at once (telling_peers), not after the
communicator's timeout. Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as
test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_a_refusal_on_one_rank_reaches_its_peers_at_once(nranks):
    # Rule: each case asserts it failed within half the communicator's 30 s timeout; the job gets 300 s.
    every_rank_ok("spmd_refusal_mpi_ranks.py", nranks, timeout=300)
