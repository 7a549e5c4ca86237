"""Distributed GEMM from Python: an in-process group of ranks run as threads, C = alpha A B + beta C
on a 2 x 2 grid of block-cyclic sections (and A on another grid, redistributed), every element of
C checked against NumPy's product; the stats; and the errors: shapes that do not chain, and a
wrong dtype on one rank (it raises its own error, the others RemoteError, and C does not change)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gdap
from conftest import block, cyclic

TIMEOUT = 30.0


def on_ranks(comms, body):
    for comm in comms:
        comm.set_timeout(TIMEOUT)
    with ThreadPoolExecutor(len(comms)) as pool:
        futures = [pool.submit(body, comm) for comm in comms]
        return [f.exception() or f.result() for f in futures]


def cyclic_map(shape, grid, bs):
    ranks = []
    for r in range(grid[0] * grid[1]):
        row, col = divmod(r, grid[1])
        ranks.append((cyclic(shape[0], grid[0], row, bs), cyclic(shape[1], grid[1], col, bs)))
    return gdap.GlobalMap(ranks)


def rows_map(shape, nranks):
    """Row blocks over nranks x 1."""
    step = -(-shape[0] // nranks)
    return gdap.GlobalMap([(block(shape[0], min(shape[0], r * step), min(shape[0], (r + 1) * step), grid=nranks, rank=r),
                            block(shape[1], 0, shape[1])) for r in range(nranks)])


def local_part(full, gmap, rank):
    """This rank's section of a global matrix, by each local index's global index."""
    dims = gmap.dim_data(rank)
    rows = [gdap.dim_local_to_global(dims[0], i) for i in range(gmap.local_shape(rank)[0])]
    cols = [gdap.dim_local_to_global(dims[1], j) for j in range(gmap.local_shape(rank)[1])]
    return np.ascontiguousarray(full[np.ix_(rows, cols)]), rows, cols


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("a_on_rows", [False, True])
def test_gemm_matches_numpy(dtype, a_on_rows):
    m, n, k = 11, 9, 13
    rng = np.random.default_rng(0)
    A = (rng.integers(-4, 5, (m, k)) / 4).astype(dtype)
    B = (rng.integers(-4, 5, (k, n)) / 4).astype(dtype)
    C0 = (rng.integers(-4, 5, (m, n)) / 2).astype(dtype)
    amap = rows_map((m, k), 4) if a_on_rows else cyclic_map((m, k), (2, 2), 2)
    bmap, cmap = cyclic_map((k, n), (2, 2), 2), cyclic_map((m, n), (2, 2), 2)
    comms = gdap.group(4)
    out = {}

    def body(comm):
        g = gdap.Gemm(comm, amap, bmap, cmap, dtype, panel_width=2)
        a, _, _ = local_part(A, amap, comm.rank)
        b, _, _ = local_part(B, bmap, comm.rank)
        c, rows, cols = local_part(C0, cmap, comm.rank)
        gdap.gemm(comm, g, a, b, c, alpha=0.5, beta=-1.0)
        out[comm.rank] = (c, rows, cols, g.stats)

    assert on_ranks(comms, body) == [None] * 4
    want = 0.5 * (A.astype(np.float64) @ B.astype(np.float64)) - C0
    for c, rows, cols, stats in out.values():
        np.testing.assert_allclose(c, want[np.ix_(rows, cols)], rtol=1e-6)
        assert stats["redistributed_a"] == (1 if a_on_rows else 0)
        assert stats["redistributed_b"] == 0 and stats["redistributed_c"] == 0
        assert (stats["grid_rows"], stats["grid_cols"]) == (2, 2)


def test_shape_mismatch_names_the_dimensions():
    comms = gdap.group(4)
    amap, bmap, cmap = cyclic_map((4, 4), (2, 2), 1), cyclic_map((5, 4), (2, 2), 1), cyclic_map((4, 4), (2, 2), 1)
    errors = on_ranks(comms, lambda comm: gdap.Gemm(comm, amap, bmap, cmap, np.float64))
    for e in errors:
        assert isinstance(e, gdap.InvalidArgumentError)
        assert "A's dimension 1 (K = 4) != B's dimension 0 (5)" in str(e)


def test_wrong_dtype_on_one_rank_fails_everywhere():
    comms = gdap.group(4)
    gmap = cyclic_map((6, 6), (2, 2), 1)
    cs = {}

    def body(comm):
        g = gdap.Gemm(comm, gmap, gmap, gmap, np.float64)
        shape = gmap.local_shape(comm.rank)
        a = np.ones(shape, np.float32 if comm.rank == 2 else np.float64)
        c = cs[comm.rank] = np.full(shape, 7.0)
        gdap.gemm(comm, g, a, np.ones(shape), c, beta=1.0)

    errors = on_ranks(comms, body)
    assert isinstance(errors[2], gdap.InvalidArgumentError)
    assert all(isinstance(errors[r], gdap.RemoteError) and "rank 2" in str(errors[r]) for r in (0, 1, 3))
    assert all((c == 7.0).all() for c in cs.values())


@pytest.mark.parametrize("bad", [
    pytest.param(dict(b=None), id="a map that is not a GlobalMap: TypeError"),
    pytest.param(dict(mode="fp8"), id="a mode gemm does not know: ValueError"),
])
def test_a_rank_whose_arguments_fail_tells_the_others_at_once(bad):
    """Rule: a rank whose Gemm arguments fail in Python still makes gdap_gemm_create (after
    fail_next), so its peers raise RemoteError quoting its error at once, not after the timeout."""
    import time
    comms = gdap.group(4)
    gmap = cyclic_map((6, 6), (2, 2), 1)

    def body(comm):
        args = dict(a=gmap, b=gmap, c=gmap, mode="exact")
        if comm.rank == 1:
            args.update(bad)
        return gdap.Gemm(comm, args["a"], args["b"], args["c"], np.float64, mode=args["mode"])

    start = time.monotonic()
    errors = on_ranks(comms, body)
    assert time.monotonic() - start < TIMEOUT / 3, "the peers waited for the timeout"
    want = TypeError if "b" in bad else ValueError
    assert isinstance(errors[1], want), errors[1]
    for r in (0, 2, 3):
        assert isinstance(errors[r], gdap.RemoteError), errors[r]
        assert "rank 1 failed" in str(errors[r]) and want.__name__ in str(errors[r]), str(errors[r])
    assert on_ranks(comms, lambda comm: comm.barrier()) == [None] * 4  # the group still works
