"""One rank's bad Zarr argument or unreadable store over MPI (zarr_fail_fast_mpi_ranks.py on 2
processes): every rank fails at once with that rank's reason, not after the timeout (Comm.fail_next
inside save_zarr / load_zarr). Fails instead of skipping when the build has MPI
(GDAP_TEST_REQUIRE_MPI, as test_mpi.py)."""
from conftest import every_rank_ok


def test_a_zarr_argument_bad_on_one_rank_fails_every_rank_at_once():
    # Rule: the script's cases each assert < 10 s against a 60 s timeout; the job itself gets 120 s.
    every_rank_ok("zarr_fail_fast_mpi_ranks.py", 2, timeout=120)
