"""For the MPI rank scripts (functions_mpi_ranks.py, ufunc_mpi_ranks.py, transpose_mpi_ranks.py):
NoGather makes every gathering method of GlobalArray raise while it is entered, so that a call that
should stay distributed fails loudly if it gathers; told_at_once checks a refusal on one rank."""
import time

import gdap

GATHERS = ("get", "__array__", "gather", "allgather", "reshard", "_moved_to")


def _refuse(*args, **kwargs):
    raise AssertionError("a silent gather")


class NoGather:
    """Every gathering method raises meanwhile."""
    def __enter__(self):
        self.saved = {n: getattr(gdap.GlobalArray, n) for n in GATHERS}
        for n in GATHERS:
            setattr(gdap.GlobalArray, n, _refuse)

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            setattr(gdap.GlobalArray, n, f)



class NoWholeGather(NoGather):
    """As NoGather, but redistributions (reshard) are allowed: a reshape may move rows between ranks,
    a scan moves a cyclic axis to blocks."""
    def __enter__(self):
        super().__enter__()
        gdap.GlobalArray.reshard = self.saved["reshard"]


def told_at_once(rule, run, world, failing):
    """run() on every rank of the mpi4py communicator `world`: rank `failing` raises its own error,
    every other rank RemoteError naming it, all within seconds (not after the timeout)."""
    rank = world.Get_rank()
    print("rank %d: %s" % (rank, rule), flush=True)
    t0 = time.monotonic()
    try:
        run()
        raise AssertionError("%s: no error on rank %d" % (rule, rank))
    except gdap.RemoteError as e:
        assert rank != failing and ("rank %d failed" % failing) in str(e), (rule, rank, e)
    except Exception as e:  # the failing rank's own error, whatever its class
        assert rank == failing, (rule, rank, type(e), e)
    assert time.monotonic() - t0 < 30, "%s: every rank failed at once" % rule
    world.Barrier()


def calls_differ_everywhere(calls, rank, failing):
    """Each (what, call) of `calls` run on every rank, rank `failing` passing other valid arguments: every
    rank raises InvalidArgumentError naming every rank's call (not a wrong result, not RemoteError)."""
    for what, call in calls:
        try:
            call()
            raise AssertionError("rank %d: no error for a different %s" % (rank, what))
        except gdap.InvalidArgumentError as e:
            assert "calls on one GlobalArray differ" in str(e) and "rank %d" % failing in str(e), (rank, what, e)
