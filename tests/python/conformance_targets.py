"""Producers and consumers for test_conformance.py, imported by the runner as 'module:function'
(not collected by pytest): one written without gdap, to show the runner checks code nobody here
wrote, and deliberately broken ones, to show that it fails them."""
import numpy as np

import gdap.conformance as conformance


class NumpyProducer:
    """A producer that knows only 'b' and 'c' and computes its section with its own arithmetic."""

    def __init__(self, global_array, dim_data):
        for d in dim_data:
            if d.get("dist_type") not in ("b", "c"):
                raise NotImplementedError("only 'b' and 'c'")
        axes = [self._axis(d) for d in dim_data]
        self.buffer = np.asarray(global_array)[np.ix_(*axes)] if axes else np.asarray(global_array).copy()
        self.dim_data = tuple(dim_data)

    @staticmethod
    def _axis(d):
        if d["dist_type"] == "b":
            return np.arange(d["start"], d["stop"])  # padding holds its own indices, periodic or not
        bs, P, r = d.get("block_size", 1), d["proc_grid_size"], d["proc_grid_rank"]
        g = np.array([i for i in range(d["size"]) if i // bs % P == r], dtype=np.int64)
        return g

    def __distarray__(self):
        return {"__version__": "0.10.0", "buffer": self.buffer, "dim_data": self.dim_data}


def numpy_producer(global_array, dim_data):
    return NumpyProducer(global_array, dim_data)


def off_by_one_producer(global_array, dim_data):
    """gdap's producer with one element wrong wherever the section is not empty."""
    local = conformance.gdap_producer(global_array, dim_data)
    view = np.asarray(local)
    if view.size:
        view.reshape(-1)[0] += 1
    return local


class _Unpadded:
    def __init__(self, inner):
        self.inner = inner

    def __distarray__(self):
        d = dict(self.inner.__distarray__())
        d["dim_data"] = tuple({k: v for k, v in x.items() if k != "padding"} for x in d["dim_data"])
        return d


def drops_padding_producer(global_array, dim_data):
    """gdap's producer whose dicts forget 'padding': wrong wherever an example has padding."""
    return _Unpadded(conformance.gdap_producer(global_array, dim_data))


def lenient_consumer(distbuffer):
    """Reads the buffer without checking anything: accepts invalid distbuffers."""
    return np.asarray(distbuffer["buffer"]).copy()


def reversed_consumer(distbuffer):
    """Validates through gdap but reads the elements backwards."""
    return conformance.gdap_consumer(distbuffer).reshape(-1)[::-1].reshape(np.shape(distbuffer["buffer"]))


_TYPE_KEYS = {"b": {"start", "stop", "padding", "periodic"}, "c": {"start", "block_size"}, "u": {"indices", "one_to_one"}}
_COMMON = {"dist_type", "size", "proc_grid_size", "proc_grid_rank"}


def key_lenient_consumer(distbuffer):
    """gdap's consumer after dropping every key the dict's dist_type does not know: follows the text,
    which does not say what to do with an unknown key, but not gdap's strict reading of it."""
    def known(d):
        keys = _COMMON | _TYPE_KEYS.get(d.get("dist_type"), set())
        return {k: v for k, v in d.items() if k in keys} if d else d
    d = dict(distbuffer)
    d["dim_data"] = tuple(known(x) for x in d["dim_data"])
    return conformance.gdap_consumer(d)
