"""gdap.gather / scatter / allgather / broadcast on in-process groups (threads), element by element,
and GlobalMap.root / GlobalMap.replicated."""
import threading

import numpy as np
import pytest

import gdap

SHAPE = (7, 5)
WHOLE = np.arange(35, dtype=np.float64).reshape(SHAPE) * 3 + 1


def rows(r, p):
    return (dict(dist_type="b", size=7, proc_grid_size=p, proc_grid_rank=r, start=7 * r // p, stop=7 * (r + 1) // p),
            dict(dist_type="c", size=5, proc_grid_size=1, proc_grid_rank=0, start=0))


def run(n, body):
    """body(comm) on n threads, one rank each; returns each rank's result, re-raising a failure."""
    comms, out, errors = gdap.group(n), [None] * n, []
    for c in comms:
        c.set_timeout(30)  # a rank that never arrives fails the test in seconds, not minutes

    def rank(r):
        try:
            out[r] = body(comms[r])
        except Exception as e:  # reported below, after every thread ended
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("root", [0, -1])
def test_gather_then_scatter(n, root):
    root = root % n
    src_map = gdap.GlobalMap([rows(r, n) for r in range(n)])

    def body(comm):
        r = comm.rank
        mine = WHOLE[7 * r // n:7 * (r + 1) // n].copy()
        whole = gdap.gather(comm, src_map, mine, root=root)
        if r == root:
            assert (np.asarray(whole) == WHOLE).all()
        else:
            assert whole is None
        back = gdap.scatter(comm, src_map, np.asarray(whole) if r == root else None, root=root, dtype=np.float64)
        return np.asarray(back).copy() if back is not None else None

    for r, section in enumerate(run(n, body)):
        want = WHOLE[7 * r // n:7 * (r + 1) // n]
        if want.size:
            assert (section == want).all(), r


@pytest.mark.parametrize("n", [2, 4])
def test_allgather_and_broadcast_give_every_rank_the_whole_array(n):
    src_map = gdap.GlobalMap([rows(r, n) for r in range(n)])

    def body(comm):
        r = comm.rank
        everything = gdap.allgather(comm, src_map, WHOLE[7 * r // n:7 * (r + 1) // n].copy())
        told = gdap.broadcast(comm, WHOLE * -1 if r == n - 1 else None, SHAPE, root=n - 1, dtype=np.float64)
        return np.asarray(everything).copy(), np.asarray(told).copy()

    for everything, told in run(n, body):
        assert (everything == WHOLE).all() and (told == -WHOLE).all()


def test_root_and_replicated_layouts():
    root = gdap.GlobalMap.root(3, SHAPE, root=2)
    assert [root.local_shape(r) for r in range(3)] == [(0, 5), (0, 5), (7, 5)]
    replicated = gdap.GlobalMap.replicated(3, SHAPE)
    assert [replicated.local_shape(r) for r in range(3)] == [SHAPE] * 3
    with pytest.raises(gdap.OutOfRangeError, match="root 3"):
        gdap.GlobalMap.root(3, SHAPE, root=3)
    with pytest.raises(gdap.InvalidArgumentError, match="0-d"):
        gdap.GlobalMap.replicated(3, ())


@pytest.mark.parametrize("op, combine", [("sum", np.add), ("prod", np.multiply), ("min", np.minimum),
                                         ("max", np.maximum)])
def test_allreduce_in_place_on_every_rank(op, combine):
    n = 3
    parts = [(np.arange(12, dtype=np.int64).reshape(3, 4) + r) % 5 + 1 for r in range(n)]
    want = parts[0]
    for p in parts[1:]:
        want = combine(want, p)

    def body(comm):
        x = parts[comm.rank].copy() if comm.rank != 1 else np.asfortranarray(parts[1])  # strides differ
        assert gdap.allreduce(comm, x, op) is x
        return x

    for x in run(n, body):
        assert (x == want).all()


def test_allreduce_refuses_sections_of_different_shapes_on_every_rank():
    def body(comm):
        x = np.ones((3, 4) if comm.rank == 0 else (4, 4))
        with pytest.raises(gdap.InvalidArgumentError, match="rank 1's section"):
            gdap.allreduce(comm, x)
        assert (x == 1).all()

    run(2, body)
    with pytest.raises(ValueError, match="op must be"):
        gdap.allreduce(gdap.group(1)[0], np.ones(2), "mean")


def test_reduce_axes_and_reduce_scatter_element_by_element():
    n = 2
    src_map = gdap.GlobalMap([rows(r, n) for r in range(n)])
    col_map = gdap.GlobalMap.replicated(n, (5,))
    whole_map = gdap.GlobalMap.replicated(n, SHAPE)

    def body(comm):
        r = comm.rank
        mine = gdap.from_dlpack(WHOLE[7 * r // n:7 * (r + 1) // n].copy(), src_map.dim_data(r))
        sums = gdap.reduce_axes(comm, mine, gdap.empty(col_map.dim_data(r)), "sum", axis=0)
        means = gdap.reduce_axes(comm, mine, gdap.empty(()), "mean")
        lows = gdap.reduce_axes(comm, mine, gdap.empty(src_map.dim_data(r)), "min", axis=())
        partial = gdap.from_dlpack(WHOLE * (r + 1), whole_map.dim_data(r))  # every rank a partial whole
        scattered = gdap.reduce_scatter(comm, partial, gdap.empty(src_map.dim_data(r)), "sum")
        with pytest.raises(gdap.OutOfRangeError, match="axes\\[0\\] = 2"):
            gdap.reduce_axes(comm, mine, gdap.empty(col_map.dim_data(r)), "sum", axis=2)
        return [np.asarray(x).copy() for x in (sums, means, lows, scattered)]

    for r, (sums, means, lows, scattered) in enumerate(run(n, body)):
        mine = slice(7 * r // n, 7 * (r + 1) // n)
        assert (sums == WHOLE.sum(axis=0)).all()
        assert means == pytest.approx(WHOLE.mean())
        assert (lows == WHOLE[mine]).all()
        assert (scattered == WHOLE[mine] * 3).all()
    with pytest.raises(ValueError, match="op must be"):
        gdap.reduce_scatter(gdap.group(1)[0], None, None, "mean")
