"""gdap against DistArray 0.6 itself (the protocol's reference implementation), one MPI rank's part:
run under `mpirun -np 4` with the interpreter of .deps/distarray-venv (tools/deps.sh) and gdap's
Python package on PYTHONPATH. Not collected by pytest.

Both directions of the exchange, without copies (the same address on both sides), values checked
element by element: DistArray's LocalArray.__distarray__() taken by gdap.from_distarray, and gdap's
LocalArray taken by DistArray's LocalArray.from_distarray; then .dnpy files both ways: written by
DistArray's localapi.save_dnpy and read by gdap.load_dnpy, written by gdap.save_dnpy and read by
DistArray's load_dnpy, and byte for byte the same file from both writers.

Where DistArray disagrees with the protocol text, the case says so ("DistArray disagrees: ...") and
checks that gdap follows the text. Prints "rank R: ok" at the end; any failure raises."""
import os
import sys
import tempfile

import numpy as np
from mpi4py import MPI

import distarray
from distarray.localapi import LocalArray as DaLocalArray
from distarray.localapi import load_dnpy as da_load_dnpy
from distarray.localapi import save_dnpy as da_save_dnpy
from distarray.localapi.maps import Distribution

import gdap

WORLD = MPI.COMM_WORLD
RANK, NPROCS = WORLD.Get_rank(), WORLD.Get_size()
assert NPROCS == 4, "run this under mpirun -np 4, not %d" % NPROCS
assert distarray.__version__ == "0.6.0", distarray.__version__
COMM = gdap.Comm.from_mpi(WORLD)
TMP = WORLD.bcast(tempfile.mkdtemp(prefix="gdap-distarray-") if RANK == 0 else None)
NOTES = []


def note(text):
    if RANK == 0 and text not in NOTES:
        NOTES.append(text)
        print("DistArray disagrees: " + text, flush=True)


def value(gidx):
    """The element at a global index: distinct for every index of a <= 3-d array."""
    return float(sum((i + 1) * 100 ** k for k, i in enumerate(reversed(gidx))))


def address(buffer):
    return np.asarray(buffer).__array_interface__["data"][0]


def fill_distarray(la):
    for lidx in np.ndindex(*la.local_shape):
        la.ndarray[lidx] = value(la.global_from_local(lidx))


def check_gdap_values(g, what):
    a = np.asarray(g)
    for lidx in np.ndindex(*a.shape):
        want = value(g.local_to_global(lidx))
        assert a[lidx] == want, "%s: rank %d local %s holds %s, not %s" % (what, RANK, lidx, a[lidx], want)


def check_distarray_values(la, what):
    for lidx in np.ndindex(*la.local_shape):
        want = value(la.global_from_local(lidx))
        assert la.ndarray[lidx] == want, "%s: rank %d local %s holds %s, not %s" % (what, RANK, lidx, la.ndarray[lidx], want)


def distarray_cases():
    """(name, DistArray Distribution) for layouts where DistArray and the protocol agree."""
    r = RANK
    return [
        ("block x cyclic on a 2x2 grid", Distribution.from_shape(WORLD, (8, 6), dist=("b", "c"), grid_shape=(2, 2))),
        ("block, undistributed, cyclic", Distribution.from_shape(WORLD, (5, 3, 7), dist=("b", "n", "c"), grid_shape=(2, 1, 2))),
        ("uneven block over 4", Distribution.from_shape(WORLD, (10,), dist=("b",), grid_shape=(4,))),
        ("block-cyclic, whole blocks", Distribution(WORLD, [dict(dist_type="c", size=16, proc_grid_size=4, proc_grid_rank=r,
                                                                  start=2 * r, block_size=2)])),
        ("unstructured", Distribution(WORLD, [dict(dist_type="u", size=12, proc_grid_size=4, proc_grid_rank=r,
                                                   indices=[(3 * r + 5 * k) % 12 for k in range(3)])])),
    ]


def distarray_to_gdap(name, dist):
    la = DaLocalArray(dist, dtype=np.float64)
    fill_distarray(la)
    g = gdap.from_distarray(la)
    assert address(g) == address(la.ndarray), "%s: gdap copied DistArray's buffer" % name
    assert np.asarray(g).shape == la.local_shape
    check_gdap_values(g, name + " (DistArray -> gdap)")
    gdap.GlobalMap.collective(COMM, g.dim_data)  # the collective checks of the protocol pass too
    np.asarray(g)[...] *= -1  # gdap writes DistArray's memory
    assert (la.ndarray <= 0).all()
    np.asarray(g)[...] *= -1
    return la, g


def gdap_to_distarray(name, dim_data):
    g = gdap.empty(dim_data, np.float64)
    a = np.asarray(g)
    for lidx in np.ndindex(*a.shape):
        a[lidx] = value(g.local_to_global(lidx))
    la = DaLocalArray.from_distarray(WORLD, g)
    assert address(la.ndarray) == address(g), "%s: DistArray copied gdap's buffer" % name
    check_distarray_values(la, name + " (gdap -> DistArray)")
    return g, la


def dnpy_both_ways(name, la, g, case):
    # DistArray writes, gdap reads.
    prefix = os.path.join(TMP, "da%d" % case)
    da_save_dnpy("%s_%d.dnpy" % (prefix, RANK), la)
    WORLD.Barrier()
    back = gdap.load_dnpy(COMM, prefix)
    check_gdap_values(back, name + " (DistArray's .dnpy -> gdap)")
    # gdap writes, DistArray reads.
    prefix2 = os.path.join(TMP, "gd%d" % case)
    gdap.save_dnpy(COMM, g, prefix2)
    la2 = da_load_dnpy(WORLD, "%s_%d.dnpy" % (prefix2, RANK))
    check_distarray_values(la2, name + " (gdap's .dnpy -> DistArray)")
    assert la2.dim_data[0]["dist_type"] == la.dim_data[0]["dist_type"]
    return open("%s_%d.dnpy" % (prefix, RANK), "rb").read(), open("%s_%d.dnpy" % (prefix2, RANK), "rb").read()


for case, (name, dist) in enumerate(distarray_cases()):
    la, g = distarray_to_gdap(name, dist)
    g2, la2 = gdap_to_distarray(name, g.dim_data)
    unstructured = any(d["dist_type"] == "u" for d in la.dim_data)
    if unstructured:
        # DistArray keeps 'indices' as a NumPy array and its save_dnpy writes repr(): "array([...])",
        # which no literal parser reads (DistArray's own load_dnpy refuses its file: safe_eval).
        da_file = os.path.join(TMP, "u_%d.dnpy" % RANK)
        da_save_dnpy(da_file, la)
        assert b"'indices': array([" in open(da_file, "rb").read()
        try:
            da_load_dnpy(WORLD, da_file)
            raise AssertionError("DistArray read its own 'u' file")
        except Exception:
            note("its save_dnpy writes an unstructured dimension's indices as repr(ndarray), 'array([...])', "
                 "which is not a Python literal: neither its own load_dnpy nor gdap.load_dnpy reads the file "
                 "(gdap writes a list, which both read)")
        try:
            gdap.load_dnpy(COMM, os.path.join(TMP, "u"))
            raise AssertionError("gdap read a file with array(...) in its header")
        except gdap.FileIOError as e:
            assert "expected a literal" in str(e), e
        prefix = os.path.join(TMP, "gu")
        gdap.save_dnpy(COMM, g, prefix)
        check_distarray_values(da_load_dnpy(WORLD, "%s_%d.dnpy" % (prefix, RANK)), name + " (gdap's .dnpy -> DistArray)")
        check_gdap_values(gdap.load_dnpy(COMM, prefix), name + " (gdap's .dnpy -> gdap)")
    else:
        da_bytes, gd_bytes = dnpy_both_ways(name, la, g, case)
        assert da_bytes == gd_bytes, "%s: rank %d: DistArray's and gdap's .dnpy files differ:\n%r\n%r" % (
            name, RANK, da_bytes[:400], gd_bytes[:400])
    g.close()
    g2.close()
    WORLD.Barrier()

# Block-cyclic with a trailing partial block: the protocol gives it to grid rank (size // bs) % P;
# DistArray's BlockCyclicMap gives it to grid rank 0 (the upstream defect PROTOCOL.md names).
# size 11, bs 3, P 4: blocks 0,1,2 full, block 3 partial (2 indices) -> rank 3 owns 2, rank 0 owns 3.
dd = [dict(dist_type="c", size=11, proc_grid_size=4, proc_grid_rank=RANK, start=3 * RANK, block_size=3)]
la = DaLocalArray(Distribution(WORLD, dd), dtype=np.float64)
protocol_extent = {0: 3, 1: 3, 2: 3, 3: 2}[RANK]
if la.local_shape[0] != protocol_extent:
    note("block-cyclic: its BlockCyclicMap gives the trailing partial block to grid rank 0 (size 11, block_size 3, "
         "4 ranks: rank 0 holds 5, rank 3 holds 0); the protocol gives it to rank (size // block_size) % P = 3 "
         "(rank 0 holds 3, rank 3 holds 2): gdap refuses DistArray's section where they differ")
    try:
        gdap.from_distarray(la)
        raise AssertionError("gdap took a section the protocol's rules refuse")
    except gdap.ProtocolError:
        pass
else:
    assert address(gdap.from_distarray(la)) == address(la.ndarray)
g = gdap.empty(dd, np.float64)
assert np.asarray(g).shape == (protocol_extent,)
g.close()

# Periodic, padded blocks, DAP 0.10's way: the edge ranks' outer padding is boundary padding (owned,
# counted in size, start >= 0), communication padding lies between ranks. A 2 x 2 grid: rows periodic,
# 6 interior rows and boundary padding 1 at each end (size 8), halo 1; columns not periodic, size 7,
# boundary padding (2, 1), halo 2.
ROWS = [dict(dist_type="b", size=8, proc_grid_size=2, proc_grid_rank=0, start=0, stop=5, padding=(1, 1), periodic=True),
        dict(dist_type="b", size=8, proc_grid_size=2, proc_grid_rank=1, start=3, stop=8, padding=(1, 1), periodic=True)]
COLS = [dict(dist_type="b", size=7, proc_grid_size=2, proc_grid_rank=0, start=0, stop=5, padding=(2, 2)),
        dict(dist_type="b", size=7, proc_grid_size=2, proc_grid_rank=1, start=1, stop=7, padding=(2, 1))]
padded_dims = (ROWS[RANK // 2], COLS[RANK % 2])
name = "periodic padded 2x2"

# gdap -> DistArray: the same memory, and every cell (owned or padding) the same global index on both sides.
g = gdap.empty(padded_dims, np.float64)
a = np.asarray(g)
for lidx in np.ndindex(*a.shape):
    a[lidx] = value(g.local_to_global(lidx))
gdap.GlobalMap.collective(COMM, g.dim_data)
la = DaLocalArray.from_distarray(WORLD, g)
assert address(la.ndarray) == address(g), "%s: DistArray copied gdap's buffer" % name
for lidx in np.ndindex(*a.shape):
    assert tuple(la.global_from_local(lidx)) == tuple(g.local_to_global(lidx)), (name, RANK, lidx)
check_distarray_values(la, name + " (gdap -> DistArray)")

# gdap's halo exchange over MPI fills the padding in the memory DistArray reads: a communication
# padding cell the element at its own global index, a periodic row's boundary padding the periodic
# image (row 0 mirrors row 6, row 7 mirrors row 1).
owned = [range(d["start"] + (d["padding"][0] if d["proc_grid_rank"] > 0 else 0),
               d["stop"] - (d["padding"][1] if d["proc_grid_rank"] < d["proc_grid_size"] - 1 else 0)) for d in padded_dims]
for lidx in np.ndindex(*a.shape):
    gi = g.local_to_global(lidx)
    if not (gi[0] in owned[0] and 1 <= gi[0] < 7 and gi[1] in owned[1]):
        a[lidx] = -1.0  # every cell the exchange fills
gdap.halo_exchange(COMM, gdap.Halo(gdap.GlobalMap.collective(COMM, g.dim_data), np.float64, COMM), g)
for lidx in np.ndindex(*a.shape):
    row, col = la.global_from_local(lidx)
    image = row + 6 if row == 0 else row - 6 if row == 7 else row
    assert la.ndarray[lidx] == value((image, col)), (name, RANK, lidx, la.ndarray[lidx], value((image, col)))

# .dnpy, gdap writes, DistArray reads: each cell the same global index.
prefix = os.path.join(TMP, "padded")
gdap.save_dnpy(COMM, g, prefix)
la2 = da_load_dnpy(WORLD, "%s_%d.dnpy" % (prefix, RANK))
for lidx in np.ndindex(*a.shape):
    assert la2.ndarray[lidx] == a[lidx] and tuple(la2.global_from_local(lidx)) == tuple(g.local_to_global(lidx))
assert "'periodic': True" in open("%s_%d.dnpy" % (prefix, RANK), "rb").read().decode("latin-1")

# DistArray -> gdap: DistArray's LocalArray over the same dictionaries holds the same cells, but its
# export drops 'padding' and 'periodic'.
la = DaLocalArray(Distribution(WORLD, [dict(d) for d in padded_dims]), dtype=np.float64)
fill_distarray(la)
exported = la.__distarray__()["dim_data"]
if any("padding" not in d for d in exported):
    note("its localapi maps export 'b' dictionaries without 'padding' and 'periodic' (a padded array's export "
         "then describes overlapping blocks, which the protocol refuses: gdap names the overlap); gdap reads "
         "DistArray's memory with the dictionaries DistArray was given")
    try:
        gdap.GlobalMap.collective(COMM, exported)
        raise AssertionError("gdap took overlapping blocks")
    except gdap.ProtocolError as e:
        assert "an overlap" in str(e), e
back = gdap.from_distarray({"__version__": "0.10.0", "buffer": la.ndarray, "dim_data": padded_dims})
assert address(back) == address(la.ndarray), "%s: gdap copied DistArray's buffer" % name
check_gdap_values(back, name + " (DistArray -> gdap)")
back.close()
g.close()
WORLD.Barrier()

# The empty dictionary {} (the protocol's alias for an undistributed dimension): DistArray's
# Distribution reads dd['dist_type'] and fails; gdap resolves it from the buffer's shape.
buf = np.arange(6.0)
try:
    DaLocalArray.from_distarray(WORLD, {"__version__": "0.10.0", "buffer": buf, "dim_data": ({},)})
    raise AssertionError("DistArray took {}")
except KeyError:
    note("it does not take the empty dimension dictionary {} (the protocol's alias for an undistributed "
         "dimension): KeyError 'dist_type'; gdap resolves {} from the buffer's shape")
g = gdap.from_distarray({"__version__": "0.10.0", "buffer": buf, "dim_data": ({},)})
assert address(g) == address(buf) and g.dim_data[0]["stop"] == 6
g.close()

WORLD.Barrier()
COMM.close()
if RANK == 0:
    print("DistArray %s (NumPy %s, mpi4py %s, Python %s): %d disagreement(s) with the protocol text" % (
        distarray.__version__, np.__version__, __import__("mpi4py").__version__, sys.version.split()[0], len(NOTES)))
print("rank %d: ok" % RANK, flush=True)
