"""gdap.layout: one call per layout, each made by the C library. Every case names its rule and gives
the dictionaries (or local shapes) the ranks must get, written out by hand; bad arguments raise
gdap's own errors naming the axis and the value."""
import re

import numpy as np
import pytest

import gdap
from gdap import layout

from conftest import block, cyclic


def dims_of(gmap):
    return [gmap.dim_data(r) for r in range(gmap.nranks)]


CASES = [
    ("block: an int grid splits axis 0", lambda: layout.block((10, 4), 4),
     [(block(10, 0, 3, 4, 0), block(4, 0, 4)), (block(10, 3, 6, 4, 1), block(4, 0, 4)),
      (block(10, 6, 9, 4, 2), block(4, 0, 4)), (block(10, 9, 10, 4, 3), block(4, 0, 4))]),
    ("block: a grid per axis, ranks in C order", lambda: layout.block((4, 6), (2, 3)),
     [(block(4, 2 * (r // 3), 2 * (r // 3) + 2, 2, r // 3), block(6, 2 * (r % 3), 2 * (r % 3) + 2, 3, r % 3))
      for r in range(6)]),
    ("block: nranks alone balances a grid over every axis", lambda: layout.block((6, 6), nranks=4),
     [(block(6, 3 * (r // 2), 3 * (r // 2) + 3, 2, r // 2), block(6, 3 * (r % 2), 3 * (r % 2) + 3, 2, r % 2))
      for r in range(4)]),
    ("block: a free (0) axis takes what nranks leaves", lambda: layout.block((6, 8), (0, 2), nranks=6),
     [(block(6, 2 * (r // 2), 2 * (r // 2) + 2, 3, r // 2), block(8, 4 * (r % 2), 4 * (r % 2) + 4, 2, r % 2))
      for r in range(6)]),
    ("irregular: the given lengths, None for an undivided axis", lambda: layout.irregular((10, 3), [(1, 6, 3), None]),
     [(block(10, 0, 1, 3, 0), block(3, 0, 3)), (block(10, 1, 7, 3, 1), block(3, 0, 3)),
      (block(10, 7, 10, 3, 2), block(3, 0, 3))]),
    ("cyclic: start at the grid coordinate", lambda: layout.cyclic((7,), 3),
     [(cyclic(7, 3, 0),), (cyclic(7, 3, 1),), (cyclic(7, 3, 2),)]),
    ("block_cyclic: start at coordinate * block_size", lambda: layout.block_cyclic((10,), 2, 3),
     [(cyclic(10, 2, 0, 3),), (cyclic(10, 2, 1, 3),)]),
    ("padded: halo towards neighbours only", lambda: layout.padded((12,), 3, 2),
     [(block(12, 0, 6, 3, 0, padding=(0, 2)),), (block(12, 2, 10, 3, 1, padding=(2, 2)),),
      (block(12, 6, 12, 3, 2, padding=(2, 0)),)]),
    ("grid: a block axis and a block-cyclic one", lambda: layout.grid((4, 5), (2, 2), dist=("b", "c"), block_size=(1, 2)),
     [(block(4, 2 * (r // 2), 2 * (r // 2) + 2, 2, r // 2), cyclic(5, 2, r % 2, 2)) for r in range(4)]),
]


@pytest.mark.parametrize("rule,make,expected", CASES, ids=[c[0] for c in CASES])
def test_layout_gives_the_dictionaries(rule, make, expected):
    gmap = make()
    assert isinstance(gmap, gdap.GlobalMap)
    assert dims_of(gmap) == [tuple(d) for d in expected]


def test_periodic_edges_hold_boundary_padding_inside_size():
    # 8 interior cells and a halo of 1 make size 10; the interior splits evenly, the edges add a cell.
    gmap = layout.periodic((10,), 2, 1)
    assert dims_of(gmap) == [(block(10, 0, 6, 2, 0, padding=(1, 1), periodic=True),),
                             (block(10, 4, 10, 2, 1, padding=(1, 1), periodic=True),)]


def test_unstructured_rows_per_rank_and_whole_tails():
    gmap = layout.unstructured((5, 2), [[4, 0], [2, 1, 3]], one_to_one=True)
    d0, d1 = gmap.dim_data(0), gmap.dim_data(1)
    assert list(d0[0]["indices"]) == [4, 0] and list(d1[0]["indices"]) == [2, 1, 3]
    assert d0[0]["one_to_one"] is True and d0[1] == block(2, 0, 2)
    assert gmap.owner((3, 1)) == (1, (2, 1))


def test_replicated_and_root_are_the_collective_layouts():
    assert layout.replicated((3, 2), 4).local_shape(3) == (3, 2)
    root = layout.root((3, 2), 4, root=2)
    assert [root.local_shape(r) for r in range(4)] == [(0, 2), (0, 2), (3, 2), (0, 2)]


BALANCE = [
    ("12 over two free axes is 4 x 3", (12, 2), (4, 3)),
    ("fixed extents are kept", (12, (0, 2, 0)), (3, 2, 2)),
    ("a prime stays on one axis", (7, 2), (7, 1)),
]


@pytest.mark.parametrize("rule,args,expected", BALANCE, ids=[c[0] for c in BALANCE])
def test_balance(rule, args, expected):
    assert layout.balance(*args) == expected


BAD = [
    ("lengths sum to size", lambda: layout.irregular((10,), [(4, 4)]), gdap.InvalidArgumentError,
     "axis 0: the block lengths sum to 8, not to size 10"),
    ("a halo reaches at most a neighbour's block", lambda: layout.padded((10,), 4, 2), gdap.InvalidArgumentError,
     "axis 0: halo 2 is wider than the 1 cells that grid coordinate 3 owns"),
    ("block_size >= 1", lambda: layout.block_cyclic((10,), 2, 0), gdap.InvalidArgumentError,
     "axis 0 ('c'): block_size (0) < 1"),
    ("grid extents >= 1", lambda: layout.block((10,), (0,), nranks=0), gdap.InvalidArgumentError, "nranks (0) < 1"),
    ("a grid of the shape's length", lambda: layout.block((10, 4), (2, 1, 1)), ValueError, "grid (2, 1, 1) has 3 axes"),
    ("fixed extents divide nranks", lambda: layout.block((10, 4), (3, 0), nranks=4), gdap.InvalidArgumentError,
     "multiply to 3, which does not divide 4 ranks"),
    ("dist is 'b' or 'c'", lambda: layout.grid((4,), 2, dist="u"), ValueError, "axis 0: dist 'u'"),
    ("a periodic halo needs an interior of halo cells", lambda: layout.periodic((5,), 2, 2), gdap.InvalidArgumentError,
     "axis 0 ('b'): a periodic halo of 2 fills each edge from the opposite edge's interior"),
    ("unstructured indices unique with one_to_one", lambda: layout.unstructured((3,), [[0, 1], [1, 2]], one_to_one=True),
     gdap.ProtocolError, "rank"),
    ("a grid or nranks", lambda: layout.block((4,)), TypeError, "give grid"),
]


@pytest.mark.parametrize("rule,make,error,words", BAD, ids=[c[0] for c in BAD])
def test_bad_layout_arguments_are_named(rule, make, error, words):
    with pytest.raises(error, match=re.escape(words)):
        make()


def test_layout_maps_move_data():
    """A layout made in one call is an ordinary map: a plan moves data between two of them."""
    comms = gdap.group(1)
    src, dst = layout.block((6, 4), 1), layout.cyclic((6, 4), 1)
    plan = gdap.Plan(src, dst, np.float64, comms[0])
    out = gdap.redistribute(comms[0], plan, np.arange(24.0).reshape(6, 4), np.zeros((6, 4)))
    assert (out == np.arange(24.0).reshape(6, 4)).all()
