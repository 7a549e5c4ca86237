#!/usr/bin/env bash
# Builds libgdap (MPI, no CUDA) in build-bench and the harness beside it, then times gdap's
# redistribution against ScaLAPACK's pdgemr2d and a raw MPI_Alltoall with 4 ranks, in one run,
# and prints the markdown tables. Extra arguments go to the harness: [repeats [case]].
#
# Needs Open MPI (mpicc, mpirun) and libscalapack-openmpi-dev. Environment:
#   GDAP_BENCH_BUILD  build directory (default <repo>/build-bench)
#   JOBS              parallel build jobs (default 2)
#   GDAP_BENCH_NO_BUILD=1  time the libgdap already built (while its sources are being edited)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${GDAP_BENCH_BUILD:-$root/build-bench}
ranks=4

log=$build/bench-build.log
mkdir -p "$build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DGDAP_WITH_CUDA=OFF -DGDAP_WITH_MPI=ON -DGDAP_BUILD_TESTS=OFF \
    -DGDAP_WITH_PYTHON=OFF -DGDAP_WITH_FORTRAN=OFF -DGDAP_BUILD_CLI=OFF >"$log" 2>&1 || { tail -30 "$log"; exit 1; }
fi
if [ -z "${GDAP_BENCH_NO_BUILD:-}" ]; then
  cmake --build "$build" -j"${JOBS:-2}" --target gdap >"$log" 2>&1 || { grep -B2 -A8 -m5 error "$log"; exit 1; }
fi

# The harness is plain C against the installed ABI, so mpicc builds it without the CMake project
# (bench/CMakeLists.txt builds the same target once the top level adds it).
bin=$build/bench_redistribute_mpi
if [ ! -x "$bin" ] || [ "$root/bench/mpi/redistribute_mpi.c" -nt "$bin" ] || [ "$build/libgdap.so" -nt "$bin" ]; then
  mpicc -std=c99 -O2 -g -Wall -Wextra -I"$root/include" "$root/bench/mpi/redistribute_mpi.c" -o "$bin" \
    -L"$build" -lgdap -lscalapack-openmpi -Wl,-rpath,"$build"
fi

# Open MPI refuses root unless told; 4 ranks on fewer cores need --oversubscribe, and binding
# would pin two ranks to one core while another core idles.
mpirun_args=(-np "$ranks" --oversubscribe --bind-to none)
if [ "$(id -u)" = 0 ]; then mpirun_args+=(--allow-run-as-root); fi

echo "## gdap redistribution vs pdgemr2d vs MPI_Alltoall (bench/mpi)"
echo
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $ranks ranks$( \
  [ "$(nproc)" -lt "$ranks" ] && echo ' oversubscribed'); $(mpirun --version | head -1); gdap $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
# Other work on a shared machine skews the times: the load averages before and after say how much.
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
mpirun "${mpirun_args[@]}" "$bin" "$@"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
