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


def eight_layouts(shape, nranks):
    """The layouts the SPMD scripts check a 2-d array of `shape` in, over `nranks` (2 or 4) ranks: row
    and column blocks, cyclic rows, a 2-d grid of blocks, block-cyclic and padded, unstructured rows
    (rank r every nranks-th row from r), replicated."""
    from gdap import layout
    rows = shape[0]
    return [layout.block(shape, nranks), layout.block(shape, (1, nranks)), layout.cyclic(shape, (nranks, 1)),
            layout.block(shape, (nranks // 2, 2)), layout.block_cyclic(shape, (nranks // 2, 2), 2),
            layout.padded(shape, (nranks // 2, 2), 1),
            layout.unstructured(shape, [list(range(r, rows, nranks)) for r in range(nranks)]),
            layout.replicated(shape, nranks)]


def boundary_padded(shape, grid):
    """gdap.layout.block(shape, grid) of a 2-d shape with rank 0's axis 1 given boundary padding
    (1, 0) (its first cell is the axis's global start), which the other ranks of its grid column do
    not give: the map allows it (along one grid coordinate only boundary padding may differ)."""
    from gdap import layout
    lay = layout.block(shape, grid)
    ranks = [lay.dim_data(r) for r in range(lay.nranks)]
    ranks[0] = (ranks[0][0], dict(ranks[0][1], padding=(1, 0)))
    return gdap.GlobalMap(ranks)


def same_values(got, want, rank):
    """Asserts that GlobalArray `got`, gathered (collective), is NumPy's `want`: shape, dtype and values."""
    import numpy as np
    host = got.get()
    assert host.shape == want.shape and host.dtype == want.dtype, (rank, host.shape, host.dtype, want.dtype)
    np.testing.assert_array_equal(host, want)
