"""The gpu marker for the IPC binding tests (ctest ipc.python_gpu runs them)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and CuPy (ctest label gpu)")
