"""Zarr v3 both ways against TensorStore, the second peer (issue 30), on the host, element for element.

TensorStore writes: its defaults and each of sharding_indexed (index at the end or the start, with and
without crc32c, nested codecs), blosc (lz4, zstd, zlib; shuffle, bitshuffle, noshuffle), gzip, zstd
with and without its checksum, crc32c, transpose (alone and before sharding), big- and little-endian
bytes, v2 chunk keys, a NaN fill value with absent chunks, and dimension_names; gdap loads each into
three distributions (one rank, unequal row blocks, block-cyclic columns) and must give exactly what
TensorStore reads. gdap writes: every codec it writes, as shards of two inner-chunk sizes or one chunk
per block, from three distributions; TensorStore must read exactly the array.
(The device-section cases with TensorStore are in test_zarr_peers.py, marked gpu.)"""
import numpy as np
import pytest
import tensorstore as ts  # a dependency of the suite (tools/deps.sh): missing, this file fails

import gdap
from test_zarr import run
from test_zarr_codecs import SHAPE, WRITTEN_BY_GDAP, gdap_reads, same, saved_by_gdap, values


def spec(path):
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}


def gdap_reads_as_tensorstore_does(path):
    """Loads the store at `path` into every layout; each rank's section must be TensorStore's read."""
    gdap_reads(path, ts.open(spec(path), open=True).result().read().result())


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}


def zstd(checksum=False):
    return {"name": "zstd", "configuration": {"level": 3, "checksum": checksum}}


def blosc(cname, shuffle, typesize):
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": typesize,
                                               "blocksize": 0}}


def sharded(inner, codecs, index_codecs=(BYTES, CRC), location="end"):
    return {"name": "sharding_indexed", "configuration": {"chunk_shape": list(inner), "codecs": list(codecs),
                                                          "index_codecs": list(index_codecs),
                                                          "index_location": location}}


def grid(*shape):
    return {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}}}


# name -> (dtype, metadata beyond shape and data_type). Chunks of (2, 4) over (7, 9): partial edge chunks.
WRITTEN_BY_TENSORSTORE = {
    "defaults": ("float64", {}),
    "sharded, index at the end with crc32c": ("float32", {**grid(4, 4), "codecs": [sharded((2, 2), [BYTES])]}),
    "sharded, index at the start without crc32c": ("int16", {**grid(4, 6), "codecs": [
        sharded((2, 3), [BYTES, zstd()], index_codecs=[BYTES], location="start")]}),
    "sharded, big-endian inner chunks through gzip and crc32c": ("uint16", {**grid(4, 4), "codecs": [
        sharded((1, 2), [BIG, {"name": "gzip", "configuration": {"level": 5}}, CRC])]}),
    "sharded, inner chunks through blosc": ("float64", {**grid(2, 6), "codecs": [
        sharded((2, 3), [BYTES, blosc("zstd", "bitshuffle", 8)])]}),
    "a shard inside a shard": ("int32", {**grid(4, 8), "codecs": [
        sharded((2, 4), [sharded((1, 2), [BYTES, zstd()])])]}),
    "transpose": ("int16", {**grid(2, 4), "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                                                      BYTES]}),
    "transpose before sharding": ("float32", {**grid(4, 4), "codecs": [
        {"name": "transpose", "configuration": {"order": [1, 0]}}, sharded((2, 2), [BYTES])]}),
    "big-endian bytes": ("float64", {**grid(3, 3), "codecs": [BIG]}),
    "little-endian bytes, no compressor": ("complex64", {**grid(3, 3), "codecs": [BYTES]}),
    "gzip level 1": ("uint8", {**grid(2, 4), "codecs": [BYTES, {"name": "gzip", "configuration": {"level": 1}}]}),
    "zstd with its checksum": ("float64", {**grid(2, 4), "codecs": [BYTES, zstd(True)]}),
    "zstd without its checksum": ("float64", {**grid(2, 4), "codecs": [BYTES, zstd(False)]}),
    "crc32c alone": ("int64", {**grid(2, 4), "codecs": [BYTES, CRC]}),
    "zstd then crc32c": ("complex128", {**grid(2, 4), "codecs": [BYTES, zstd(), CRC]}),
    "v2 chunk keys with '.'": ("float32", {**grid(2, 4), "chunk_key_encoding": {
        "name": "v2", "configuration": {"separator": "."}}}),
    "dimension_names": ("float32", {**grid(2, 4), "dimension_names": ["y", "x"]}),
    "bool": ("bool", grid(2, 4)),
}
for _cname in ("lz4", "zstd", "zlib"):
    for _shuffle in ("shuffle", "bitshuffle", "noshuffle"):
        WRITTEN_BY_TENSORSTORE["blosc %s %s" % (_cname, _shuffle)] = (
            "float32", {**grid(2, 4), "codecs": [BYTES, blosc(_cname, _shuffle, 4)]})


def create(path, dtype, metadata, shape=SHAPE):
    return ts.open({**spec(path), "create": True,
                    "metadata": {"shape": list(shape), "data_type": dtype, **metadata}}).result()


@pytest.mark.parametrize("case", sorted(WRITTEN_BY_TENSORSTORE))
def test_gdap_reads_what_tensorstore_writes(tmp_path, case):
    dtype, metadata = WRITTEN_BY_TENSORSTORE[case]
    path = tmp_path / "t.zarr"
    full = values(SHAPE, dtype)
    create(path, dtype, metadata).write(full).result()
    assert same(ts.open(spec(path), open=True).result().read().result(), full)  # the peer's own round trip
    gdap_reads_as_tensorstore_does(path)


@pytest.mark.parametrize("sharded_store", [False, True], ids=["chunks", "shards"])
def test_nan_fill_and_absent_chunks(tmp_path, sharded_store):
    """Only rows 0-2 are written: the other chunks (and shards) are absent and read as NaN."""
    path = tmp_path / "f.zarr"
    codecs = [sharded((2, 4), [BYTES])] if sharded_store else [BYTES]
    store = create(path, "float64", {**(grid(4, 8) if sharded_store else grid(2, 4)), "codecs": codecs,
                                     "fill_value": "NaN"})
    store[0:3, :].write(values((3, 9), "float64")).result()
    gdap_reads_as_tensorstore_does(path)
    got = run(1, lambda comm: np.asarray(gdap.load_zarr(comm, gdap.GlobalMap([[
        dict(dist_type="b", size=7, proc_grid_size=1, proc_grid_rank=0, start=0, stop=7),
        dict(dist_type="b", size=9, proc_grid_size=1, proc_grid_rank=0, start=0, stop=9)]]), path)).copy())[0]
    assert np.isnan(got[4:]).all() and same(got[:3], values((3, 9), "float64")), got


@pytest.mark.parametrize("codec,shuffle", WRITTEN_BY_GDAP)
@pytest.mark.parametrize("layout", ["shards of 2 MiB inner chunks", "shards of 48-byte inner chunks", "chunks"])
@pytest.mark.parametrize("dtype", ["float64", "int16", "complex64", "bool"])
def test_tensorstore_reads_what_gdap_writes(tmp_path, codec, shuffle, layout, dtype):
    for name, path, full in saved_by_gdap(tmp_path, codec, shuffle, layout, dtype):
        got = ts.open(spec(path), open=True).result().read().result()
        assert same(got, full), (name, got, full)
