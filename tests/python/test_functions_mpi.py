"""NumPy functions (np.where, np.allclose, np.nansum, np.zeros_like, ...) on GlobalArrays in SPMD mode
over MPI (functions_mpi_ranks.py on 2 and 4 processes): computed distributed, results as NumPy's,
no gather; a refusal on one rank (np.allclose, GlobalArray.zeros) told to the others at once. Fails
instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_functions_over_mpi(nranks):
    # Rule: every rank prints ok after every case's check against NumPy and every refusal told at once.
    every_rank_ok("functions_mpi_ranks.py", nranks, timeout=300)
