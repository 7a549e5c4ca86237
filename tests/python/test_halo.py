"""Halo exchange from Python: an in-process group of ranks run as threads, a 2-d array on a 2 x 2
grid periodic in both dimensions with padding 1 (and 2 x 1 with width caps), every element checked
against the global index it must hold; faces only leaves the corners alone; the counts; and the
errors: no padding to exchange into, a wrong shape on one rank (it raises its own error, the
others RemoteError, and no padding changes)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gdap
from conftest import block

SHAPE = (7, 6)
POISON = -1.0
TIMEOUT = 30.0


def on_ranks(comms, body):
    for comm in comms:
        comm.set_timeout(TIMEOUT)
    with ThreadPoolExecutor(len(comms)) as pool:
        futures = [pool.submit(body, comm) for comm in comms]
        return [f.exception() or f.result() for f in futures]


def periodic_dim(size, counts, g, width):
    """Grid rank g of a periodic 'b' dimension with owned `counts` and padding `width` each side."""
    start = sum(counts[:g])
    d = block(size, start - width, start + counts[g] + width, grid=len(counts), rank=g)
    d.update(padding=(width, width), periodic=True)
    return d


def layout(rank, width=1, grid=(2, 2)):
    counts = ([4, 3], [3, 3]) if grid == (2, 2) else ([4, 3], [6])
    row, col = divmod(rank, grid[1])
    return (periodic_dim(SHAPE[0], counts[0], row, width), periodic_dim(SHAPE[1], counts[1], col, width))


def value(i, j):
    return 100 * i + j + 1


def painted(dims):
    """The section: owned elements value(i, j), padding the poison."""
    shape = tuple(d["stop"] - d["start"] for d in dims)
    out = np.full(shape, POISON)
    (p0, _), (p1, _) = dims[0]["padding"], dims[1]["padding"]
    for a in range(p0, shape[0] - p0):
        for b in range(p1, shape[1] - p1):
            out[a, b] = value(dims[0]["start"] + a, dims[1]["start"] + b)
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
                out[a, b] = value((dims[0]["start"] + a) % SHAPE[0], (dims[1]["start"] + b) % SHAPE[1])
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
    with pytest.raises(gdap.InvalidArgumentError, match="communication padding"):
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
