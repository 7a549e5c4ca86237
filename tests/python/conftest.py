"""Shared pieces of the Python binding tests: the gpu marker and dimension-dict builders."""
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and CuPy / PyTorch / JAX (ctest label gpu)")


def block(size, start, stop, grid=1, rank=0, **optional):
    """A 'b' dimension dict."""
    return dict(dist_type="b", size=size, proc_grid_size=grid, proc_grid_rank=rank, start=start, stop=stop, **optional)


def cyclic(size, grid, rank, block_size=None):
    """A 'c' dimension dict (start = rank * block_size); block_size None leaves the key out."""
    d = dict(dist_type="c", size=size, proc_grid_size=grid, proc_grid_rank=rank, start=rank * (block_size or 1))
    if block_size is not None:
        d["block_size"] = block_size
    return d


def unstructured(size, indices, grid=1, rank=0, **optional):
    """A 'u' dimension dict."""
    return dict(dist_type="u", size=size, proc_grid_size=grid, proc_grid_rank=rank, indices=indices, **optional)


@pytest.fixture
def dims():
    """The builders, for tests that prefer a fixture to an import."""
    return {"block": block, "cyclic": cyclic, "unstructured": unstructured}
