"""gdap's redistribution beside every peer users would pick instead, on every GPU this process sees
(one rank per GPU), for three layouts (issue 25's check); bench/gpu/reshard_scaling.sh runs it at 1, 2
and 4 GPUs and adds the scaling table (--summarize).

Layouts (--layout, repeatable; all by default):
  rows-cols       float32 16384^2 (--n), row blocks (P x 1) -> column blocks (1 x P)
  blocks-bcyclic  float64 32768^2 (--n), 2-d blocks -> 2-d block-cyclic 256 x 256 over the same grid
                  (layout.balance(P, 2): 2 x 2 on 4 GPUs, 2 x 1 on 2, 1 x 1 on 1)
  cyclic-cols     float64 10007 x 3001 (--rows, --cols), cyclic rows (P x 1) -> column blocks (1 x P)
  permuted-rows   (only when asked for) float32 16384^2 (--n), row blocks dealt to the ranks in a rotated order
                  (rank r holds block (r + 1) % P, unstructured rows) -> row blocks: a rank-permuted move.
                  gdap.redistribute is timed twice, without roles (every block crosses GPUs) and with the
                  keeping roles (gdap.keeping_roles: rank r holds destination block (r + 1) % P, nothing
                  crosses, a local copy per GPU), beside the all-to-all of the bytes that cross without roles
Engines, every result checked element by element against the source ((i * cols + j) % 1009):
  GlobalArray.reshard   a.reshard(dst): plans cached, new sections from CuPy's pool, the Controller's threads
  bare, per call        gdap.redistribute by the caller's threads into preallocated sections, one call per
                        rank per repeat, released by a barrier
  bare, pipelined       the same threads calling it REPS times back to back
  NCCL all-to-all       cupy.cuda.nccl in this process (ncclCommInitAll): per GPU, one send and one receive
                        per peer of equal contiguous chunks totalling the bytes that cross GPUs in the layout
                        (the floor issue 25's targets are stated against); beside it the NVLink line-rate
                        floor (the most bytes one GPU sends or receives / 450e9 B/s, NV18 one direction)
  cupyx reshard         cupyx.distributed.array, index maps as lists of slices (block-cyclic: one slice
                        pair per 256 x 256 block, 3 repeats; cyclic rows: slice(r, None, P))
  JAX jit reshard       jax.jit(identity, out_shardings=...): rows-cols only
  DTensor redistribute  bench/gpu/dtensor_reshard.py under torch.distributed.run: rows-cols only
A peer that cannot express a layout (or is not timed for it) gets a row saying so; a peer that fails prints
its error. Medians of
REPS (30; 3 for cupyx's block-cyclic) after warm-ups, every GPU synchronised after each repeat.

Usage: PYTHONPATH=<gdap build>/bindings/python python3 bench/gpu/reshard_scaling.py [--layout L]...
         [--n N] [--rows R] [--cols C] [--json FILE] [--host] [--no-peers]
       python3 bench/gpu/reshard_scaling.py --summarize FILE   (the scaling table from --json records)
  --host: four ranks in host memory, gdap's rows only, small sizes (2048^2; 2003 x 601), for a machine
  without a GPU (every result still checked: `--host --layout permuted-rows` checks that case's set-up).
"""
import argparse
import gc
import itertools
import json
import os
import pathlib
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

LAYOUTS = ("rows-cols", "blocks-bcyclic", "cyclic-cols")  # the default set
OPTIONAL = ("permuted-rows",)  # timed only when asked for (--layout)
BCYCLIC_BLOCK = 256
LINE_RATE = 450e9  # NVLink NV18, bytes per second, one direction per GPU
REPS, WARMUP = 30, 3
SLAB = 1 << 26  # elements per slab when filling or checking (bounds the temporaries)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layout", action="append", choices=LAYOUTS + OPTIONAL,
                   help="repeatable; default: %s" % ", ".join(LAYOUTS))
    p.add_argument("--n", type=int, help="side of the square layouts (default 16384 rows-cols, 32768 blocks-bcyclic)")
    p.add_argument("--rows", type=int, help="cyclic-cols rows (default 10007)")
    p.add_argument("--cols", type=int, help="cyclic-cols columns (default 3001)")
    p.add_argument("--json", help="append one JSON record per row to this file (for --summarize)")
    p.add_argument("--host", action="store_true", help="4 ranks in host memory, gdap only, small sizes")
    p.add_argument("--no-peers", action="store_true", help="gdap and the NCCL all-to-all only (no cupyx, JAX, DTensor)")
    p.add_argument("--summarize", metavar="FILE", help="print the scaling table of the records in FILE and exit")
    return p.parse_args()


ARGS = parse_args()
if ARGS.summarize is None:
    import gdap
    from gdap import layout
    if ARGS.host:
        cupy = None
        P = 4
    else:
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPUs with CuPy's pool
        import cupy
        P = cupy.cuda.runtime.getDeviceCount()
xp = np if ARGS.host else None  # set to cupy below when there are GPUs


class Case:
    """One layout at P ranks: shape, dtype, gdap's source and destination maps, cupyx's index maps
    (None: cupyx cannot express it) and whether the block-only peers (JAX, DTensor) can; `skipped`:
    what the rows of the peers left out say; `roles`: time gdap.redistribute with the keeping roles too."""

    def __init__(self, name, title, shape, dtype, src, dst, cupyx_src, cupyx_dst, cupyx_reps, block_peers,
                 skipped=None, roles=False):
        self.name, self.title, self.shape, self.dtype = name, title, shape, np.dtype(dtype)
        self.src, self.dst = src, dst
        self.cupyx_src, self.cupyx_dst, self.cupyx_reps = cupyx_src, cupyx_dst, cupyx_reps
        self.block_peers = block_peers
        self.skipped = skipped or "cannot express %s" % name
        self.roles = roles


def run_slices(m, rank):
    """Rank `rank`'s owned region of grid map `m` as 2-d slice pairs, one per pair of runs."""
    per_dim = [[slice(g, g + n) for g, n, _ in m.runs(rank, dim)] for dim in range(m.ndim)]
    return [tuple(c) for c in itertools.product(*per_dim)]


def bcyclic_slices(shape, grid, rank):
    """One slice pair per BCYCLIC_BLOCK-square block that rank `rank` (C order on `grid`) owns."""
    coords = divmod(rank, grid[1])
    per_dim = [[slice(s, min(s + BCYCLIC_BLOCK, n)) for s in range(c * BCYCLIC_BLOCK, n, g * BCYCLIC_BLOCK)]
               for n, g, c in zip(shape, grid, coords)]
    return [tuple(c) for c in itertools.product(*per_dim)]


def make_case(name):
    if name == "rows-cols":
        n = ARGS.n or (2048 if ARGS.host else 16384)
        shape = (n, n)
        src, dst = layout.block(shape, P), layout.block(shape, (1, P))
        return Case(name, "float32 %d x %d, row blocks (%d x 1) -> column blocks (1 x %d)" % (n, n, P, P), shape,
                    np.float32, src, dst, {d: run_slices(src, d) for d in range(P)},
                    {d: run_slices(dst, d) for d in range(P)}, 10, True)
    if name == "blocks-bcyclic":
        n = ARGS.n or (2048 if ARGS.host else 32768)
        shape, grid = (n, n), layout.balance(P, 2)
        src, dst = layout.block(shape, grid), layout.block_cyclic(shape, grid, BCYCLIC_BLOCK)
        return Case(name, "float64 %d x %d, 2-d blocks -> 2-d block-cyclic %d x %d, grid %d x %d"
                    % (n, n, BCYCLIC_BLOCK, BCYCLIC_BLOCK, grid[0], grid[1]), shape, np.float64, src, dst,
                    {d: run_slices(src, d) for d in range(P)}, {d: bcyclic_slices(shape, grid, d) for d in range(P)},
                    3, False)
    if name == "permuted-rows":
        n = ARGS.n or (2048 if ARGS.host else 16384)
        shape = (n, n)
        dst = layout.block(shape, P)
        dealt = [(r + 1) % P for r in range(P)]  # rank r holds row block dealt[r]
        src = layout.unstructured(shape, [map_indices(dst, dealt[r], 0) for r in range(P)], one_to_one=True)
        return Case(name, "float32 %d x %d, row blocks dealt to ranks %s -> row blocks (%d x 1), a rank-permuted "
                    "move" % (n, n, dealt, P), shape, np.float32, src, dst,
                    {d: run_slices(src, d) for d in range(P)}, {d: run_slices(dst, d) for d in range(P)}, 10,
                    False, skipped="not timed: a rank-permuted layout (JAX and DTensor shard in device order)",
                    roles=True)
    rows, cols = ARGS.rows or (2003 if ARGS.host else 10007), ARGS.cols or (601 if ARGS.host else 3001)
    shape = (rows, cols)
    src, dst = layout.cyclic(shape, P), layout.block(shape, (1, P))
    return Case(name, "float64 %d x %d, cyclic rows (%d x 1) -> column blocks (1 x %d)" % (rows, cols, P, P), shape,
                np.float64, src, dst, {d: [(slice(d, None, P), slice(None))] for d in range(P)},
                {d: run_slices(dst, d) for d in range(P)}, 10, False)


# ---- timing and checking ----

def device(d):
    """The context that makes GPU d current (nothing on the host)."""
    return cupy.cuda.Device(d) if cupy is not None else _Nothing()


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def sync_all():
    for d in range(0 if cupy is None else P):
        cupy.cuda.Device(d).synchronize()


def free_pools():
    gc.collect()
    for d in range(0 if cupy is None else P):
        with cupy.cuda.Device(d):
            cupy.get_default_memory_pool().free_all_blocks()


def median_ms(once, reps=REPS, warmup=WARMUP):
    for _ in range(warmup):
        once()
    sync_all()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        once()
        sync_all()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def values(rows, cols, ncols, dtype):
    """The source at global rows x cols (index vectors on the current device): (i * ncols + j) % 1009."""
    return ((rows[:, None] * ncols + cols[None, :]) % 1009).astype(dtype)


def whole_on_gpu0(case):
    with device(0):
        whole = xp.empty(case.shape, dtype=case.dtype)
        step = max(1, SLAB // case.shape[1])
        cols = xp.arange(case.shape[1])
        for r0 in range(0, case.shape[0], step):
            whole[r0:r0 + step] = values(xp.arange(r0, min(r0 + step, case.shape[0])), cols, case.shape[1], case.dtype)
        return whole


def matches(section, rows, cols, case):
    """section == the source at rows x cols (host index vectors), slab by slab on section's device."""
    if tuple(section.shape) != (len(rows), len(cols)):
        return False
    cols = xp.asarray(cols)
    step = max(1, SLAB // max(1, len(cols)))
    for r0 in range(0, len(rows), step):
        want = values(xp.asarray(rows[r0:r0 + step]), cols, case.shape[1], case.dtype)
        if not bool(xp.array_equal(section[r0:r0 + step], want)):
            return False
    return True


def map_indices(m, rank, dim):
    """Rank `rank`'s global indices along `dim` of map `m`, in its local order."""
    runs = sorted(m.runs(rank, dim), key=lambda r: r[2])
    return np.concatenate([np.arange(g, g + n) for g, n, _ in runs]) if runs else np.zeros(0, dtype=np.int64)


def check_gdap(case, sections, roles=None):
    """Every rank's destination section holds its part of the source; with roles, rank d holds
    destination rank roles[d]'s section."""
    ok = True
    for d in range(P):
        role = d if roles is None else roles[d]
        with device(d):
            ok &= matches(sections[d], map_indices(case.dst, role, 0), map_indices(case.dst, role, 1), case)
    return ok


def slice_indices(s, n):
    return np.arange(*s.indices(n))


def check_cupyx(case, darr):
    chunks, ok = darr.all_chunks(), True
    for d, idxs in darr.index_map.items():
        with device(d):
            for idx, chunk in zip(idxs, chunks[d]):
                ok &= matches(chunk, slice_indices(idx[0], case.shape[0]), slice_indices(idx[1], case.shape[1]), case)
    return ok


# ---- the table ----

class Table:
    """The rows of one layout; ratios are filled in when it is printed (the references come first)."""

    def __init__(self, case, crossing, per_gpu):
        self.case, self.crossing, self.per_gpu = case, crossing, per_gpu
        self.rows = []

    def add(self, engine, ms=None, ok=None, note="", across=None):
        """ok None: no result to check (the line-rate floor, a peer that cannot express it or failed);
        across: the bytes this engine moves between GPUs, where not the layout's (relabeled moves)."""
        across = self.crossing if across is None else across
        self.rows.append({"layout": self.case.name, "gpus": P, "engine": engine, "ms": ms, "ok": ok, "note": note,
                          "gbps": None if ms is None or not across else across / ms / 1e6})
        print("  %s: %s%s" % (engine, "-" if ms is None else "%.3f ms" % ms,
                              "" if ok is None else (" ok" if ok else " WRONG")) + (" (%s)" % note if note else ""),
              flush=True)

    def ms_of(self, engine):
        return next((r["ms"] for r in self.rows if r["engine"] == engine and r["ok"]), None)

    def markdown(self):
        bare, a2a = self.ms_of(BARE), self.ms_of(A2A)
        where = "ranks in host memory" if ARGS.host else "GPU(s), one rank per GPU"
        out = ["", "### %s, %d %s" % (self.case.title, P, where),
               "", "Bytes that change rank: %.1f MB in all, at most %.1f MB sent or received by one rank."
               % (self.crossing / 1e6, self.per_gpu / 1e6), "",
               "| engine | median ms | GB/s across | rate / NCCL all-to-all | / bare per call | result |",
               "|---|---|---|---|---|---|"]
        for r in self.rows:
            ms = r["ms"]
            result = "" if r["ok"] is None else ("ok" if r["ok"] else "WRONG")
            if r["note"]:
                result = (result + "; " if result else "") + r["note"]
            out.append("| %s | %s | %s | %s | %s | %s |" % (
                r["engine"], "n/a" if ms is None else "%.3f" % ms,
                "n/a" if r["gbps"] is None else "%.0f" % r["gbps"],
                "%.2f" % (a2a / ms) if a2a and ms else "", "%.2fx" % (ms / bare) if bare and ms else "", result))
        return "\n".join(out)


CLASS = "gdap GlobalArray.reshard"
BARE, PIPE = "gdap.redistribute, bare, per call", "gdap.redistribute, bare, pipelined"
ALTERNATING = "gdap.redistribute, bare, per call, two destinations in turn"
ALLOCATION = "GlobalArray.empty of the destination layout (no move)"
ROLES_BARE = "gdap.redistribute with keeping roles, bare, per call"
ROLES_PIPE = "gdap.redistribute with keeping roles, bare, pipelined"
A2A = "NCCL all-to-all of the same bytes (cupy.cuda.nccl, one process)"
FLOOR = "NVLink line-rate floor (450 GB/s one way)"


# ---- the engines ----

def time_gdap(case):
    """gdap's rows (and, for a case with roles, the relabeled move's); returns the Table (its crossing
    bytes from the plans' statistics, without roles)."""
    whole = whole_on_gpu0(case)
    a = gdap.distribute(whole, case.src, devices=P if ARGS.host else None)
    del whole
    free_pools()
    out = {}

    def reshard_once():
        out["b"] = a.reshard(case.dst)

    class_ms = median_ms(reshard_once)
    class_ok = check_gdap(case, [out["b"].local_view(d) for d in range(P)])
    out.clear()

    comms = gdap.group(P)
    plans = [gdap.Plan(case.src, case.dst, case.dtype, comms[r]) for r in range(P)]
    stats = [p.stats for p in plans]
    crossing = sum(s["send_bytes"] for s in stats)
    per_gpu = max([max(s["send_bytes"], s["recv_bytes"]) for s in stats])
    table = Table(case, crossing, per_gpu)
    src = [a.section(r) for r in range(P)]
    table.add(CLASS, class_ms, class_ok)
    bare = time_bare(case, comms, plans, src)
    table.add(BARE, *bare["per call"])
    table.add(PIPE, *bare["pipelined"], "%d calls back to back, time per call" % REPS)
    table.add(ALTERNATING, *bare["alternating"], "new addresses every call, as reshard's; no allocation")
    table.add(ALLOCATION, median_ms(lambda: out.__setitem__("e", gdap.GlobalArray.empty(case.dst, case.dtype,
                                                                                      devices=a.context))),
              note="what reshard adds before its move: new sections from CuPy's pool (NumPy with --host)", across=0)
    out.clear()
    if case.roles:
        roles = gdap.keeping_roles(case.src, case.dst)
        kept = [gdap.Plan(case.src, case.dst, case.dtype, comms[r], roles=roles) for r in range(P)]
        moved = sum(p.stats["send_bytes"] for p in kept)
        local = max(p.stats["local_bytes"] for p in kept)
        note = "roles %s: %.1f MB cross ranks, a local copy of %.1f MB per rank" % (roles, moved / 1e6, local / 1e6)
        bare = time_bare(case, comms, kept, src, roles)
        table.add(ROLES_BARE, *bare["per call"], note, across=moved)
        table.add(ROLES_PIPE, *bare["pipelined"], note + "; %d calls back to back, time per call" % REPS, across=moved)
    return table


def time_bare(case, comms, plans, src, roles=None):
    """{"per call", "pipelined", "alternating"}: (ms, ok) of gdap.redistribute by one thread per rank into
    preallocated sections (rank d's is roles[d]'s with roles): per call (released by a barrier), pipelined
    (REPS calls back to back), and per call into two sets of sections taken in turn (new addresses every
    call, as the sections GlobalArray.reshard takes from CuPy's pool, without its allocation). Each is
    checked after its timed calls, the destinations overwritten before."""
    sets = [[], []]
    for d in range(P):
        with device(d):
            for dst in sets:
                dst.append(xp.empty(case.dst.local_shape(d if roles is None else roles[d]), dtype=case.dtype))
    go, done = threading.Barrier(P + 1), threading.Barrier(P + 1)
    calls = {"n": 1, "stop": False, "set": 0}
    failed = []

    def worker(r):
        while True:
            go.wait()
            if calls["stop"]:
                return
            try:
                for _ in range(calls["n"]):
                    gdap.redistribute(comms[r], plans[r], src[r], sets[calls["set"]][r])
            except Exception as e:  # noqa: BLE001 - reported by the main thread, which would wait forever
                failed.append(e)
                done.abort()
                return
            done.wait()

    threads = [threading.Thread(target=worker, args=(r,), daemon=True) for r in range(P)]
    for t in threads:
        t.start()

    def bare_once():
        go.wait()
        done.wait()

    def alternating_once():
        calls["set"] ^= 1
        bare_once()

    def sentinel():  # every destination overwritten, so that each check sees the timed calls' work
        for dst in sets:
            for d in range(P):
                with device(d):
                    dst[d][...] = -1
        sync_all()

    out = {}
    try:
        sentinel()
        ms = median_ms(bare_once)
        out["per call"] = (ms, check_gdap(case, sets[0], roles))
        sentinel()
        calls["n"] = REPS
        ms = median_ms(bare_once, reps=5) / REPS
        out["pipelined"] = (ms, check_gdap(case, sets[0], roles))
        sentinel()
        calls["n"] = 1
        ms = median_ms(alternating_once)
        out["alternating"] = (ms, check_gdap(case, sets[0], roles) and check_gdap(case, sets[1], roles))
    except threading.BrokenBarrierError:
        raise RuntimeError("gdap.redistribute failed on a rank: %r" % (failed[0] if failed else "?",)) from None
    calls["stop"] = True
    go.wait()
    for t in threads:
        t.join()
    return out


def time_alltoall(table):
    """NCCL's all-to-all of the layout's crossing bytes in equal chunks, and the line-rate floor."""
    if P == 1:
        table.add(A2A, note="n/a: one GPU, nothing crosses")
        table.add(FLOOR, note="n/a: one GPU")
        return
    from cupy.cuda import nccl
    case = table.case
    kind = {np.dtype(np.float32): nccl.NCCL_FLOAT32, np.dtype(np.float64): nccl.NCCL_FLOAT64}[case.dtype]
    chunk = table.crossing // case.dtype.itemsize // (P * (P - 1))  # elements per ordered pair of GPUs
    comms = nccl.NcclCommunicator.initAll(list(range(P)))
    send, recv, streams = [], [], []
    for d in range(P):
        with device(d):
            # Chunk k of GPU d goes to its k-th peer; its values name (sender, receiver) so the check sees mix-ups.
            send.append(cupy.concatenate([(cupy.arange(chunk) + 7 * (d * P + p)) % 1009
                                          for p in range(P) if p != d]).astype(case.dtype))
            recv.append(cupy.empty_like(send[-1]))
            streams.append(cupy.cuda.Stream(non_blocking=True))

    def once():
        nccl.groupStart()
        for d in range(P):
            with device(d):
                for k, p in enumerate(q for q in range(P) if q != d):
                    offset = k * chunk * case.dtype.itemsize
                    comms[d].send(send[d].data.ptr + offset, chunk, kind, p, streams[d].ptr)
                    comms[d].recv(recv[d].data.ptr + offset, chunk, kind, p, streams[d].ptr)
        nccl.groupEnd()

    ms = median_ms(once)
    ok = True
    for d in range(P):
        with device(d):
            want = cupy.concatenate([(cupy.arange(chunk) + 7 * (s * P + d)) % 1009 for s in range(P) if s != d])
            ok &= bool(cupy.array_equal(recv[d], want.astype(case.dtype)))
    table.add(A2A, ms, ok, "%d x %d chunks of %.1f MB" % (P, P - 1, chunk * case.dtype.itemsize / 1e6))
    table.add(FLOOR, 1e3 * table.per_gpu / LINE_RATE, None, "%.1f MB per GPU" % (table.per_gpu / 1e6))
    for c in comms:
        c.destroy()


def time_cupyx(table):
    case = table.case
    from cupyx.distributed import array as dda
    whole = whole_on_gpu0(case)
    darr = dda.distributed_array(whole, case.cupyx_src)
    del whole
    free_pools()
    out = {}

    def once():
        out["c"] = darr.reshard(case.cupyx_dst)
        out["c"].all_chunks()  # flushes the buffered transfers

    slow = case.cupyx_reps < REPS
    ms = median_ms(once, reps=case.cupyx_reps, warmup=1 if slow else WARMUP)
    notes = []
    if slow:
        notes.append("%d repeats: %d chunks" % (case.cupyx_reps, sum(len(v) for v in case.cupyx_dst.values())))
    if out["c"] is darr:
        notes.append("returned the source: same index map, nothing moved")
    table.add("cupyx reshard", ms, check_cupyx(case, out["c"]), "; ".join(notes))


def time_jax(table):
    case = table.case
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as PS
    mesh = Mesh(np.array(jax.devices("gpu")[:P]), ("x",))
    host = values(np.arange(case.shape[0]), np.arange(case.shape[1]), case.shape[1], case.dtype)
    xr = jax.device_put(host, NamedSharding(mesh, PS("x", None)))
    to_cols = jax.jit(lambda v: v, out_shardings=NamedSharding(mesh, PS(None, "x")))
    out = {}

    def once():
        out["j"] = to_cols(xr)
        out["j"].block_until_ready()

    ms = median_ms(once)
    table.add("JAX jit(out_shardings) reshard", ms, bool(np.array_equal(np.asarray(out["j"]), host)))


def time_dtensor(table):
    script = pathlib.Path(__file__).with_name("dtensor_reshard.py")
    run = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=%d" % P,
                          str(script), str(table.case.shape[0])], capture_output=True, text=True, timeout=300)
    found = [json.loads(ln) for ln in run.stdout.splitlines() if ln.startswith("{")]
    if run.returncode != 0 or not found:
        raise RuntimeError("rc %d: %s %s" % (run.returncode, run.stdout[-600:], run.stderr[-600:]))
    table.add("PyTorch DTensor redistribute (NCCL, %d processes)" % P, found[0]["ms"], found[0]["ok"])


PEERS = (("cupyx reshard", time_cupyx, lambda case: case.cupyx_dst is not None),
         ("JAX jit(out_shardings) reshard", time_jax, lambda case: case.block_peers),
         ("PyTorch DTensor redistribute", time_dtensor, lambda case: case.block_peers))


def run_layout(name):
    case = make_case(name)
    print("\n%s, %d %s" % (case.title, P, "host ranks" if ARGS.host else "GPU(s)"), flush=True)
    table = time_gdap(case)
    free_pools()
    if not ARGS.host:
        for engine, timer, can in ((A2A, time_alltoall, lambda c: True),) + (() if ARGS.no_peers else PEERS):
            if not can(case):
                table.add(engine, note=case.skipped)
                continue
            try:
                timer(table)
            except Exception as e:  # noqa: BLE001 - a peer that fails is reported, not fatal
                table.add(engine, note="failed: %r" % (e,))
            free_pools()
    print(table.markdown(), flush=True)
    if ARGS.json:
        with open(ARGS.json, "a") as f:
            for r in table.rows:
                f.write(json.dumps(r) + "\n")
    return all(r["ok"] is not False for r in table.rows)


# ---- the scaling table ----

def cell_ms(r):
    if r is None:
        return ""
    if r["ms"] is None:
        return r["note"].split(":")[0] if r["note"] else "n/a"
    return "%.3f%s" % (r["ms"], " WRONG" if r["ok"] is False else "")


def summarize(path):
    with open(path) as f:
        records = [json.loads(ln) for ln in f if ln.strip()]
    counts = sorted({r["gpus"] for r in records})
    print("\n## Scaling: median ms at %s GPUs and GB/s across (bytes crossing GPUs / time, all GPUs together)\n"
          % ", ".join(map(str, counts)))
    for name in [n for n in LAYOUTS + OPTIONAL if any(r["layout"] == n for r in records)]:
        rows = [r for r in records if r["layout"] == name]
        engines = list(dict.fromkeys(r["engine"].replace("(NCCL, %d processes)" % r["gpus"], "(NCCL)") for r in rows))
        at = {(r["engine"].replace("(NCCL, %d processes)" % r["gpus"], "(NCCL)"), r["gpus"]): r for r in rows}
        multi = [g for g in counts if g > 1]
        print("### %s\n" % name)
        print("| engine | " + " | ".join("ms, %d GPU%s" % (g, "s" if g > 1 else "") for g in counts)
              + "".join(" | GB/s, %d GPUs" % g for g in multi) + " |")
        print("|---|" + "---|" * (len(counts) + len(multi)))
        for e in engines:
            rates = [at.get((e, g)) for g in multi]
            rates = ["%.0f" % r["gbps"] if r and r["gbps"] and r["ok"] is not False else "" for r in rates]
            print("| %s | " % e + " | ".join(cell_ms(at.get((e, g))) for g in counts)
                  + "".join(" | " + x for x in rates) + " |")
        print()


def main():
    global xp
    if ARGS.summarize:
        summarize(ARGS.summarize)
        return 0
    if not ARGS.host:
        xp = cupy
    ok = True
    for name in ARGS.layout or LAYOUTS:
        ok &= run_layout(name)
        free_pools()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
