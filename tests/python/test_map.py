"""GlobalMap: owner look-ups, shapes, counts and runs on a 2x2 block x cyclic layout; grid helpers;
cross-process errors naming the rank."""
import pickle

import numpy as np
import pytest

import gdap
from conftest import block, cyclic, unstructured

# 4 ranks on a 2x2 grid (C order: rank = 2 * row + column). Dimension 0: block, size 6, 3 rows
# each; dimension 1: cyclic, size 5, block_size 1 (column 0 holds 0, 2, 4; column 1 holds 1, 3).
def layout():
    ranks = []
    for r in range(4):
        row, col = divmod(r, 2)
        ranks.append((block(6, 3 * row, 3 * row + 3, grid=2, rank=row), cyclic(5, 2, col)))
    return ranks


@pytest.fixture
def m():
    with gdap.GlobalMap(layout()) as gm:
        yield gm


def test_shapes(m):
    assert (m.ndim, m.nranks, m.shape, m.grid_shape) == (2, 4, (6, 5), (2, 2))
    assert [m.local_shape(r) for r in range(4)] == [(3, 3), (3, 2), (3, 3), (3, 2)]
    assert [m.owned_shape(r) for r in range(4)] == [(3, 3), (3, 2), (3, 3), (3, 2)]
    assert [m.owned_count(r) for r in range(4)] == [9, 6, 9, 6]
    assert m.dim_data(3) == layout()[3]


OWNERS = [  # (rule, global index, owning rank, local index there)
    ("first element", (0, 0), 0, (0, 0)),
    ("cyclic column 1", (0, 1), 1, (0, 0)),
    ("block row 1", (3, 0), 2, (0, 0)),
    ("both split", (4, 3), 3, (1, 1)),
    ("last element", (5, 4), 2, (2, 2)),
]


@pytest.mark.parametrize("rule,global_index,rank,local_index", OWNERS, ids=[case[0] for case in OWNERS])
def test_owner(m, rule, global_index, rank, local_index):
    assert m.owner(global_index) == (rank, local_index)
    assert m.owners(global_index) == (rank,)
    assert m.local_to_global(rank, local_index) == global_index


def test_owner_outside_the_array(m):
    with pytest.raises(gdap.OutOfRangeError):
        m.owner((6, 0))


def test_owner_batch_matches_owner(m):
    globals_ = np.array([[i, j] for i in range(6) for j in range(5)] + [[9, 9]], dtype=np.int64)
    ranks, locals_ = m.owner_batch(globals_)
    for k, g in enumerate(globals_[:-1]):
        rank, local = m.owner(tuple(g))
        assert ranks[k] == rank and tuple(locals_[k]) == local
    assert ranks[-1] == -1  # one bad index does not fail the batch


def test_runs(m):
    assert m.runs(1, 1) == [(1, 1, 0), (3, 1, 1)]
    assert m.runs(2, 0) == [(3, 3, 0)]


def test_replicated_unstructured_owners():
    with gdap.GlobalMap([(unstructured(4, [0, 1, 2], grid=2, rank=0),),
                         (unstructured(4, [3, 2], grid=2, rank=1),)]) as gm:
        assert gm.owners((2,)) == (0, 1)
        assert gm.owner((2,)) == (0, (2,))
        assert gm.owner((3,)) == (1, (0,))


def test_map_from_local_arrays_and_distbuffers():
    a0 = gdap.from_dlpack(np.zeros(3), dim_data=(block(5, 0, 3, grid=2, rank=0),))
    d1 = {"__version__": "0.10.0", "buffer": np.zeros(2), "dim_data": (block(5, 3, 5, grid=2, rank=1),)}
    gm = gdap.GlobalMap([a0, d1])
    assert gm.owner((4,)) == (1, (1,))


def test_empty_dicts_resolved_from_local_shapes():
    gm = gdap.GlobalMap([({}, block(4, 0, 2, grid=2, rank=0)), ({}, block(4, 2, 4, grid=2, rank=1))],
                        local_shapes=[(3, 2), (3, 2)])
    assert gm.shape == (3, 4)


def test_cross_process_errors_name_the_rank():
    ranks = layout()
    ranks[3] = (block(6, 2, 6, grid=2, rank=1), cyclic(5, 2, 1))
    with pytest.raises(gdap.ProtocolError, match="rank"):
        gdap.GlobalMap(ranks)


# Hunt 11 item 7b: a type error in one rank's dim_data names that rank, as the range errors do.
@pytest.mark.parametrize("rule,key,value,error,words", [
    ("a float size", "size", 9.0, gdap.ProtocolError, "rank 2, dimension 0 ('b'): key 'size' must be an integer, not float 9.0"),
    ("a string stop", "stop", "9", gdap.ProtocolError, "rank 2, dimension 0 ('b'): key 'stop' must be an integer, not string '9'"),
    ("a size past int64", "size", 2**63, gdap.SizeOverflowError, "rank 2, dimension 0 ('b'): key 'size' (9223372036854775808) does not fit"),
])
def test_a_type_error_in_one_ranks_dim_data_names_the_rank(rule, key, value, error, words):
    ranks = [(block(9, 3 * r, 3 * r + 3, grid=3, rank=r),) for r in range(3)]
    ranks[2] = (dict(ranks[2][0], **{key: value}),)
    with pytest.raises(error) as caught:
        gdap.GlobalMap(ranks)
    assert str(caught.value).startswith(words), "%s: %s" % (rule, caught.value)


@pytest.mark.parametrize("rank,grid,coords", [(0, (2, 2), (0, 0)), (1, (2, 2), (0, 1)), (5, (2, 3), (1, 2)),
                                              (7, (2, 2, 2), (1, 1, 1))])
def test_grid_coordinates_are_c_order(rank, grid, coords):
    assert gdap.grid_rank_to_coords(rank, grid) == coords
    assert gdap.grid_coords_to_rank(coords, grid) == rank


def test_grid_rank_outside():
    with pytest.raises(gdap.OutOfRangeError):
        gdap.grid_rank_to_coords(4, (2, 2))


# Pickling and equality: a map pickles as every rank's dim_data and unpickles to an equal map, which
# answers every look-up the same. Each case names the layout it round-trips.
PICKLED = [
    ("block x cyclic on 2x2", lambda: gdap.GlobalMap(layout())),
    ("padded periodic blocks", lambda: gdap.GlobalMap([(dict(block(8, 0, 5, grid=2, rank=0), padding=(0, 1), periodic=True),),
                                                       (dict(block(8, 3, 8, grid=2, rank=1), padding=(1, 0), periodic=True),)])),
    ("block-cyclic", lambda: gdap.GlobalMap([(cyclic(10, 2, r, block_size=3),) for r in range(2)])),
    ("unstructured", lambda: gdap.GlobalMap([(unstructured(5, [4, 0, 2], grid=2, rank=0),),
                                             (unstructured(5, [1, 3], grid=2, rank=1),)])),
    ("root", lambda: gdap.GlobalMap.root(3, (4, 2), root=1)),
    ("replicated", lambda: gdap.GlobalMap.replicated(2, (3,))),
]


@pytest.mark.parametrize("rule,make", PICKLED, ids=[case[0] for case in PICKLED])
def test_pickle_round_trips_equal(rule, make):
    with make() as m:
        again = pickle.loads(pickle.dumps(m))
        assert again == m and hash(again) == hash(m) and again is not m
        assert (again.shape, again.grid_shape, again.nranks) == (m.shape, m.grid_shape, m.nranks)
        for r in range(m.nranks):
            assert again.local_shape(r) == m.local_shape(r) and again.owned_count(r) == m.owned_count(r)
        for g in np.ndindex(*m.shape):
            assert again.owners(g) == m.owners(g)
        again.close()


def test_equality_is_the_distribution():
    with gdap.GlobalMap(layout()) as a, gdap.GlobalMap(layout()) as b, gdap.GlobalMap.replicated(4, (6, 5)) as c:
        assert a == b and hash(a) == hash(b)  # built twice from the same dim_data
        assert a != c  # same shape and rank count, another distribution
        assert a != layout()  # not a map at all
        assert {a: 1}[b] == 1  # usable as a dict key


def test_a_closed_map_equals_only_itself_and_does_not_pickle():
    m = gdap.GlobalMap(layout())
    other = gdap.GlobalMap(layout())
    m.close()
    assert m == m and m != other
    with pytest.raises(ValueError, match="closed"):
        pickle.dumps(m)
    other.close()
