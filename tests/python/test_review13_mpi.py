"""Review 13's SPMD findings over MPI (review13_mpi_ranks.py on 2 and 4 processes): pending partners
in a replicated layout, one context per communicator, no hang in the first wrap of a communicator,
devices= told, the communicator cache. Fails instead of skipping when the build has MPI
(GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pathlib

import pytest

from conftest import mpi_run


@pytest.mark.parametrize("nranks", [2, 4])
def test_review13_spmd_findings(nranks):
    output = mpi_run(pathlib.Path(__file__).with_name("review13_mpi_ranks.py"), nranks, timeout=300)
    for r in range(nranks):
        assert "rank %d: ok" % r in output, output
