"""gdap.save_zarr / load_zarr / zarr_shape on in-process groups, both ways with zarr-python (a
peer written by others): stores gdap writes are read by zarr-python, stores zarr-python writes
(other chunk grids, big-endian bytes, zstd, absent chunks) load into any distribution, element by
element; a codec gdap does not read fails on every rank and leaves every section untouched. Every
codec and option of both writers, each way: test_zarr_codecs.py."""
import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import zarr  # required, not skipped: tools/deps.sh and tools/test.sh install it
from zarr.codecs import BytesCodec, GzipCodec, ZstdCodec

import gdap

SHAPE = (7, 5)
WHOLE = np.arange(35, dtype=np.float32).reshape(SHAPE) * 3 + 1


def irregular_rows(r, p):  # 7 rows over p ranks, unequal blocks: gdap redistributes before writing
    return (dict(dist_type="b", size=7, proc_grid_size=p, proc_grid_rank=r, start=7 * r // p, stop=7 * (r + 1) // p),
            _whole(5))


def cyclic_columns(r, p, block=1):
    return (_whole(7),
            dict(dist_type="c", size=5, proc_grid_size=p, proc_grid_rank=r, start=r * block, block_size=block))


def _whole(size):
    return dict(dist_type="b", size=size, proc_grid_size=1, proc_grid_rank=0, start=0, stop=size)


def run(n, body):
    """body(comm) on n threads, one rank each; returns each rank's result, re-raising a failure."""
    comms, out, errors = gdap.group(n), [None] * n, []
    for c in comms:
        c.set_timeout(30)

    def rank(r):
        try:
            out[r] = body(comms[r])
        except Exception as e:  # reported below, after every thread ended
            errors.append(e)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


@pytest.mark.parametrize("codec", ["zstd", "raw"])
@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("shards", [True, False])
def test_gdap_writes_zarr_python_reads(tmp_path, codec, n, shards):
    gmap = gdap.GlobalMap([irregular_rows(r, n) for r in range(n)])
    path = tmp_path / "a.zarr"

    def body(comm):
        r = comm.rank
        mine = WHOLE[7 * r // n:7 * (r + 1) // n].copy()
        gdap.save_zarr(comm, gmap, mine, path, codec=codec, shards=shards)
        assert (mine == WHOLE[7 * r // n:7 * (r + 1) // n]).all()  # the source is only read

    run(n, body)
    z = zarr.open_array(str(path), mode="r")
    assert z.shape == SHAPE and z.dtype == np.float32
    assert (z[...] == WHOLE).all()
    chain = ["bytes", "zstd", "crc32c"] if codec == "zstd" else ["bytes", "crc32c"]
    if shards:
        assert [c.to_dict()["name"] for c in z.metadata.codecs] == ["sharding_indexed"]
        assert [c.to_dict()["name"] for c in z.metadata.codecs[0].codecs] == chain
    else:
        assert [c.to_dict()["name"] for c in z.metadata.codecs] == chain
    assert gdap.zarr_shape(path) == (SHAPE, np.dtype(np.float32))


@pytest.mark.parametrize("endian", ["little", "big"])
def test_zarr_python_writes_gdap_loads_any_distribution(tmp_path, endian):
    path = str(tmp_path / "b.zarr")
    z = zarr.create_array(path, shape=SHAPE, chunks=(3, 2), dtype=np.float64, fill_value=-5.0,
                          serializer=BytesCodec(endian=endian), compressors=ZstdCodec(level=3))
    z[:, :4] = WHOLE[:, :4]  # column 4 is never written: its chunks are absent and read as the fill value
    want = WHOLE.astype(np.float64)
    want[:, 4] = -5.0
    n = 2
    for layout in (lambda r: cyclic_columns(r, n), lambda r: cyclic_columns(r, n, block=2),
                   lambda r: irregular_rows(r, n)):
        gmap = gdap.GlobalMap([layout(r) for r in range(n)])

        def body(comm):
            return np.asarray(gdap.load_zarr(comm, gmap, path)).copy()

        for r, section in enumerate(run(n, body)):
            d = gmap.dim_data(r)
            rows = slice(d[0]["start"], d[0]["stop"])
            cols = [g for g in range(5) if _owns(d[1], g)]
            assert (section == want[rows][:, cols]).all(), (r, section)


@pytest.mark.parametrize("fill", [0.1, -65519.0, 1e-7, 70000.0])
def test_float16_fill_value_rounds_as_numpy(tmp_path, fill):
    """Absent chunks of a float16 array read as its fill value, rounded to binary16 as NumPy does
    (nearest even, overflow to infinity, subnormals), with gdap's own conversion."""
    path = str(tmp_path / "h.zarr")
    z = zarr.create_array(path, shape=(4,), chunks=(2,), dtype=np.float16, fill_value=fill)
    z[:2] = np.array([1, 2], dtype=np.float16)
    gmap = gdap.GlobalMap([[_whole(4)]])
    got = run(1, lambda comm: np.asarray(gdap.load_zarr(comm, gmap, path)).copy())[0]
    with np.errstate(over="ignore"):
        want = np.array([1, 2, fill, fill]).astype(np.float16)
    assert got.tobytes() == want.tobytes(), (got, want)


def _owns(dim, g):
    if dim["dist_type"] == "b":
        return dim["start"] <= g < dim["stop"]
    block, p, r = dim.get("block_size", 1), dim["proc_grid_size"], dim["proc_grid_rank"]
    return (g // block) % p == r


def test_round_trip_through_both(tmp_path):
    """gdap writes, zarr-python changes a region, gdap reads the change into another layout."""
    path = tmp_path / "c.zarr"
    n = 2
    rows = gdap.GlobalMap([irregular_rows(r, n) for r in range(n)])
    run(n, lambda comm: gdap.save_zarr(comm, rows, WHOLE[7 * comm.rank // n:7 * (comm.rank + 1) // n].copy(), path))
    z = zarr.open_array(str(path), mode="r+")
    z[2:5, 1:3] = -1
    want = WHOLE.copy()
    want[2:5, 1:3] = -1
    cols = gdap.GlobalMap([cyclic_columns(r, n) for r in range(n)])
    for r, section in enumerate(run(n, lambda comm: np.asarray(gdap.load_zarr(comm, cols, path)).copy())):
        assert (section == want[:, r::n]).all()


def test_unreadable_codec_fails_everywhere_and_touches_nothing(tmp_path):
    path = str(tmp_path / "g.zarr")
    z = zarr.create_array(path, shape=SHAPE, chunks=(4, 5), dtype=np.float32, compressors=GzipCodec())
    z[...] = WHOLE
    meta = json.loads(open(path + "/zarr.json").read())
    meta["codecs"][1]["name"] = "bz2"  # a codec no Zarr v3 implementation gdap knows of writes
    open(path + "/zarr.json", "w").write(json.dumps(meta))
    n = 2
    gmap = gdap.GlobalMap([irregular_rows(r, n) for r in range(n)])
    sections = [np.full(gmap.local_shape(r), 7, np.float32) for r in range(n)]
    errors = [None] * n

    def body(comm):
        try:
            gdap.load_zarr(comm, gmap, path, section=sections[comm.rank])
        except gdap.UnsupportedError as e:
            errors[comm.rank] = str(e)

    run(n, body)
    assert all("codec \"bz2\"" in e for e in errors), errors
    assert all((s == 7).all() for s in sections)


def test_refusals(tmp_path):
    with pytest.raises(gdap.FileIOError, match="zarr.json: cannot open"):
        gdap.zarr_shape(tmp_path / "nothing")
    gmap = gdap.GlobalMap([irregular_rows(0, 1)])
    path = tmp_path / "d.zarr"
    run(1, lambda comm: gdap.save_zarr(comm, gmap, WHOLE.copy(), path, codec="raw"))
    with pytest.raises(gdap.InvalidArgumentError, match="already there"):
        run(1, lambda comm: gdap.save_zarr(comm, gmap, WHOLE.copy(), path))
    run(1, lambda comm: gdap.save_zarr(comm, gmap, WHOLE.copy() * 2, path, overwrite=True))
    assert (zarr.open_array(str(path), mode="r")[...] == WHOLE * 2).all()
    with pytest.raises(ValueError, match="codec must be"):
        run(1, lambda comm: gdap.save_zarr(comm, gmap, WHOLE.copy(), path, codec="lz4"))
    with pytest.raises(gdap.InvalidArgumentError, match="section's dtype is float64"):
        run(1, lambda comm: gdap.load_zarr(comm, gmap, path, section=np.zeros(SHAPE)))


def test_nul_in_a_path_raises_and_writes_nothing(tmp_path):
    """Issue 27, item 4: a path holding a NUL named another store in C (the string ended there)."""
    gmap = gdap.GlobalMap([irregular_rows(0, 1)])
    bad = str(tmp_path / "d.zarr") + "\0x"
    with pytest.raises(ValueError, match="path .* holds a NUL character at position"):
        run(1, lambda comm: gdap.save_zarr(comm, gmap, WHOLE.copy(), bad))
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="NUL character"):
        gdap.zarr_shape(bad)
    with pytest.raises(ValueError, match="NUL character"):
        run(1, lambda comm: gdap.load_zarr(comm, gmap, bad))


def test_overflowing_fill_value_is_refused(tmp_path):
    """Issue 27, item 4: fill_value 300 for uint8 was stored as 44."""
    path = tmp_path / "u8.zarr"
    zarr.create_array(str(path), shape=(4,), chunks=(2,), dtype="uint8", fill_value=3)
    meta = json.loads((path / "zarr.json").read_text())
    meta["fill_value"] = 300
    (path / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(gdap.FileIOError, match="fill_value 300 does not fit in uint8"):
        gdap.zarr_shape(path)


def test_zarr_shape_of_many_dimensions_is_whole(tmp_path):
    """A rank past the first read's buffer (32 extents) is read again with room for it."""
    path = tmp_path / "many.zarr"
    shape = (1,) * 39 + (3,)
    zarr.create_array(str(path), shape=shape, chunks=shape, dtype="int16", fill_value=0)
    assert gdap.zarr_shape(path) == (shape, np.dtype(np.int16))


@pytest.mark.parametrize("first, then", [
    (((7, 5), "float32"), ((4, 3, 2), "float64")),  # the rank grows between two reads
    (((4, 3, 2), "float64"), ((6,), "int32")),      # the rank shrinks
    (((4, 3, 2), "float64"), ((2, 9, 2), "uint8")),  # the same rank, other extents and dtype
])
def test_zarr_shape_is_of_one_read_when_a_save_comes_between(tmp_path, monkeypatch, first, then):
    """The SWIG wrapper asked C for the rank, then for the extents: a save between the two made it
    raise BufferTooSmallError (a rank grown past the buffer it had sized) or could pair one store's
    answer with the other's. Now every read is whole on its own and only the last one counts: with
    a first buffer of one extent, a save is made right after the first read."""
    path = tmp_path / "s.zarr"
    zarr.create_array(str(path), shape=first[0], chunks=first[0], dtype=first[1], fill_value=0)
    real = gdap._zarr._c.gdap_zarr_shape_read
    calls = []

    def read_then_save(name, capacity):
        answer = real(name, capacity)
        calls.append(answer)
        if len(calls) == 1:
            zarr.create_array(str(path), shape=then[0], chunks=then[0], dtype=then[1], fill_value=0, overwrite=True)
        return answer

    monkeypatch.setattr(gdap._zarr, "_SHAPE_CAPACITY", 1)
    monkeypatch.setattr(gdap._zarr._c, "gdap_zarr_shape_read", read_then_save)
    assert gdap.zarr_shape(path) == (then[0], np.dtype(then[1]))
    assert len(calls) >= 2 and calls[0][1] == len(first[0])  # the save did come between two reads


def test_zarr_shape_while_another_process_swaps_the_store(tmp_path):
    """A real race: another process replaces zarr.json (atomically) by a 1-d then a 3-d array's, over
    and over, for 2 s of reads. Every answer is one of the two arrays'; the old wrapper's two C calls
    raised BufferTooSmallError about once in 200 reads here."""
    one, three = tmp_path / "one.zarr", tmp_path / "three.zarr"
    zarr.create_array(str(one), shape=(6,), chunks=(6,), dtype="int32", fill_value=0)
    zarr.create_array(str(three), shape=(4, 3, 2), chunks=(4, 3, 2), dtype="float64", fill_value=0)
    target = tmp_path / "swapped.zarr"
    target.mkdir()
    (target / "zarr.json").write_text((one / "zarr.json").read_text())
    swapper = subprocess.Popen([sys.executable, "-c", (
        "import os, sys\n"
        "texts = [open(p).read() for p in sys.argv[1:3]]\n"
        "t = sys.argv[3]\n"
        "while True:\n"
        "    for text in texts:\n"
        "        open(t + '.tmp', 'w').write(text)\n"
        "        os.replace(t + '.tmp', t)\n"),
        str(one / "zarr.json"), str(three / "zarr.json"), str(target / "zarr.json")])
    try:
        want = {((6,), np.dtype(np.int32)), ((4, 3, 2), np.dtype(np.float64))}
        seen = set()
        end = time.monotonic() + 2
        while time.monotonic() < end:
            got = gdap.zarr_shape(target)
            assert got in want
            seen.add(got)
    finally:
        swapper.kill()
        swapper.wait()
    assert seen == want, "the swaps never showed: no race was run"
