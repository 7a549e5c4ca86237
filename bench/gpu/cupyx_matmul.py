"""The peer of bench/gpu/gemm_gpu.cu: cupyx.distributed.array's matmul over every GPU of one process,
float64 and float32 (CUPY_TF32=0: exact float32, as gdap's run), N = 32768 (or argv[1]).

cupyx multiplies only blocks of A and B that share a device, and never moves them. So with A and B
both distributed (no replication) the one layout it accepts is A in column blocks and B in row
blocks, block k on device k. Each device then holds an N x N partial sum of C ('sum' mode). C is not
yet usable: the second row adds the reshard of that sum into C's 2-d blocks (the layout gdap's C
has), which reduces the partial sums across the devices. The third row is the layout that the issue's
earlier measurement used, A in row blocks and B replicated on every device (C in row blocks, no
reduction), for reference only: it is not "A and B distributed".

Prints markdown rows: median seconds of 3 after a warm-up (every device synchronised), TFLOP/s
(2 N^3 flops), and the largest absolute error of C's first rows against cupy.matmul on device 0."""
import os

os.environ.setdefault("CUPY_TF32", "0")

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import cupy  # noqa: E402
from cupyx.distributed import array as dda  # noqa: E402

WARMUP, REPEATS = 1, 3


def sync_all(P):
    for d in range(P):
        with cupy.cuda.Device(d):
            cupy.cuda.Device(d).synchronize()


def bounds(N, P):
    return [N * k // P for k in range(P + 1)]


def grid_of(P):
    r = int(P ** 0.5)
    while P % r:
        r -= 1
    return r, P // r


def timed(P, fn):
    times, out = [], None
    for it in range(WARMUP + REPEATS):
        out = None  # frees the previous result before the next run allocates its own
        sync_all(P)
        t0 = time.perf_counter()
        out = fn()
        sync_all(P)
        if it >= WARMUP:
            times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def first_rows_error(C, a, b, rows=64):
    """Largest |C - A B| over C's first rows, C read back whole from the distributed result."""
    with cupy.cuda.Device(0):
        ref = cupy.matmul(a[:rows], b)
        got = cupy.asarray(C.get()[:rows])  # get() adds up a 'sum' mode array's partial sums
        return float(abs(got - ref).max())


def run(N, dtype, P):
    with cupy.cuda.Device(0):
        rng = cupy.random.default_rng(7)
        a = (rng.integers(-1000, 1001, (N, N)) * 1e-3).astype(dtype)
        b = (rng.integers(-1000, 1001, (N, N)) * 1e-3).astype(dtype)
    flops = 2.0 * N ** 3
    b_all, one = bounds(N, P), [0, N]
    A_cols = dda.distributed_array(a, dda.make_2d_index_map(one, b_all, [[{k} for k in range(P)]]))
    B_rows = dda.distributed_array(b, dda.make_2d_index_map(b_all, one, [[{k}] for k in range(P)]))
    pr, pc = grid_of(P)
    blocks = dda.make_2d_index_map(bounds(N, pr), bounds(N, pc), [[{i * pc + j} for j in range(pc)] for i in range(pr)])
    name = {cupy.float64: "float64", cupy.float32: "float32"}[dtype]
    rows = []
    t, C = timed(P, lambda: dda.matmul(A_cols, B_rows))
    rows.append((f"A column blocks, B row blocks: matmul (C as {P} partial sums)", t, None))
    C = None
    try:
        t, C = timed(P, lambda: dda.matmul(A_cols, B_rows).reshard(blocks))
        rows.append((f"... and reshard into C's {pr} x {pc} blocks (the sums reduced)", t, first_rows_error(C, a, b)))
    except Exception as e:  # noqa: BLE001 -- a peer's refusal is a result to print, not a crash
        rows.append((f"... and reshard into C's {pr} x {pc} blocks: {type(e).__name__}: {e}"[:160], float("nan"), None))
    C = A_cols = B_rows = None
    A_rows = dda.distributed_array(a, dda.make_2d_index_map(b_all, one, [[{k}] for k in range(P)]))
    B_repl = dda.distributed_array(b, dda.make_2d_index_map(one, one, [[set(range(P))]]))
    t, C = timed(P, lambda: dda.matmul(A_rows, B_repl))
    rows.append(("A row blocks, B replicated (reference only)", t, first_rows_error(C, a, b)))
    for label, secs, err in rows:
        err_s = "" if err is None else f"{err:.2e}"
        print(f"| {name} | {N}^3 | cupyx: {label} | {secs:.3f} | {flops / secs / 1e12:.1f} | {err_s} |", flush=True)


def main():
    P = cupy.cuda.runtime.getDeviceCount()
    if P < 2:
        sys.exit("needs 2 GPUs or more")
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 32768
    print(f"## cupyx.distributed.array matmul, {P} GPUs, one process (CUPY_TF32={os.environ['CUPY_TF32']})\n")
    print("| dtype | size | layout | median s | TFLOP/s | max abs error, first 64 rows |")
    print("|---|---|---|---|---|---|")
    for dtype in (cupy.float64, cupy.float32):
        run(N, dtype, P)
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
