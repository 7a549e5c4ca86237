"""Review 13's findings on the element-wise paths, single controller (the MPI cases are in
review13_mpi_ranks.py): a pending partner settled into the other's layout, arithmetic on owned
cells only, gemm's alpha/beta from 0-d arrays, == / != refusing what they cannot compare."""
import numpy as np
import pytest

import gdap
from gdap import layout

CYCLIC = layout.cyclic((6,), 3)
PARTS = [np.arange(2.0) + 10 * r for r in range(3)]  # each rank's cyclic section of partial sums


def pending(lay=CYCLIC, parts=PARTS):
    return gdap.GlobalArray.from_sections([x.copy() for x in parts], lay, devices=3, pending="sum")


def total(lay=CYCLIC, parts=PARTS):
    return pending(lay, parts).get()


@pytest.mark.parametrize("expr", ["a + p", "p + a", "a - p", "p * a", "p / (a + 1)", "a == p", "p != a", "a < p"])
def test_a_pending_partner_in_a_cyclic_layout_meets_the_same_elements(expr):
    # Before: p settled into even blocks beside a's cyclic sections: a + p gave [0,21,13,13,5,26].
    host = np.arange(6.0)
    a = gdap.distribute(host, CYCLIC, devices=3)
    got = eval(expr, {"a": a, "p": pending()}).get()
    want = eval(expr, {"a": host, "p": total()})
    np.testing.assert_array_equal(got, want)


def test_in_place_with_a_pending_partner_either_side():
    host = np.arange(6.0)
    a = gdap.distribute(host, CYCLIC, devices=3)
    alias = a
    a += pending()
    np.testing.assert_array_equal(alias.get(), host + total())
    q = pending()
    q += gdap.distribute(host, CYCLIC, devices=3)  # a pending array is not written: Python makes a new one
    np.testing.assert_array_equal(q.get(), host + total())


def test_two_pending_arrays_of_one_replicated_layout():
    rep = layout.replicated((3,), 3)
    parts = [np.array([1.0, 2.0, 3.0]) * (r + 1) for r in range(3)]
    p, q = pending(rep, parts), pending(rep, parts)
    np.testing.assert_array_equal((p + q).get(), 2 * total(rep, parts))
    a = gdap.distribute(np.array([10.0, 20.0, 30.0]), rep, devices=3)
    np.testing.assert_array_equal((a + p).get(), [16.0, 32.0, 48.0])


def padded_pair():
    lay = layout.padded((6,), (3,), 1)
    host = np.arange(1.0, 7.0)
    return gdap.distribute(host, lay, devices=3), gdap.distribute(host, lay, devices=3), host


def test_element_wise_arithmetic_on_a_padded_layout_raises_no_error_from_the_padding():
    # Before: 0/0 in the (zero) padding: FloatingPointError under errstate(all='raise'), NaN halos.
    a, b, host = padded_pair()
    with np.errstate(all="raise"):
        np.testing.assert_array_equal((a / b).get(), host / host)
        a /= b
    np.testing.assert_array_equal(a.get(), np.ones(6))


def test_padding_is_zero_in_a_new_result_and_kept_by_in_place_arithmetic():
    a, b, _ = padded_pair()
    c = a / b
    a.halo_exchange()
    halos = [a.local_view(r).copy() for r in range(3)]
    a += 1
    lay = a.layout
    for r in range(3):
        before, after = lay.dim_data(r)[0]["padding"]
        view = a.local_view(r)
        n = view.shape[0]
        np.testing.assert_array_equal(view[:before], halos[r][:before])
        np.testing.assert_array_equal(view[n - after:], halos[r][n - after:])
        np.testing.assert_array_equal(view[before:n - after], halos[r][before:n - after] + 1)
        cview = c.local_view(r)
        assert not cview[:before].any() and not cview[n - after:].any()


@pytest.mark.parametrize("value", [np.array(2.0), np.array(2), np.array(2, np.float32), np.array(2, np.uint8)])
def test_gemm_alpha_and_beta_take_a_0d_real_array(value):
    assert gdap._args.real(value, "alpha") == 2.0


@pytest.mark.parametrize("value", [np.array(True), True, "2", np.array("2"), np.array([2.0])])
def test_gemm_alpha_refuses_bool_str_and_arrays_of_more_elements(value):
    with pytest.raises(TypeError, match="alpha must be a real number"):
        gdap._args.real(value, "alpha")


@pytest.mark.parametrize("other", [None, "x", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], (1.0,) * 6, object()])
@pytest.mark.parametrize("op", ["==", "!="])
def test_equality_with_what_it_cannot_compare_is_a_type_error(other, op):
    # Before: None, a string or an object fell back to identity: a silent False (True for !=).
    a = gdap.distribute(np.arange(6.0), layout.block((6,), 3), devices=3)
    with pytest.raises(TypeError, match="GlobalArray"):
        eval("a %s other" % op, {"a": a, "other": other})
