"""SPMD mode of test_reductions_more.py: var, std, argmin, argmax, any, all and the float16 / bool /
complex reductions over 2 and 4 MPI processes (reductions_more_mpi_ranks.py), every layout kind,
against NumPy. A refusal of one of these methods on one rank reaching the others at once:
spmd_refusal_mpi_ranks.py. Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI)."""
import pytest

from conftest import every_rank_ok


@pytest.mark.parametrize("nranks", [2, 4])
def test_new_reductions_over_mpi_processes(nranks):
    every_rank_ok("reductions_more_mpi_ranks.py", nranks, timeout=300)
