"""The Python layer against hostile-input hunt 12 (single controller on the host): a pending
reduction is performed before any read (astype, mean), a bool is no index, axis, count, rank or
extent, a string is no flag, unstructured indices must be integers, and the messages name what was
wrong. Each test names its rule. (The SPMD Zarr cases run over MPI: test_zarr_fail_fast_mpi.py.)"""
import numpy as np
import pytest

import gdap
from gdap import layout


def _pending_sum():
    # Two replicas of 4 elements holding partial sums: the values are 11 22 33 44.
    parts = [np.array([1, 2, 3, 4], np.int64), np.array([10, 20, 30, 40], np.int64)]
    return gdap.GlobalArray.from_sections(parts, layout.replicated((4,), 2), pending="sum")


def test_astype_performs_the_pending_reduction_first():
    # Rule: astype converts the values, not one replica's partial values.
    got = _pending_sum().astype(np.float64)
    assert got.pending is None
    assert np.array_equal(got.get(), [11.0, 22.0, 33.0, 44.0]), got.get()


def test_mean_of_a_pending_integer_array_is_the_mean_of_its_values():
    # Rule: mean of integers goes through astype(float64), which must settle first.
    assert _pending_sum().mean() == 27.5


def test_halo_exchange_of_a_pending_array_is_refused():
    # Rule: partial values never fill padding; the message says how to settle.
    parts = [np.ones(5), np.ones(5)]
    a = gdap.GlobalArray.from_sections(parts, layout.padded((8,), 2, halo=1), pending="sum")
    with pytest.raises(gdap.InvalidArgumentError, match="partial values .pending sum.*settled"):
        a.halo_exchange()


def _matrix():
    return gdap.distribute(np.arange(12.0).reshape(3, 4), layout.block((3, 4), 2))


@pytest.mark.parametrize("key", [True, False, (True, 0), (0, np.bool_(True))], ids=str)
def test_a_bool_is_no_index(key):
    # Rule: NumPy reads a[True] as a mask adding an axis; gdap must not read it as a[1].
    with pytest.raises(TypeError, match="is a boolean: NumPy reads True / False as a mask"):
        _matrix()[key]


@pytest.mark.parametrize("axis", [True, np.bool_(False), (0, True)], ids=str)
def test_a_bool_is_no_axis(axis):
    # Rule: a.sum(axis=True) is a TypeError in NumPy, not the sum over axis 1.
    with pytest.raises(TypeError, match="axis must be an integer, not boolean"):
        _matrix().sum(axis=axis)


def test_a_bool_is_no_axis_of_gdap_reduce_axes():
    # Rule: the section-level reduce_axes reads its axis the same way.
    comm = gdap.group(1)[0]
    with pytest.raises(TypeError, match="axis must be an integer, not boolean True"):
        gdap.reduce_axes(comm, np.zeros((2, 3)), np.zeros(3), "sum", axis=True)


@pytest.mark.parametrize("rows, kind", [([[0.0, 1.9], [2.5, 3.99]], "float64"), ([["0", "1"], ["2", "3"]], "<U1"),
                                        ([[0, 1], [True, False]], "bool")], ids=["floats", "strings", "bools"])
def test_unstructured_indices_must_be_integers(rows, kind):
    # Rule: layout.unstructured refuses what the dim_data path refuses, naming the rank (not int(1.9) = 1).
    rank = 1 if kind == "bool" else 0
    with pytest.raises(gdap.ProtocolError, match="rank %d: key 'indices' must hold integers, not %s" % (rank, kind)):
        layout.unstructured((4,), rows)


def test_unstructured_takes_every_integer_dtype():
    # Rule: the check refuses non-integers only: int32 and uint8 index arrays still make the layout.
    m = layout.unstructured((4,), [np.array([3, 0], np.int32), np.array([1, 2], np.uint8)])
    assert list(m.dim_data(0)[0]["indices"]) == [3, 0] and list(m.dim_data(1)[0]["indices"]) == [1, 2]


def _odd_calls():
    comm = gdap.group(1)[0]
    m = layout.padded((8,), 2, halo=1)
    a = gdap.distribute(np.arange(8.0), layout.block((8,), 2))
    return {  # name: (call, message)
        "group(True)": (lambda: gdap.group(True), "nranks must be an integer, not boolean True"),
        "block grid True": (lambda: layout.block((8,), True), "grid must be an integer, not boolean True"),
        "block grid (2, True)": (lambda: layout.block((8, 8), (2, True)), r"grid\[1\] must be an integer"),
        "block shape 8.0": (lambda: layout.block((8.0,), 1), r"shape\[0\] must be an integer, not float 8.0"),
        "padded halo True": (lambda: layout.padded((8,), 2, halo=True), r"halo\[0\] must be an integer"),
        "block_cyclic block_size 2.5": (lambda: layout.block_cyclic((8,), 2, 2.5), r"block_size\[0\] must be an integer"),
        "periodic 'no'": (lambda: layout.block((9,), 1, periodic="no"), r"periodic\[0\] must be True or False, not string 'no'"),
        "periodic 1": (lambda: layout.block((9,), 1, periodic=1), r"periodic\[0\] must be True or False, not int 1"),
        "irregular lengths 4.5": (lambda: layout.irregular((9,), [[4.5, 4.5]]), r"lengths\[0\]\[0\] must be an integer"),
        "unstructured one_to_one 'yes'": (lambda: layout.unstructured((2,), [[0, 1]], one_to_one="yes"),
                                          "one_to_one must be True or False"),
        "replicated nranks True": (lambda: layout.replicated((4,), True), "nranks must be an integer, not boolean"),
        "root root=True": (lambda: layout.root((4,), 2, root=True), "root must be an integer, not boolean True"),
        "balance nranks 4.0": (lambda: layout.balance(4.0, 2), "nranks must be an integer, not float 4.0"),
        "gather root=True": (lambda: a.gather(root=True), "root must be an integer, not boolean True"),
        "section(True)": (lambda: a.section(True), "rank must be an integer, not boolean True"),
        "local_view(np.True_)": (lambda: a.local_view(np.True_), "rank must be an integer, not boolean True"),
        "distribute root=True": (lambda: gdap.distribute(np.arange(8.0), layout.block((8,), 2), root=True),
                                 "root must be an integer, not boolean True"),
        "Halo widths [0.9]": (lambda: gdap.Halo(m, np.float64, 0, widths=[0.9]), r"widths\[0\] must be an integer, not float 0.9"),
        "Halo corners 'no'": (lambda: gdap.Halo(m, np.float64, 0, corners="no"), "corners must be True or False"),
        "Halo rank True": (lambda: gdap.Halo(m, np.float64, True), "rank .an int or this rank's gdap.Comm. must be an integer"),
        "Plan rank 1.0": (lambda: gdap.Plan(m, m, np.float64, 1.0), "rank .an int or this rank's gdap.Comm. must be an integer, not float"),
        
        "Comm.set_stream(True)": (lambda: comm.set_stream(True), "stream must be an address .int. or None, not boolean True"),
        "wrap address 1.5": (lambda: gdap.wrap(1.5, np.float64, (1,)), "address must be an integer, not float 1.5"),
        "Gemm panel_width True": (lambda: gdap.Gemm(comm, *[layout.block((2, 2), 1)] * 3, np.float64, panel_width=True),
                                  "panel_width must be an integer, not boolean True"),
    }


@pytest.mark.parametrize("name", list(_odd_calls()))
def test_a_bool_float_or_string_is_no_integer_or_flag(name):
    # Rule: True is no count, rank or extent, 0.9 no width, 'no' no flag: TypeError naming the argument.
    call, message = _odd_calls()[name]
    with pytest.raises(TypeError, match=message):
        call()


@pytest.mark.parametrize("query", ["dim_data", "local_shape", "owned_shape", "owned_count", "runs", "local_to_global"])
def test_a_bool_is_no_rank_of_a_map_query(query):
    # Rule: m.local_shape(True) is no question about rank 1.
    m = layout.block((8,), 2)
    extra = {"runs": (0,), "local_to_global": ((0,),)}.get(query, ())
    with pytest.raises(TypeError, match="rank must be an integer, not boolean True"):
        getattr(m, query)(True, *extra)


@pytest.mark.parametrize("index", [True, (np.bool_(False),), (1.0,)], ids=repr)
def test_a_bool_or_float_is_no_global_index(index):
    # Rule: m.owner(True) is no element 1 (an index entry that is no integer: gdap's own index error).
    with pytest.raises(gdap.InvalidArgumentError, match=r"dimension 0: global\[0\] must be an integer, not (boolean|float)"):
        layout.block((8,), 2).owner(index)


def test_a_bool_is_no_role():
    # Rule: roles=(True, 0) is no permutation (True was rank 1); the roles' own error class.
    m = layout.block((8,), 2)
    with pytest.raises(gdap.InvalidArgumentError, match=r"roles\[0\] must be an integer, not boolean True"):
        gdap.Plan(m, m, np.float64, 0, roles=(True, 0))


def test_numpy_integers_and_bools_are_still_taken():
    # Rule: the strict readers refuse only what is not an integer / a flag.
    m = layout.block((np.int64(8),), np.int32(2), periodic=np.bool_(False))
    assert m.nranks == 2 and gdap.Plan(m, m, np.float64, np.int64(1)).rank == 1
    assert layout.root((4,), np.int64(2), root=np.int8(1)).local_shape(1) == (4,)


@pytest.mark.parametrize("how", ["gdap.save_zarr", "GlobalArray.save_zarr"])
@pytest.mark.parametrize("overwrite", ["no", 0, None], ids=repr)
def test_overwrite_must_be_a_bool_and_the_store_survives(tmp_path, how, overwrite):
    # Rule: save_zarr(overwrite='no') must not replace the store (bool('no') is True).
    path = tmp_path / "a.zarr"
    whole = np.arange(8.0)
    a = gdap.distribute(whole, layout.block((8,), 1))
    a.save_zarr(path)
    with pytest.raises(TypeError, match="overwrite must be True or False, not"):
        if how == "gdap.save_zarr":
            gdap.save_zarr(gdap.group(1)[0], layout.block((8,), 1), np.zeros(8), path, overwrite=overwrite)
        else:
            (a * 0).save_zarr(path, overwrite=overwrite)
    assert np.array_equal(gdap.GlobalArray.load_zarr(path, nranks=1).get(), whole)


@pytest.mark.parametrize("kwargs, message", [({"level": "x"}, "level must be an integer, not string 'x'"),
                                             ({"level": 1.5}, "level must be an integer, not float 1.5"),
                                             ({"shards": "no"}, "shards must be True or False"),
                                             ({"chunk_bytes": True}, "chunk_bytes must be an integer")], ids=str)
def test_zarr_options_are_read_strictly(tmp_path, kwargs, message):
    # Rule: int('x') / int(1.5) / bool('no') are no reading of a level, a chunk size or a flag.
    with pytest.raises(TypeError, match=message):
        gdap.save_zarr(gdap.group(1)[0], layout.block((8,), 1), np.zeros(8), tmp_path / "b.zarr", **kwargs)


def test_plan_and_halo_take_a_numpy_rank():
    # Rule: Plan(..., np.int64(1)) was AttributeError "'numpy.int64' object has no attribute 'rank'".
    m = layout.padded((8,), 2, halo=1)
    assert gdap.Plan(m, m, np.float64, np.int64(1)).rank == 1
    assert gdap.Halo(m, np.float64, np.int32(1)).rank == 1


@pytest.mark.parametrize("ranks", [1, 4])
def test_matmul_into_a_layout_over_other_ranks_says_so(ranks):
    # Rule: not "rank 1 is outside [0, 1)": the result layout spans fewer (more) ranks than the array.
    a = gdap.distribute(np.eye(4), layout.block((4, 4), 2))
    with pytest.raises(gdap.InvalidArgumentError, match="the result layout spans %d ranks but the array has 2" % ranks):
        a.matmul(a, layout=layout.block((4, 4), ranks))


def test_global_save_zarr_names_every_codec(tmp_path):
    # Rule: the codec message lists every codec save_zarr takes (blosc ones included).
    a = gdap.distribute(np.arange(4.0), layout.block((4,), 1))
    with pytest.raises(ValueError, match="codec must be 'zstd', 'blosc-lz4', 'blosc-zstd' or 'raw'"):
        a.save_zarr(tmp_path / "c.zarr", codec="lz4")
    a.save_zarr(tmp_path / "c.zarr", codec="blosc-lz4")
    assert np.array_equal(gdap.GlobalArray.load_zarr(tmp_path / "c.zarr", nranks=1).get(), np.arange(4.0))


class _CaiProducer:
    """A __cuda_array_interface__ producer that is never read: the stream entry is refused first."""

    def __init__(self, stream):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (0x1000, False), "version": 3,
                                         "strides": None, "stream": stream}


@pytest.mark.parametrize("stream, message", [(0, "is 0, which the interface disallows"),
                                             (-5, "is -5: a stream is None, 1, 2 or a cudaStream_t"),
                                             (True, "must be an integer, not boolean True"),
                                             ("1", "must be an integer, not string '1'"),
                                             (1.0, "must be an integer, not float 1.0")], ids=repr)
def test_a_cuda_array_interface_stream_is_checked_before_anything_is_made(stream, message):
    # Rule: CAI v3 disallows stream 0; a stream is None, 1, 2 or a cudaStream_t (an int).
    d = {"__version__": "0.10.0", "buffer": _CaiProducer(stream), "dim_data": ({},)}
    with pytest.raises(gdap.ProtocolError, match="__cuda_array_interface__ 'stream' " + message):
        gdap.from_distarray(d)


@pytest.mark.parametrize("stream", [None, 1, 2, np.int64(0x7F00DEAD0000), 0x55AA00001000], ids=repr)
def test_a_cuda_array_interface_stream_is_read_as_its_handle(stream):
    # Rule: 1 and 2 are the runtime's own handles of the legacy and per-thread default streams.
    from gdap._local import cai_stream
    got = cai_stream(_CaiProducer(stream).__cuda_array_interface__)
    assert got == (None if stream is None else int(stream)) and (got is None or type(got) is int)


# ---- review 12: the strict readers refused inputs taken before, or named them loosely ----------------------------


class _CommLike:
    """An mpi4py communicator as Plan and Halo read one: an object whose `rank` is an integer."""

    def __init__(self, rank):
        self._rank = rank

    @property
    def rank(self):
        return self._rank


def test_plan_and_halo_take_any_object_with_an_integer_rank():
    # Rule: review 12 #2: Plan(..., MPI.COMM_WORLD) worked before the strict readers and raised TypeError after.
    m = layout.padded((8,), 2, halo=1)
    assert gdap.Plan(m, m, np.float64, _CommLike(1)).rank == 1
    assert gdap.Plan(m, m, np.float64, _CommLike(np.int64(1))).rank == 1
    assert gdap.Halo(m, np.float64, _CommLike(1)).rank == 1


@pytest.mark.parametrize("rank, message", [(True, "boolean True"), (1.0, "float 1.0")], ids=repr)
def test_an_object_whose_rank_is_no_integer_is_refused(rank, message):
    # Rule: review 12 #2: .rank is read strictly too (a bool or float .rank is no rank 1).
    m = layout.padded((8,), 2, halo=1)
    for make in (lambda: gdap.Plan(m, m, np.float64, _CommLike(rank)), lambda: gdap.Halo(m, np.float64, _CommLike(rank))):
        with pytest.raises(TypeError, match=r"rank \(_CommLike.rank\) must be an integer, not %s" % message):
            make()


def test_a_0d_bool_array_is_a_flag():
    # Rule: review 12 #3: periodic=np.array(True) made a periodic layout before the strict readers.
    m = layout.grid(8, nranks=2, periodic=np.array(True), halo=1)
    assert m.dim_data(0)[0]["periodic"] is True
    assert layout.unstructured((4,), [[0, 1], [2, 3]], one_to_one=np.array(True)).nranks == 2
    with pytest.raises(TypeError, match="periodic.0. must be True or False, not ndarray"):
        layout.grid(8, nranks=2, periodic=np.array(1))


def test_unstructured_takes_one_scalar_row_per_rank():
    # Rule: review 12 #3: layout.unstructured(2, [0, 1]) (one row each) was refused as 0-d indices.
    m = layout.unstructured(2, [0, np.int64(1)])
    assert m.owner(1) == (1, (0,)) and m.owned_shape(0) == (1,)
    with pytest.raises(gdap.ProtocolError, match="rank 1: key 'indices' must hold integers, not float64"):
        layout.unstructured(2, [0, 1.5])
    with pytest.raises(gdap.ProtocolError, match="rank 0: key 'indices' must be a 1-d sequence or buffer of integers, not string"):
        layout.unstructured(2, ["0", 1])


def test_a_per_axis_argument_may_be_a_numpy_array():
    # Rule: review 12 #4: periodic=np.array([True, False]) is one flag per axis, not one ndarray for every axis.
    m = layout.grid((8, 4), (2, 1), periodic=np.array([True, False]), halo=np.array([1, 0]))
    assert m.dim_data(0) == layout.grid((8, 4), (2, 1), periodic=[True, False], halo=[1, 0]).dim_data(0)
    d = m.dim_data(0)
    assert d[0]["periodic"] is True and "periodic" not in d[1]
    assert d[0]["padding"] == (1, 1) and "padding" not in d[1]
    with pytest.raises(ValueError, match="halo has 3 values but the shape has 2 axes"):
        layout.grid((8, 4), (2, 1), halo=np.array([1, 0, 0]))


@pytest.mark.parametrize("query, label", [(lambda m: m.owner((1.5, 0)), "global"),
                                          (lambda m: m.owners((1.5, 0)), "global"),
                                          (lambda m: m.local_to_global(0, (1.5, 0)), "local"),
                                          (lambda m: _local_section(m).global_to_local((1.5, 0)), "global"),
                                          (lambda m: _local_section(m).local_to_global((1.5, 0)), "local")],
                         ids=["owner", "owners", "map.local_to_global", "LocalArray.global_to_local",
                              "LocalArray.local_to_global"])
def test_an_index_error_names_the_dimension_and_the_index(query, label):
    # Rule: review 12 #5: "dimension 0: global[0] must be an integer", as before, not "index[0]".
    with pytest.raises(gdap.InvalidArgumentError, match=r"dimension 0: %s\[0\] must be an integer, not float 1.5" % label):
        query(layout.block((4, 4), 2))


def _local_section(m):
    return gdap.GlobalArray.empty(m, np.float64).section(0)


@pytest.mark.parametrize("index", ["ab", b"ab"], ids=repr)
def test_a_string_is_no_index(index):
    # Rule: review 12 #5: owner("ab") is refused as a whole, not as "index[0] ... string 'a'".
    with pytest.raises(gdap.InvalidArgumentError, match="global index must be an integer or a sequence of integers, not"):
        layout.block((4, 4), 2).owner(index)
