"""Zarr stores with TensorStore (the second peer, installed on the lent GPU machines) and from
device sections (CuPy), marked gpu so that they run there (ctest python.gpu): TensorStore reads the
stores gdap writes (shards with zstd, blosc or raw inner chunks; one chunk per block) and gdap
loads those TensorStore writes (zstd chunks, blosc shards, its defaults); CuPy sections are saved
and loaded through host staging (plain and as blosc shards), element by element."""
import numpy as np
import pytest

import gdap
from test_zarr import SHAPE, WHOLE, cyclic_columns, irregular_rows, run

pytestmark = pytest.mark.gpu


def _tensorstore():
    return pytest.importorskip("tensorstore")


def _spec(path):
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}


@pytest.mark.parametrize("options", [{}, dict(codec="blosc-lz4", chunk_bytes=8), dict(codec="raw", chunk_bytes=8),
                                     dict(shards=False)])
def test_tensorstore_reads_what_gdap_writes(tmp_path, options):
    """gdap's default store (one shard per block, inner chunks with crc32c), blosc and raw shards of
    tiny inner chunks, one chunk per block: TensorStore reads each."""
    ts = _tensorstore()
    n = 3
    gmap = gdap.GlobalMap([irregular_rows(r, n) for r in range(n)])
    path = tmp_path / "gdap.zarr"
    run(n, lambda comm: gdap.save_zarr(comm, gmap, WHOLE[7 * comm.rank // n:7 * (comm.rank + 1) // n].copy(), path,
                                       **options))
    got = ts.open(_spec(path)).result().read().result()
    assert got.shape == SHAPE and (got == WHOLE).all()


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
SHARDED_BLOSC = {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
                 "codecs": [{"name": "sharding_indexed", "configuration": {
                     "chunk_shape": [2, 2],
                     "codecs": [BYTES, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                                          "typesize": 4, "blocksize": 0}}],
                     "index_codecs": [BYTES, {"name": "crc32c"}]}}]}


@pytest.mark.parametrize("metadata", [
    {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 2]}},
     "codecs": [BYTES, {"name": "zstd", "configuration": {"level": 2}}]},
    SHARDED_BLOSC,  # issue 30: sharding_indexed with TensorStore's index codecs and inner blosc
    {},  # TensorStore's own defaults for an array given only a shape and a type
], ids=["zstd chunks", "blosc shards", "defaults"])
def test_gdap_loads_what_tensorstore_writes(tmp_path, metadata):
    ts = _tensorstore()
    path = tmp_path / "ts.zarr"
    store = ts.open({**_spec(path), "create": True,
                     "metadata": {"shape": list(SHAPE), "data_type": "float32", **metadata}}).result()
    store.write(WHOLE).result()
    n = 2
    cols = gdap.GlobalMap([cyclic_columns(r, n) for r in range(n)])
    for r, section in enumerate(run(n, lambda comm: np.asarray(gdap.load_zarr(comm, cols, path)).copy())):
        assert (section == WHOLE[:, r::n]).all()


@pytest.mark.parametrize("options", [{}, dict(codec="blosc-zstd", shuffle="bitshuffle", chunk_bytes=16)],
                         ids=["defaults", "blosc shards of 16-byte inner chunks"])
def test_device_sections_save_and_load(tmp_path, options):
    cupy = pytest.importorskip("cupy")
    n = 2
    rows = gdap.GlobalMap([irregular_rows(r, n) for r in range(n)])
    path = tmp_path / "device.zarr"
    run(n, lambda comm: gdap.save_zarr(comm, rows, cupy.asarray(WHOLE[7 * comm.rank // n:7 * (comm.rank + 1) // n]), path,
                                       **options))
    cols = gdap.GlobalMap([cyclic_columns(r, n) for r in range(n)])

    def load(comm):
        section = cupy.full(cols.local_shape(comm.rank), -1, cupy.float32)
        gdap.load_zarr(comm, cols, path, section=section)
        return cupy.asnumpy(section)

    for r, section in enumerate(run(n, load)):
        assert (section == WHOLE[:, r::n]).all()
