"""One MPI rank's part of test_concat_mpi.py (run under mpiexec -n 2 or 4, not collected by pytest):
np.concatenate / np.stack / np.vstack / np.hstack of GlobalArrays in SPMD mode over eight layouts,
every rank calling with the same arguments, each result checked against NumPy on the whole arrays
(dtype included) with the gathering methods patched to raise while the call runs; a wrong argument
on one rank only makes that rank raise its error and the others RemoteError at once; ranks that pass
different valid calls all raise InvalidArgumentError naming each rank's call (no hang, no wrong
result). Prints "rank R: ok" on success."""
import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout
from no_gather import NoWholeGather, calls_differ_everywhere, told_at_once
from rank_script import eight_layouts, rank_helpers, same_values

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60)
SHAPE = (8, 6)
X = np.arange(48, dtype=np.float64).reshape(SHAPE) * 1.5 - 20
Y = (np.arange(40).reshape(8, 5) % 7 - 3).astype(np.int32)
FAILING = P - 1

case, dist = rank_helpers(comm)


def same(got, want):
    same_values(got, want, R)


for lay, other in zip(eight_layouts(SHAPE, P), eight_layouts((8, 5), P)[::-1]):
    case("concatenate / stack on grid %s, %s" % (lay.grid_shape, lay.dim_data(R)[0]["dist_type"]))
    a, b = dist(X, lay), dist(Y, other)
    with NoWholeGather():
        got = [np.concatenate([a, b], axis=1), np.concatenate([a, X, a]), np.concatenate([b, a], axis=None),
               np.stack([a, a], axis=-1), np.vstack([a, a]), np.hstack([a, Y, b])]
    for g, want in zip(got, [np.concatenate([X, Y], 1), np.concatenate([X, X, X]), np.concatenate([Y, X], None),
                             np.stack([X, X], -1), np.vstack([X, X]), np.hstack([X, Y, Y])]):
        same(g, want)
    for r in range(P):  # the first operand's dictionaries kept off the joined axis
        kept, first = got[0].layout.dim_data(r)[0], lay.dim_data(r)[0]
        assert {k: np.asarray(v).tolist() for k, v in kept.items()} == \
            {k: np.asarray(v).tolist() for k, v in first.items()}, (R, r, kept, first)

case("out= a GlobalArray")
a = dist(X, eight_layouts(SHAPE, P)[3])
out = dist(np.zeros((16, 6)), layout.cyclic((16, 6), (P, 1)))
with NoWholeGather():
    assert np.concatenate([a, a], out=out) is out
same(out, np.concatenate([X, X]))

case("refusals on one rank only")
told_at_once("np.concatenate with an axis out of range on one rank",
             lambda: np.concatenate([a, a], axis=2 if R == FAILING else 0), WORLD, FAILING)
told_at_once("np.stack with a bad casting on one rank",
             lambda: np.stack([a, a], casting="bogus" if R == FAILING else "same_kind"), WORLD, FAILING)

case("ranks that pass different valid calls all raise, naming each rank's call")
calls_differ_everywhere((("axis", lambda: np.concatenate([a, a], axis=1 if R == FAILING else 0)),
                        ("dtype", lambda: np.concatenate([a, a], dtype=np.float32 if R == FAILING else None)),
                        ("stack or concatenate", lambda: (np.stack if R == FAILING else np.concatenate)([a, a])),
                        ("operands", lambda: np.concatenate([a, a] if R == FAILING else [a, a, a]))), R, FAILING)

case("the communicator works on after the refusals")
same(np.concatenate([a, a], axis=1), np.concatenate([X, X], 1))

print("rank %d: ok" % R, flush=True)
