"""GPU sections (marked gpu; ctest python.gpu): zero copy with CuPy, PyTorch and JAX device arrays,
__cuda_array_interface__ consumed by CuPy without a copy, gdap.empty on the device. Each test skips
where its library, a CUDA device or gdap's CUDA support is missing."""
import numpy as np
import pytest

import gdap
from conftest import block

pytestmark = pytest.mark.gpu


def _cupy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception as e:  # no driver
        pytest.skip("no CUDA device: %s" % e)
    return cupy


def _empty_on_device(shape, dtype, device="cuda:0"):
    try:
        return gdap.empty(shape, dtype, device=device)
    except gdap.UnsupportedError as e:
        pytest.skip("gdap was built without CUDA: %s" % e)


def test_from_dlpack_cupy_is_zero_copy():
    cupy = _cupy()
    x = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    la = gdap.from_dlpack(x, dim_data=(block(6, 3, 6, grid=2, rank=1), {}))
    assert la.data_ptr == x.data.ptr
    assert la.device == "cuda:%d" % x.device.id and la.__dlpack_device__() == (2, x.device.id)
    assert la.shape == (3, 4) and la.dtype == np.float32
    y = cupy.asarray(la)  # through __cuda_array_interface__
    assert y.data.ptr == x.data.ptr
    y[0, 0] = 42
    assert float(x[0, 0]) == 42
    z = cupy.from_dlpack(la)
    assert z.data.ptr == x.data.ptr


def test_cuda_array_interface_v3():
    cupy = _cupy()
    x = cupy.zeros((2, 5), dtype=cupy.int64)[:, ::2]
    la = gdap.from_dlpack(x)
    cai = la.__cuda_array_interface__
    assert cai["version"] == 3 and cai["stream"] is None
    assert cai["data"] == (x.data.ptr, False)
    assert cai["shape"] == (2, 3) and cai["strides"] == x.strides and cai["typestr"] == "<i8"
    assert not hasattr(la, "__array_interface__")


def test_device_distarray_buffer_is_the_local_array():
    cupy = _cupy()
    x = cupy.ones(4)
    la = gdap.from_dlpack(x)
    d = la.__distarray__()
    assert d["buffer"] is la and d["__version__"] == "0.10.0"
    back = gdap.from_distarray(d)
    assert back.data_ptr == x.data.ptr


def test_cuda_array_interface_only_producer():
    cupy = _cupy()
    x = cupy.arange(5, dtype=cupy.float64)

    class CaiOnly:
        def __init__(self, array):
            self.array = array
            self.__cuda_array_interface__ = array.__cuda_array_interface__

    producer = CaiOnly(x)
    la = gdap.from_distarray({"__version__": "0.10.0", "buffer": producer, "dim_data": ({},)})
    assert la.data_ptr == x.data.ptr and la.device == "cuda:%d" % x.device.id
    del producer, x
    y = cupy.asarray(la)  # the producer is kept alive by gdap's tensor
    assert float(y[4]) == 4.0


def test_empty_on_device():
    cupy = _cupy()
    la = _empty_on_device((4, 5), np.float32)
    assert la.device == "cuda:0"
    with cupy.cuda.Device(0):  # CuPy copies a foreign device's array; JAX's start-up may leave another GPU current
        c = cupy.asarray(la)
        assert c.data.ptr == la.data_ptr and c.shape == (4, 5)
        c.fill(1.5)  # on device 0's stream (CuPy warned of peer access from device 1 on 2 x H200)
        again = cupy.from_dlpack(la)
        assert again.data.ptr == la.data_ptr and float(again.sum()) == 30.0


def test_from_dlpack_torch_is_zero_copy():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for PyTorch")
    t = torch.arange(10, dtype=torch.float32, device="cuda")
    la = gdap.from_dlpack(t, dim_data=(block(20, 10, 20, grid=2, rank=1),))
    assert la.data_ptr == t.data_ptr()
    back = torch.from_dlpack(la)
    assert back.data_ptr() == t.data_ptr()
    back[3] = -1
    assert float(t[3]) == -1


def test_from_dlpack_jax_is_zero_copy():
    jax = pytest.importorskip("jax")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        pytest.skip("no GPU for JAX")
    import jax.numpy as jnp
    j = jax.device_put(jnp.arange(8, dtype=jnp.float32), gpus[0])
    la = gdap.from_dlpack(j)
    assert la.data_ptr == j.unsafe_buffer_pointer()
    assert la.device.startswith("cuda:")


def test_cuda_array_interface_stream_is_waited_for():
    # Rule: CAI v3: the consumer synchronises on the producer's 'stream' before it touches the data;
    # here 200 additions are still queued on a non-blocking stream when gdap imports and reads it.
    cupy = _cupy()
    n = 1 << 24
    with cupy.cuda.Device(0):
        x = cupy.zeros(n, dtype=cupy.float64)
        cai = dict(x.__cuda_array_interface__)  # taken before the work is queued: no export-time sync
        stream = cupy.cuda.Stream(non_blocking=True)
        cupy.cuda.Device(0).synchronize()
        with stream:
            for _ in range(200):
                x += 1.0
        cai["stream"] = stream.ptr

    class Producer:
        def __init__(self):
            self.array, self.stream = x, stream
            self.__cuda_array_interface__ = cai

    la = gdap.from_distarray({"__version__": "0.10.0", "buffer": Producer(), "dim_data": ({},)})
    host = gdap.GlobalArray.from_sections([la]).get()  # gdap's own moves, on its own stream
    assert host.min() == 200.0 and host.max() == 200.0, (host.min(), host.max())
