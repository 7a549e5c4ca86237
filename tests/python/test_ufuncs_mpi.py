"""NumPy ufuncs, operators and item assignment on GlobalArrays in SPMD mode over MPI (ufunc_mpi_ranks.py
on 2 and 4 processes): each rank computes and writes its own sections, results as NumPy's, no gather.
Fails instead of skipping when the build has MPI (GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pathlib

import pytest

from conftest import mpi_run


@pytest.mark.parametrize("nranks", [2, 4])
def test_ufuncs_and_assignment_over_mpi(nranks):
    # Rule: every rank prints ok after every case's check against NumPy.
    output = mpi_run(pathlib.Path(__file__).with_name("ufunc_mpi_ranks.py"), nranks, timeout=300)
    for r in range(nranks):
        assert "rank %d: ok" % r in output, output
