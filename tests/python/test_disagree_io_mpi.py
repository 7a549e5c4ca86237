"""Saves and loads whose ranks pass another dtype, map, path or prefix over MPI
(disagree_io_mpi_ranks.py on 2 processes): every rank raises InvalidArgumentError at once naming
rank 1 and the argument, nothing written. Fails instead of skipping when the build has MPI
(GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
import pathlib

from conftest import mpi_run


def test_disagreeing_saves_and_loads_are_refused_on_every_rank():
    output = mpi_run(pathlib.Path(__file__).with_name("disagree_io_mpi_ranks.py"), 2, timeout=120)
    for r in range(2):
        assert "rank %d: ok" % r in output, output
