"""Communicators, collective maps, plans and redistribution from Python: an in-process group of
ranks run as threads (each makes the collective calls with its own gdap.Comm), block -> cyclic
moves checked element by element against the global index each element should hold, plan
counts, and the errors: a bad rank raises its own error and the others RemoteError naming it."""
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gdap
from gdap import _gdap_c
from conftest import block, cyclic, unstructured

SHAPE = (9, 7)  # uneven on purpose: blocks and cycles of different lengths
TIMEOUT = 30.0  # seconds a rank waits for the others: a bug fails the test instead of hanging it


def on_ranks(comms, body):
    """Runs body(comm) for every rank on a thread of its own; a list of what each returned or raised."""
    for comm in comms:
        comm.set_timeout(TIMEOUT)
    with ThreadPoolExecutor(len(comms)) as pool:
        futures = [pool.submit(body, comm) for comm in comms]
        return [f.exception() or f.result() for f in futures]


def raise_first(results):
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


def blocks_2x2(rank):
    """Rank `rank`'s dim_data of SHAPE in blocks on a 2 x 2 grid."""
    row, col = divmod(rank, 2)
    r0, r1 = (0, 5) if row == 0 else (5, 9)
    c0, c1 = (0, 4) if col == 0 else (4, 7)
    return (block(9, r0, r1, grid=2, rank=row), block(7, c0, c1, grid=2, rank=col))


def cyclic_rows(rank, nranks, block_size=2):
    """Rank `rank`'s dim_data of SHAPE: rows block-cyclic over nranks, columns whole."""
    return (cyclic(9, nranks, rank, block_size), block(7, 0, 7))


def global_values(gmap, rank, dtype=np.float64):
    """Rank `rank`'s section of gmap holding 100 * i + j at global (i, j) (-1 where it owns nothing)."""
    out = np.full(gmap.local_shape(rank), -1, dtype=dtype)
    for local in np.ndindex(*out.shape):
        try:
            i, j = gmap.local_to_global(rank, local)
        except gdap.Error:
            continue  # padding
        out[local] = 100 * i + j
    return out


def wrong_elements(gmap, rank, section):
    """Local indices of `section` whose value is not 100 * i + j of the global index they hold."""
    expected = global_values(gmap, rank, section.dtype)
    return [local for local in np.ndindex(*section.shape) if section[local] != expected[local]]


# ---- communicators ----------------------------------------------------------------------------

def test_group_ranks_sizes_and_kind():
    comms = gdap.group(4)
    assert [(c.rank, c.size, c.kind) for c in comms] == [(r, 4, "group") for r in range(4)]
    assert repr(comms[2]) == "<gdap.Comm group rank 2 of 4>"
    assert on_ranks(comms, lambda c: c.barrier()) == [None] * 4
    for c in comms:
        c.close()
    assert comms[0].closed and repr(comms[0]) == "<gdap.Comm (closed)>"


def test_group_of_zero_ranks_is_refused():
    with pytest.raises(gdap.InvalidArgumentError, match="nranks 0"):
        gdap.group(0)


def test_a_missing_rank_times_out_and_the_group_stays_failed():
    a, b = gdap.group(2)
    a.set_timeout(0.2)
    with pytest.raises(gdap.CollectiveTimeoutError):
        a.barrier()  # rank 1 never comes
    b.set_timeout(0.2)
    with pytest.raises(gdap.Error):
        b.barrier()  # fails at once: the group is broken


def test_timeout_must_be_positive():
    (c,) = gdap.group(1)
    with pytest.raises(gdap.InvalidArgumentError, match="not > 0"):
        c.set_timeout(0)


def test_from_mpi_uses_py2f_and_needs_mpi():
    class FakeMpi4pyComm:  # what Comm.from_mpi reads of an mpi4py communicator
        asked = False

        def py2f(self):
            FakeMpi4pyComm.asked = True
            return 0

    # Without MPI initialised (or without MPI in libgdap) gdap says so rather than crashing.
    with pytest.raises((gdap.CommError, gdap.UnsupportedError)):
        gdap.Comm.from_mpi(FakeMpi4pyComm())
    assert FakeMpi4pyComm.asked
    with pytest.raises((gdap.CommError, gdap.UnsupportedError)):
        gdap.Comm.from_mpi(0)  # a Fortran handle as an int


def test_importing_gdap_does_not_import_mpi4py():
    code = "import sys, gdap; assert 'mpi4py' not in sys.modules, 'gdap imported mpi4py'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_from_nccl_needs_a_communicator():
    with pytest.raises((gdap.UnsupportedError, gdap.InvalidArgumentError)):
        gdap.Comm.from_nccl(0)
    with pytest.raises(TypeError, match="nccl_comm must be an address"):
        gdap.Comm.from_nccl("not an address")


# ---- collective maps --------------------------------------------------------------------------

def test_collective_map_equals_the_map_of_every_rank():
    comms = gdap.group(4)
    maps = raise_first(on_ranks(comms, lambda c: gdap.GlobalMap.collective(c, blocks_2x2(c.rank))))
    whole = gdap.GlobalMap([blocks_2x2(r) for r in range(4)])
    for m in maps:
        assert (m.shape, m.grid_shape, m.nranks) == (whole.shape, whole.grid_shape, 4)
        assert [m.dim_data(r) for r in range(4)] == [whole.dim_data(r) for r in range(4)]


def test_collective_map_error_is_the_same_on_every_rank():
    def body(comm):
        dims = list(blocks_2x2(comm.rank))
        if comm.rank == 3:
            dims[1] = block(7, 3, 7, grid=2, rank=1)  # overlaps grid column 0, which ends at 4
        return gdap.GlobalMap.collective(comm, dims)

    results = on_ranks(gdap.group(4), body)
    assert all(isinstance(r, gdap.ProtocolError) for r in results), results
    assert len({str(r) for r in results}) == 1 and "rank 3" in str(results[0])


def test_collective_map_rank_with_unreadable_dim_data_names_itself():
    def body(comm):
        dims = list(blocks_2x2(comm.rank))
        if comm.rank == 1:
            dims[0] = dict(dims[0], colour="blue")
        return gdap.GlobalMap.collective(comm, dims)

    results = on_ranks(gdap.group(4), body)
    assert isinstance(results[1], gdap.ProtocolError) and "colour" in str(results[1])
    for r in (0, 2, 3):  # told at once, not after the timeout
        assert isinstance(results[r], gdap.RemoteError) and "rank 1" in str(results[r])


def test_raw_collective_map_checks_the_dictionary_count():
    (c,) = gdap.group(1)
    dims = gdap._dims.dims_from_dim_data([block(4, 0, 4)])
    with pytest.raises(gdap.InvalidArgumentError, match="dims holds 1 dictionaries but ndim is 2"):
        _gdap_c.gdap_map_create_collective(c._h(), 2, dims.dims)


# ---- plans ------------------------------------------------------------------------------------

def test_plan_stats_add_up_over_ranks():
    src = gdap.GlobalMap([blocks_2x2(r) for r in range(4)])
    dst = gdap.GlobalMap([cyclic_rows(r, 4) for r in range(4)])
    plans = [gdap.Plan(src, dst, np.float32, r) for r in range(4)]
    stats = [p.stats for p in plans]
    assert [s["rank"] for s in stats] == [0, 1, 2, 3] and {s["nranks"] for s in stats} == {4}
    total = lambda key: sum(s[key] for s in stats)
    assert total("send_bytes") == total("recv_bytes")
    assert total("send_messages") == total("recv_messages") > 0
    assert total("send_bytes") + total("local_bytes") == 9 * 7 * 4  # every element moves once
    assert plans[1].dtype == np.float32 and plans[1].rank == 1 and plans[1].nranks == 4
    assert plans[1].src_shape == (5, 3) and plans[1].dst_shape == (2, 7)


def test_plan_of_one_rank_is_a_local_copy():
    m = gdap.GlobalMap([[block(10, 0, 10)]])
    s = gdap.Plan(m, m, np.int16, 0).stats
    assert (s["send_messages"], s["recv_messages"], s["local_bytes"], s["local_runs"]) == (0, 0, 20, 1)


def test_plan_refuses_different_global_shapes():
    a = gdap.GlobalMap([[block(10, 0, 10)]])
    b = gdap.GlobalMap([[block(12, 0, 12)]])
    with pytest.raises(gdap.InvalidArgumentError):
        gdap.Plan(a, b, np.float64, 0)


def test_plan_refuses_a_rank_outside_the_group():
    m = gdap.GlobalMap([[block(10, 0, 10)]])
    with pytest.raises(gdap.OutOfRangeError):
        gdap.Plan(m, m, np.float64, 1)


def test_plan_takes_global_maps_only():
    m = gdap.GlobalMap([[block(10, 0, 10)]])
    with pytest.raises(TypeError, match="src must be a GlobalMap"):
        gdap.Plan([[block(10, 0, 10)]], m, np.float64, 0)


# ---- redistribution ---------------------------------------------------------------------------

def block_to_cyclic(comm):
    """One rank's whole job: both maps collectively, its plan, then the move of NumPy arrays."""
    src_map = gdap.GlobalMap.collective(comm, blocks_2x2(comm.rank))
    dst_map = gdap.GlobalMap.collective(comm, cyclic_rows(comm.rank, comm.size))
    plan = gdap.Plan(src_map, dst_map, np.float64, comm)
    src = global_values(src_map, comm.rank)
    dst = np.full(plan.dst_shape, -1.0)
    assert gdap.redistribute(comm, plan, src, dst) is dst
    return dst_map, dst


def test_block_to_cyclic_every_element_arrives():
    results = raise_first(on_ranks(gdap.group(4), block_to_cyclic))
    for rank, (dst_map, dst) in enumerate(results):
        assert wrong_elements(dst_map, rank, dst) == [], "rank %d" % rank
    assert sum(dst.size for _, dst in results) == 9 * 7


def test_plan_is_reusable_and_takes_local_arrays():
    def body(comm):
        src_map = gdap.GlobalMap.collective(comm, blocks_2x2(comm.rank))
        dst_map = gdap.GlobalMap.collective(comm, cyclic_rows(comm.rank, 4, block_size=1))
        plan = gdap.Plan(src_map, dst_map, np.int64, comm.rank)
        src = gdap.from_dlpack(global_values(src_map, comm.rank, np.int64), blocks_2x2(comm.rank))
        dst = gdap.empty(dst_map.dim_data(comm.rank), np.int64)
        for _ in range(3):
            gdap.redistribute(comm, plan, src, dst)
        return wrong_elements(dst_map, comm.rank, np.asarray(dst))

    assert raise_first(on_ranks(gdap.group(4), body)) == [[]] * 4


def test_different_rank_counts_ranks_outside_a_map_pass_none():
    # The source lives on ranks 0 and 1 only, the destination on all 4: ranks 2 and 3 only receive.
    src_map = gdap.GlobalMap([(block(9, 0, 4, grid=2, rank=0), block(7, 0, 7)),
                              (block(9, 4, 9, grid=2, rank=1), block(7, 0, 7))])
    dst_map = gdap.GlobalMap([cyclic_rows(r, 4, block_size=3) for r in range(4)])

    def body(comm):
        plan = gdap.Plan(src_map, dst_map, np.float64, comm)
        src = global_values(src_map, comm.rank) if comm.rank < 2 else None
        assert (plan.src_shape is None) == (comm.rank >= 2)
        dst = gdap.redistribute(comm, plan, src, np.zeros(plan.dst_shape))
        return wrong_elements(dst_map, comm.rank, dst)

    assert raise_first(on_ranks(gdap.group(4), body)) == [[]] * 4


# ---- destination roles (COSTA's relabeling): rank r holds destination rank roles[r]'s section

DEALT = ((4, 5, 6), (0, 1, 2), (7, 8), (3,))  # rows of SHAPE dealt to 4 ranks out of order


def dealt_rows(rank):
    """Rank `rank`'s dim_data of SHAPE: the rows DEALT[rank] (unstructured), columns whole."""
    return (unstructured(9, DEALT[rank], grid=4, rank=rank), block(7, 0, 7))


def row_blocks(rank):
    """Rank `rank`'s dim_data of SHAPE: rows 0-2, 3, 4-6, 7-8 (irregular blocks), columns whole."""
    bounds = ((0, 3), (3, 4), (4, 7), (7, 9))[rank]
    return (block(9, *bounds, grid=4, rank=rank), block(7, 0, 7))


def test_keeping_roles_make_a_rank_permuted_move_local():
    # Rule: an identity or rank-permuted redistribution moves nothing between ranks with the
    # keeping roles; each rank's destination section is its role's, every element checked.
    src_map = gdap.GlobalMap([dealt_rows(r) for r in range(4)])
    dst_map = gdap.GlobalMap([row_blocks(r) for r in range(4)])
    roles = gdap.keeping_roles(src_map, dst_map)
    assert roles == (2, 0, 3, 1)
    assert gdap.keeping_roles(dst_map, dst_map) == (0, 1, 2, 3)

    def body(comm):
        plain = gdap.Plan(src_map, dst_map, np.float64, comm)
        plan = gdap.Plan(src_map, dst_map, np.float64, comm, roles=roles)
        assert plan.role == roles[comm.rank] and plan.dst_shape == dst_map.local_shape(plan.role)
        dst = gdap.redistribute(comm, plan, global_values(src_map, comm.rank), np.zeros(plan.dst_shape))
        return plain.stats["send_bytes"], plan.stats, wrong_elements(dst_map, plan.role, dst)

    results = raise_first(on_ranks(gdap.group(4), body))
    assert sum(sent for sent, _, _ in results) == 9 * 7 * 8  # without roles every row crosses ranks
    assert [stats["send_bytes"] for _, stats, _ in results] == [0] * 4
    assert sum(stats["local_bytes"] for _, stats, _ in results) == 9 * 7 * 8
    assert [wrong for _, _, wrong in results] == [[]] * 4


def test_roles_that_are_no_permutation_are_refused_naming_the_entry():
    gmap = gdap.GlobalMap([row_blocks(r) for r in range(4)])
    with pytest.raises(gdap.InvalidArgumentError, match=r"roles\[2\] = 1 repeats roles\[1\]"):
        gdap.Plan(gmap, gmap, np.float64, 0, roles=(0, 1, 1, 3))
    with pytest.raises(gdap.InvalidArgumentError, match="nroles is 3 but the plan has 4 ranks"):
        gdap.Plan(gmap, gmap, np.float64, 0, roles=(0, 1, 2))
    with pytest.raises(gdap.InvalidArgumentError, match=r"roles\[1\] must be an integer, not str"):
        gdap.Plan(gmap, gmap, np.float64, 0, roles=(0, "one", 2, 3))


def test_ranks_with_different_roles_stop_every_rank():
    # Rule: every rank's plan of one move has the same roles; otherwise no rank moves anything.
    gmap = gdap.GlobalMap([row_blocks(r) for r in range(4)])

    def body(comm):
        roles = (1, 0, 2, 3) if comm.rank == 3 else (0, 1, 2, 3)
        plan = gdap.Plan(gmap, gmap, np.float64, comm, roles=roles)
        gdap.redistribute(comm, plan, global_values(gmap, comm.rank), np.zeros(plan.dst_shape))

    results = on_ranks(gdap.group(4), body)
    assert all(isinstance(r, gdap.Error) for r in results), results


# ---- the in-process group keeps each rank's copies per program and section strides (not addresses)

def zeros_laid_out(shape, dtype, how):
    """A zeroed destination of `shape` laid out `how`: 'contiguous', 'row pitch' (a slice of longer
    rows) or 'every other column' (an element stride of 2)."""
    if how == "contiguous":
        return np.zeros(shape, dtype)
    if how == "row pitch":
        return np.zeros((shape[0], shape[1] + 3), dtype)[:, :shape[1]]
    return np.zeros((shape[0], 2 * shape[1]), dtype)[:, ::2]


def test_kept_copies_follow_new_addresses_strides_layouts_and_dtypes():
    # Rule: a rank reuses its copies only for the same program and the same strides of every
    # rank's sections; new memory (another address), other strides, another layout or another
    # dtype (another plan) each get the right elements, however often they alternate.
    layouts = {"cyclic": lambda r: cyclic_rows(r, 4, block_size=1), "block-cyclic": lambda r: cyclic_rows(r, 4),
               "dealt": dealt_rows, "row blocks": row_blocks, "2 x 2": blocks_2x2}

    def body(comm):
        src_map = gdap.GlobalMap.collective(comm, blocks_2x2(comm.rank))
        maps = {name: gdap.GlobalMap.collective(comm, dim_data(comm.rank)) for name, dim_data in layouts.items()}
        dtypes = (np.float64, np.float32)
        plans = {(name, dt): gdap.Plan(src_map, m, dt, comm) for name, m in maps.items() for dt in dtypes}
        hows = ("contiguous", "row pitch", "every other column", "contiguous")
        steps = [(name, dt, how) for name in maps for dt in dtypes for how in hows]  # strides change on one plan
        steps += [(name, dt, "contiguous") for name in maps for dt in dtypes] * 2  # more plans than the group keeps (4)
        wrong = []
        for name, dt, how in steps:
            plan = plans[name, dt]
            dst = zeros_laid_out(plan.dst_shape, dt, how)
            gdap.redistribute(comm, plan, global_values(src_map, comm.rank, dt), dst)
            wrong += [(name, np.dtype(dt).name, how, e) for e in wrong_elements(maps[name], comm.rank, dst)]
        return wrong

    assert raise_first(on_ranks(gdap.group(4), body)) == [[]] * 4


def test_a_rank_with_a_wrong_section_stops_every_rank():
    src_map = gdap.GlobalMap([blocks_2x2(r) for r in range(4)])
    dst_map = gdap.GlobalMap([cyclic_rows(r, 4) for r in range(4)])

    def body(comm):
        plan = gdap.Plan(src_map, dst_map, np.float64, comm)
        shape = (3, 3) if comm.rank == 2 else plan.dst_shape  # rank 2's destination is the wrong shape
        dst = np.full(shape, -1.0)
        try:
            gdap.redistribute(comm, plan, global_values(src_map, comm.rank), dst)
        except gdap.Error as e:
            return e, dst
        return None, dst

    results = on_ranks(gdap.group(4), body)
    errors = [e for e, _ in results]
    assert isinstance(errors[2], gdap.InvalidArgumentError) and "dst has local shape (3, 3)" in str(errors[2]), errors[2]
    for r in (0, 1, 3):
        assert isinstance(errors[r], gdap.RemoteError) and "rank 2" in str(errors[r]), errors[r]
    assert all((dst == -1.0).all() for _, dst in results)  # nothing moved anywhere


def test_a_wrong_dtype_is_refused_on_every_rank():
    m = gdap.GlobalMap([[block(8, 0, 4, grid=2, rank=0)], [block(8, 4, 8, grid=2, rank=1)]])

    def body(comm):
        plan = gdap.Plan(m, m, np.float64, comm)
        src = np.zeros(4, dtype=np.float32 if comm.rank == 0 else np.float64)
        gdap.redistribute(comm, plan, src, np.zeros(4))

    results = on_ranks(gdap.group(2), body)
    assert isinstance(results[0], gdap.InvalidArgumentError) and "dtype" in str(results[0])
    assert isinstance(results[1], gdap.RemoteError) and "rank 0" in str(results[1])


def test_a_read_only_destination_is_refused():
    m = gdap.GlobalMap([[block(4, 0, 4)]])
    (comm,) = gdap.group(1)
    dst = np.zeros(4)
    dst.flags.writeable = False
    with pytest.raises(gdap.InvalidArgumentError, match="read-only"):
        gdap.redistribute(comm, gdap.Plan(m, m, np.float64, 0), np.arange(4.0), dst)
