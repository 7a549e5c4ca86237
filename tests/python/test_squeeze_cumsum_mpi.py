"""squeeze / expand_dims, cumsum / cumprod and a[mask] = 1-d values in SPMD mode over MPI
(squeeze_cumsum_mpi_ranks.py on 2 and 4 processes): results as NumPy's, no gather, the ranks' totals
and C-order offsets shared across processes, a wrong argument on one rank told to the others at once.
Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_squeeze_cumsum_and_mask_values_over_mpi(nranks):
    # Rule: every rank prints ok after every case's check against NumPy and every refusal told at once.
    every_rank_ok("squeeze_cumsum_mpi_ranks.py", nranks, timeout=300)
