"""One MPI rank's part of test_aliasing_mpi.py (run under mpiexec -n 2 or 4, not collected by
pytest): ranks in different processes that pass the same bytes of a gdap shared-memory segment
(empty_shm, shared by ipc_export / ipc_open) as one rank's destination and another rank's source.
Every rank must refuse the call, naming both ranks and the bytes, and nothing may move; sections
in one segment that share no byte must still work, interleaved ones too (two ranks writing the even
and the odd columns of one matrix in the segment), while destinations that share one element only
are refused. Each case names its rule. Prints "rank R: ok"."""
import sys

import numpy as np
from mpi4py import MPI

import gdap
from gdap import layout
from rank_script import rank_helpers

WORLD = MPI.COMM_WORLD
R, P = WORLD.Get_rank(), WORLD.Get_size()
comm = gdap.Comm.from_mpi(WORLD)
comm.set_timeout(60.0)
N = 8
WHOLE = np.arange(N * N, dtype=np.float64).reshape(N, N)
rows, cols = layout.block(WHOLE.shape, P), layout.block(WHOLE.shape, (1, P))
plan = gdap.Plan(rows, cols, np.float64, comm)
count = N * N // P  # elements of each rank's src and dst


def local(lay, r):
    out = np.zeros(lay.local_shape(r))
    for index in np.ndindex(*out.shape):
        out[index] = WHOLE[tuple(lay.local_to_global(r, index))]
    return out


case, _ = rank_helpers(comm)


# Rank 0's section lives in a segment six times its size: its src is the first sixth. Rank 1 opens it.
if R == 0:
    segment = gdap.empty_shm(6 * count)
    whole_segment = np.from_dlpack(segment)
    whole_segment[:count] = local(rows, 0).reshape(-1)
    handle = gdap.ipc_export(segment)
else:
    handle = None
handle = WORLD.bcast(handle, root=0)
if R == 1:
    opened = gdap.ipc_open(handle)
    whole_segment = np.from_dlpack(opened)
src = whole_segment[:count].reshape(rows.local_shape(0)) if R == 0 else local(rows, R)
before = np.array(src, copy=True)


def refused(dst, words):
    """Every rank's redistribute of src into dst raises InvalidArgumentError saying each of `words`,
    and dst keeps what it held."""
    dst_before = np.array(dst, copy=True)
    try:
        gdap.redistribute(comm, plan, src, dst)
        raise AssertionError("rank %d: the aliased call was not refused" % R)
    except gdap.InvalidArgumentError as e:
        for word in words:
            assert word in str(e), (word, str(e))
    assert (np.asarray(dst) == dst_before).all(), "nothing moved"


case("rank 1's dst is rank 0's src (one segment, two processes): every rank refuses, naming both and the bytes")
dst = whole_segment[:count].reshape(cols.local_shape(1)) if R == 1 else np.full(cols.local_shape(R), -1.0)
refused(dst, ["rank 1's dst", "rank 0's src", "overlap in bytes 0..%d" % (8 * count - 1), "shared-memory segment"])
assert (np.asarray(src) == before).all(), "the source is unchanged"
WORLD.Barrier()

case("rank 1's dst is the other half of rank 0's segment: no bytes shared, the call works")
dst = whole_segment[count:2 * count].reshape(cols.local_shape(1)) if R == 1 else np.full(cols.local_shape(R), -1.0)
gdap.redistribute(comm, plan, src, dst)
WORLD.Barrier()
assert (np.asarray(dst) == local(cols, R)).all(), "rank %d: wrong destination" % R
assert (np.asarray(src) == before).all(), "the source is unchanged"
WORLD.Barrier()

# A matrix of N rows and twice rank 0's destination's columns, in the segment's third and fourth sixths.
region = whole_segment[2 * count:4 * count].reshape(N, 2 * (N // P)) if R in (0, 1) else None

case("ranks 0 and 1 write the even and the odd columns of one segment: no byte shared, the call works")
# (Byte spans were compared before, and the call was refused.)
dst = region[:, R::2] if R in (0, 1) else np.full(cols.local_shape(R), -1.0)
assert dst.shape == cols.local_shape(R)
gdap.redistribute(comm, plan, src, dst)
WORLD.Barrier()
want = local(cols, R)
for index in np.ndindex(*want.shape):
    assert dst[index] == want[index], "rank %d: element %s is %r, want %r" % (R, index, dst[index], want[index])
assert (np.asarray(src) == before).all(), "the source is unchanged"
WORLD.Barrier()

case("rank 1's destination shares only its last element with rank 0's (its view runs backwards): refused")
if R == 0:
    region[...] = -1.0
WORLD.Barrier()
even = region[:, 0::2] if R in (0, 1) else None
if R == 0:
    dst = even
elif R == 1:
    # Rank 0's last element is at `last` elements into the region; rank 1's view starts `last`
    # elements past it and runs backwards with the same strides, so it ends there.
    last = (N - 1) * 2 * (N // P) + 2 * (N // P - 1)
    start = whole_segment[2 * count + 2 * last:]
    dst = np.lib.stride_tricks.as_strided(start, shape=even.shape, strides=(-even.strides[0], -even.strides[1]))
    assert np.shares_memory(dst, even)
else:
    dst = np.full(cols.local_shape(R), -1.0)
refused(dst, ["rank 0's dst", "rank 1's dst", "shared-memory segment"])
WORLD.Barrier()

case("rank 1's src is rank 0's src (both only read those bytes): reads may share, the call works")
src1 = whole_segment[:count].reshape(rows.local_shape(1)) if R == 1 else src
dst = np.full(cols.local_shape(R), -1.0)
gdap.redistribute(comm, plan, src1, dst)  # rank 1 sends rank 0's rows in place of its own: no refusal
assert (dst[:N // P] == local(cols, R)[:N // P]).all(), "rank %d: rank 0's rows arrived" % R
WORLD.Barrier()
if R == 1:
    del whole_segment, src1, opened, region, even, start, dst
comm.close()
print("rank %d: ok" % R, flush=True)
sys.stdout.flush()
