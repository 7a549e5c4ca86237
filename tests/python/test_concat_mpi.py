"""np.concatenate, np.stack, np.vstack and np.hstack of GlobalArrays in SPMD mode over MPI
(concat_mpi_ranks.py on 2 and 4 processes): results as NumPy's over eight layouts, no gather;
a wrong argument on one rank told to the others at once, different calls on the ranks refused on every rank.
Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_concatenate_and_stack_over_mpi(nranks):
    # Rule: every rank prints ok after every case's check against NumPy and every refusal told at once.
    every_rank_ok("concat_mpi_ranks.py", nranks, timeout=300)
