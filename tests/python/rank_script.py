"""What the *_mpi_ranks.py scripts (one MPI rank's part of a test, run under mpiexec) share."""
import gdap


def rank_helpers(comm):
    """(case, dist) for one rank's script over `comm`: case(rule) prints the rule about to be
    checked, prefixed by the rank (a failing script's output then says where it stopped);
    dist(x, layout) distributes rank 0's x (the others' x gives only the dtype) over the ranks."""
    def case(rule):
        print("rank %d: %s" % (comm.rank, rule), flush=True)

    def dist(x, lay):
        return gdap.distribute(x if comm.rank == 0 else None, lay, comm=comm, dtype=x.dtype)

    return case, dist
