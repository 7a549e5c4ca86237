"""Zarr stores with TensorStore (the second peer, installed on the lent GPU machines) and from
device sections (CuPy), marked gpu so that they run there (ctest python.gpu): TensorStore reads a
store gdap writes and gdap loads one TensorStore writes (its own chunk grid and zstd); CuPy
sections are saved and loaded through host staging, element by element."""
import numpy as np
import pytest

import gdap
from test_zarr import SHAPE, WHOLE, cyclic_columns, irregular_rows, run

pytestmark = pytest.mark.gpu


def _tensorstore():
    return pytest.importorskip("tensorstore")


def _spec(path):
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}


def test_tensorstore_reads_what_gdap_writes(tmp_path):
    ts = _tensorstore()
    n = 3
    gmap = gdap.GlobalMap([irregular_rows(r, n) for r in range(n)])
    path = tmp_path / "gdap.zarr"
    run(n, lambda comm: gdap.save_zarr(comm, gmap, WHOLE[7 * comm.rank // n:7 * (comm.rank + 1) // n].copy(), path))
    got = ts.open(_spec(path)).result().read().result()
    assert got.shape == SHAPE and (got == WHOLE).all()


def test_gdap_loads_what_tensorstore_writes(tmp_path):
    ts = _tensorstore()
    path = tmp_path / "ts.zarr"
    store = ts.open({**_spec(path), "create": True, "metadata": {
        "shape": list(SHAPE), "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 2]}},
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 2}}],
    }}).result()
    store.write(WHOLE).result()
    n = 2
    cols = gdap.GlobalMap([cyclic_columns(r, n) for r in range(n)])
    for r, section in enumerate(run(n, lambda comm: np.asarray(gdap.load_zarr(comm, cols, path)).copy())):
        assert (section == WHOLE[:, r::n]).all()


def test_device_sections_save_and_load(tmp_path):
    cupy = pytest.importorskip("cupy")
    n = 2
    rows = gdap.GlobalMap([irregular_rows(r, n) for r in range(n)])
    path = tmp_path / "device.zarr"
    run(n, lambda comm: gdap.save_zarr(comm, rows, cupy.asarray(WHOLE[7 * comm.rank // n:7 * (comm.rank + 1) // n]), path))
    cols = gdap.GlobalMap([cyclic_columns(r, n) for r in range(n)])

    def load(comm):
        section = cupy.full(cols.local_shape(comm.rank), -1, cupy.float32)
        gdap.load_zarr(comm, cols, path, section=section)
        return cupy.asnumpy(section)

    for r, section in enumerate(run(n, load)):
        assert (section == WHOLE[:, r::n]).all()
