// The few threads a rank's Zarr save and load spread their chunks over: decoding and encoding are
// CPU-bound (zstd, blosc, gzip, crc32c), and one thread per rank left gdap slower than zarr-python,
// whose codecs run on a thread pool. Each task gets a worker number so that it can use that
// worker's own scratch buffers; the error a caller sees is the one of the first failing task in
// order, the same one a serial walk would have stopped at.
#pragma once

#include <cstdint>
#include <functional>

namespace gdap::io {

// How many threads a rank's chunk work uses: GDAP_IO_THREADS when set (1 keeps the serial path;
// a value that is not a whole number from 1 to 64 is an error naming it), else this process's
// share of the cores it may run on (sched_getaffinity) among the `node_ranks` ranks on its machine,
// at least 1 and at most 8: more threads than cores only wait for each other's turn.
int io_threads(int64_t node_ranks = 1);

// Runs task(i, worker) for every i in [0, n), on up to `workers` threads (the caller's among them),
// worker < workers. When tasks fail, every task before the first failing one still runs, none
// after it starts, and that task's error is rethrown once all threads have stopped.
void parallel_for(int64_t n, int workers, const std::function<void(int64_t, int)>& task);

}  // namespace gdap::io
