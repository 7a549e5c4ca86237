"""Transposes and reshapes of GlobalArrays in SPMD mode over MPI (transpose_mpi_ranks.py on 2 and 4
processes): results as NumPy's, no gather, views write through and copies do not, a wrong argument
on one rank told to the others at once. Fails instead of skipping when the build has MPI
(GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_transposes_and_reshapes_over_mpi(nranks):
    # Rule: every rank prints ok after every case's check against NumPy and every refusal told at once.
    every_rank_ok("transpose_mpi_ranks.py", nranks, timeout=300)
