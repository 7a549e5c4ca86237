"""gdap's exports against the protocol repository's own reference validator
(enthought/distributed-array-protocol's validator.py, shipped inside DistArray 0.6 as
distarray.externals.protocol_validator). Run with the interpreter of .deps/distarray-venv and gdap's
Python package on PYTHONPATH; one process, no MPI. Not collected by pytest.

1. Every rank of every layout the conformance vectors describe (worked examples and valid global
   sets: periodic, padded, irregular, cyclic, unstructured, empty, 0-d) is made by gdap
   (gdap.empty, filled through its own index map), exported through __distarray__, and must pass
   the reference validator.
2. The reference validator is not a straw man: it refuses what gdap used to export for a periodic
   padded dimension (a negative start), and the cases upstream's tests call invalid.

Prints "validator: N distbuffers valid, M refusals as expected" and exits 1 on any failure."""
import json
import pathlib
import sys

import numpy as np

from distarray.externals import protocol_validator

import gdap

ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = ROOT / "conformance" / "vectors"
failures = []


def layouts():
    """(name, one rank's dim_data, local shape) for every rank of every valid layout in the vectors."""
    for path in sorted(VECTORS.glob("*.json")):
        for v in json.loads(path.read_text())["vectors"]:
            if v["kind"] == "example":
                for r, rank in enumerate(v["ranks"]):
                    yield "%s rank %d" % (v["id"], r), rank["dim_data"], rank["local_shape"]
            elif v["kind"] == "global" and v["expect"]["valid"]:
                for r, rank in enumerate(v["ranks"]):
                    yield "%s rank %d" % (v["id"], r), rank["dim_data"], rank["shape"]


def exported(dim_data, shape):
    """gdap's distbuffer for one rank: a section gdap allocates ({} resolved from the shape)."""
    dims = [d if d else {"dist_type": "b", "size": n, "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0, "stop": n}
            for d, n in zip(dim_data, shape)]
    local = gdap.empty(tuple(dims), np.float64)
    return local, local.__distarray__()


count = 0
for name, dim_data, shape in layouts():
    try:
        local, distbuffer = exported(dim_data, shape)
    except Exception as e:
        failures.append("%s: gdap could not export %r (shape %s): %r" % (name, dim_data, shape, e))
        continue
    valid, why = protocol_validator.validate(distbuffer)
    if not valid:
        failures.append("%s: the reference validator refuses gdap's export %r: %s" % (name, distbuffer["dim_data"], why))
    for d in distbuffer["dim_data"]:
        if d.get("dist_type") == "b" and not 0 <= d["start"] <= d["stop"] <= d["size"]:
            failures.append("%s: gdap exported start %d, stop %d for size %d" % (name, d["start"], d["stop"], d["size"]))
    count += 1
    local.close()

# The validator refuses what it should: gdap's former periodic export, and upstream's invalid cases.
B = dict(dist_type="b", size=10, proc_grid_size=2, proc_grid_rank=0)
refusals = [
    ("gdap's former periodic export (start = -padding[0])",
     {"__version__": "0.10.0", "buffer": np.ones(7), "dim_data": (dict(B, start=-1, stop=6, padding=(1, 1), periodic=True),)}),
    ("stop past size", {"__version__": "0.10.0", "buffer": np.ones(11), "dim_data": (dict(B, start=0, stop=11),)}),
    ("dist_type 'q'", {"__version__": "0.10.0", "buffer": np.ones(5), "dim_data": (dict(B, dist_type="q", start=0, stop=5),)}),
    ("version 0.9.0", {"__version__": "0.9.0", "buffer": np.ones(5), "dim_data": (dict(B, start=0, stop=5),)}),
    ("padding of strings", {"__version__": "0.10.0", "buffer": np.ones(5),
                            "dim_data": (dict(B, start=0, stop=5, padding=("a", "b")),)}),
]
for name, distbuffer in refusals:
    valid, _ = protocol_validator.validate(distbuffer)
    if valid:
        failures.append("the reference validator accepted %s" % name)
    try:  # gdap refuses them too
        gdap.from_distarray(distbuffer).close()
        failures.append("gdap accepted %s" % name)
    except gdap.Error:
        pass

for f in failures:
    print("FAIL " + f)
print("validator: %d distbuffers valid, %d refusals as expected%s" % (
    count, len(refusals), "" if not failures else ", %d failures" % len(failures)))
sys.exit(1 if failures or count == 0 else 0)
