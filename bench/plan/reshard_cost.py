#!/usr/bin/env python3
"""What gdap.GlobalArray.reshard costs besides the move, on host sections (issue 25): a Controller of
4 ranks in host memory, float64 cyclic rows (4 x 1) -> column blocks (1 x 4) of each shape asked for.

Each repeat times, in turn and in one process (so that the machine's load falls on all alike):
  reshard        a.reshard(dst): new sections every call, the previous result freed
  bare call      gdap_redistribute on the same Controller's threads into fixed, preallocated sections
  redistribute   gdap.redistribute on those threads into preallocated NumPy arrays (wrapped each call)
  empty step     a Controller step that does nothing (the hand-off to the ranks' threads)
and prints each one's median, with reshard's minor page faults per call (fresh memory's first writes).
Every result is checked against the source after timing.

Usage: PYTHONPATH=<gdap build>/bindings/python reshard_cost.py [ROWSxCOLS:REPEATS ...]
       (default 64x64:400 1000x300:300 10007x3001:12)
"""
import resource
import statistics
import sys
import time

import numpy as np

import gdap
from gdap import _gdap_c, layout

P = 4


def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def measure(shape, repeats):
    src, dst = layout.cyclic(shape, P), layout.block(shape, (1, P))
    whole = np.arange(shape[0] * shape[1], dtype=np.float64).reshape(shape)
    a = gdap.distribute(whole, src)
    ctx = a.context
    plans = ctx.plans(a.layout, dst, a.dtype)
    fixed = gdap.GlobalArray.empty(dst)
    arrays = {r: fixed.local_view(r) for r in range(P)}
    out = {}

    def reshard():
        out["b"] = a.reshard(dst)

    def bare():
        ctx.run(lambda r: _gdap_c.gdap_redistribute(ctx.comm(r)._h(), plans[r]._h(), a.section(r)._h(),
                                                    fixed.section(r)._h()))

    def redistribute():
        ctx.run(lambda r: gdap.redistribute(ctx.comm(r), plans[r], a.section(r), arrays[r]))

    variants = {"reshard": reshard, "bare call": bare, "redistribute": redistribute,
                "empty step": lambda: ctx.run(lambda r: None)}
    times = {k: [] for k in variants}
    faults = 0
    for _ in range(3):
        for f in variants.values():
            f()
    for _ in range(repeats):
        for name, f in variants.items():
            before = minor_faults()
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
            if name == "reshard":
                faults += minor_faults() - before
    if not ((out["b"].get() == whole).all() and (fixed.get() == whole).all()):
        raise SystemExit("WRONG result for %s" % (shape,))
    print("%d x %d: " % shape + ", ".join("%s %.0f us" % (k, 1e6 * statistics.median(v)) for k, v in times.items())
          + "; reshard: %.0f minor page faults per call" % (faults / repeats), flush=True)


def main():
    for arg in sys.argv[1:] or ["64x64:400", "1000x300:300", "10007x3001:12"]:
        dims, _, repeats = arg.partition(":")
        measure(tuple(int(n) for n in dims.split("x")), int(repeats or 100))


if __name__ == "__main__":
    main()
