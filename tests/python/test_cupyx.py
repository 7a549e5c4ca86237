"""gdap.from_cupyx / gdap.to_cupyx with real cupyx.distributed.array arrays (marked gpu; ctest
python.gpu on a GPU machine). One GPU is enough (chunks may share a device); with two, the
chunks are spread over both. Pointer equality proves that nothing is copied."""
import numpy as np
import pytest

import gdap

pytestmark = pytest.mark.gpu


def _cupyx():
    cupy = pytest.importorskip("cupy")
    dda = pytest.importorskip("cupyx.distributed.array")
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver
        pytest.skip("no CUDA device: %s" % e)
    if n < 1:
        pytest.skip("no CUDA device")
    return cupy, dda, [0, min(1, n - 1)]


def test_from_cupyx_row_blocks_share_the_chunks():
    cupy, dda, devs = _cupyx()
    whole = cupy.arange(9 * 4, dtype=cupy.float32).reshape(9, 4)
    darray = dda.distributed_array(whole, dda.make_2d_index_map([0, 5, 9], [0, 4], [[{devs[0]}], [{devs[1]}]]))
    g = gdap.from_cupyx(darray)  # a GlobalArray whose sections are the chunks
    gmap, sections = g.layout, [g.section(r) for r in range(g.nranks)]
    assert gmap.grid_shape == (2, 1)
    assert [s.device for s in sections] == ["cuda:%d" % d for d in devs]
    chunks = darray.all_chunks()
    second = 1 if devs[0] == devs[1] else 0  # on one GPU both chunks are device 0's, in row order
    assert sections[1].data_ptr == chunks[devs[1]][second].data.ptr  # zero copy
    view = cupy.from_dlpack(sections[1])
    view[0, 0] = -1  # global (5, 0)
    assert float(darray.get()[5, 0]) == -1


def test_to_cupyx_chunks_are_views_of_gdap_sections_and_reshard_reads_them():
    cupy, dda, devs = _cupyx()
    n = 10
    sections = []
    for r in range(2):
        dims = (dict(dist_type="c", size=n, proc_grid_size=2, proc_grid_rank=r, start=r),
                dict(dist_type="b", size=3, proc_grid_size=1, proc_grid_rank=0, start=0, stop=3))
        s = gdap.empty(dims, np.float64, device="cuda:%d" % devs[r])
        with cupy.cuda.Device(devs[r]):
            cupy.from_dlpack(s)[...] = cupy.arange(r, n, 2, dtype=cupy.float64)[:, None] * 10 + cupy.arange(3)
        sections.append(s)
    darray = gdap.to_cupyx(sections)
    expected = np.arange(n)[:, None] * 10.0 + np.arange(3)
    assert (darray.get() == expected).all()
    assert darray.all_chunks()[devs[1]][-1].data.ptr == sections[1].data_ptr
    blocks = darray.reshard(dda.make_2d_index_map([0, 5, n], [0, 3], [[{devs[0]}], [{devs[1]}]]))
    assert (blocks.get() == expected).all()


def test_to_cupyx_leaves_padding_out_of_the_chunks():
    cupy, dda, devs = _cupyx()
    sections = []
    for r in range(2):
        lo, hi = (0, 1) if r == 0 else (1, 0)  # one communication cell towards the neighbour
        dims = (dict(dist_type="b", size=8, proc_grid_size=2, proc_grid_rank=r, start=4 * r - lo, stop=4 * r + 4 + hi,
                     padding=(lo, hi)),)
        s = gdap.empty(dims, np.int32, device="cuda:%d" % devs[r])
        with cupy.cuda.Device(devs[r]):
            v = cupy.from_dlpack(s)
            v[...] = -7  # the padding cell keeps this
            v[lo:v.shape[0] - hi] = cupy.arange(4 * r, 4 * r + 4, dtype=cupy.int32)
        sections.append(s)
    assert (gdap.to_cupyx(sections).get() == np.arange(8)).all()


def test_block_cyclic_is_refused_by_to_cupyx():
    cupy, dda, devs = _cupyx()
    dims = (dict(dist_type="c", size=8, proc_grid_size=1, proc_grid_rank=0, start=0, block_size=2),)
    s = gdap.empty(dims, np.float32, device="cuda:%d" % devs[0])
    with pytest.raises(gdap.UnsupportedError, match="block_size 2"):
        gdap.to_cupyx([s])
