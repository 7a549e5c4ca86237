#!/usr/bin/env python3
"""heat_view: the heat solver's field and residual history, looked at from Python and drawn as PNG.

  heat_view.py attach DIR [--out FILE.png] [--release] [--wait SECONDS]
      DIR is a running solver's --share directory (state.txt, and one IPC handle per rank and
      field). Every rank's current section is opened with gdap.ipc_open: the solver's own memory
      mapped into this process (POSIX shared memory for host sections, CUDA IPC for device ones),
      not one element copied. The NumPy (or CuPy) view starts exactly at the address gdap mapped,
      which this checks, and each attach is timed. --wait waits for the solver's final state
      (`done 1`), --release then tells a solver started with --hold that it may free its sections.
  heat_view.py checkpoint STORE [--out FILE.png]
      A Zarr v3 checkpoint written by either driver (read with zarr-python), with the residual
      history of its .heat record.

The picture: the field (2-d; a 3-d field's middle slice along dimension 0) with the process grid's
block edges, and the residual norms against the decay the exact solution predicts (g per step).
"""

import argparse
import math
import os
import sys
import time

import numpy as np


def read_record(path):
    """The solver's key-value record (state.txt or a checkpoint's .heat) as a dict."""
    record = {"residual": []}
    with open(path) as f:
        for line in f:
            key, _, rest = line.strip().partition(" ")
            if key == "residual":
                step, value = rest.split()
                record["residual"].append((int(step), float(value)))
            elif key in ("n", "periodic", "origin", "mode", "grid"):
                record[key] = [int(x) for x in rest.split()]
            elif key == "r":
                record[key] = float(rest)
            elif key in ("ndim", "step", "nranks", "current", "done", "heat"):
                record[key] = int(rest)
            else:
                record[key] = rest
    if record.get("heat") != 1:
        raise SystemExit("heat_view: %s is not a heat record (no 'heat 1' line)" % path)
    return record


def growth(record):
    """g: the factor by which one step multiplies the eigenmode (heat_problem_growth)."""
    total = 0.0
    for n, periodic, k in zip(record["n"], record["periodic"], record["mode"]):
        theta = 2 * math.pi * k / n if periodic else math.pi * k / (n + 1)
        total += math.sin(theta / 2) ** 2
    return 1 - 4 * record["r"] * total


def owned_slices(dim_data):
    """Per dimension: (global slice, local slice) of the elements this section owns."""
    import gdap
    pairs = []
    for dim in dim_data:
        (g, n, l), = gdap.dim_runs(dim)  # a block dimension has one run
        pairs.append((slice(g, g + n), slice(l, l + n)))
    return pairs


def attach(directory, wait):
    """Opens every rank's current section; returns (record, global field, attach times, note)."""
    import gdap
    state = os.path.join(directory, "state.txt")
    deadline = time.time() + wait
    while True:
        if os.path.exists(state):
            record = read_record(state)
            if record.get("done") == 1 or wait <= 0:
                break
        if time.time() > deadline:
            raise SystemExit("heat_view: no final state in %s after %g s" % (directory, wait))
        time.sleep(0.05)
    field = None
    times = []
    views = []
    for rank in range(record["nranks"]):
        with open(os.path.join(directory, "rank%d.field%d.ipc" % (rank, record["current"])), "rb") as f:
            handle = f.read()
        t0 = time.perf_counter()
        section = gdap.ipc_open(handle)
        times.append(time.perf_counter() - t0)
        if section.device == "cpu":
            view = np.asarray(section)
            address = view.__array_interface__["data"][0]
        else:
            import cupy
            view = cupy.from_dlpack(section)
            address = view.data.ptr
        if address != section.data_ptr:
            raise SystemExit("heat_view: rank %d: the view starts at 0x%x, not at gdap's mapping 0x%x"
                             % (rank, address, section.data_ptr))
        dims = section.dim_data
        if field is None:
            field = np.full([d["size"] for d in dims], np.nan)
        pairs = owned_slices(dims)
        part = view[tuple(l for _, l in pairs)]
        field[tuple(g for g, _ in pairs)] = part.get() if hasattr(part, "get") else part
        views.append((section, view))
    kind = "shared memory" if views[0][0].device == "cpu" else "CUDA IPC (%s)" % views[0][0].device
    note = "%d sections attached over %s, zero copy: each view starts at gdap's mapping" % (len(views), kind)
    for section, _ in views:
        section.close()
    return record, field, times, note


def from_checkpoint(store):
    import zarr
    record = read_record(store + ".heat")
    field = np.asarray(zarr.open_array(store, mode="r")[...], dtype=np.float64)
    return record, field


def draw(record, field, out, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ndim = field.ndim
    picture = field if ndim == 2 else field[field.shape[0] // 2]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [1.2, 1]})
    image = left.imshow(picture, origin="lower", cmap="inferno", interpolation="nearest")
    fig.colorbar(image, ax=left, shrink=0.85, label="u")
    # The block edges of the process grid's last two dimensions (those shown).
    n, grid, origin = record["n"][-2:], record.get("grid", [1] * ndim)[-2:], record["origin"][-2:]
    for axis, (count, ranks, first) in enumerate(zip(n, grid, origin)):
        for c in range(1, ranks):
            edge = first + c * count // ranks - 0.5
            (left.axhline if axis == 0 else left.axvline)(edge, color="cyan", lw=0.8, ls="--")
    where = "" if ndim == 2 else ", slice %d of dimension 0" % (field.shape[0] // 2)
    left.set_title("u at step %d%s (block edges dashed)" % (record["step"], where))
    left.set_xlabel("global index, dimension %d" % (ndim - 1))
    left.set_ylabel("global index, dimension %d" % (ndim - 2))

    history = record["residual"]
    if history:
        steps = np.array([s for s, _ in history])
        values = np.array([v for _, v in history])
        right.semilogy(steps, values, "o", ms=4, label="residual ||u_s - u_(s-1)|| (all-reduced)")
        g = growth(record)
        right.semilogy(steps, values[0] * g ** (steps - steps[0]), "-", lw=1,
                       label="exact decay g^s, g = %.6f" % g)
        right.legend()
    right.set_xlabel("step")
    right.set_title("residual history")
    right.grid(True, which="both", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def describe(record):
    shape = " x ".join("%d%s" % (n, " (periodic)" if p else "") for n, p in zip(record["n"], record["periodic"]))
    grid = " x ".join(str(g) for g in record.get("grid", []))
    return "heat, %d-d %s, unknowns %s, process grid %s" % (record["ndim"], record.get("dtype", ""), shape, grid)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    a = sub.add_parser("attach", help="a running solver's sections, through gdap's IPC handles")
    a.add_argument("directory")
    a.add_argument("--out", default="heat_field.png")
    a.add_argument("--release", action="store_true", help="let a solver started with --hold free its sections")
    a.add_argument("--wait", type=float, default=0.0, help="seconds to wait for the solver's final state")
    c = sub.add_parser("checkpoint", help="a Zarr v3 checkpoint")
    c.add_argument("store")
    c.add_argument("--out", default="heat_checkpoint.png")
    args = parser.parse_args(argv)
    if args.what == "attach":
        try:
            record, field, times, note = attach(args.directory, args.wait)
        finally:
            if args.release:
                open(os.path.join(args.directory, "release"), "w").close()
        print("heat_view: %s" % note)
        print("heat_view: attach per section: %s ms (largest %.3f ms)"
              % (", ".join("%.3f" % (1e3 * t) for t in times), 1e3 * max(times)))
        title = describe(record) + ", attached at step %d" % record["step"]
    else:
        record, field = from_checkpoint(args.store)
        title = describe(record) + ", checkpoint of step %d" % record["step"]
    if np.isnan(field).any():
        raise SystemExit("heat_view: %d cells of the field were never written" % int(np.isnan(field).sum()))
    draw(record, field, args.out, title)
    print("heat_view: step %d, field %s, min %.6g, max %.6g, %d residuals -> %s"
          % (record["step"], "x".join(map(str, field.shape)), field.min(), field.max(), len(record["residual"]),
             args.out))


if __name__ == "__main__":
    main(sys.argv[1:])
