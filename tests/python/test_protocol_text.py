"""DAP 0.10 read to the letter (issue 22, and issue 27's out-of-range unstructured indices): each case
is one of the issue's reproducers, named after the rule of the protocol text it checks.

B(n, P, r, s, e, **k) is the issue's shorthand for a block dimension dict."""
import pathlib
import re

import numpy as np
import pytest

import gdap
from conftest import rank_errors


def B(n, P, r, s, e, **k):
    return dict(dist_type="b", size=n, proc_grid_size=P, proc_grid_rank=r, start=s, stop=e, **k)


def U(n, P, r, indices, **k):
    return dict(dist_type="u", size=n, proc_grid_size=P, proc_grid_rank=r, indices=indices, **k)


# ---- 1. periodic block dimensions: start >= 0, stop <= size, edge padding is boundary padding ----

def test_periodic_padded_single_rank_is_valid_as_the_text_says():
    # "Block-distributed dimensions with proc_grid_size == 1 and with the periodic and padding keys
    # present are valid." (upstream test_undistributed_padded_periodic)
    dims = (B(10, 1, 0, 0, 10, padding=(2, 2), periodic=True),)
    assert gdap.validate(dims, (10,)) is None
    assert gdap.dim_owned_count(dims[0]) == 10  # boundary padding is owned, counted in size


def test_periodic_exports_never_carry_a_negative_start():
    for r, (s, e) in enumerate([(0, 6), (4, 10)]):
        a = gdap.empty((B(10, 2, r, s, e, padding=(1, 1), periodic=True),))
        d = a.__distarray__()["dim_data"][0]
        assert 0 <= d["start"] <= d["stop"] <= d["size"], d
        assert [a.local_to_global((i,))[0] for i in range(6)] == list(range(s, e))  # no wrap in the map
        a.close()


@pytest.mark.parametrize("rule, dims, shape, words", [
    ("a wrap as start = -padding[0] is refused", (B(10, 2, 0, -1, 6, padding=(1, 1), periodic=True),), (7,),
     ["dimension 0 ('b')", "start (-1) < 0", "counted in size"]),
    ("a wrap as stop = size + padding[1] is refused", (B(10, 2, 1, 4, 11, padding=(1, 1), periodic=True),), (7,),
     ["dimension 0 ('b')", "stop (11) > size (10)", "periodic too"]),
])
def test_the_old_wrap_form_is_refused_with_the_reading(rule, dims, shape, words):
    with pytest.raises(gdap.ProtocolError) as info:
        gdap.validate(dims, shape)
    for w in words:
        assert w in str(info.value), (rule, str(info.value))


def test_periodic_halo_fills_boundary_padding_from_the_opposite_edge():
    # One rank, size 10, boundary padding (2, 2): cells 0, 1 mirror 6, 7 and cells 8, 9 mirror 2, 3.
    gmap = gdap.GlobalMap([(B(10, 1, 0, 0, 10, padding=(2, 2), periodic=True),)])
    comm = gdap.group(1)[0]
    section = np.arange(10.0)
    section[[0, 1, 8, 9]] = -1
    gdap.halo_exchange(comm, gdap.Halo(gmap, np.float64, comm), section)
    np.testing.assert_array_equal(section, [6, 7, 2, 3, 4, 5, 6, 7, 2, 3])


# ---- 2. and 3. padding optional per dictionary; boundary padding may differ on edge processes ----

def test_padding_given_on_some_ranks_only_is_accepted():
    gmap = gdap.GlobalMap([(B(10, 2, 0, 0, 5, padding=(1, 0)),), (B(10, 2, 1, 5, 10),)])
    assert gmap.dim_data(0)[0]["padding"] == (1, 0) and "padding" not in gmap.dim_data(1)[0]


def test_a_missing_padding_still_meets_its_neighbours_communication_padding():
    with pytest.raises(gdap.ProtocolError, match=r"rank 1, dimension 0 \('b'\): communication padding\[0\] "
                                                 r"\(0, 'padding' not given\) != padding\[1\] \(1\)"):
        gdap.GlobalMap([(B(10, 2, 0, 0, 6, padding=(0, 1)),), (B(10, 2, 1, 5, 10),)])


def test_edge_processes_may_differ_in_boundary_padding():
    # 2 x 2: ranks 0 and 2 share grid coordinate 0 of dimension 1; rank 2 gives boundary padding 2.
    rows = [B(4, 2, 0, 0, 2), B(4, 2, 1, 2, 4)]
    cols = [B(6, 2, 0, 0, 3), B(6, 2, 1, 3, 6)]
    ranks = [(rows[r // 2], dict(cols[r % 2])) for r in range(4)]
    ranks[2][1]["padding"] = (2, 0)
    gmap = gdap.GlobalMap(ranks)
    assert gmap.dim_data(2)[1]["padding"] == (2, 0) and "padding" not in gmap.dim_data(0)[1]
    ranks[2][1]["padding"] = (0, 1)  # communication padding must still agree
    with pytest.raises(gdap.ProtocolError, match=r"rank 2, dimension 1 \('b'\).*communication padding\[1\] \(1 vs 0\)"):
        gdap.GlobalMap(ranks)


# ---- 4. version 0.9 and its 'n' ------------------------------------------------------------------

def test_version_0_9_is_refused_saying_why():
    with pytest.raises(gdap.VersionError, match=r"0\.9\.0 is older than 0\.10.*dist_type 'n'"):
        gdap.from_distarray({"__version__": "0.9.0", "buffer": np.zeros(4), "dim_data": ({"dist_type": "n", "size": 4},)})


def test_dist_type_n_names_what_0_10_writes():
    with pytest.raises(gdap.ProtocolError, match=r"dimension 0: dist_type 'n' is not 'b', 'c' or 'u' \('n', "
                                                 r"undistributed, is DAP 0\.9's; 0\.10 writes the empty dictionary"):
        gdap.validate(({"dist_type": "n", "size": 4},), (4,))


# ---- 5. exact index arithmetic near the int64 limits ------------------------------------------------

def test_periodic_lookup_near_int64_limits_is_exact():
    d = B(2 ** 63 - 1, 1, 0, 0, 2 ** 63 - 1, periodic=True)
    with pytest.raises(gdap.NotFoundError):
        gdap.dim_global_to_local(d, -2 ** 63 + 1)  # was 2: an overflow in the wrap
    assert gdap.dim_global_to_local(d, 2 ** 63 - 2) == 2 ** 63 - 2
    with pytest.raises(gdap.SizeOverflowError, match="global"):
        gdap.dim_global_to_local(d, 2 ** 70)


# ---- 6. messages name the dimension, the disagreeing rank and the key ---------------------------

def test_a_grid_that_does_not_count_the_ranks_names_rank_dimension_and_key():
    with pytest.raises(gdap.ProtocolError, match=r"rank 1, dimension 0 \('b'\): proc_grid_size \(2\) != rank 0's \(3\)"):
        gdap.GlobalMap([(B(10, 3, 0, 0, 5),), (B(10, 2, 1, 5, 10),)])


def test_a_gap_names_start_and_stop():
    with pytest.raises(gdap.ProtocolError) as info:
        gdap.GlobalMap([(B(10, 2, 0, 0, 4),), (B(10, 2, 1, 5, 10),)])
    for w in ("rank 1, dimension 0 ('b')", "start 5", "stop 4", "a gap, [4, 5) owned by no rank"):
        assert w in str(info.value), str(info.value)


# ---- 7. gdap's exception classes, never bare TypeError / OverflowError / BufferError ------------

@pytest.mark.parametrize("rule, call, cls, words", [
    ("padding given as a set", lambda: gdap.validate((B(10, 1, 0, 0, 10, padding={1, 2}),)), gdap.ProtocolError,
     ["dimension 0 ('b')", "key 'padding'"]),
    ("a shape entry past int64", lambda: gdap.validate((B(10, 1, 0, 0, 10),), (2 ** 70,)), gdap.SizeOverflowError,
     ["dimension 0", "shape[0]", "int64"]),
    ("a shape entry that is no integer", lambda: gdap.validate((B(10, 1, 0, 0, 10),), ("10",)),
     gdap.InvalidArgumentError, ["dimension 0", "shape[0]"]),
    ("an index entry past int64", lambda: gdap.empty((3,)).global_to_local((2 ** 64,)), gdap.SizeOverflowError,
     ["dimension 0", "global[0]"]),
    ("a structured dtype", lambda: gdap.from_distarray({"__version__": "0.10.0", "dim_data": ({},),
                                                        "buffer": np.zeros(3, dtype=[("a", "<i4")])}),
     gdap.UnsupportedError, ["key 'buffer'", "cannot be shared without a copy"]),
    ("an object dtype", lambda: gdap.from_distarray({"__version__": "0.10.0", "dim_data": ({},),
                                                     "buffer": np.array([1, "x"], dtype=object)}),
     gdap.UnsupportedError, ["dtype object cannot be shared without a copy"]),
    ("a byte-swapped dtype", lambda: gdap.from_dlpack(np.zeros(3, dtype=np.dtype(np.float64).newbyteorder())),
     gdap.UnsupportedError, ["cannot be shared without a copy"]),
])
def test_gdap_errors_not_bare_python_ones(rule, call, cls, words):
    with pytest.raises(cls) as info:
        call()
    for w in words:
        assert w in str(info.value), (rule, str(info.value))


# ---- 8. one_to_one unstructured dimensions hold every index of [0, size) exactly once ----------

@pytest.mark.parametrize("rule, ranks, words", [
    ("an index below 0", [U(3, 2, 0, [-1, 0], one_to_one=True), U(3, 2, 1, [2], one_to_one=True)],
     ["rank 0, dimension 0 ('u')", "indices[0] (-1) is outside [0, size (3))", "held exactly once"]),
    ("an index past size, replicas allowed", [U(3, 2, 0, [0, 1]), U(3, 2, 1, [1, 7])],
     ["rank 1, dimension 0 ('u')", "indices[1] (7) is outside [0, size (3))"]),
    ("an index nobody holds", [U(3, 2, 0, [0], one_to_one=True), U(3, 2, 1, [2], one_to_one=True)],
     ["dimension 0 ('u')", "global index 1 of [0, size (3)) is held by no rank"]),
])
def test_unstructured_indices_cover_exactly_zero_to_size(rule, ranks, words):
    with pytest.raises(gdap.ProtocolError) as info:
        gdap.GlobalMap([(d,) for d in ranks])
    for w in words:
        assert w in str(info.value), (rule, str(info.value))


def test_a_reduction_over_out_of_range_indices_is_refused_up_front():
    """Issue 27: such indices reached the reductions and failed there with GDAP_ERR_INTERNAL."""
    comms = gdap.group(2)
    indices = [[0, 5], [1, 2]]  # 5 is past size 3
    for c in comms:
        c.set_timeout(30)
    sections = [gdap.from_dlpack(np.ones(2), (U(3, 2, r, indices[r], one_to_one=True),)) for r in range(2)]
    results = [gdap.empty((B(3, 2, r, [0, 2][r], [2, 3][r]),)) for r in range(2)]
    errors = rank_errors(2, lambda r: gdap.reduce_scatter(comms[r], sections[r], results[r]))
    for e in errors:
        assert isinstance(e, (gdap.ProtocolError, gdap.RemoteError)), repr(e)
        assert not isinstance(e, gdap.InternalError)
    assert "indices[1] (5) is outside [0, size (3))" in str(errors[0])


# ---- the cases upstream's tests/test_validator.py calls valid -------------------------------------

def C(n, P, r, s, **k):
    return dict(dist_type="c", size=n, proc_grid_size=P, proc_grid_rank=r, start=s, **k)


UPSTREAM_VALID = [  # (upstream test, buffer, dim_data); written from the upstream cases, not copied
    ("test_block", np.ones(10), (B(50, 2, 0, 0, 10),)),
    ("test_unstructured", np.ones(7), (U(50, 2, 1, np.array([1, 22, 44, 49, 9, 33, 21], dtype=np.uint32)),)),
    ("test_extra_process", b"a", (C(3, 4, 0, 0),)),
    ("test_empty_process", b"", (C(3, 4, 3, 3),)),
    ("test_empty_dict_alias", b"", ({},)),
    ("test_undistributed_padded_periodic", np.ones(10), (B(10, 1, 0, 0, 10, padding=(2, 2), periodic=True),)),
]
# The two whose buffer contradicts their own dim_data (docs/protocol-notes.md, "The reference validator").
UPSTREAM_CONTRADICTED = [
    ("test_cyclic", np.ones(50), (C(50, 2, 0, 0),), "owned count (25) != buffer shape (50)"),
    ("test_block_cyclic", np.ones(50), (C(50, 2, 1, 5, block_size=5),), "owned count (25) != buffer shape (50)"),
]


@pytest.mark.parametrize("case, buffer, dim_data", UPSTREAM_VALID, ids=[c[0] for c in UPSTREAM_VALID])
def test_upstream_valid_cases_are_accepted(case, buffer, dim_data):
    local = gdap.from_distarray({"__version__": "0.10.0", "buffer": buffer, "dim_data": dim_data})
    assert local.shape == np.asarray(memoryview(buffer)).shape
    local.close()


@pytest.mark.parametrize("case, buffer, dim_data, words", UPSTREAM_CONTRADICTED,
                         ids=[c[0] for c in UPSTREAM_CONTRADICTED])
def test_upstream_cases_whose_buffer_contradicts_their_dim_data_are_refused_and_listed(case, buffer, dim_data, words):
    with pytest.raises(gdap.ProtocolError, match=r"dimension 0 \('c'\): " + re.escape(words)):
        gdap.from_distarray({"__version__": "0.10.0", "buffer": buffer, "dim_data": dim_data})
    notes = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "protocol-notes.md").read_text()
    assert "| `%s` |" % case in notes, "docs/protocol-notes.md must list %s as an exception" % case
