"""Halo exchange from Python: an in-process group of ranks run as threads, a 2-d array on a 2 x 2
grid periodic in both dimensions with padding 1 (and 2 x 1 with width caps), every element checked
against the element it must hold; faces only leaves the corners alone; the counts; and the errors:
no padding to exchange into, a wrong shape on one rank (it raises its own error, the others
RemoteError, and no padding changes).

Periodic the DAP 0.10 way: each periodic dimension is the SHAPE interior plus `width` cells of
boundary padding at each end (owned by the edge ranks, counted in size), which the exchange fills
from the interior's far end; between ranks, communication padding of `width`."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gdap
from conftest import block

SHAPE = (7, 6)  # the interior, periodic
POISON = -1.0
TIMEOUT = 30.0


def on_ranks(comms, body):
    for comm in comms:
        comm.set_timeout(TIMEOUT)
    with ThreadPoolExecutor(len(comms)) as pool:
        futures = [pool.submit(body, comm) for comm in comms]
        return [f.exception() or f.result() for f in futures]


def periodic_dim(interior, counts, g, width):
    """Grid rank g of a periodic 'b' dimension: `counts` interior cells per grid rank, boundary
    padding `width` at both ends, communication padding `width` between neighbours."""
    P = len(counts)
    owned = [n + (width if k == 0 else 0) + (width if k == P - 1 else 0) for k, n in enumerate(counts)]
    start = sum(owned[:g])
    d = block(interior + 2 * width, start - (width if g > 0 else 0),
              start + owned[g] + (width if g < P - 1 else 0), grid=P, rank=g)
    d.update(padding=(width, width), periodic=True)
    return d


def layout(rank, width=1, grid=(2, 2)):
    counts = ([4, 3], [3, 3]) if grid == (2, 2) else ([4, 3], [6])
    row, col = divmod(rank, grid[1])
    return (periodic_dim(SHAPE[0], counts[0], row, width), periodic_dim(SHAPE[1], counts[1], col, width))


def value(i, j):
    return 100 * i + j + 1


def interior_index(d, k, local):
    """The interior index (0 .. SHAPE[k] - 1) a cell of dimension k holds or mirrors."""
    width = (d["size"] - SHAPE[k]) // 2
    return (d["start"] + local - width) % SHAPE[k]


def painted(dims):
    """The section: its interior cells value(i, j), every padding cell the poison."""
    shape = tuple(d["stop"] - d["start"] for d in dims)
    out = np.full(shape, POISON)
    (p0, _), (p1, _) = dims[0]["padding"], dims[1]["padding"]
    for a in range(p0, shape[0] - p0):
        for b in range(p1, shape[1] - p1):
            out[a, b] = value(interior_index(dims[0], 0, a), interior_index(dims[1], 1, b))
    return out


def expected(dims, corners=True, caps=None):
    shape = tuple(d["stop"] - d["start"] for d in dims)
    out = np.full(shape, POISON)
    for a in range(shape[0]):
        for b in range(shape[1]):
            halo = 0
            inside = True
            for k, local in enumerate((a, b)):
                w = dims[k]["padding"][0]
                if w <= local < shape[k] - w:
                    continue
                halo += 1
                cap = w if caps is None else caps[k]
                inside = inside and (w - cap <= local < shape[k] - w + cap)
            if inside and (corners or halo <= 1):
                out[a, b] = value(interior_index(dims[0], 0, a), interior_index(dims[1], 1, b))
    return out


@pytest.mark.parametrize("corners", [True, False])
def test_periodic_2x2_every_element(corners):
    gmap = gdap.GlobalMap([layout(r) for r in range(4)])
    comms = gdap.group(4)
    sections = [painted(layout(r)) for r in range(4)]

    def body(comm):
        halo = gdap.Halo(gmap, np.float64, comm, corners=corners)
        assert gdap.halo_exchange(comm, halo, sections[comm.rank]) is sections[comm.rank]
        return halo.stats

    stats = on_ranks(comms, body)
    for r in range(4):
        assert not isinstance(stats[r], BaseException), stats[r]
        np.testing.assert_array_equal(sections[r], expected(layout(r), corners))
    # Periodic on a 2 x 2 grid: each rank's neighbours are the 3 others.
    assert stats[0]["send_messages"] == (3 if corners else 2)
    assert stats[0]["local_bytes"] == 0


def test_width_caps_2x1():
    dims = [layout(r, width=2, grid=(2, 1)) for r in range(2)]
    gmap = gdap.GlobalMap(dims)
    comms = gdap.group(2)
    sections = [painted(d) for d in dims]

    def body(comm):
        halo = gdap.Halo(gmap, "float64", comm.rank, widths=(1, 2))
        gdap.halo_exchange(comm, halo, sections[comm.rank])
        return halo.stats

    stats = on_ranks(comms, body)
    for r in range(2):
        assert not isinstance(stats[r], BaseException), stats[r]
        np.testing.assert_array_equal(sections[r], expected(dims[r], True, (1, 2)))
        assert stats[r]["local_bytes"] > 0  # dimension 1 wraps onto the rank itself


def test_no_padding_is_refused():
    gmap = gdap.GlobalMap([(block(6, 0, 3, grid=2, rank=0),), (block(6, 3, 6, grid=2, rank=1),)])
    with pytest.raises(gdap.InvalidArgumentError, match="no rank of the map has padding"):
        gdap.Halo(gmap, np.float64, 0)


def test_width_on_a_cyclic_dimension_is_refused():
    dims = [layout(r, grid=(2, 1)) for r in range(2)]
    gmap = gdap.GlobalMap(dims)
    with pytest.raises(gdap.InvalidArgumentError):
        gdap.Halo(gmap, np.float64, 0, widths=(1,))  # one value for two dimensions


def test_wrong_shape_on_one_rank_fails_everywhere_and_moves_nothing():
    gmap = gdap.GlobalMap([layout(r) for r in range(4)])
    comms = gdap.group(4)
    sections = [painted(layout(r)) for r in range(4)]
    sections[2] = np.full((3, 3), POISON)

    def body(comm):
        halo = gdap.Halo(gmap, np.float64, comm)
        gdap.halo_exchange(comm, halo, sections[comm.rank])

    results = on_ranks(comms, body)
    for r, result in enumerate(results):
        assert isinstance(result, gdap.Error), result
        if r != 2:
            assert isinstance(result, gdap.RemoteError), result
            np.testing.assert_array_equal(sections[r], painted(layout(r)))


def test_persistent_exchange_fills_at_every_start():
    gmap = gdap.GlobalMap([layout(r) for r in range(4)])
    comms = gdap.group(4)
    sections = [painted(layout(r)) for r in range(4)]

    def body(comm):
        halo = gdap.Halo(gmap, np.float64, comm)
        with gdap.HaloExchange(comm, halo, sections[comm.rank]) as exchange:
            np.testing.assert_array_equal(sections[comm.rank], painted(layout(comm.rank)))  # binding moves nothing
            for _ in range(2):
                assert exchange.start() is sections[comm.rank]
                np.testing.assert_array_equal(sections[comm.rank], expected(layout(comm.rank)))
                sections[comm.rank][0, :] = POISON  # the next start fills it again
            sections[comm.rank][:] = expected(layout(comm.rank))
        assert exchange.closed

    for result in on_ranks(comms, body):
        assert result is None, result


def test_persistent_exchange_refused_on_every_rank_at_init():
    gmap = gdap.GlobalMap([layout(r) for r in range(4)])
    comms = gdap.group(4)
    sections = [painted(layout(r)) for r in range(4)]
    sections[1] = np.full((3, 3), POISON)

    def body(comm):
        gdap.HaloExchange(comm, gdap.Halo(gmap, np.float64, comm), sections[comm.rank])

    results = on_ranks(comms, body)
    for r, result in enumerate(results):
        assert isinstance(result, gdap.RemoteError if r != 1 else gdap.Error), result
        if r != 1:
            np.testing.assert_array_equal(sections[r], painted(layout(r)))


@pytest.mark.gpu
def test_cupy_sections_over_the_group():
    """Device sections (CuPy) on GPU 0, the in-process group's copy kernels; skips without CuPy or a GPU."""
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as e:  # no driver
        pytest.skip("no CUDA device: %s" % e)
    gmap = gdap.GlobalMap([layout(r) for r in range(4)])
    comms = gdap.group(4)
    sections = [cupy.asarray(painted(layout(r))) for r in range(4)]

    def body(comm):
        with cupy.cuda.Device(0):
            halo = gdap.Halo(gmap, np.float64, comm)
            gdap.halo_exchange(comm, halo, sections[comm.rank])
            cupy.cuda.runtime.deviceSynchronize()

    for result in on_ranks(comms, body):
        assert not isinstance(result, BaseException), result
    for r in range(4):
        np.testing.assert_array_equal(cupy.asnumpy(sections[r]), expected(layout(r)))
