"""A NumPy user's first day with GlobalArray (new-user review 13, sections 3-5), single controller on
the host: distribute converts as np.asarray(x, dtype) does and takes array-likes, a[index_array]
and a[mask] read like NumPy's fancy indexing (one axis), a whole ndarray operand is refused with the
way to combine it, load_zarr says how many ranks rather than guessing 1, a Zarr v2 store is named as
such, and the mean of nothing warns as NumPy's. Each test names its rule."""
import warnings

import numpy as np
import pytest

import gdap
from gdap import layout

P = 4
WHOLE = np.arange(8 * 6, dtype=np.float64).reshape(8, 6)


def _layouts():
    return [layout.block(WHOLE.shape, nranks=P), layout.cyclic(WHOLE.shape, P),
            layout.block_cyclic(WHOLE.shape, (2, 2), block_size=(3, 2))]


# -- distribute: dtype= converts, array-likes are read -----------------------------------------------

@pytest.mark.parametrize("src,dtype", [(np.arange(6, dtype=np.int32), np.float64),
                                       (np.array([1.7, -2.5, 3.2, 0.0, 9.9, -0.1]), np.int32),
                                       (np.arange(6, dtype=np.int64), np.uint8)])
def test_distribute_dtype_converts_as_numpy_does(src, dtype):
    # Rule: dtype= on the root is a conversion with NumPy's casting (float to int truncates).
    a = gdap.distribute(src, layout.block((6,), nranks=3), dtype=dtype)
    want = np.asarray(src, dtype=dtype)
    assert a.dtype == want.dtype
    assert np.array_equal(a.get(), want), (a.get(), want)


def test_distribute_dtype_converts_with_another_root():
    # Rule: the non-root ranks' sections and the root's converted array agree on the dtype.
    a = gdap.distribute(np.arange(6, dtype=np.int32), layout.block((6,), nranks=3), root=2, dtype=np.float32)
    assert a.dtype == np.float32 and np.array_equal(a.get(), np.arange(6, dtype=np.float32))


def test_distribute_takes_a_list_of_lists():
    # Rule: an array-like is read with np.asarray, with or without dtype.
    rows = [[1, 2, 3], [4, 5, 6]]
    a = gdap.distribute(rows, layout.block((2, 3), nranks=2))
    assert a.dtype == np.asarray(rows).dtype and np.array_equal(a.get(), rows)
    b = gdap.distribute(rows, layout.block((2, 3), nranks=2), dtype=np.float32)
    assert b.dtype == np.float32 and np.array_equal(b.get(), np.asarray(rows, np.float32))


# -- integer-array and boolean-mask indexing -------------------------------------------------------------

@pytest.mark.parametrize("lay", _layouts(), ids=["block", "cyclic", "block_cyclic"])
@pytest.mark.parametrize("key", [
    np.array([1, 2]), [1, 2], [7, 0, 7, -1], np.array([True, False] * 4), (slice(None), [5, 0, 3]),
    (slice(None), np.array([False, True, True, False, False, True])), (2, [1, 4]), ([1, 4], 2),
    (slice(1, 7, 2), [0, 0]), (Ellipsis, [2]), np.array([], dtype=np.int64), [], (np.arange(8) > 3, 1)],
    ids=repr)
def test_index_array_reads_as_numpy(lay, key):
    # Rule: one axis's integer array or boolean mask selects as NumPy's advanced indexing (a copy).
    a = gdap.distribute(WHOLE, lay)
    got = a[key]
    want = WHOLE[key]
    assert got.shape == want.shape and np.array_equal(got, want), (key, got, want)


def test_index_array_after_a_slice_between_integers_goes_first():
    # Rule: NumPy puts the advanced axis first when an integer and the array are not adjacent.
    whole = np.arange(3 * 4 * 5.0).reshape(3, 4, 5)
    a = gdap.distribute(whole, layout.block(whole.shape, nranks=P))
    for key in [(1, slice(None), [4, 0]), ([2, 0], slice(1, 3), 3), (1, [3, 1], slice(None))]:
        assert np.array_equal(a[key], whole[key]) and a[key].shape == whole[key].shape, key


@pytest.mark.parametrize("key,error,match", [
    (([0, 1], [1, 2]), IndexError, "one axis only"),
    (np.array([[0, 1]]), IndexError, "2 dimensions"),
    (np.array([True, False]), IndexError, "mask has length 2 but the axis has size 8"),
    ([8], IndexError, "index 8 is out of bounds for size 8"),
    ([-9], IndexError, "index -9 is out of bounds"),
    (np.array([0.5]), IndexError, "integer or boolean type"),
    ((None,), TypeError, "slice, '...' or a 1-d integer array"),
])
def test_unsupported_index_arrays_are_named(key, error, match):
    # Rule: never NumPy's "truth value ... ambiguous": the message names what is supported.
    a = gdap.distribute(WHOLE, layout.block(WHOLE.shape, nranks=P))
    with pytest.raises(error, match=match):
        a[key]


# -- a whole array as an operand ------------------------------------------------------------------------

@pytest.mark.parametrize("combine", [lambda a, x: x + a, lambda a, x: a + x, lambda a, x: x * a,
                                     lambda a, x: a - x.tolist()], ids=["x+a", "a+x", "x*a", "a-list"])
def test_whole_operand_is_refused_with_the_way_to_combine(combine):
    # Rule: a TypeError that says to distribute the ndarray into a.layout (and that doing so works).
    a = gdap.distribute(WHOLE, layout.block(WHOLE.shape, nranks=P))
    with pytest.raises(TypeError, match=r"gdap.distribute\(x, a.layout, devices=a.context\)"):
        combine(a, WHOLE)
    b = gdap.distribute(WHOLE, a.layout, devices=a.context)
    assert np.array_equal((b + a).get(), 2 * WHOLE)


# -- load_zarr: how many ranks ----------------------------------------------------------------------------

def test_load_zarr_without_ranks_is_refused(tmp_path):
    # Rule: a single controller's load_zarr names the arguments that say how many ranks, not 1 silently.
    gdap.distribute(WHOLE, layout.block(WHOLE.shape, nranks=P)).save_zarr(tmp_path / "a.zarr")
    with pytest.raises(gdap.InvalidArgumentError, match="give layout=, devices= or nranks="):
        gdap.GlobalArray.load_zarr(tmp_path / "a.zarr")
    b = gdap.GlobalArray.load_zarr(tmp_path / "a.zarr", nranks=P)
    assert b.nranks == P and np.array_equal(b.get(), WHOLE)


@pytest.mark.parametrize("write", ["array", "group"])
def test_zarr_v2_store_is_named(tmp_path, write):
    # Rule: a Zarr v2 store is refused as one (v3 only, how to convert), not "zarr.json: cannot open".
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "v2.zarr")
    if write == "array":
        zarr.save_array(path, WHOLE, zarr_format=2)
    else:
        zarr.open_group(path, mode="w", zarr_format=2)
    with pytest.raises(gdap.UnsupportedError, match="a Zarr v2 %s .*gdap reads Zarr v3 arrays only.*zarr_format=3"
                       % write):
        gdap.GlobalArray.load_zarr(path, nranks=P)


def test_zarr_v2_conversion_the_message_gives_works(tmp_path):
    # Rule: the conversion the message names gives a store gdap reads.
    zarr = pytest.importorskip("zarr")
    old, new = str(tmp_path / "v2.zarr"), str(tmp_path / "new.zarr")
    zarr.save_array(old, WHOLE, zarr_format=2)
    zarr.save_array(new, zarr.open_array(old)[...], zarr_format=3)
    assert np.array_equal(gdap.GlobalArray.load_zarr(new, nranks=P).get(), WHOLE)


# -- mean of nothing --------------------------------------------------------------------------------------

def test_mean_of_an_empty_array_warns_as_numpy():
    # Rule: NaN with RuntimeWarning "Mean of empty slice", as np.mean.
    a = gdap.GlobalArray.zeros(layout.block((0,), nranks=2))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = a.mean()
    assert np.isnan(got)


def test_mean_over_an_empty_axis_warns_and_a_nonempty_one_does_not():
    # Rule: the warning follows the count of averaged elements, as NumPy's (0 x 3: axis 0 warns, axis 1 not).
    a = gdap.GlobalArray.zeros(layout.block((0, 3), nranks=2))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        a.mean(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a.mean(axis=1).shape == (0,)


# -- constructors and copy --------------------------------------------------------------------------------

def test_ones_and_full_fill_every_cell_padding_included():
    # Rule: as np.ones / np.full (dtype from the value unless given), padding included.
    lay = layout.padded((10,), 2, halo=1)
    assert np.array_equal(gdap.GlobalArray.ones(lay).get(), np.ones(10))
    f = gdap.GlobalArray.full(lay, 7)
    assert f.dtype == np.asarray(7).dtype and np.array_equal(f.get(), np.full(10, 7))
    assert all((f.local_view(r) == 7).all() for r in range(2))  # the padding too
    g = gdap.GlobalArray.full(layout.block((3, 4), nranks=2), 2.5, np.float32)
    assert g.dtype == np.float32 and np.array_equal(g.get(), np.full((3, 4), 2.5, np.float32))


def test_copy_shares_no_memory():
    # Rule: a.copy() has the values and layout, and writing into it leaves a unchanged.
    a = gdap.distribute(WHOLE, layout.cyclic(WHOLE.shape, P))
    b = a.copy()
    assert b.layout is a.layout and np.array_equal(b.get(), WHOLE)
    for r in range(P):
        b.local_view(r)[...] = -1
        assert not np.shares_memory(a.local_view(r), b.local_view(r))
    assert np.array_equal(a.get(), WHOLE)


def test_copy_of_a_pending_array_is_its_values():
    # Rule: as astype, a copy performs a pending reduction first.
    parts = [np.array([1.0, 2.0]), np.array([10.0, 20.0])]
    a = gdap.GlobalArray.from_sections(parts, layout.replicated((2,), 2), pending="sum")
    b = a.copy()
    assert b.pending is None and np.array_equal(b.get(), [11.0, 22.0])


def test_distribute_takes_a_big_endian_array():
    # Rule: a big-endian NumPy array (a .npy from another machine) is dealt out with its values, native.
    big = np.arange(12.0).reshape(3, 4).astype(">f8")
    a = gdap.distribute(big, layout.block((3, 4), nranks=2))
    assert a.dtype == np.float64 and a.dtype.isnative and np.array_equal(a.get(), big)


def test_a_mask_of_the_whole_shape_is_named():
    # Rule: NumPy's a[a > 0] element mask is refused, saying to mask a.get().
    a = gdap.distribute(WHOLE, layout.block(WHOLE.shape, nranks=P))
    with pytest.raises(IndexError, match="2-d boolean mask selects elements.*a.get"):
        a[WHOLE > 3]


def test_itemsize_and_nbytes_are_numpys():
    # Rule: as the whole NumPy array's (padding, replicas not counted).
    a = gdap.distribute(WHOLE.astype(np.float32), layout.padded(WHOLE.shape, 2, halo=1))
    assert (a.itemsize, a.nbytes) == (4, WHOLE.size * 4)
