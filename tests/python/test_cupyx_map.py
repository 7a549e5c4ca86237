"""gdap.from_cupyx's reading of a cupyx index map, without a GPU: a stand-in with cupyx's
DistributedArray attributes (mode, shape, all_chunks(), _chunks_map of chunks with .index) whose
chunks are NumPy arrays. from_cupyx gives a GlobalArray whose sections are the chunks; replicas and
partial modes (a pending reduction) included. The real cupyx arrays are tested in test_cupyx.py and
test_global_gpu.py on a GPU machine."""
import numpy as np
import pytest

import gdap


class _Chunk:
    def __init__(self, index):
        self.index = index


class FakeDistributedArray:
    """The whole array `whole`, cut into the chunks of `index_map` {device: [tuple of slices]}."""

    def __init__(self, whole, index_map, mode=None):  # cupyx spells REPLICA as None
        self.shape, self.ndim, self.mode = whole.shape, whole.ndim, mode
        self._chunks_map = {dev: [_Chunk(ix) for ix in idxs] for dev, idxs in index_map.items()}
        self._arrays = {dev: [np.ascontiguousarray(whole[ix]) for ix in idxs] for dev, idxs in index_map.items()}

    def all_chunks(self):
        return self._arrays


WHOLE = np.arange(7 * 6, dtype=np.float64).reshape(7, 6)


def from_cupyx(darray):
    """(layout, sections) of gdap.from_cupyx's GlobalArray."""
    g = gdap.from_cupyx(darray)
    return g.layout, [g.section(r) for r in range(g.nranks)]


def _check_global(gmap, sections, whole):
    """Every rank's section holds the elements its dim_data says it owns."""
    assert gmap.nranks == len(sections)
    for r, s in enumerate(sections):
        local = np.asarray(s)
        for i in np.ndindex(*local.shape):
            assert local[i] == whole[s.local_to_global(i)], (r, i)


def test_irregular_row_blocks_on_two_devices_share_the_chunks():
    darray = FakeDistributedArray(WHOLE, {0: [(slice(0, 3), slice(0, 6))], 1: [(slice(3, 7), slice(0, 6))]})
    gmap, sections = from_cupyx(darray)
    assert gmap.grid_shape == (2, 1)
    assert [s.dim_data[0]["dist_type"] for s in sections] == ["b", "b"]
    assert [(s.dim_data[0]["start"], s.dim_data[0]["stop"]) for s in sections] == [(0, 3), (3, 7)]
    chunk = darray.all_chunks()[1][0]
    assert sections[1].data_ptr == chunk.ctypes.data  # zero copy
    chunk[0, 0] = -5
    assert np.asarray(sections[1])[0, 0] == -5
    chunk[0, 0] = WHOLE[3, 0]
    _check_global(gmap, sections, WHOLE)


def test_a_2x2_grid_with_several_chunks_per_device_numbers_ranks_in_c_order():
    index_map = {0: [(slice(4, 7), slice(0, 2)), (slice(0, 4), slice(0, 2))],
                 1: [(slice(0, 4), slice(2, 6)), (slice(4, 7), slice(2, 6))]}
    gmap, sections = from_cupyx(FakeDistributedArray(WHOLE, index_map))
    assert gmap.grid_shape == (2, 2)
    assert [s.shape for s in sections] == [(4, 2), (4, 4), (3, 2), (3, 4)]
    _check_global(gmap, sections, WHOLE)


def test_step_slices_become_a_cyclic_dimension():
    index_map = {0: [(slice(0, 7, 3), slice(0, 6))], 1: [(slice(1, 7, 3), slice(0, 6))], 2: [(slice(2, 7, 3), slice(0, 6))]}
    gmap, sections = from_cupyx(FakeDistributedArray(WHOLE, index_map))
    assert [s.dim_data[0]["dist_type"] for s in sections] == ["c", "c", "c"]
    assert [s.shape[0] for s in sections] == [3, 2, 2]
    _check_global(gmap, sections, WHOLE)


@pytest.mark.parametrize("index_map, error, words", [
    ({0: [(slice(0, 4), slice(0, 6))], 1: [(slice(0, 4), slice(0, 6)), (slice(4, 7), slice(0, 6))]},
     gdap.UnsupportedError, "region 4:7:1, 0:6:1 is held by 1 chunk but region 0:4:1, 0:6:1 by 2"),
    ({0: [(slice(0, 3), slice(0, 6))], 1: [(slice(4, 7), slice(0, 6))]}, gdap.ProtocolError, "do not tile"),
    ({0: [(slice(0, 3), slice(0, 6))], 1: [(slice(3, 6), slice(0, 6))]}, gdap.ProtocolError, "not at the size 7"),
    ({0: [(slice(0, 4), slice(0, 3)), (slice(4, 7), slice(3, 6))]}, gdap.ProtocolError, "not a grid"),
    ({0: [(slice(0, 7, 2), slice(0, 6))], 1: [(slice(1, 7, 3), slice(0, 6))]}, gdap.UnsupportedError, "axis 0"),
])
def test_maps_gdap_cannot_take_are_refused_naming_the_axis_or_chunk(index_map, error, words):
    with pytest.raises(error, match=words):
        gdap.from_cupyx(FakeDistributedArray(WHOLE, index_map))


def test_replicas_in_replica_mode_are_an_unstructured_axis():
    index_map = {0: [(slice(0, 4), slice(0, 6))], 1: [(slice(4, 7), slice(0, 6))],
                 2: [(slice(0, 4), slice(0, 6))], 3: [(slice(4, 7), slice(0, 6))]}
    g = gdap.from_cupyx(FakeDistributedArray(WHOLE, index_map))
    assert g.pending is None and g.layout.grid_shape == (4, 1)
    assert [g.layout.dim_data(r)[0]["dist_type"] for r in range(4)] == ["u"] * 4
    assert (g.get() == WHOLE).all()


def test_a_partial_sum_stays_pending_until_read():
    """Two chunks of the whole array in mode 'sum' (cupyx's matmul result): the value is their sum."""
    darray = FakeDistributedArray(WHOLE, {0: [(slice(0, 7), slice(0, 6))], 1: [(slice(0, 7), slice(0, 6))]},
                                  mode="sum")
    g = gdap.from_cupyx(darray)
    assert g.pending == "sum" and g.section(1).data_ptr == darray.all_chunks()[1][0].ctypes.data
    assert (g.get() == 2 * WHOLE).all() and (g.reshard(gdap.layout.block(WHOLE.shape, 2)).get() == 2 * WHOLE).all()
    m = gdap.from_cupyx(FakeDistributedArray(WHOLE, {0: [(slice(0, 7), slice(0, 6))], 1: [(slice(0, 7), slice(0, 6))]},
                                             mode="max"))
    assert m.pending == "max" and (m.get() == WHOLE).all()


def test_a_partial_mode_without_overlaps_is_its_values():
    darray = FakeDistributedArray(WHOLE, {0: [(slice(0, 3), slice(0, 6))], 1: [(slice(3, 7), slice(0, 6))]}, mode="prod")
    g = gdap.from_cupyx(darray)
    assert g.pending is None and (g.get() == WHOLE).all()


def test_an_unknown_mode_is_named():
    with pytest.raises(gdap.UnsupportedError, match="cupyx mode 'avg' has no gdap reduction"):
        gdap.from_cupyx(FakeDistributedArray(WHOLE, {0: [(slice(0, 7), slice(0, 6))]}, mode="avg"))
