#!/usr/bin/env bash
# Saves and loads a distributed array as a Zarr v3 store with gdap beside zarr-python (and
# TensorStore where installed) and a raw write of the same bytes (bench/zarr/zarr_io.py), under
# mpirun with 4 ranks, for each codec; prints the markdown tables. Needs a build with the Python
# binding and MPI (GDAP_BENCH_BUILD, default <repo>/build) and mpi4py in the Python that runs it.
# Usage: run.sh [harness arguments, e.g. --rows 8192 --cols 4096 --device cuda]
# Environment: PYTHON (default <repo>/.deps/venv/bin/python3), RANKS (default 4), CODECS (default
# "zstd blosc-lz4"), GDAP_BENCH_BUILD, GDAP_IO_THREADS (gdap's chunk threads per rank; default: the
# rank's share of the machine's cores among its ranks, 1 to 8).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GDAP_BENCH_BUILD:-$root/build}
python=${PYTHON:-$root/.deps/venv/bin/python3}
ranks=${RANKS:-4}
mpirun_args=(-np "$ranks" --oversubscribe --bind-to none)
if [ "$(id -u)" = 0 ]; then mpirun_args+=(--allow-run-as-root); fi
if [ -n "${GDAP_IO_THREADS:-}" ]; then mpirun_args+=(-x GDAP_IO_THREADS); fi  # gdap's chunk threads per rank
echo "## Zarr v3 I/O: gdap beside zarr-python and TensorStore (bench/zarr)"
echo
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $ranks ranks; $(df -h "${TMPDIR:-/tmp}" | tail -1 | awk '{print $1}') at ${TMPDIR:-/tmp}; gdap $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
for codec in ${CODECS:-zstd blosc-lz4}; do
  PYTHONPATH=$build/bindings/python mpirun "${mpirun_args[@]}" -x PYTHONPATH "$python" "$root/bench/zarr/zarr_io.py" \
    --codec "$codec" "$@"
  echo
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
