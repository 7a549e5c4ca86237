#!/usr/bin/env python3
"""Writes conformance/vectors/*.json: the protocol vectors of gdap's conformance suite.

Every vector is written here from the rules in conformance/rules.md (our reading of the protocol
text), never from gdap's own answers: the expected local buffers of the worked examples are
computed by the small index arithmetic below, which follows the protocol text and nothing else.
Output is deterministic (sorted keys, no timestamps), so `generate.py --check` proves that the
committed files are what this script writes; the test suite runs it.

  python3 conformance/generate.py            # (re)write conformance/vectors/
  python3 conformance/generate.py --check    # exit 1 if any committed file differs or is missing
"""

import argparse
import json
import pathlib
import sys

VERSION = "0.10.0"
HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "vectors"

# ---- dimension dictionaries ---------------------------------------------------------------------


def b(size, start, stop, grid=1, rank=0, **optional):
    return dict(dist_type="b", size=size, proc_grid_size=grid, proc_grid_rank=rank, start=start, stop=stop,
                **optional)


def c(size, grid, rank, block_size=None, start=None):
    d = dict(dist_type="c", size=size, proc_grid_size=grid, proc_grid_rank=rank,
             start=rank * (block_size or 1) if start is None else start)
    if block_size is not None:
        d["block_size"] = block_size
    return d


def u(size, indices, grid=1, rank=0, **optional):
    return dict(dist_type="u", size=size, proc_grid_size=grid, proc_grid_rank=rank, indices=list(indices),
                **optional)


# ---- the protocol's index arithmetic (independent of gdap) ---------------------------------------


def cyclic_owned(size, grid, rank, bs):
    """Owned count of a 'c' rank: the trailing partial block belongs to rank (size // bs) % grid."""
    nb, rem = divmod(size, bs)
    count = bs * (nb // grid + (1 if rank < nb % grid else 0))
    return count + (rem if rank == nb % grid else 0)


def extent(d):
    """Buffer extent a dictionary implies (padding included)."""
    if d["dist_type"] == "b":
        return d["stop"] - d["start"]
    if d["dist_type"] == "c":
        return cyclic_owned(d["size"], d["proc_grid_size"], d["proc_grid_rank"], d.get("block_size", 1))
    return len(d["indices"])


def global_of(d, local):
    """Global index held at local index `local`: for 'b' every cell of [start, stop) holds its own
    index, padding included, periodic or not (DAP 0.10: 0 <= start <= stop <= size)."""
    if d["dist_type"] == "b":
        return d["start"] + local
    if d["dist_type"] == "c":
        bs = d.get("block_size", 1)
        return (local // bs * d["proc_grid_size"] + d["proc_grid_rank"]) * bs + local % bs
    return d["indices"][local]


def grid_coords(rank, grid):
    """C-order grid coordinates (last fastest), as MPI_Cart_create."""
    coords = []
    for g in reversed(grid):
        coords.append(rank % g)
        rank //= g
    return list(reversed(coords))


def product(values):
    out = 1
    for v in values:
        out *= v
    return out


def local_indices(shape):
    """Every local index tuple of `shape`, C order."""
    for flat in range(product(shape)):
        idx, rest = [], flat
        for e in reversed(shape):
            idx.append(rest % e)
            rest //= e
        yield tuple(reversed(idx))


# ---- vector builders ----------------------------------------------------------------------------

VECTORS = {}  # file stem -> list of vectors


def add(stem, vector):
    VECTORS.setdefault(stem, []).append(vector)


def process(stem, id_, rules, dim_data, shape, valid, error=None, dimension=None, key=None, version=VERSION,
            note=None, reading=None):
    """One rank's distbuffer: dim_data + buffer shape (None: unknown), valid or not."""
    expect = {"valid": valid}
    if not valid:
        expect["error"] = error or "protocol"
        if dimension is not None:
            expect["dimension"] = dimension
        if key is not None:
            expect["key"] = key
    v = {"id": id_, "kind": "process", "rules": rules,
         "distbuffer": {"__version__": version, "dim_data": dim_data, "shape": shape}, "expect": expect}
    finish(stem, v, note, reading)


def finish(stem, v, note, reading):
    """Adds a vector; `reading` "gdap" marks one that follows gdap's reading where the text is silent."""
    if note:
        v["note"] = note
    if reading or any(r in GDAP_READINGS for r in v["rules"]):
        v["reading"] = "gdap"
    add(stem, v)


# Rules that are gdap's reading where the text is silent (rules.md says which): vectors exercising
# them say so.
GDAP_READINGS = {"dim.common.known-keys"}


def global_(stem, id_, rules, ranks, valid, rank=None, dimension=None, error="protocol", owned=None, note=None,
            shapes=None, reading=None):
    """Every rank's dim_data (list of dim_data lists, rank order), collectively valid or not."""
    expect = {"valid": valid}
    if valid:
        expect["owned_shapes"] = owned if owned is not None else owned_shapes(ranks)
    else:
        expect["error"] = error
        if rank is not None:
            expect["rank"] = rank
        if dimension is not None:
            expect["dimension"] = dimension
    v = {"id": id_, "kind": "global", "rules": rules,
         "ranks": [{"dim_data": dims, "shape": shapes[r] if shapes else [extent(d) for d in dims]}
                   for r, dims in enumerate(ranks)], "expect": expect}
    finish(stem, v, note, reading)


def owned_of(d):
    """Owned count: for 'b' the held range less communication padding, the padding on a side with
    a neighbour (the edges' outer padding is boundary padding, owned, periodic or not)."""
    if d["dist_type"] == "b":
        lo, hi = d.get("padding", [0, 0])
        first, last = d["proc_grid_rank"] == 0, d["proc_grid_rank"] == d["proc_grid_size"] - 1
        return d["stop"] - d["start"] - (0 if first else lo) - (0 if last else hi)
    return extent(d) if d["dist_type"] == "c" else len(d["indices"])


def owned_shapes(ranks):
    return [[owned_of(d) for d in dims] for dims in ranks]


def grid_of(axes):
    return [len(axis) for axis in axes]


def compose(axes):
    """Every rank's dim_data from one list of per-grid-rank dictionaries per axis (C-order grid)."""
    grid = grid_of(axes)
    return [[axes[i][g] for i, g in enumerate(grid_coords(r, grid))] for r in range(product(grid))]


def linear(shape, offset=0):
    """A value formula giving each global index its own value: offset + sum(coef[i] * g[i])."""
    coefficients, step = [], 1
    for e in reversed(shape):
        coefficients.append(step)
        step *= max(e, 1)
    return {"linear": {"offset": offset, "coefficients": list(reversed(coefficients))}}


def value_at(values, shape, g):
    if "linear" in values:
        f = values["linear"]
        return f["offset"] + sum(k * x for k, x in zip(f["coefficients"], g))
    flat = 0
    for e, x in zip(shape, g):
        flat = flat * e + x
    return values["explicit"][flat]


def example(stem, id_, rules, axes_or_ranks, dtype="float64", values=None, shape=None, note=None, reading=None):
    """A worked example: global shape and values, every rank's dim_data, each rank's local buffer
    (flat, C order; every cell holds the element at its global index, padding included)."""
    ranks = compose(axes_or_ranks) if shape is None else axes_or_ranks
    global_shape = [d["size"] for d in ranks[0]] if ranks[0] else (shape or [])
    values = values or linear(global_shape, offset=100)
    out = []
    for dims in ranks:
        local_shape = [extent(d) for d in dims]
        buffer = [value_at(values, global_shape, [global_of(d, l) for d, l in zip(dims, idx)])
                  for idx in local_indices(local_shape)]
        out.append({"dim_data": dims, "local_shape": local_shape, "buffer": buffer})
    rules = rules + ["global.element-count"]  # every example checks each global element has an owner
    v = {"id": id_, "kind": "example", "rules": rules, "dtype": dtype, "global_shape": global_shape,
         "values": values, "ranks": out}
    finish(stem, v, note, reading)


# ---- per-grid-rank axis builders for examples and global sets ------------------------------------


def block_axis(size, counts=None, grid=None, halo=0, boundary=(0, 0), periodic=None):
    """A 'b' axis: owned counts per grid rank (even split of `grid` ranks if None, boundary padding
    included), communication padding `halo` between neighbours, boundary padding on the ends;
    `periodic` sets the flag only (it changes no range)."""
    if counts is None:
        counts = [size * (g + 1) // grid - size * g // grid for g in range(grid)]
    P, out, lo = len(counts), [], 0
    for g, n in enumerate(counts):
        first, last = g == 0, g == P - 1
        pad_lo = boundary[0] if first else halo
        pad_hi = boundary[1] if last else halo
        start = lo - (0 if first else halo)
        stop = lo + n + (0 if last else halo)
        d = b(size, start, stop, P, g)
        if halo or any(boundary):
            d["padding"] = [pad_lo, pad_hi]
        if periodic is not None:
            d["periodic"] = periodic
        out.append(d)
        lo += n
    return out


def cyclic_axis(size, grid, block_size=None):
    return [c(size, grid, g, block_size) for g in range(grid)]


def unstructured_axis(size, index_lists, one_to_one=None):
    extra = {} if one_to_one is None else {"one_to_one": one_to_one}
    return [u(size, ix, len(index_lists), g, **extra) for g, ix in enumerate(index_lists)]


def undistributed_axis(size):
    return [b(size, 0, size)]


# ---- the catalogue ------------------------------------------------------------------------------


def process_common():
    s = "process_common"
    ok = b(10, 0, 10)
    process(s, "process/common/undistributed-block-valid", ["dim.b.bounds", "dim.b.extent"], [ok], [10], True)
    process(s, "process/common/zero-d", ["distbuffer.zero-d"], [], [], True)
    process(s, "process/common/empty-dict-alias", ["dim.empty-alias"], [{}], [7], True)
    process(s, "process/common/empty-dict-alias-2d", ["dim.empty-alias"], [{}, b(6, 0, 3, 2, 0)], [4, 3], True)
    process(s, "process/common/empty-dict-alias-empty-buffer", ["dim.empty-alias", "global.empty-sections"], [{}],
            [0], True)
    process(s, "process/common/ndim-mismatch", ["distbuffer.ndim"], [ok], [10, 1], False, key="dim_data")
    process(s, "process/common/ndim-mismatch-zero-d", ["distbuffer.ndim"], [], [3], False, key="dim_data")
    process(s, "process/common/shape-unknown-skips-extent", ["dim.b.extent"], [ok], None, True)
    process(s, "process/common/missing-dist-type", ["dim.common.required-keys"],
            [{"size": 4, "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0, "stop": 4}], [4], False,
            dimension=0, key="dist_type")
    process(s, "process/common/unknown-dist-type", ["dim.common.dist-type"],
            [dict(b(4, 0, 4), dist_type="x")], [4], False, dimension=0, key="dist_type")
    process(s, "process/common/dist-type-n", ["dim.common.dist-type"], [{"dist_type": "n", "size": 4}], [4], False,
            dimension=0, key="dist_type", note="'n' (undistributed) was version 0.9's; 0.10 writes {} or 'b'")
    process(s, "process/common/dist-type-not-string", ["dim.common.dist-type"],
            [dict(b(4, 0, 4), dist_type=98)], [4], False, dimension=0, key="dist_type")
    for key in ("size", "proc_grid_size", "proc_grid_rank"):
        d = b(4, 0, 4)
        del d[key]
        process(s, "process/common/missing-%s" % key.replace("_", "-"), ["dim.common.required-keys"], [d], [4],
                False, dimension=0, key=key)
    process(s, "process/common/unknown-key", ["dim.common.known-keys"], [dict(b(4, 0, 4), peridic=True)], [4],
            False, dimension=0, key="peridic", note="a misspelt optional key must not pass silently")
    process(s, "process/common/key-of-other-type", ["dim.common.known-keys"], [dict(b(4, 0, 4), block_size=2)],
            [4], False, dimension=0, key="block_size")
    process(s, "process/common/size-negative", ["dim.common.size"], [b(-1, 0, 0)], [0], False, dimension=0,
            key="size")
    process(s, "process/common/size-not-integer", ["dim.common.integers"], [dict(b(4, 0, 4), size=4.5)], [4],
            False, dimension=0, key="size")
    process(s, "process/common/size-string", ["dim.common.integers"], [dict(b(4, 0, 4), size="4")], [4], False,
            dimension=0, key="size")
    process(s, "process/common/size-zero", ["dim.common.size", "global.empty-sections"], [b(0, 0, 0)], [0], True)
    process(s, "process/common/grid-size-zero", ["dim.common.grid-size"], [b(4, 0, 4, grid=0)], [4], False,
            dimension=0, key="proc_grid_size")
    process(s, "process/common/grid-rank-negative", ["dim.common.grid-rank"], [b(4, 0, 2, 2, -1)], [2], False,
            dimension=0, key="proc_grid_rank")
    process(s, "process/common/grid-rank-too-large", ["dim.common.grid-rank"], [b(4, 2, 4, 2, 2)], [2], False,
            dimension=0, key="proc_grid_rank")
    process(s, "process/common/error-names-second-dimension", ["dim.common.size"], [ok, b(-3, 0, 0)], [10, 0],
            False, dimension=1, key="size")
    process(s, "process/common/integer-overflow", ["dim.common.integers"], [dict(b(4, 0, 4), size=2 ** 63)], [4],
            False, error="overflow", dimension=0, key="size", reading="gdap")


def process_version():
    s = "process_version"
    ok = [b(4, 0, 4)]
    process(s, "process/version/current", ["version.format", "version.compatible"], ok, [4], True)
    process(s, "process/version/older-minor", ["version.compatible"], ok, [4], False, error="version", version="0.9.0",
            reading="gdap", note="0.9 reads some keys otherwise (dist_type 'n', periodic padding): refused, not misread")
    process(s, "process/version/older-minor-with-n", ["version.compatible", "dim.common.dist-type"],
            [{"dist_type": "n", "size": 4}], [4], False, error="version", version="0.9.0", reading="gdap")
    process(s, "process/version/other-patch", ["version.compatible"], ok, [4], True, version="0.10.7")
    process(s, "process/version/newer-minor", ["version.compatible"], ok, [4], False, error="version",
            version="0.11.0")
    process(s, "process/version/other-major", ["version.compatible"], ok, [4], False, error="version",
            version="1.0.0")
    for bad in ("0.10", "0.10.0-rc1", "v0.10.0", "", "0..0"):
        process(s, "process/version/malformed-%s" % (bad.replace(".", "_") or "empty"), ["version.format"], ok, [4],
                False, error="invalid_argument", version=bad)


def process_block():
    s = "process_block"
    process(s, "process/b/rank0-of-2", ["dim.b.bounds", "dim.b.rank0-start"], [b(10, 0, 5, 2, 0)], [5], True)
    process(s, "process/b/rank1-of-2", ["dim.b.bounds", "dim.b.last-stop"], [b(10, 5, 10, 2, 1)], [5], True)
    process(s, "process/b/middle-rank-irregular", ["dim.b.bounds", "dim.b.irregular"], [b(10, 1, 8, 3, 1)], [7],
            True)
    process(s, "process/b/empty-section-start-eq-stop", ["dim.b.bounds", "global.empty-sections"],
            [b(10, 4, 4, 3, 1)], [0], True)
    process(s, "process/b/empty-at-size", ["dim.b.bounds", "global.empty-sections"], [b(10, 10, 10, 3, 2)], [0],
            True)
    process(s, "process/b/start-negative", ["dim.b.bounds"], [b(10, -1, 5, 2, 1)], [6], False, dimension=0,
            key="start")
    process(s, "process/b/start-gt-stop", ["dim.b.bounds"], [b(10, 6, 5, 3, 1)], [0], False, dimension=0,
            key="stop")
    process(s, "process/b/stop-gt-size", ["dim.b.bounds"], [b(10, 5, 12, 2, 1)], [7], False, dimension=0,
            key="stop")
    process(s, "process/b/extent-mismatch", ["dim.b.extent"], [b(10, 0, 5, 2, 0)], [4], False, dimension=0,
            key="stop - start")
    process(s, "process/b/extent-mismatch-second-dim", ["dim.b.extent"], [b(4, 0, 4), b(6, 0, 3, 2, 0)], [4, 6],
            False, dimension=1, key="stop - start")
    process(s, "process/b/rank0-start-not-zero", ["dim.b.rank0-start"], [b(10, 1, 5, 2, 0)], [4], False,
            dimension=0, key="start")
    process(s, "process/b/last-rank-stop-short", ["dim.b.last-stop"], [b(10, 5, 9, 2, 1)], [4], False,
            dimension=0, key="size")
    process(s, "process/b/single-rank-whole", ["dim.b.rank0-start", "dim.b.last-stop"], [b(3, 0, 3)], [3], True)
    process(s, "process/b/missing-stop", ["dim.common.required-keys"],
            [{"dist_type": "b", "size": 4, "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0}], [4], False,
            dimension=0, key="stop")
    process(s, "process/b/missing-start", ["dim.common.required-keys"],
            [{"dist_type": "b", "size": 4, "proc_grid_size": 1, "proc_grid_rank": 0, "stop": 4}], [4], False,
            dimension=0, key="start")
    # padding
    process(s, "process/b/boundary-padding-rank0", ["dim.b.padding", "dim.b.padding-kinds"],
            [b(10, 0, 6, 2, 0, padding=[1, 1])], [6], True,
            note="padding[0] on grid rank 0 is boundary padding (owned); padding[1] is communication padding")
    process(s, "process/b/comm-padding-middle", ["dim.b.padding", "dim.b.padding-kinds"],
            [b(12, 3, 9, 3, 1, padding=[1, 1])], [6], True)
    process(s, "process/b/padding-single-rank-boundary", ["dim.b.padding", "dim.b.padding-kinds"],
            [b(8, 0, 8, padding=[2, 2])], [8], True, note="a single non-periodic rank: both paddings are boundary")
    process(s, "process/b/padding-zero-given", ["dim.b.padding"], [b(8, 0, 8, padding=[0, 0])], [8], True)
    process(s, "process/b/padding-negative", ["dim.b.padding"], [b(10, 0, 6, 2, 0, padding=[0, -1])], [6], False,
            dimension=0, key="padding")
    process(s, "process/b/padding-wider-than-section", ["dim.b.padding"], [b(10, 4, 6, 3, 1, padding=[2, 1])],
            [2], False, dimension=0, key="padding")
    process(s, "process/b/padding-not-pair", ["dim.b.padding"], [b(10, 0, 6, 2, 0, padding=[1])], [6], False,
            dimension=0, key="padding")
    process(s, "process/b/padding-not-list", ["dim.b.padding"], [b(10, 0, 6, 2, 0, padding=1)], [6], False,
            dimension=0, key="padding")
    process(s, "process/b/comm-padding-on-last-rank", ["dim.b.last-stop", "dim.b.padding-kinds"],
            [b(10, 0, 5, 2, 1, padding=[1, 0])], [5], False, dimension=0,
            note="rank 1 of 2 holding [0, 5) with communication padding 1 owns [1, 5): the last rank stops short")
    # periodic
    process(s, "process/b/periodic-false", ["dim.b.periodic"], [b(8, 0, 8, periodic=False)], [8], True)
    process(s, "process/b/periodic-true-no-padding", ["dim.b.periodic"], [b(8, 0, 8, periodic=True)], [8], True)
    process(s, "process/b/periodic-not-bool", ["dim.b.periodic"], [b(8, 0, 8, periodic=1)], [8], False,
            dimension=0, key="periodic")
    process(s, "process/b/periodic-padded-single-rank", ["dim.b.periodic", "dim.b.periodic-boundary"],
            [b(10, 0, 10, padding=[2, 2], periodic=True)], [10], True,
            note="the text: block dimensions with proc_grid_size == 1 and the periodic and padding keys are valid "
                 "(upstream test_undistributed_padded_periodic)")
    process(s, "process/b/periodic-rank0-boundary", ["dim.b.periodic-boundary", "dim.b.rank0-start"],
            [b(16, 0, 9, 2, 0, padding=[1, 1], periodic=True)], [9], True)
    process(s, "process/b/periodic-last-rank-boundary", ["dim.b.periodic-boundary", "dim.b.last-stop"],
            [b(16, 7, 16, 2, 1, padding=[1, 1], periodic=True)], [9], True)
    process(s, "process/b/periodic-negative-start", ["dim.b.periodic-boundary", "dim.b.bounds"],
            [b(16, -1, 9, 2, 0, padding=[1, 1], periodic=True)], [10], False, dimension=0, key="start",
            note="a wrap written as start = -padding[0] breaks start >= 0 (the reference validator refuses it too)")
    process(s, "process/b/periodic-stop-past-size", ["dim.b.periodic-boundary", "dim.b.bounds"],
            [b(16, 7, 17, 2, 1, padding=[1, 1], periodic=True)], [10], False, dimension=0, key="stop")
    process(s, "process/b/periodic-single-rank-wrap-form", ["dim.b.periodic-boundary", "dim.b.bounds"],
            [b(8, -2, 10, padding=[2, 2], periodic=True)], [12], False, dimension=0, key="start")
    process(s, "process/b/nonperiodic-negative-start-with-padding", ["dim.b.bounds"],
            [b(16, -1, 9, 2, 0, padding=[1, 1])], [10], False, dimension=0, key="start",
            note="without periodic, start < 0 is out of bounds even with padding")


def process_cyclic():
    s = "process_cyclic"
    process(s, "process/c/cyclic-rank0", ["dim.c.start", "dim.c.extent"], [c(10, 3, 0)], [4], True)
    process(s, "process/c/cyclic-rank2", ["dim.c.start", "dim.c.extent"], [c(10, 3, 2)], [3], True)
    process(s, "process/c/block-size-absent-means-1", ["dim.c.block-size"], [c(7, 2, 1)], [3], True)
    process(s, "process/c/block-cyclic-rank1", ["dim.c.start", "dim.c.block-size"], [c(10, 2, 1, 3)], [4], True,
            note="blocks 0..3 of 3 (last partial, 1 element): rank 1 holds blocks 1 and 3 = 3 + 1")
    process(s, "process/c/partial-block-owner", ["dim.c.partial-block"], [c(11, 3, 0, 2)], [4], True,
            note="nb = 5, partial block (1 element) to rank 5 % 3 = 2; rank 0 owns blocks 0 and 3")
    process(s, "process/c/partial-block-holder", ["dim.c.partial-block"], [c(11, 3, 2, 2)], [3], True)
    process(s, "process/c/partial-block-not-rank0", ["dim.c.partial-block"], [c(11, 3, 0, 2)], [5], False,
            dimension=0, note="the reference utility gives the partial block to rank 0 (a known defect)")
    process(s, "process/c/even-block-as-cyclic", ["dim.c.block-size"], [c(10, 2, 1, 5)], [5], True)
    process(s, "process/c/start-wrong", ["dim.c.start"], [c(10, 3, 1, start=2)], [3], False, dimension=0,
            key="start")
    process(s, "process/c/start-wrong-block", ["dim.c.start"], [c(10, 2, 1, 3, start=1)], [4], False, dimension=0,
            key="start")
    process(s, "process/c/start-negative", ["dim.c.start"], [c(10, 2, 0, start=-1)], [5], False, dimension=0,
            key="start")
    process(s, "process/c/empty-start-eq-size", ["dim.c.empty", "global.empty-sections"], [c(2, 4, 3, start=2)],
            [0], True, note="rank 3's first index (3) lies past size 2: start == size says 'empty'")
    process(s, "process/c/empty-start-past-size", ["dim.c.empty", "global.empty-sections"], [c(2, 4, 3)], [0],
            True)
    process(s, "process/c/start-eq-size-but-not-empty", ["dim.c.empty", "dim.c.start"], [c(4, 2, 1, start=4)],
            [2], False, dimension=0, key="start",
            note="start == size is the empty section only for a rank that holds nothing")
    process(s, "process/c/extent-mismatch", ["dim.c.extent"], [c(10, 3, 1)], [4], False, dimension=0)
    process(s, "process/c/block-size-zero", ["dim.c.block-size"], [c(10, 2, 0, 0, start=0)], [5], False,
            dimension=0, key="block_size")
    process(s, "process/c/block-size-negative", ["dim.c.block-size"], [c(10, 2, 0, -2, start=0)], [5], False,
            dimension=0, key="block_size")
    process(s, "process/c/block-size-not-int", ["dim.c.block-size", "dim.common.integers"],
            [dict(c(10, 2, 0), block_size="2")], [5], False, dimension=0, key="block_size")
    process(s, "process/c/missing-start", ["dim.common.required-keys"],
            [{"dist_type": "c", "size": 4, "proc_grid_size": 1, "proc_grid_rank": 0}], [4], False, dimension=0,
            key="start")
    process(s, "process/c/stop-not-a-key", ["dim.common.known-keys"], [dict(c(4, 1, 0), stop=4)], [4], False,
            dimension=0, key="stop")
    process(s, "process/c/size-zero", ["dim.c.empty", "global.empty-sections"], [c(0, 2, 1)], [0], True)


def process_unstructured():
    s = "process_unstructured"
    process(s, "process/u/ordered", ["dim.u.indices", "dim.u.extent"], [u(6, [0, 1, 2])], [3], True)
    process(s, "process/u/unordered", ["dim.u.free-order"], [u(6, [4, 0, 5, 2], 2, 0)], [4], True)
    process(s, "process/u/negative", ["dim.u.free-order"], [u(3, [-1, 0, -7], 1, 0)], [3], True,
            note="the text: the values are locally unique and otherwise unconstrained, even negative")
    process(s, "process/u/past-size", ["dim.u.free-order"], [u(2, [10, 20])], [2], True)
    process(s, "process/u/empty", ["dim.u.indices", "global.empty-sections"], [u(4, [], 2, 1)], [0], True)
    process(s, "process/u/duplicate", ["dim.u.unique"], [u(4, [1, 2, 1])], [3], False, dimension=0,
            key="indices")
    process(s, "process/u/duplicate-negative", ["dim.u.unique"], [u(4, [-1, 3, -1, 0])], [4], False, dimension=0,
            key="indices")
    process(s, "process/u/extent-mismatch", ["dim.u.extent"], [u(4, [0, 1, 2])], [4], False, dimension=0)
    process(s, "process/u/one-to-one-true", ["dim.u.one-to-one"], [u(3, [2, 0, 1], one_to_one=True)], [3], True)
    process(s, "process/u/one-to-one-not-bool", ["dim.u.one-to-one"], [u(3, [2, 0, 1], one_to_one="yes")], [3],
            False, dimension=0, key="one_to_one")
    process(s, "process/u/empty-list-per-process", ["dim.u.indices"], [u(3, [])], [0], True,
            note="per process an empty list is fine; the global coverage rule needs the other ranks")
    process(s, "process/u/indices-float", ["dim.u.indices"], [dict(u(2, [0, 1]), indices=[0, 1.5])], [2], False,
            dimension=0, key="indices")
    process(s, "process/u/indices-scalar", ["dim.u.indices"], [dict(u(1, [0]), indices=3)], [1], False,
            dimension=0, key="indices")
    process(s, "process/u/missing-indices", ["dim.common.required-keys"],
            [{"dist_type": "u", "size": 4, "proc_grid_size": 1, "proc_grid_rank": 0}], [0], False, dimension=0,
            key="indices")
    process(s, "process/u/start-not-a-key", ["dim.common.known-keys"], [dict(u(2, [0, 1]), start=0)], [2], False,
            dimension=0, key="start")
    process(s, "process/u/mixed-with-block", ["dim.u.indices", "dim.b.bounds"], [u(5, [4, 1]), b(3, 0, 3)],
            [2, 3], True)



def with_(d, **changes):
    out = dict(d)
    out.update(changes)
    return out


def global_sets():
    s = "global"
    even = block_axis(10, grid=2)
    global_(s, "global/b/even-2", ["global.b.tiling", "global.sum-owned"], compose([even]), True)
    global_(s, "global/b/irregular-3", ["global.b.tiling", "dim.b.irregular"], compose([block_axis(10, [2, 7, 1])]),
            True)
    global_(s, "global/b/empty-middle", ["global.b.tiling", "global.empty-sections"],
            compose([block_axis(6, [3, 0, 3])]), True)
    global_(s, "global/b/gap", ["global.b.tiling"], [[b(10, 0, 4, 2, 0)], [b(10, 5, 10, 2, 1)]], False, rank=1,
            dimension=0, note="index 4 is owned by nobody")
    global_(s, "global/b/overlap", ["global.b.tiling"], [[b(10, 0, 6, 2, 0)], [b(10, 5, 10, 2, 1)]], False, rank=1,
            dimension=0)
    global_(s, "global/b/overlap-3", ["global.b.tiling"],
            [[b(9, 0, 3, 3, 0)], [b(9, 2, 6, 3, 1)], [b(9, 6, 9, 3, 2)]], False, rank=1, dimension=0)
    global_(s, "global/b/sum-short", ["global.sum-owned", "dim.b.last-stop"],
            [[b(10, 0, 5, 2, 0)], [b(10, 5, 9, 2, 1)]], False, rank=1, dimension=0,
            note="the owned counts add up to 9, not size 10")
    global_(s, "global/b/size-differs", ["global.same-type-size-grid"], [[b(10, 0, 5, 2, 0)], [b(12, 5, 12, 2, 1)]],
            False, rank=1, dimension=0)
    global_(s, "global/b/dist-type-differs", ["global.same-type-size-grid"], [[b(10, 0, 5, 2, 0)], [c(10, 2, 1)]],
            False, rank=1, dimension=0)
    global_(s, "global/b/grid-size-differs", ["global.same-type-size-grid"],
            [[b(10, 0, 5, 2, 0)], [b(10, 5, 10, 3, 2)]], False, dimension=0)
    global_(s, "global/grid/product-too-small", ["global.grid-product"], [[b(10, 0, 5, 2, 0)]] * 1 +
            [[b(10, 5, 10, 2, 1)], [b(10, 5, 10, 2, 1)]], False,
            note="proc_grid_size 2 but three ranks gave dictionaries")
    global_(s, "global/grid/product-too-large", ["global.grid-product"],
            [[b(6, 0, 2, 3, 0)], [b(6, 2, 4, 3, 1)]], False, note="proc_grid_size 3 but two ranks")
    global_(s, "global/grid/product-2d", ["global.grid-product"],
            compose([block_axis(4, grid=2), block_axis(6, grid=2)])[:3], False,
            note="a 2 x 2 grid given by three ranks")
    global_(s, "global/grid/c-order", ["global.grid-coords"], compose([block_axis(4, grid=2), block_axis(6, grid=3)]),
            True)
    swapped = compose([block_axis(4, grid=2), block_axis(6, grid=3)])
    swapped[1], swapped[3] = swapped[3], swapped[1]
    global_(s, "global/grid/fortran-order-refused", ["global.grid-coords"], swapped, False, rank=1,
            note="ranks listed with the first coordinate fastest: rank 1 must be grid (0, 1)")
    global_(s, "global/grid/duplicate-coordinate", ["global.grid-coords"],
            [[b(10, 0, 5, 2, 0)], [b(10, 0, 5, 2, 0)]], False, rank=1, dimension=0)
    # identical dictionaries along an axis
    rows, cols = block_axis(4, grid=2), block_axis(6, grid=2)
    ranks = compose([rows, cols])
    ranks[1] = [with_(ranks[1][0], stop=3), ranks[1][1]]
    global_(s, "global/axis/inconsistent-stop", ["global.axis-consistent"], ranks, False, rank=1, dimension=0,
            note="ranks 0 and 1 share grid row 0 but disagree on where it stops")
    ranks = compose([cyclic_axis(8, 2, 2), block_axis(6, grid=2)])
    ranks[3] = [with_(ranks[3][0], block_size=1, start=1), ranks[3][1]]
    global_(s, "global/axis/inconsistent-block-size", ["global.axis-consistent", "global.c.block-size"], ranks,
            False, rank=3, dimension=0)
    ranks = compose([unstructured_axis(4, [[0, 2], [1, 3]]), block_axis(6, grid=2)])
    ranks[1] = [with_(ranks[1][0], indices=[2, 0]), ranks[1][1]]
    global_(s, "global/axis/inconsistent-indices", ["global.axis-consistent"], ranks, False, rank=1, dimension=0)
    global_(s, "global/axis/consistent-2x2", ["global.axis-consistent"], compose([rows, cols]), True)
    ranks = compose([block_axis(8, grid=2), block_axis(6, grid=2, boundary=(1, 1))])
    ranks[2] = [ranks[2][0], with_(ranks[2][1], padding=[2, 0])]
    global_(s, "global/axis/boundary-padding-differs", ["global.axis-consistent", "global.b.boundary-differs"], ranks,
            True, note="ranks 0 and 2 share grid coordinate 0 of dimension 1; their boundary padding differs")
    ranks = compose([block_axis(8, grid=2), block_axis(6, grid=2, halo=1)])
    ranks[2] = [ranks[2][0], with_(ranks[2][1], padding=[0, 0])]
    global_(s, "global/axis/comm-padding-differs", ["global.axis-consistent"], ranks, False, rank=2, dimension=1,
            note="communication padding must be the same on every rank of a grid coordinate")
    ranks = compose([block_axis(8, grid=2), block_axis(6, grid=2)])
    ranks[1] = [ranks[1][0], with_(ranks[1][1], padding=[0, 0], periodic=False)]
    global_(s, "global/axis/defaults-given", ["global.axis-consistent"], ranks, True,
            note="a key given at its default is the same dictionary as the key left out")
    # padding against the neighbour
    halo = block_axis(12, grid=3, halo=1)
    global_(s, "global/b/halo-agrees", ["global.b.padding-neighbour", "dim.b.padding-kinds"], compose([halo]), True)
    bad = [dict(d) for d in halo]
    bad[1] = with_(bad[1], start=2, padding=[2, 1])
    global_(s, "global/b/halo-disagrees-with-lower", ["global.b.padding-neighbour"], [[d] for d in bad], False,
            rank=1, dimension=0, note="rank 1 says 2 halo cells below, rank 0 gives 1 above")
    bad = [dict(d) for d in halo]
    bad[2] = with_(bad[2], start=8, padding=[0, 0])
    global_(s, "global/b/halo-missing-on-upper", ["global.b.padding-neighbour", "global.b.tiling"],
            [[d] for d in bad], False, dimension=0)
    wide = block_axis(7, [3, 1, 3], halo=2)
    global_(s, "global/b/halo-wider-than-neighbour", ["global.b.padding-width"], [[d] for d in wide], False,
            dimension=0, note="a 2-wide halo around a rank that owns 1 index")
    mixed = [with_(d) for d in block_axis(10, grid=2)]
    mixed[0]["padding"] = [1, 0]
    global_(s, "global/b/padding-given-on-some", ["global.b.padding-optional"], [[d] for d in mixed], True,
            note="'padding' is optional on each dictionary; rank 1 gives none: (0, 0)")
    missing = [with_(d) for d in block_axis(10, grid=2, halo=1)]
    del missing[1]["padding"]
    missing[1]["start"] = 5
    global_(s, "global/b/padding-missing-against-halo", ["global.b.padding-optional", "global.b.padding-neighbour"],
            [[d] for d in missing], False, rank=1, dimension=0,
            note="a missing padding is (0, 0), which must still equal the neighbour's communication padding (1)")
    boundary = block_axis(10, grid=2, boundary=(1, 2))
    global_(s, "global/b/boundary-padding-owned", ["dim.b.padding-kinds", "global.sum-owned"],
            [[d] for d in boundary], True, note="boundary padding is part of size and owned")
    per = block_axis(12, grid=3, halo=1, boundary=(1, 1), periodic=True)
    global_(s, "global/b/periodic-boundary", ["dim.b.periodic-boundary", "global.b.padding-neighbour"],
            [[d] for d in per], True)
    wide = block_axis(12, grid=3, halo=1, boundary=(1, 2), periodic=True)
    global_(s, "global/b/periodic-boundary-unequal", ["dim.b.periodic-boundary", "global.b.padding-neighbour"],
            [[d] for d in wide], True, note="boundary padding is not matched across the wrap: 1 below, 2 above")
    old = [with_(per[0], start=-1), with_(per[1]), with_(per[2], stop=13)]
    global_(s, "global/b/periodic-wrap-form", ["dim.b.periodic-boundary", "dim.b.bounds"], [[d] for d in old], False,
            rank=0, dimension=0, note="start = -padding[0] and stop = size + padding[1]: refused, rank named")
    bad = [dict(d) for d in per]
    bad[1] = with_(bad[1], periodic=False)
    global_(s, "global/b/periodic-differs", ["global.axis-consistent", "dim.b.periodic"], [[d] for d in bad], False,
            rank=1, dimension=0)
    # cyclic
    for size, P, bs in ((10, 3, None), (11, 3, 2), (7, 2, 3), (13, 4, 3), (5, 4, 2), (2, 4, None), (0, 3, 2)):
        axis = cyclic_axis(size, P, bs)
        owned = [[cyclic_owned(size, P, g, bs or 1)] for g in range(P)]
        global_(s, "global/c/counts-size%d-grid%d-bs%s" % (size, P, bs or "absent"),
                ["global.c.partial-block", "global.sum-owned"], [[d] for d in axis], True, owned=owned)
    rank0 = [[d] for d in cyclic_axis(11, 3, 2)]
    rank0[0][0] = dict(rank0[0][0])
    global_(s, "global/c/partial-block-owned-counts", ["global.c.partial-block"], rank0, True,
            owned=[[4], [4], [3]], note="size 11, block 2, 3 ranks: the 1-element partial block goes to rank 2")
    ranks = [[d] for d in cyclic_axis(8, 2, 2)]
    ranks[1] = [with_(ranks[1][0], block_size=4, start=4)]
    global_(s, "global/c/block-size-differs", ["global.c.block-size"], ranks, False, rank=1, dimension=0)
    # unstructured
    global_(s, "global/u/cover", ["global.u.coverage"], [[d] for d in unstructured_axis(5, [[4, 0], [3, 1, 2]])],
            True)
    global_(s, "global/u/one-to-one-out-of-range", ["global.u.coverage", "global.u.one-to-one"],
            [[d] for d in unstructured_axis(4, [[-2, 3], [0, 1]], one_to_one=True)], False, rank=0, dimension=0,
            note="with one_to_one each index of [0, size) is held exactly once: -2 leaves 2 unheld")
    global_(s, "global/u/replicas-out-of-range", ["global.u.coverage"],
            [[d] for d in unstructured_axis(3, [[0, 1], [1, 2, 5]])], False, rank=1, dimension=0, reading="gdap",
            note="an index past size names no element; gdap refuses it before any operation reads it")
    global_(s, "global/u/replicas-allowed", ["global.u.one-to-one", "global.u.coverage"],
            [[d] for d in unstructured_axis(3, [[0, 1], [1, 2]], one_to_one=False)], True)
    global_(s, "global/u/replicas-default", ["global.u.one-to-one"],
            [[d] for d in unstructured_axis(3, [[0, 1], [1, 2]])], True, note="one_to_one absent means False")
    global_(s, "global/u/one-to-one-broken", ["global.u.one-to-one"],
            [[d] for d in unstructured_axis(3, [[0, 1], [1, 2]], one_to_one=True)], False, dimension=0)
    global_(s, "global/u/too-few", ["global.u.coverage", "global.sum-owned"],
            [[d] for d in unstructured_axis(5, [[0, 1], [2]])], False, dimension=0)
    global_(s, "global/u/too-many", ["global.u.coverage", "global.sum-owned"],
            [[d] for d in unstructured_axis(2, [[0, 1], [2]], one_to_one=True)], False, rank=1, dimension=0)
    ranks = [[d] for d in unstructured_axis(3, [[0, 1], [2]], one_to_one=True)]
    ranks[1] = [with_(ranks[1][0], one_to_one=False)]
    global_(s, "global/u/one-to-one-differs", ["global.axis-consistent", "dim.u.one-to-one"], ranks, False, rank=1,
            dimension=0)
    # mixed, ndim, aliases, 0-d
    global_(s, "global/grid-size-differs", ["global.same-type-size-grid", "global.grid-product"],
            [[b(10, 0, 5, 3, 0)], [b(10, 5, 10, 2, 1)]], False, rank=1, dimension=0,
            note="rank 0's grid has 3 ranks, rank 1's 2: the rank and dimension that disagree are named")
    global_(s, "global/ndim-differs", ["global.ndim"], [[b(4, 0, 2, 2, 0)], [b(4, 2, 4, 2, 1), b(3, 0, 3)]], False,
            rank=1)
    global_(s, "global/zero-d-single", ["distbuffer.zero-d", "global.sum-owned"], [[]], True, owned=[[]])
    global_(s, "global/zero-d-two-ranks", ["distbuffer.zero-d", "global.grid-product"], [[], []], False,
            note="a 0-d grid has one process: the product of no proc_grid_size is 1")
    global_(s, "global/alias-resolved", ["dim.empty-alias"], [[b(4, 0, 2, 2, 0), {}], [b(4, 2, 4, 2, 1), {}]], True,
            shapes=[[2, 3], [2, 3]], owned=[[2, 3], [2, 3]])
    global_(s, "global/block-x-cyclic-2x2", ["global.grid-coords", "global.c.partial-block"],
            compose([block_axis(5, grid=2), cyclic_axis(7, 2, 2)]), True)
    global_(s, "global/empty-size-zero-3", ["global.empty-sections"], compose([block_axis(0, grid=3)]), True)


def examples():
    s = "examples_block"
    example(s, "example/bxb/3x1", ["map.b", "global.grid-coords"], [block_axis(6, grid=3), undistributed_axis(4)])
    example(s, "example/bxb/1x3", ["map.b", "global.grid-coords"], [undistributed_axis(4), block_axis(7, grid=3)])
    example(s, "example/bxb/2x2", ["map.b", "global.grid-coords"], [block_axis(5, grid=2), block_axis(7, grid=2)])
    example(s, "example/bxb/2x2-explicit-values", ["map.b", "global.grid-coords"],
            [block_axis(3, grid=2), block_axis(4, grid=2)], dtype="int32",
            values={"explicit": [7, -3, 12, 0, 5, 9, -8, 1, 44, 2, 6, -1]})
    example(s, "example/bxb/2x3-int64", ["map.b", "global.grid-coords"], [block_axis(4, grid=2),
                                                                           block_axis(9, grid=3)], dtype="int64")
    example(s, "example/bxb/3d-2x1x2", ["map.b", "global.grid-coords"],
            [block_axis(3, grid=2), undistributed_axis(2), block_axis(4, grid=2)])
    for size, grid in ((1, 1), (5, 1), (8, 2), (9, 4), (3, 4), (16, 4)):
        example(s, "example/b/1d-size%d-grid%d" % (size, grid), ["map.b"], [block_axis(size, grid=grid)])
    example(s, "example/b/irregular-3", ["map.b", "dim.b.irregular"], [block_axis(10, [2, 7, 1])])
    example(s, "example/b/irregular-2d", ["map.b", "dim.b.irregular"],
            [block_axis(6, [1, 5]), block_axis(5, [3, 0, 2])], dtype="float32")
    s = "examples_padding"
    example(s, "example/b/halo-1d", ["map.b-halo", "dim.b.padding-kinds"], [block_axis(12, grid=3, halo=1)])
    example(s, "example/b/halo-and-boundary-1d", ["map.b-halo", "dim.b.padding-kinds"],
            [block_axis(12, grid=3, halo=1, boundary=(1, 1))],
            note="boundary padding (ends) is owned; communication padding (between ranks) mirrors the neighbour")
    example(s, "example/b/halo-2-wide", ["map.b-halo"], [block_axis(12, grid=3, halo=2)])
    example(s, "example/b/halo-2d-2x2", ["map.b-halo", "dim.b.padding-kinds"],
            [block_axis(6, grid=2, halo=1, boundary=(1, 0)), block_axis(8, grid=2, halo=2, boundary=(0, 2))])
    example(s, "example/b/boundary-only", ["dim.b.padding-kinds"], [block_axis(9, grid=3, boundary=(2, 1))])
    example(s, "example/b/boundary-single-rank", ["dim.b.padding-kinds"], [block_axis(5, grid=1, boundary=(1, 1))])
    example(s, "example/b/periodic-3", ["map.b-periodic", "dim.b.periodic-boundary"],
            [block_axis(12, grid=3, halo=1, boundary=(1, 1), periodic=True)])
    example(s, "example/b/periodic-single-rank", ["map.b-periodic", "dim.b.periodic-boundary"],
            [block_axis(10, grid=1, boundary=(2, 2), periodic=True)],
            note="the text's own case: one rank, size 10, padding (2, 2), periodic; all 10 cells owned")
    example(s, "example/b/periodic-2d", ["map.b-periodic"],
            [block_axis(6, grid=2, halo=1, boundary=(1, 1), periodic=True), block_axis(4, grid=1)])
    example(s, "example/b/periodic-flag-no-padding", ["dim.b.periodic"], [block_axis(7, grid=2, periodic=True)])
    s = "examples_cyclic"
    example(s, "example/bxc/2x2", ["map.b", "map.c"], [block_axis(5, grid=2), cyclic_axis(7, 2)])
    example(s, "example/bxc/3x2-block-size-2", ["map.b", "map.c", "dim.c.partial-block"],
            [block_axis(6, grid=3), cyclic_axis(9, 2, 2)])
    example(s, "example/cxc/2x3", ["map.c"], [cyclic_axis(5, 2), cyclic_axis(8, 3)])
    example(s, "example/cxc/3x2", ["map.c"], [cyclic_axis(7, 3), cyclic_axis(4, 2)], dtype="int64")
    example(s, "example/bcxbc/2x2", ["map.c", "dim.c.partial-block"], [cyclic_axis(9, 2, 2), cyclic_axis(10, 2, 3)])
    example(s, "example/bcxbc/2x3", ["map.c", "dim.c.partial-block"], [cyclic_axis(11, 2, 3), cyclic_axis(13, 3, 2)])
    example(s, "example/cxb/2x2", ["map.b", "map.c"], [cyclic_axis(6, 2, 2), block_axis(5, grid=2)])
    for size, grid, bs in ((10, 3, None), (11, 3, 2), (13, 4, 3), (7, 2, 7), (12, 3, 4), (1, 3, None), (5, 4, 2)):
        example(s, "example/c/1d-size%d-grid%d-bs%s" % (size, grid, bs or "absent"), ["map.c", "dim.c.partial-block"],
                [cyclic_axis(size, grid, bs)])
    s = "examples_unstructured"
    example(s, "example/u/unordered", ["map.u", "dim.u.free-order"],
            [unstructured_axis(6, [[5, 0, 3], [2, 4, 1]], one_to_one=True)])
    example(s, "example/u/replicas", ["map.u", "global.u.one-to-one"],
            [unstructured_axis(4, [[0, 1, 2], [2, 3, 1]])])
    example(s, "example/u/with-empty-rank", ["map.u", "global.empty-sections"],
            [unstructured_axis(3, [[2, 0, 1], []])])
    example(s, "example/uxb/2x2", ["map.u", "map.b"],
            [unstructured_axis(4, [[3, 2], [0, 1]], one_to_one=True), block_axis(5, grid=2)])
    example(s, "example/bxu/1x2", ["map.u", "map.b"],
            [undistributed_axis(3), unstructured_axis(5, [[4, 2, 0], [1, 3]])])
    s = "examples_edge"
    example(s, "example/empty/block-rank", ["global.empty-sections", "map.b"], [block_axis(4, [2, 0, 2])])
    example(s, "example/empty/cyclic-ranks", ["global.empty-sections", "dim.c.empty"], [cyclic_axis(2, 4)])
    example(s, "example/empty/size-zero-1d", ["global.empty-sections"], [block_axis(0, grid=2)])
    example(s, "example/empty/size-zero-2d", ["global.empty-sections"], [block_axis(3, grid=2), cyclic_axis(0, 2)])
    example(s, "example/empty/more-ranks-than-elements", ["global.empty-sections"],
            [block_axis(2, grid=3), cyclic_axis(3, 4, 2)])
    example(s, "example/zero-d/float64", ["distbuffer.zero-d"], [[]], shape=[], values={"explicit": [42]})
    example(s, "example/zero-d/int32", ["distbuffer.zero-d"], [[]], dtype="int32", shape=[],
            values={"explicit": [-7]})
    example(s, "example/mixed/3d-b-c-u", ["map.b", "map.c", "map.u", "global.grid-coords"],
            [block_axis(3, grid=2), cyclic_axis(5, 2, 2), unstructured_axis(3, [[2, 0], [1]], one_to_one=True)])
    example(s, "example/dtype/uint8", ["map.b"], [block_axis(6, grid=2)], dtype="uint8", values=linear([6], 3))
    example(s, "example/dtype/int16", ["map.c"], [cyclic_axis(9, 2, 2)], dtype="int16", values=linear([9], -4))


# ---- writing -------------------------------------------------------------------------------------


def build():
    VECTORS.clear()
    process_common()
    process_version()
    process_block()
    process_cyclic()
    process_unstructured()
    global_sets()
    examples()
    ids = [v["id"] for vs in VECTORS.values() for v in vs]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SystemExit("duplicate vector ids: %s" % duplicates)
    return {stem + ".json": render(vs) for stem, vs in VECTORS.items()}


def render(vectors):
    doc = {"protocol": VERSION, "generator": "conformance/generate.py", "vectors": vectors}
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on a difference")
    parser.add_argument("--out", type=pathlib.Path, default=OUT, help="vector directory (default: %(default)s)")
    args = parser.parse_args()
    files = build()
    count = sum(len(vs) for vs in VECTORS.values())
    if args.check:
        stale = [name for name, text in files.items()
                 if not (args.out / name).is_file() or (args.out / name).read_text() != text]
        extra = sorted(p.name for p in args.out.glob("*.json") if p.name not in files)
        for name in stale:
            print("generate.py --check: %s is missing or not what generate.py writes" % name)
        for name in extra:
            print("generate.py --check: %s is not written by generate.py" % name)
        if stale or extra:
            print("generate.py --check: FAILED; run python3 conformance/generate.py")
            return 1
        print("generate.py --check: %d files, %d vectors, all current" % (len(files), count))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text)
    print("wrote %d vectors in %d files to %s" % (count, len(files), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
