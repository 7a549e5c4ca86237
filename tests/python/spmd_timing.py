"""A helper of the MPI rank scripts (spmd_refusal_mpi_ranks.py, hunt15_mpi_ranks.py; not collected
by pytest): run one case on every rank from a common start, keeping its error and duration."""
import time


def timed_case(world, run):
    """(the exception run() raised or None, seconds it took), every rank starting after one barrier
    of the mpi4py communicator `world`, so that the durations compare."""
    world.Barrier()
    t0 = time.monotonic()
    try:
        run()
        error = None
    except Exception as e:  # noqa: BLE001 - every rank's error is checked by the caller
        error = e
    return error, time.monotonic() - t0
