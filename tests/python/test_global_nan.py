"""GlobalArray.max/min with NaN, against NumPy: NaN propagates (np.max, not np.nanmax), whichever
rank holds it and whatever the layout; an all-NaN array gives NaN, not -inf/+inf. Before, max of
[0 .. 15] with one NaN gave 15.0 and an all-NaN array -inf (max) and +inf (min): std::max kept one
side of a comparison with NaN and the identity won."""
import threading

import numpy as np
import pytest

import gdap
from gdap import layout

P = 4
LAYOUTS = {
    "blocks": lambda shape: layout.block(shape, P),
    "cyclic": lambda shape: layout.cyclic(shape, P),
    "replicated": lambda shape: layout.replicated(shape, P),
}


def whole_with_nan(at, dtype):
    a = np.arange(16, dtype=dtype) - 5
    if at == "all":
        a[:] = np.nan
    else:
        a[at] = np.nan if at % 2 == 0 else -np.nan
    return a


# Each position in turn (one per rank under blocks: 0, 5, 10, 15), and every element NaN.
@pytest.mark.parametrize("at", [0, 5, 10, 15, "all"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(LAYOUTS))
@pytest.mark.parametrize("op", ["max", "min"])
def test_nan_propagates_over_every_axis(op, name, dtype, at):
    whole = whole_with_nan(at, dtype)
    g = gdap.GlobalArray.scatter(whole, LAYOUTS[name](whole.shape), devices=P)
    got = getattr(g, op)()
    assert np.isnan(got), (op, name, at, got)
    assert np.asarray(got).dtype == dtype


# Rule: along one axis NaN lands only where NumPy puts it; the other elements are the plain min/max.
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["max", "min"])
def test_nan_propagates_along_an_axis(op, axis):
    whole = np.arange(16, dtype=np.float64).reshape(4, 4)
    whole[1, 2] = np.nan
    g = gdap.GlobalArray.scatter(whole, layout.block(whole.shape, (2, 2)), devices=P)
    got = getattr(g, op)(axis=axis).get()
    np.testing.assert_array_equal(got, getattr(np, op)(whole, axis=axis))  # NaN equals NaN here


# Rule: gdap.allreduce over an in-process group, each rank holding the NaN in turn: every rank gets
# NaN there and the plain max/min elsewhere (the group's max used to give NaN only when rank 0 held it).
@pytest.mark.parametrize("holder", range(P))
@pytest.mark.parametrize("op", ["max", "min"])
def test_group_allreduce_with_nan_on_each_rank(op, holder):
    comms = gdap.group(P)
    out = [None] * P

    def rank(r):
        x = np.array([float(r), float(r)])
        if r == holder:
            x[0] = np.nan
        gdap.allreduce(comms[r], x, op)
        out[r] = x

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(P)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    plain = {"max": P - 1.0, "min": 0.0}[op]
    for r in range(P):
        assert np.isnan(out[r][0]) and out[r][1] == plain, (r, out[r])
