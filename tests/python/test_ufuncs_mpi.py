"""NumPy ufuncs, operators and item assignment on GlobalArrays in SPMD mode over MPI (ufunc_mpi_ranks.py
on 2 and 4 processes): each rank computes and writes its own sections, results as NumPy's, no gather.
Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_ufuncs_and_assignment_over_mpi(nranks):
    # Rule: every rank prints ok after every case's check against NumPy.
    every_rank_ok("ufunc_mpi_ranks.py", nranks, timeout=300)
