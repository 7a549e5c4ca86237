"""The peer of bench/gpu/redistribute_gpu.cu: cupyx.distributed.array's reshard, same matrix,
same distributions, on 2 GPUs of one process. Prints one markdown row per case (median ms of 20
after 3 warm-ups, every device synchronised), and checks the result against the source once."""
import statistics
import sys
import time

import cupy
from cupyx.distributed import array as dda

N = 16384
WARMUP, REPEATS = 3, 20


def rows():
    return dda.make_2d_index_map([0, N // 2, N], [0, N], [[{0}], [{1}]])


def cols():
    return dda.make_2d_index_map([0, N], [0, N // 2, N], [[{0}, {1}]])


def row_block_cyclic(block=256):
    bounds = list(range(0, N + 1, block))
    return dda.make_2d_index_map(bounds, [0, N], [[{(k % 2)}] for k in range(len(bounds) - 1)])


def sync_all():
    for d in range(2):
        with cupy.cuda.Device(d):
            cupy.cuda.get_current_stream().synchronize()


def main():
    if cupy.cuda.runtime.getDeviceCount() < 2:
        sys.exit("needs 2 GPUs")
    with cupy.cuda.Device(0):
        whole = cupy.arange(N * N, dtype=cupy.float32).reshape(N, N) % 1000003
    source = dda.distributed_array(whole, rows())
    for name, target in (("rows -> cols", cols()), ("rows -> row block-cyclic(256)", row_block_cyclic())):
        times = []
        for it in range(WARMUP + REPEATS):
            sync_all()
            t0 = time.perf_counter()
            out = source.reshard(target)
            sync_all()
            if it >= WARMUP:
                times.append((time.perf_counter() - t0) * 1e3)
        ok = bool((out.get() == whole.get()).all())
        print(f"| {name} | cupyx reshard | {statistics.median(times):.3f} | | | | {'0' if ok else 'MISMATCH'} |", flush=True)


if __name__ == "__main__":
    main()
