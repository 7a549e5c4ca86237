"""Ownership: DLPack capsule destructors run, every deleter runs exactly once, nothing leaks, in
every order of closing, exporting and consuming."""
import gc
import sys
import weakref

import numpy as np
import pytest

import gdap
from gdap import _gdap_c as c


class Buffer(np.ndarray):
    """A NumPy array type that can be weakly referenced and counted."""


def tracked(n=1000):
    a = np.arange(n, dtype=np.float64).view(Buffer)
    return a, weakref.ref(a)


def test_import_releases_the_producer_once_closed():
    a, alive = tracked()
    la = gdap.from_dlpack(a)
    del a
    gc.collect()
    assert alive() is not None  # gdap holds the producer's tensor
    la.close()
    gc.collect()
    assert alive() is None  # NumPy's deleter ran


@pytest.mark.parametrize("versioned", [True, False])
def test_ten_thousand_dropped_capsules_release_everything(versioned):
    a, alive = tracked()
    la = gdap.from_dlpack(a)
    del a
    for _ in range(10000):
        capsule = la.__dlpack__(max_version=(1, 0) if versioned else None)
        del capsule  # never consumed: the capsule destructor calls the deleter
    la.close()
    gc.collect()
    assert alive() is None  # had one export leaked, the memory would still be referenced


def test_consumed_exports_outlive_the_array_then_release():
    a, alive = tracked()
    la = gdap.from_dlpack(a)
    del a
    views = [np.from_dlpack(la) for _ in range(100)]
    la.close()
    gc.collect()
    assert alive() is not None and views[0][5] == 5.0  # memory valid after close
    del views
    gc.collect()
    assert alive() is None


def test_interface_views_keep_memory_after_close():
    a, alive = tracked()
    la = gdap.from_dlpack(a)
    del a
    view = np.asarray(la)  # __array_interface__: its base owns the memory, not the LocalArray
    la.close()
    del la
    gc.collect()
    assert alive() is not None and view[3] == 3.0
    del view
    gc.collect()
    assert alive() is None


# Hunt 11 item 4: close() frees the memory once NumPy's views made through __array_interface__ are
# gone, without the LocalArray being dropped (before, the view's base was the LocalArray, which
# kept an export of the memory until it was collected).
@pytest.mark.parametrize("rule,make_view", [
    ("np.asarray of the whole section", np.asarray),
    ("a slice of np.asarray", lambda la: np.asarray(la)[1:3]),
    ("a read-only section's view", lambda la: np.asarray(la)),
    ("__distarray__'s buffer", lambda la: la.__distarray__()["buffer"]),
])
def test_close_frees_the_memory_once_interface_views_are_gone(rule, make_view):
    a, alive = tracked()
    if "read-only" in rule:
        a.flags.writeable = False
    la = gdap.from_dlpack(a)
    del a
    view = make_view(la)
    assert view.base is not la, rule
    assert view.flags.writeable == (not la.readonly), rule
    la.close()
    gc.collect()
    assert alive() is not None and view.ravel()[0] in (0.0, 1.0), rule  # memory valid after close
    del view
    gc.collect()
    assert alive() is None, "%s: the memory outlived close() and its last view" % rule
    assert la.closed


def test_interface_view_of_a_strided_section_reads_its_elements():
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    for rule, source in [("a padded (row stride 10) section", base[1:5, 2:7]),
                         ("a negative-stride section", base[::-1, ::-2])]:
        la = gdap.from_dlpack(source)
        view = np.asarray(la)
        la.close()
        assert np.array_equal(view, source), rule
        view[0, 0] = -1.0
        assert source[0, 0] == -1.0, "%s: the view shares the memory" % rule


def test_empty_shm_name_goes_with_close_after_an_interface_view():
    import os
    name = "/gdap-test-close-%d" % os.getpid()
    la = gdap.empty_shm((3, 4), name=name)
    view = np.asarray(la)
    view[:] = 7
    del view
    la.close()
    gc.collect()
    assert not os.path.exists("/dev/shm" + name), "rule: close() unlinks the segment once its views are gone"
    again = gdap.empty_shm((3, 4), name=name)  # the name is free again
    again.close()
    assert not os.path.exists("/dev/shm" + name)


def test_closed_shm_arrays_do_not_accumulate_memory():
    def rss_mib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 >> 20
    kept = []
    start = rss_mib()
    for _ in range(20):
        la = gdap.empty_shm((1 << 20,))  # 8 MiB
        view = np.asarray(la)
        view[:] = 1
        del view
        la.close()
        kept.append(la)  # closed objects kept: before the fix each held its 8 MiB
    assert rss_mib() - start < 80, "rule: 20 closed 8 MiB arrays hold no memory (grew %d MiB)" % (rss_mib() - start)


def test_refused_import_leaves_the_capsule_to_its_producer():
    a, alive = tracked()
    capsule = a.__dlpack__(max_version=(1, 0))
    del a
    with pytest.raises(gdap.ProtocolError):
        gdap.from_dlpack(capsule, dim_data=({}, {}))  # ndim mismatch: gdap takes nothing
    assert '"dltensor_versioned"' in repr(capsule)
    del capsule  # NumPy's capsule destructor frees it
    gc.collect()
    assert alive() is None


class Owner:
    """Stands for a __cuda_array_interface__ producer: memory plus the object keeping it."""

    def __init__(self):
        self.memory = np.arange(8, dtype=np.int32)


def test_pointer_tensor_deleter_runs_exactly_once():
    owner = Owner()
    base = sys.getrefcount(owner)
    capsule = c.gdap_py_tensor_from_pointer(owner.memory.ctypes.data, (8,), None, (0, 32, 1), (1, 0), 0, owner)
    assert sys.getrefcount(owner) == base + 1
    la = gdap.from_dlpack(capsule)
    exported = [la.__dlpack__(max_version=(1, 0)) for _ in range(3)] + [np.from_dlpack(la)]
    assert la.data_ptr == owner.memory.ctypes.data
    del capsule
    la.close()
    assert sys.getrefcount(owner) == base + 1  # the exports still hold the memory
    del exported
    gc.collect()
    assert sys.getrefcount(owner) == base  # released once: twice would go below the base count


def test_dropped_pointer_capsule_releases_its_owner():
    owner = Owner()
    base = sys.getrefcount(owner)
    for _ in range(1000):
        c.gdap_py_tensor_from_pointer(owner.memory.ctypes.data, (8,), (1,), (0, 32, 1), (1, 0), 0, owner)
    gc.collect()
    assert sys.getrefcount(owner) == base


def test_wrap_keeps_its_owner():
    a, alive = tracked()
    la = gdap.wrap(a.ctypes.data, a.dtype, a.shape, owner=a)
    del a
    gc.collect()
    assert alive() is not None
    la.close()
    del la
    gc.collect()
    assert alive() is None


def test_collected_arrays_destroy_their_handles():
    a, alive = tracked()
    gdap.from_dlpack(a)  # dropped at once: the finalizer destroys the handle
    del a
    gc.collect()
    assert alive() is None


# ---- objects that borrow others (issue 27, item 7) ----

def _ring():
    """A periodic 1-d layout of one rank (its halo wraps onto itself): gmap, comm, halo, section.
    DAP 0.10: the wrap cells are the rank's boundary padding, counted in size (4 interior + 2)."""
    d = dict(dist_type="b", size=6, proc_grid_size=1, proc_grid_rank=0, start=0, stop=6, padding=(1, 1),
             periodic=True)
    gmap = gdap.GlobalMap([[d]])
    comm = gdap.group(1)[0]
    halo = gdap.Halo(gmap, np.float64, comm)
    section = np.array([-1, 0, 1, 2, 3, -1], dtype=np.float64)
    return gmap, comm, halo, section


@pytest.mark.parametrize("closed", ["comm", "halo", "section"])
def test_an_exchange_whose_borrowed_object_was_closed_raises_and_never_reaches_c(closed):
    # Rule: a HaloExchange borrows its Comm, Halo and section; closing one of them first leaves its
    # C object alive for the exchange (destroyed after it), and start() raises InvalidArgumentError
    # (a ValueError) naming it, instead of reading freed memory.
    gmap, comm, halo, section = _ring()
    local = gdap.from_dlpack(section, gmap.dim_data(0))
    exchange = gdap.HaloExchange(comm, halo, local)
    exchange.start()
    np.testing.assert_array_equal(section, [3, 0, 1, 2, 3, 0])
    {"comm": comm, "halo": halo, "section": local}[closed].close()
    kind = {"comm": "Comm", "halo": "Halo", "section": "LocalArray"}[closed]
    with pytest.raises(gdap.InvalidArgumentError, match="the %s that this HaloExchange uses was closed" % kind):
        exchange.start()
    with pytest.raises(ValueError):
        exchange.start()
    exchange.close()  # destroys the exchange, then what it borrowed
    assert exchange.closed
    with pytest.raises(gdap.InvalidArgumentError, match="the HaloExchange is closed"):
        exchange.start()


def test_borrowed_objects_collected_in_any_order():
    # Rule: dropped in any order (and collected with the exchange), every C object is destroyed
    # once, the exchange's first: a crash or a double free here would end the interpreter.
    for order in [("comm", "halo", "local", "exchange"), ("exchange", "local", "halo", "comm"),
                  ("halo", "exchange", "comm", "local")]:
        gmap, comm, halo, section = _ring()
        objects = {"comm": comm, "halo": halo, "local": gdap.from_dlpack(section, gmap.dim_data(0))}
        objects["exchange"] = gdap.HaloExchange(comm, halo, objects["local"])
        del comm, halo
        objects["exchange"].start()
        for name in order:
            if name != "exchange":
                objects[name].close()
            del objects[name]
            gc.collect()
        np.testing.assert_array_equal(section, [3, 0, 1, 2, 3, 0])


def _closed(kind):
    gmap, comm, halo, section = _ring()
    made = {"Comm": comm, "Halo": halo, "GlobalMap": gmap, "LocalArray": gdap.from_dlpack(section, gmap.dim_data(0)),
            "Plan": gdap.Plan(gmap, gmap, np.float64, 0)}[kind]
    made.close()
    return made, comm, halo, gmap


@pytest.mark.parametrize("kind,use", [
    ("Comm", lambda o: o.barrier()),
    ("Comm", lambda o: o.rank),
    ("Halo", lambda o: o.stats),
    ("GlobalMap", lambda o: o.shape),
    ("LocalArray", lambda o: o.shape),
    ("Plan", lambda o: o.stats),
])
def test_every_closed_handle_raises_a_gdap_error(kind, use):
    # Rule: a closed handle raises gdap.InvalidArgumentError (also a ValueError) and never reaches C.
    obj, *_ = _closed(kind)
    with pytest.raises(gdap.InvalidArgumentError, match="the %s is closed" % kind):
        use(obj)


def test_a_closed_handle_passed_to_another_call_raises():
    # Rule: a closed handle passed as an argument raises too, before any C call.
    gmap, comm, halo, section = _ring()
    comm.close()
    with pytest.raises(gdap.InvalidArgumentError, match="the Comm is closed"):
        gdap.halo_exchange(comm, halo, section)
    halo.close()
    with pytest.raises(gdap.InvalidArgumentError, match="the Halo is closed"):
        gdap.halo_exchange(gdap.group(1)[0], halo, section)
    np.testing.assert_array_equal(section, [-1, 0, 1, 2, 3, -1])
