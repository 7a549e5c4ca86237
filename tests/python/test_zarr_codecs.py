"""Zarr v3 as users have it (issue 30), both ways against zarr-python, element for element.

zarr-python writes: its defaults and each of sharding_indexed (index at the start or the end, with
and without crc32c, nested codecs, a shard inside a shard), blosc (lz4, zstd, zlib; shuffle,
bitshuffle, noshuffle; typesize), gzip, zstd with and without its checksum, crc32c, transpose,
big- and little-endian bytes, v2 chunk keys, fill values NaN and infinities, dimension_names,
partial edge chunks and absent chunks; gdap loads each into three distributions (one rank, row
blocks of unequal size, block-cyclic columns) and must give exactly what zarr-python reads.
gdap writes: every codec it writes (raw, zstd, blosc with lz4 or zstd under each shuffle), shards
of several inner-chunk sizes or one chunk per block, from three distributions; zarr-python must
read exactly the array. Hostile shards (a flipped bit, an index past the end) fail by name."""
import json
import os

import numpy as np
import pytest
import zarr
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec,
                         ZstdCodec)

import gdap
from test_zarr import run

SHAPE = (7, 9)


def whole(size):
    return dict(dist_type="b", size=size, proc_grid_size=1, proc_grid_rank=0, start=0, stop=size)


def layouts(shape):
    """(name, n, dims(r)) for three distributions of an array of `shape`."""
    rows = shape[0]
    cut = [0, 1, rows]  # unequal row blocks: gdap redistributes before it writes
    return [
        ("one rank", 1, lambda r: [whole(e) for e in shape]),
        ("row blocks", 2, lambda r: [dict(dist_type="b", size=rows, proc_grid_size=2, proc_grid_rank=r, start=cut[r],
                                          stop=cut[r + 1])] + [whole(e) for e in shape[1:]]),
        ("cyclic columns", 3, lambda r: [whole(e) for e in shape[:-1]] +
         [dict(dist_type="c", size=shape[-1], proc_grid_size=3, proc_grid_rank=r, start=2 * r, block_size=2)]),
    ]


def owned(d, size):
    if d["dist_type"] == "b":
        return list(range(d["start"], d["stop"]))
    b, p, r = d.get("block_size", 1), d["proc_grid_size"], d["proc_grid_rank"]
    return [g for g in range(size) if (g // b) % p == r]


def section_of(full, dims):
    return full[np.ix_(*[owned(d, e) for d, e in zip(dims, full.shape)])]


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def values(shape, dtype):
    n = int(np.prod(shape))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    if dtype.kind == "c":
        return (np.arange(n) + 1j * np.arange(n)[::-1]).astype(dtype).reshape(shape)
    if dtype.kind == "f":
        return (np.arange(n) * 0.75 - 11).astype(dtype).reshape(shape)
    return (np.arange(n) % 200 - (100 if dtype.kind == "i" else 0)).astype(dtype).reshape(shape)


def gdap_reads_as_zarr_does(path):
    """Loads the store at `path` into every layout; each rank's section must be zarr-python's read."""
    gdap_reads(path, zarr.open_array(str(path), mode="r")[...])


def gdap_reads(path, want):
    """Loads the store at `path` into every layout; each rank's section must be its part of `want`."""
    shape, dtype = gdap.zarr_shape(path)
    assert shape == want.shape and dtype == want.dtype
    for name, n, dims in layouts(want.shape):
        gmap = gdap.GlobalMap([dims(r) for r in range(n)])
        got = run(n, lambda comm: np.asarray(gdap.load_zarr(comm, gmap, path)).copy())
        for r in range(n):
            assert same(got[r], section_of(want, dims(r))), (name, r, got[r], section_of(want, dims(r)))


def blosc(cname, shuffle, typesize=None):
    return dict(compressors=[BloscCodec(cname=cname, shuffle=shuffle, typesize=typesize, clevel=5)])


# name -> (dtype, create_array keywords). Chunks of (2, 4) over (7, 9): partial edge chunks.
WRITTEN_BY_ZARR = {
    "defaults": ("float64", dict(chunks=(2, 4))),
    "sharded, index at the end with crc32c (the default)": ("float32", dict(chunks=(2, 2), shards=(4, 4))),
    "sharded, index at the start without crc32c": ("int16", dict(chunks=(4, 6), serializer=ShardingCodec(
        chunk_shape=(2, 3), codecs=[BytesCodec(), ZstdCodec(level=1)], index_codecs=[BytesCodec()],
        index_location="start"), compressors=None)),
    "sharded, big-endian inner chunks through gzip and crc32c": ("uint16", dict(chunks=(4, 4), serializer=ShardingCodec(
        chunk_shape=(1, 2), codecs=[BytesCodec(endian="big"), GzipCodec(level=5), Crc32cCodec()]), compressors=None)),
    "sharded, inner chunks through blosc": ("float64", dict(chunks=(2, 3), shards=(4, 6),
                                                            compressors=[BloscCodec(cname="zstd", shuffle="bitshuffle")])),
    "a shard inside a shard": ("int32", dict(chunks=(4, 8), serializer=ShardingCodec(chunk_shape=(2, 4), codecs=[
        ShardingCodec(chunk_shape=(1, 2), codecs=[BytesCodec(), ZstdCodec()])]), compressors=None)),
    "sharded, then zstd over the whole shard": ("float32", dict(chunks=(4, 4), serializer=ShardingCodec(
        chunk_shape=(2, 2)), compressors=[ZstdCodec()])),
    "transpose": ("int16", dict(chunks=(2, 4), filters=[TransposeCodec(order=(1, 0))])),
    "transpose before sharding": ("float32", dict(chunks=(2, 2), shards=(4, 4), filters=[TransposeCodec(order=(1, 0))])),
    "big-endian bytes": ("float64", dict(chunks=(3, 3), serializer=BytesCodec(endian="big"), compressors=None)),
    "little-endian bytes, no compressor": ("complex64", dict(chunks=(3, 3), serializer=BytesCodec(endian="little"),
                                                            compressors=None)),
    "gzip level 1": ("uint8", dict(chunks=(2, 4), compressors=[GzipCodec(level=1)])),
    "gzip level 9": ("int32", dict(chunks=(2, 4), compressors=[GzipCodec(level=9)])),
    "zstd with its checksum": ("float64", dict(chunks=(2, 4), compressors=[ZstdCodec(level=3, checksum=True)])),
    "zstd without its checksum": ("float64", dict(chunks=(2, 4), compressors=[ZstdCodec(level=3, checksum=False)])),
    "crc32c alone": ("int64", dict(chunks=(2, 4), compressors=[Crc32cCodec()])),
    "zstd then crc32c": ("complex128", dict(chunks=(2, 4), compressors=[ZstdCodec(), Crc32cCodec()])),
    "v2 chunk keys with '.'": ("float32", dict(chunks=(2, 4), chunk_key_encoding={"name": "v2", "separator": "."})),
    "v2 chunk keys with '/'": ("float32", dict(chunks=(2, 4), chunk_key_encoding={"name": "v2", "separator": "/"})),
    "default chunk keys with '.'": ("uint32", dict(chunks=(2, 4), chunk_key_encoding={"name": "default",
                                                                                      "separator": "."})),
    "dimension_names": ("float32", dict(chunks=(2, 4), dimension_names=["y", "x"])),
    "bool": ("bool", dict(chunks=(2, 4))),
    "float16": ("float16", dict(chunks=(2, 4))),
}
for _cname in ("lz4", "zstd", "zlib"):
    for _shuffle in ("shuffle", "bitshuffle", "noshuffle"):
        WRITTEN_BY_ZARR["blosc %s %s" % (_cname, _shuffle)] = ("float32", dict(chunks=(2, 4), **blosc(_cname, _shuffle)))
WRITTEN_BY_ZARR["blosc with a typesize not the element's"] = ("float64", dict(chunks=(2, 4), **blosc("lz4", "shuffle", 2)))


@pytest.mark.parametrize("case", sorted(WRITTEN_BY_ZARR))
def test_gdap_reads_what_zarr_python_writes(tmp_path, case):
    dtype, kwargs = WRITTEN_BY_ZARR[case]
    path = tmp_path / "z.zarr"
    z = zarr.create_array(str(path), shape=SHAPE, dtype=dtype, **kwargs)
    z[...] = values(SHAPE, dtype)
    gdap_reads_as_zarr_does(path)


@pytest.mark.parametrize("fill", [float("nan"), float("inf"), float("-inf"), -2.5])
def test_fill_values_and_absent_chunks(tmp_path, fill):
    """Only rows 0-2 are written: the other chunks (and shards) are absent and read as the fill value."""
    for sharded in (False, True):
        path = tmp_path / ("f%d.zarr" % sharded)
        z = zarr.create_array(str(path), shape=SHAPE, dtype="float64", chunks=(2, 4), fill_value=fill,
                              shards=(4, 8) if sharded else None)
        z[0:3, :] = values((3, 9), "float64")
        gdap_reads_as_zarr_does(path)
        got = run(1, lambda comm: np.asarray(gdap.load_zarr(comm, gdap.GlobalMap([[whole(7), whole(9)]]), path)).copy())[0]
        assert same(got[4:], np.full((3, 9), fill)), got


def test_three_dimensions_transposed(tmp_path):
    path = tmp_path / "t3.zarr"
    z = zarr.create_array(str(path), shape=(3, 4, 5), dtype="int32", chunks=(2, 3, 2),
                          filters=[TransposeCodec(order=(2, 0, 1))], compressors=[GzipCodec()])
    z[...] = values((3, 4, 5), "int32")
    gdap_reads_as_zarr_does(path)


WRITTEN_BY_GDAP = [
    ("raw", "shuffle"), ("zstd", "shuffle"), ("blosc-lz4", "shuffle"), ("blosc-lz4", "bitshuffle"),
    ("blosc-lz4", "noshuffle"), ("blosc-zstd", "shuffle"), ("blosc-zstd", "bitshuffle"),
]


def saved_by_gdap(tmp_path, codec, shuffle, layout, dtype):
    """Yields (layout name, store, the whole array) after gdap saved the array from each of three
    distributions with `codec`, `shuffle` and `layout` (shards of 2 MiB or 48-byte inner chunks, or
    one chunk per block)."""
    full = values(SHAPE, dtype)
    for name, n, dims in layouts(SHAPE):
        path = tmp_path / ("%s.zarr" % name.replace(" ", "_"))
        gmap = gdap.GlobalMap([dims(r) for r in range(n)])
        run(n, lambda comm: gdap.save_zarr(comm, gmap, section_of(full, dims(comm.rank)).copy(), path, codec=codec,
                                           shuffle=shuffle, shards=layout != "chunks",
                                           chunk_bytes=48 if "48" in layout else 0))
        yield name, path, full


@pytest.mark.parametrize("codec,shuffle", WRITTEN_BY_GDAP)
@pytest.mark.parametrize("layout", ["shards of 2 MiB inner chunks", "shards of 48-byte inner chunks", "chunks"])
@pytest.mark.parametrize("dtype", ["float64", "int16", "complex64", "bool"])
def test_zarr_python_reads_what_gdap_writes(tmp_path, codec, shuffle, layout, dtype):
    for name, path, full in saved_by_gdap(tmp_path, codec, shuffle, layout, dtype):
        z = zarr.open_array(str(path), mode="r")
        assert same(z[...], full), (name, z[...], full)
        names = [c.to_dict()["name"] for c in z.metadata.codecs]
        assert names[0] == ("sharding_indexed" if layout != "chunks" else "bytes"), names
        gdap_reads_as_zarr_does(path)


def test_gdap_shards_follow_the_blocks(tmp_path):
    """One shard per rank's block (each file one writer), inner chunks dividing it, index with crc32c."""
    full = values((8, 12), "float64")
    dims = lambda r: [dict(dist_type="b", size=8, proc_grid_size=2, proc_grid_rank=r, start=4 * r, stop=4 * r + 4),
                      whole(12)]
    gmap = gdap.GlobalMap([dims(r) for r in range(2)])
    path = tmp_path / "s.zarr"
    run(2, lambda comm: gdap.save_zarr(comm, gmap, section_of(full, dims(comm.rank)).copy(), path, chunk_bytes=100))
    meta = json.loads((path / "zarr.json").read_text())
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == [4, 12]
    sharding = meta["codecs"][0]["configuration"]
    inner = sharding["chunk_shape"]
    assert 4 % inner[0] == 0 and 12 % inner[1] == 0 and inner[0] * inner[1] * 8 <= 100, inner
    assert [c["name"] for c in sharding["index_codecs"]] == ["bytes", "crc32c"]
    assert sharding["index_location"] == "end"
    assert sorted(os.listdir(path / "c")) == ["0", "1"] and os.listdir(path / "c" / "0") == ["0"]


def _sharded_store(tmp_path):
    path = tmp_path / "h.zarr"
    z = zarr.create_array(str(path), shape=(8, 8), dtype="uint16", chunks=(2, 2), shards=(4, 4),
                          compressors=[ZstdCodec(), Crc32cCodec()])
    z[...] = values((8, 8), "uint16")
    return path


def _load_one(path):
    return run(1, lambda comm: np.asarray(gdap.load_zarr(comm, gdap.GlobalMap([[whole(8), whole(8)]]), path)).copy())


def test_a_flipped_bit_is_an_error_naming_the_chunk(tmp_path):
    path = _sharded_store(tmp_path)
    shard = path / "c" / "1" / "0"
    data = bytearray(shard.read_bytes())
    data[5] ^= 0x10  # inside the first inner chunk's bytes
    shard.write_bytes(bytes(data))
    with pytest.raises(gdap.FileIOError, match=r"c/1/0: inner chunk \(0, 0\): crc32c checksum .* does not match"):
        _load_one(path)


def test_a_flipped_bit_in_a_shard_index_is_an_error(tmp_path):
    path = _sharded_store(tmp_path)
    shard = path / "c" / "0" / "1"
    data = bytearray(shard.read_bytes())
    data[-10] ^= 0x01  # inside the index (the last 4 * 16 + 4 bytes)
    shard.write_bytes(bytes(data))
    with pytest.raises(gdap.FileIOError, match=r"c/0/1: the shard index: crc32c checksum"):
        _load_one(path)


def test_an_index_past_the_end_of_its_shard_is_an_error(tmp_path):
    path = tmp_path / "p.zarr"
    z = zarr.create_array(str(path), shape=(8, 8), dtype="uint16", chunks=(4, 4),
                          serializer=ShardingCodec(chunk_shape=(2, 2), index_codecs=[BytesCodec()]), compressors=None)
    z[...] = values((8, 8), "uint16")
    shard = path / "c" / "0" / "0"
    data = bytearray(shard.read_bytes())
    index = np.frombuffer(bytes(data[-64:]), dtype="<u8").copy()
    index[2] = len(data) + 100  # inner chunk (0, 1) starts past the end
    data[-64:] = index.tobytes()
    shard.write_bytes(bytes(data))
    with pytest.raises(gdap.FileIOError, match=r"c/0/0: the shard index gives inner chunk \(0, 1\) .* past the shard"):
        _load_one(path)
    data = data[-40:]  # shorter than its index
    shard.write_bytes(bytes(data))
    with pytest.raises(gdap.FileIOError, match=r"40 bytes, shorter than its 64-byte shard index"):
        _load_one(path)
