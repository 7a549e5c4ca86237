"""The DLPack consumer asks __dlpack_device__() first and exports a CUDA tensor with its own device
current (PyTorch refuses otherwise: "Can't export tensors on a different CUDA device index"), then
makes the caller's device current again. Checked without a GPU: a producer claiming CUDA device 1
that fails unless device 1 is current, over a stand-in CUDA runtime (a fake `cupy` module holding
the current device). The real producers (CuPy, PyTorch, JAX on cuda:1 while cuda:0 is current) are
tested in test_global_gpu.py on a GPU machine."""
import sys
import types

import numpy as np
import pytest

import gdap


class FakeRuntime:
    """What gdap's device switch uses of CuPy: cuda.Device(n) as a context, cuda.runtime.getDevice."""

    def __init__(self):
        self.current, self.log = 0, []
        runtime = self

        class Device:
            def __init__(self, ordinal):
                self.ordinal = ordinal

            def __enter__(self):
                self.previous = runtime.current
                runtime.current = self.ordinal
                runtime.log.append(("enter", self.ordinal))

            def __exit__(self, *exc):
                runtime.current = self.previous
                runtime.log.append(("exit", self.previous))

        self.module = types.SimpleNamespace(cuda=types.SimpleNamespace(
            Device=Device, runtime=types.SimpleNamespace(getDevice=lambda: runtime.current)))


class TorchLikeProducer:
    """Claims to live on CUDA device `ordinal` and, like PyTorch, refuses to export unless that
    device is current; exports host memory (a NumPy capsule) so the test needs no GPU."""

    def __init__(self, runtime, ordinal):
        self.runtime, self.ordinal = runtime, ordinal
        self.array = np.arange(6, dtype=np.float32)
        self.calls = []

    def __dlpack_device__(self):
        self.calls.append("__dlpack_device__")
        return (2, self.ordinal)

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        self.calls.append(("__dlpack__", self.runtime.current, stream))
        if self.runtime.current != self.ordinal:
            raise BufferError("Can't export tensors on a different CUDA device index. Expected: %d. Current device: "
                              "%d." % (self.ordinal, self.runtime.current))
        return self.array.__dlpack__(max_version=max_version)


@pytest.fixture
def runtime(monkeypatch):
    fake = FakeRuntime()
    monkeypatch.setitem(sys.modules, "cupy", fake.module)
    return fake


def test_the_producer_exports_on_its_own_device_then_the_callers_is_current(runtime):
    producer = TorchLikeProducer(runtime, 1)
    la = gdap.from_dlpack(producer)
    assert producer.calls[0] == "__dlpack_device__", "the device is asked first"
    assert producer.calls[1] == ("__dlpack__", 1, None), "exported with device 1 current"
    assert runtime.log == [("enter", 1), ("exit", 0)] and runtime.current == 0
    assert la.data_ptr == producer.array.ctypes.data


def test_a_stream_is_passed_to_the_producer_on_its_device(runtime):
    producer = TorchLikeProducer(runtime, 3)
    gdap.from_dlpack(producer, stream=7)
    assert producer.calls[1] == ("__dlpack__", 3, 7)


def test_the_same_consumer_serves_redistribute(runtime):
    producer = TorchLikeProducer(runtime, 1)
    comms = gdap.group(1)
    plan = gdap.Plan(gdap.layout.block((6,), 1), gdap.layout.cyclic((6,), 1), np.float32, comms[0])
    out = gdap.redistribute(comms[0], plan, producer, np.zeros(6, np.float32))
    assert (out == producer.array).all() and runtime.current == 0


def test_host_producers_are_not_switched(runtime):
    gdap.from_dlpack(np.arange(3.0))
    assert runtime.log == []
