"""Hunt 15's Python findings outside MPI (the MPI ones: test_hunt15_mpi.py):
- var/std with dtype=complex64/complex128 return NumPy's complex result (imaginary part zero), not
  the real dtype;
- a bfloat16 array's sum, prod, min, max, mean, var and std give NumPy's result dtype (bfloat16) and
  values, where before mean returned float64 and the rest were refused;
- an in-process group's ranks (SPMD over gdap.group) whose parts of one array differ in dtype, shape
  or layout are refused on every rank, naming each rank's."""
import ml_dtypes
import numpy as np
import pytest

import gdap
from conftest import rank_errors
from gdap import layout

X = np.arange(24.0).reshape(4, 6) - 7.25
Z = X + 1j * X[::-1]


@pytest.mark.parametrize("values", [X, Z, X.astype(np.int32)], ids=["float64", "complex128", "int32"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("op", ["var", "std"])
@pytest.mark.parametrize("axis", [None, 0, (0, 1)])
def test_var_and_std_with_a_complex_dtype_give_numpys_complex_result(values, dtype, op, axis):
    a = gdap.distribute(values, layout.block(values.shape, 3))
    got = getattr(a, op)(axis=axis, dtype=dtype)
    want = getattr(np, op)(values, axis=axis, dtype=dtype)
    got = got.get() if isinstance(got, gdap.GlobalArray) else got
    assert got.dtype == want.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert not np.any(np.imag(got))


BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize("op", ["sum", "prod", "min", "max", "mean", "var", "std"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_bfloat16_reductions_keep_numpys_result_dtype(op, axis):
    values = (X / 4).astype(BF16)
    a = gdap.distribute(values, layout.block(values.shape, 3))
    got = getattr(a, op)(axis=axis)
    got = got.get() if isinstance(got, gdap.GlobalArray) else got
    want = getattr(np, op)(values, axis=axis)
    assert got.dtype == want.dtype == BF16, (op, got.dtype)
    # gdap computes in float32 and rounds once; NumPy accumulates in bfloat16 (8 bits of mantissa)
    exact = getattr(np, op)(values.astype(np.float64), axis=axis)
    np.testing.assert_allclose(np.asarray(got, np.float64), exact, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("op", ["sum", "mean", "var"])
def test_a_bfloat16_dtype_argument_is_taken_as_numpy_does(op):
    values = X.astype(BF16)
    a = gdap.distribute(values, layout.block(values.shape, 2))
    got = getattr(a, op)(dtype=np.float32)
    assert got.dtype == getattr(np, op)(values, dtype=np.float32).dtype == np.float32
    got = getattr(a, op)(dtype=BF16)  # a float64 array's reduction in bfloat16
    assert got.dtype == getattr(np, op)(values, dtype=BF16).dtype == BF16
    exact = getattr(np, op)(X)
    wide = gdap.distribute(X, layout.block(X.shape, 2))
    assert abs(float(getattr(wide, op)(dtype=BF16)) - exact) <= 0.02 * abs(exact)


def _on_group(nranks, body):
    """body(rank, comm) on a thread per rank of an in-process group; each rank's gdap.Error."""
    comms = gdap.group(nranks)
    for c in comms:
        c.set_timeout(20)
    return rank_errors(nranks, lambda r: body(r, comms[r]))


def test_group_ranks_passing_sections_of_different_dtypes_are_all_refused():
    rows = layout.block((8,), 3)

    def body(r, comm):
        section = np.arange(rows.local_shape(r)[0], dtype=np.int32 if r == 1 else np.float32)
        gdap.GlobalArray.from_sections(section, rows, comm=comm)

    errors = _on_group(3, body)
    for e in errors:
        assert type(e) is gdap.InvalidArgumentError, errors
        assert "differ in dtype: float32 on ranks 0, 2; int32 on rank 1" in str(e), str(e)


def test_group_ranks_passing_different_layouts_of_one_shape_are_all_refused():
    block, cyclic = layout.block((8, 6), 2), layout.cyclic((8, 6), (2, 1))

    def body(r, comm):
        mine = cyclic if r == 1 else block
        gdap.GlobalArray.zeros(mine, comm=comm)

    errors = _on_group(2, body)
    for e in errors:
        assert type(e) is gdap.InvalidArgumentError, errors
        assert "of shape (8, 6) differ in layout: layout 1 on rank 0; layout 2 on rank 1" in str(e), str(e)


def test_group_ranks_that_agree_still_make_one_array():
    rows = layout.block((8,), 2)
    sums = [None, None]

    def body(r, comm):
        a = gdap.GlobalArray.from_sections(np.arange(4.0) + 4 * r, rows, comm=comm)
        sums[r] = float(a.sum())

    assert _on_group(2, body) == [None, None]
    assert sums == [28.0, 28.0]
