"""gdap.GlobalArray in single-controller mode on the host: four ranks of an in-process group, each
section in host memory, the ranks' threads the Controller's. Every result is compared with NumPy on
the whole array; zero copy is proven by addresses. (SPMD mode over MPI: test_global_mpi.py; GPUs:
test_global_gpu.py.)"""
import numpy as np
import pytest

import gdap
from gdap import layout

P = 4
WHOLE = np.arange(7 * 6, dtype=np.float64).reshape(7, 6) * 1.5 - 20

LAYOUTS = {
    "row blocks": lambda shape: layout.block(shape, P),
    "column blocks": lambda shape: layout.block(shape, (1, P)),
    "2 x 2 blocks": lambda shape: layout.block(shape, (2, 2)),
    "irregular rows": lambda shape: layout.irregular(shape, [(0, 3, 1, shape[0] - 4), None]),
    "cyclic rows": lambda shape: layout.cyclic(shape, (P, 1)),
    "2 x 2 block-cyclic": lambda shape: layout.block_cyclic(shape, (2, 2), 2),
    "padded rows": lambda shape: layout.padded(shape, (2, 2), (1, 1)),
    "unstructured rows": lambda shape: layout.unstructured(shape, [[6, 0], [2], [5, 1, 3], [4]]),
    "replicated": lambda shape: layout.replicated(shape, P),
}
NAMES = list(LAYOUTS)


def ctrl():
    return gdap.Controller.of(P)


@pytest.mark.parametrize("name", NAMES)
def test_distribute_then_get_is_the_array(name):
    a = gdap.distribute(WHOLE, LAYOUTS[name](WHOLE.shape))
    assert a.mode == "controller" and a.nranks == P and a.shape == WHOLE.shape and a.dtype == WHOLE.dtype
    assert (a.get() == WHOLE).all() and (np.asarray(a) == WHOLE).all()
    assert (a.gather(2) == WHOLE).all() and (a.allgather() == WHOLE).all()


@pytest.mark.parametrize("src", NAMES)
@pytest.mark.parametrize("dst", ["row blocks", "2 x 2 block-cyclic", "padded rows", "unstructured rows", "replicated"])
def test_reshard_between_any_two_layouts(src, dst):
    a = gdap.distribute(WHOLE, LAYOUTS[src](WHOLE.shape))
    b = a.reshard(LAYOUTS[dst](WHOLE.shape))
    assert (b.get() == WHOLE).all() and (a.get() == WHOLE).all(), "the source is unchanged"
    assert all(b.section(r).data_ptr != a.section(r).data_ptr for r in range(P) if 0 not in b.section(r).shape)


def test_reshard_is_two_lines_and_reuses_its_plans():
    a = gdap.distribute(WHOLE, layout.block(WHOLE.shape, P))
    cols = layout.block(WHOLE.shape, (1, P))
    b = a.reshard(cols)
    assert (b.local_view(3) == WHOLE[:, 6:6]).all() and b.local_view(0).shape == (7, 2)
    plans = a.context.plans(a.layout, cols, a.dtype)
    a.reshard(cols)
    assert a.context.plans(a.layout, cols, a.dtype) is plans


def test_repeated_reshards_are_independent_and_right_after_any_other_move():
    # Rule: what reshard reuses between calls (plans, converted dimensions, dtype codes, each rank's
    # copies) never serves another layout, dtype or shape, and every result is new memory: an
    # earlier result keeps its values when a later reshard writes its own.
    rows, cols = layout.block(WHOLE.shape, P), layout.block(WHOLE.shape, (1, P))
    a = gdap.distribute(WHOLE, LAYOUTS["cyclic rows"](WHOLE.shape))
    first = a.reshard(rows)
    results = [first, a.reshard(cols), a.reshard(rows), a.reshard(LAYOUTS["2 x 2 block-cyclic"](WHOLE.shape))]
    results.append(a.reshard(rows))
    for b in results:
        assert (b.get() == WHOLE).all()
    assert len({b.section(1).data_ptr for b in results}) == len(results), "every result has its own memory"
    as32 = gdap.distribute(WHOLE.astype(np.float32), LAYOUTS["cyclic rows"](WHOLE.shape)).reshard(rows)
    assert as32.dtype == np.float32 and (as32.get() == WHOLE.astype(np.float32)).all()
    other = np.arange(5 * 9, dtype=np.float64).reshape(5, 9)
    assert (gdap.distribute(other, layout.cyclic(other.shape, (P, 1))).reshard(layout.block(other.shape, P)).get()
            == other).all()
    first.local_view(0)[...] = -1  # results share nothing with each other or the source
    assert (results[2].get() == WHOLE).all() and (a.get() == WHOLE).all()


def test_from_sections_shares_memory_both_ways():
    gmap = layout.block(WHOLE.shape, (2, 2))
    dealt = gdap.distribute(WHOLE, gmap)
    parts = [dealt.local_view(r).copy() for r in range(P)]
    a = gdap.GlobalArray.from_sections(parts, gmap)
    assert [a.section(r).data_ptr for r in range(P)] == [p.__array_interface__["data"][0] for p in parts]
    assert (a.get() == WHOLE).all()
    parts[3][0, 0] = 1e9  # global (4, 3)
    assert a[4, 3] == 1e9
    a.local_view(0)[0, 0] = -1e9
    assert parts[0][0, 0] == -1e9


def test_from_sections_of_local_arrays_needs_no_layout():
    gmap = layout.cyclic((8,), P)
    sections = [gdap.empty(gmap.dim_data(r), np.int32) for r in range(P)]
    for r, s in enumerate(sections):
        np.asarray(s)[:] = np.arange(r, 8, P)
    a = gdap.GlobalArray.from_sections(sections)
    assert (a.get() == np.arange(8)).all() and a.section(1) is sections[1]


def test_empty_and_zeros():
    z = gdap.GlobalArray.zeros(layout.padded((10, 4), P, 1), np.float32, devices=P)
    assert z.dtype == np.float32 and (z.get() == 0).all()
    assert all((z.local_view(r) == 0).all() for r in range(P)), "padding too"
    e = gdap.GlobalArray.empty(layout.block((9, 4), P), np.int64, devices=ctrl())
    assert e.shape == (9, 4) and e.context is ctrl()


KEYS = [
    ("an element", (3, 4)), ("negative indices", (-1, -6)), ("a row", 2), ("a column", (slice(None), 5)),
    ("a box", (slice(1, 5), slice(2, 4))), ("steps", (slice(None, None, 3), slice(1, None, 2))),
    ("negative steps", (slice(None, None, -2), slice(4, 0, -1))), ("an ellipsis", (Ellipsis, 1)),
    ("empty", (slice(3, 3), slice(None))), ("everything", Ellipsis),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("what,key", KEYS, ids=[k[0] for k in KEYS])
def test_getitem_reads_through_the_owners(name, what, key):
    a = gdap.distribute(WHOLE, LAYOUTS[name](WHOLE.shape))
    got, want = a[key], WHOLE[key]
    assert np.shape(got) == np.shape(want) and (np.asarray(got) == want).all()


BAD_KEYS = [
    ("an index past the end", (7, 0), IndexError, "axis 0: index 7 is out of bounds for size 7"),
    ("too many indices", (1, 2, 3), IndexError, "too many indices"),
    ("index lists on two axes", ([1, 2], [0, 1]), IndexError, "axes 0, 1: a GlobalArray takes an integer array"),
    ("None", (None,), TypeError, "axis 0: index None is not an integer"),
    ("two ellipses", (Ellipsis, Ellipsis), IndexError, "single ellipsis"),
]


@pytest.mark.parametrize("what,key,error,words", BAD_KEYS, ids=[b[0] for b in BAD_KEYS])
def test_bad_keys_are_named(what, key, error, words):
    a = gdap.distribute(WHOLE, layout.block(WHOLE.shape, P))
    with pytest.raises(error, match=words):
        a[key]


INTS = np.arange(1, 7 * 6 + 1, dtype=np.int64).reshape(7, 6) % 5 + 1


@pytest.mark.parametrize("name", ["row blocks", "2 x 2 block-cyclic", "padded rows", "unstructured rows", "replicated"])
@pytest.mark.parametrize("op", ["sum", "prod", "min", "max", "mean"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_reductions_count_each_element_once(name, op, axis):
    for whole in (WHOLE / 10, INTS):
        a = gdap.distribute(whole, LAYOUTS[name](whole.shape))
        got = getattr(a, op)(axis)
        want = getattr(np, op)(whole, axis=axis)
        if isinstance(got, gdap.GlobalArray):
            assert got.shape == want.shape
            got = got.get()
        assert np.allclose(got, want, rtol=1e-12), (op, axis)


def test_elementwise_between_arrays_of_one_layout_and_with_scalars():
    gmap = layout.block_cyclic(WHOLE.shape, (2, 2), 2)
    a, b = gdap.distribute(WHOLE, gmap), gdap.distribute(WHOLE * 2 + 100, gmap)
    for got, want in [(a + b, WHOLE + (WHOLE * 2 + 100)), (a - b, WHOLE - (WHOLE * 2 + 100)), (a * b, WHOLE * (WHOLE * 2 + 100)),
                      (a / b, WHOLE / (WHOLE * 2 + 100)), (a + 1, WHOLE + 1), (2 - a, 2 - WHOLE), (a * 0.5, WHOLE * 0.5),
                      (3 / b, 3 / (WHOLE * 2 + 100)), (-a, -WHOLE)]:
        assert got.layout is gmap and np.allclose(got.get(), want)
    ints = gdap.distribute(INTS, layout.block(INTS.shape, P))
    assert (ints / 2).dtype == np.float64 and np.allclose((ints / 2).get(), INTS / 2)
    assert (ints.astype(np.float32) * 1).dtype == np.float32


def test_elementwise_refuses_other_layouts_and_controllers():
    a = gdap.distribute(WHOLE, layout.block(WHOLE.shape, P))
    with pytest.raises(gdap.InvalidArgumentError, match="the layouts differ: reshard one array"):
        a + gdap.distribute(WHOLE, layout.cyclic(WHOLE.shape, P))
    assert np.allclose((a + gdap.distribute(WHOLE, layout.block(WHOLE.shape, P))).get(), 2 * WHOLE), \
        "equal layouts made twice combine"
    with pytest.raises(gdap.InvalidArgumentError, match="different controllers"):
        a + gdap.distribute(WHOLE, layout.block(WHOLE.shape, P), devices=gdap.Controller(P))
    with pytest.raises(TypeError):
        a + np.ones(WHOLE.shape)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("la,lb", [("row blocks", "column blocks"), ("2 x 2 blocks", "2 x 2 block-cyclic"),
                                   ("irregular rows", "replicated")])
def test_matmul_through_gemm(dtype, la, lb):
    x = (np.arange(7 * 5).reshape(7, 5) % 7 - 3).astype(dtype)
    y = (np.arange(5 * 6).reshape(5, 6) % 5 - 2).astype(dtype)
    lx = layout.irregular(x.shape, [(0, 3, 1, 3), None]) if la == "irregular rows" else LAYOUTS[la](x.shape)
    c = gdap.distribute(x, lx) @ gdap.distribute(y, LAYOUTS[lb](y.shape))
    assert c.shape == (7, 6) and c.dtype == dtype and np.allclose(c.get(), x @ y)


def test_matmul_bad_input():
    a = gdap.distribute(WHOLE, layout.block(WHOLE.shape, P))
    with pytest.raises(gdap.InvalidArgumentError, match=r"shapes \(7, 6\) and \(7, 6\) do not chain"):
        a @ a
    ints = gdap.distribute(INTS[:6], layout.block((6, 6), P))
    with pytest.raises(gdap.InvalidArgumentError, match="float32 or float64"):
        ints @ ints


def test_halo_exchange_fills_communication_padding():
    gmap = layout.padded(WHOLE.shape, (2, 2), (2, 1))
    b = gdap.distribute(WHOLE, layout.block(WHOLE.shape, (2, 2))).reshard(gmap)
    b.halo_exchange()
    for r in range(P):
        lo = gmap.local_to_global(r, (0, 0))
        shape = gmap.local_shape(r)
        assert (b.local_view(r) == WHOLE[lo[0]:lo[0] + shape[0], lo[1]:lo[1] + shape[1]]).all(), r


def test_zarr_and_dnpy_round_trips(tmp_path):
    a = gdap.distribute(WHOLE, layout.block(WHOLE.shape, (2, 2)))
    a.save_zarr(tmp_path / "a.zarr")
    b = gdap.GlobalArray.load_zarr(tmp_path / "a.zarr", layout.cyclic(WHOLE.shape, P), devices=P)
    assert (b.get() == WHOLE).all() and b.layout.dim_data(1)[0]["dist_type"] == "c"
    c = gdap.GlobalArray.load_zarr(tmp_path / "a.zarr", nranks=P)
    assert (c.get() == WHOLE).all()
    a.save_dnpy(tmp_path / "a")
    d = gdap.GlobalArray.load_dnpy(tmp_path / "a", nranks=P)
    assert (d.get() == WHOLE).all() and d.layout.dim_data(3) == a.layout.dim_data(3)


def test_repr_shows_the_layout():
    text = repr(gdap.distribute(WHOLE, layout.padded(WHOLE.shape, (2, 1), 1)))
    assert "shape=(7, 6)" in text and "float64" in text and "controller" in text and "2 ranks on cpu" in text
    assert "grid 2 x 1" in text and "axis 0: block over 2: [0:4) [4:7), halo 1" in text and "axis 1: whole" in text
    assert "cyclic over 4" in repr(gdap.distribute(WHOLE, layout.cyclic(WHOLE.shape, P)))
    assert "axis 0: replicated over 4" in repr(gdap.distribute(WHOLE, layout.replicated(WHOLE.shape, P)))
    assert "axis 0: unstructured over 4: 2, 1, 3, 1 indices" in repr(gdap.distribute(WHOLE, LAYOUTS["unstructured rows"](
        WHOLE.shape)))


def test_a_pending_sum_is_performed_on_reshard_get_and_reads():
    """Partial sums on every rank (replicated layout): the value is their sum over the ranks."""
    parts = [WHOLE * (r + 1) for r in range(P)]
    a = gdap.GlobalArray.from_sections(parts, layout.replicated(WHOLE.shape, P), pending="sum")
    total = WHOLE * sum(range(1, P + 1))
    assert a.pending == "sum" and "pending sum" in repr(a)
    assert np.allclose(a.get(), total)
    assert np.allclose(a.reshard(layout.cyclic(WHOLE.shape, P)).get(), total)
    assert np.isclose(a[3, 2], total[3, 2]) and np.allclose(a[1:3], total[1:3])
    assert np.isclose(a.sum(), total.sum()) and np.allclose((a + 1).get(), total + 1)
    m = gdap.GlobalArray.from_sections(parts, layout.replicated(WHOLE.shape, P), pending="max")
    assert np.allclose(m.get(), np.maximum.reduce(parts))


def test_bad_construction_is_named():
    gmap = layout.block(WHOLE.shape, P)
    with pytest.raises(gdap.InvalidArgumentError, match=r"the array has shape \(7, 6\) but the layout has shape \(6, 7\)"):
        gdap.distribute(WHOLE, layout.block((6, 7), P))
    a = gdap.distribute(WHOLE, gmap)
    with pytest.raises(gdap.InvalidArgumentError, match=r"layout has shape \(6, 7\) but the array has shape \(7, 6\)"):
        a.reshard(layout.block((6, 7), P))
    with pytest.raises(gdap.InvalidArgumentError, match="the layout spans 2 ranks but the array has 4"):
        a.reshard(layout.block(WHOLE.shape, 2))
    with pytest.raises(gdap.InvalidArgumentError, match="the layout spans 4 ranks but 3 sections were given"):
        gdap.GlobalArray.from_sections([np.zeros(1)] * 3, layout.block((4,), P))
    with pytest.raises(gdap.InvalidArgumentError, match="rank 1's section is on cpu, but the controller puts rank 1 on "
                                                        "cuda:1"):
        gdap.GlobalArray.from_sections([np.zeros(1)] * 4, layout.block((4,), P), devices=["cpu", "cuda:1", "cpu", "cpu"])
    with pytest.raises(gdap.InvalidArgumentError, match="rank 2's section has dtype float32 but rank 0's has float64"):
        gdap.GlobalArray.from_sections([np.zeros(1), np.zeros(1), np.zeros(1, np.float32), np.zeros(1)],
                                       layout.block((4,), P))
    with pytest.raises(gdap.InvalidArgumentError, match="pending must be one of"):
        gdap.GlobalArray.from_sections([np.zeros(1)] * 4, layout.block((4,), P), pending="avg")
    with pytest.raises(TypeError, match="must be a gdap.GlobalMap"):
        gdap.distribute(WHOLE, {"dist_type": "b"})
    with pytest.raises(TypeError, match="__distarray__ is one rank's"):
        a.__distarray__()


def test_the_controllers_threads_run_every_rank_and_survive_a_failing_step():
    ctrl = gdap.Controller(P)
    import threading
    names = ctrl.run(lambda r: threading.current_thread().name)
    assert sorted(names) == list(range(P)) and len(set(names.values())) == P, "one thread per rank"
    with pytest.raises(ZeroDivisionError):
        ctrl.run(lambda r: 1 / (r - 2))
    assert ctrl.run(lambda r: r * r) == {r: r * r for r in range(P)}, "the next step runs on every rank"
    err = gdap.RemoteError("rank 1 failed")
    with pytest.raises(ValueError, match="the cause"):  # a rank's own error wins over the others' echoes
        ctrl.run(lambda r: (_ for _ in ()).throw(ValueError("the cause") if r == 1 else err))


def test_a_controller_interrupted_while_it_waits_starts_new_threads_and_the_old_ones_end():
    # Rule: Ctrl-C while the caller waits for a step raises KeyboardInterrupt at once; the ranks'
    # threads of that step end once their calls return, and the next step runs on new ones.
    import signal
    import threading
    ctrl = gdap.Controller(P)
    before = list(ctrl.run(lambda r: threading.current_thread()).values())
    release = threading.Event()

    def step(r):
        if r == 1:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        release.wait(5)  # a rank's call still running when the caller gives up
        return r

    with pytest.raises(KeyboardInterrupt):
        ctrl.run(step)
    release.set()
    for t in before:
        t.join(5)
    assert not any(t.is_alive() for t in before), "the interrupted step's threads ended"
    after = ctrl.run(lambda r: (r * r, threading.current_thread()))
    assert [v[0] for v in after.values()] == [r * r for r in range(P)]
    assert all(v[1].is_alive() and v[1] not in before for v in after.values()), "new threads run the next step"


def test_after_an_interrupt_every_rank_runs_the_step_and_the_next_waits_for_them():
    # Rule: a step the caller was interrupted in still runs on every rank (no rank of a started
    # collective is left out), and the next step starts only once those calls have returned (each
    # rank's communicator serves one call at a time).
    import signal
    import threading
    import time
    ctrl = gdap.Controller(P)
    ran, finished = set(), []
    release = threading.Event()

    def step(r):
        ran.add(r)
        if r == 0:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        release.wait(5)
        finished.append(time.monotonic())
        return r

    with pytest.raises(KeyboardInterrupt):
        ctrl.run(step)
    threading.Timer(0.3, release.set).start()
    started = ctrl.run(lambda r: time.monotonic())
    assert ran == set(range(P)), "every rank ran the interrupted step"
    assert len(finished) == P and min(started.values()) >= max(finished), "the next step waited for them"
