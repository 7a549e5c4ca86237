#!/usr/bin/env bash
# Builds libgdap (MPI, no CUDA) in build-bench and the harnesses beside it, then runs them with 4
# ranks and prints their markdown tables:
#   redistribute     gdap's redistribution (each GDAP_MPI_EXCHANGE, cma included) beside ScaLAPACK's
#                    pdgemr2d, COSTA (when COSTA_PREFIX is set) and a raw MPI_Alltoall;
#   reduce_scatter   gdap_reduce_scatter beside MPI_Reduce_scatter_block and MPI_Allreduce;
#   halo             gdap's halo exchange beside hand-written MPI datatypes and raw MPI sends.
# Usage: run.sh [redistribute|reduce_scatter|halo [harness arguments]]: no argument runs all three;
# the harness arguments are [repeats [case]] for redistribute and [repeats] for the others.
#
# Needs Open MPI (mpicc, mpirun) and libscalapack-openmpi-dev. Environment:
#   GDAP_BENCH_BUILD  build directory (default <repo>/build-bench)
#   JOBS              parallel build jobs (default 2)
#   GDAP_BENCH_NO_BUILD=1  time the libgdap already built (while its sources are being edited)
#   COSTA_PREFIX      a COSTA install (bench/mpi/costa.sh builds one): adds costa::transform to
#                     redistribute, with OMP_NUM_THREADS=1 unless set (4 ranks already fill 2 cores)
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

# The harnesses are plain C against the installed ABI, so mpicc builds them without the CMake
# project (bench/mpi/CMakeLists.txt builds the same targets once the top level adds it).
build_harness() {  # name, extra libraries
  local bin=$build/bench_$1_mpi src=$root/bench/mpi/$1_mpi.c
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ "$build/libgdap.so" -nt "$bin" ]; then
    mpicc -std=c99 -O2 -g -Wall -Wextra -I"$root/include" "$src" -o "$bin" -L"$build" -lgdap "${@:2}" \
      -Wl,-rpath,"$build"
  fi
}
# The redistribution harness with COSTA: its C++ side is built against COSTA's install, and the
# binary gets its own name so that a build without COSTA is never mistaken for one with it.
build_redistribute_costa() {
  local bin=$build/bench_redistribute_costa_mpi dir=$root/bench/mpi
  if [ ! -f "$COSTA_PREFIX/include/costa/layout.hpp" ]; then
    echo "run.sh: COSTA_PREFIX=$COSTA_PREFIX holds no COSTA install (run bench/mpi/costa.sh)" >&2; exit 2
  fi
  local lib; lib=$(ls -d "$COSTA_PREFIX"/lib*/libcosta.a 2>/dev/null | head -1)
  [ -n "$lib" ] || { echo "run.sh: no libcosta.a under $COSTA_PREFIX/lib*" >&2; exit 2; }
  if [ ! -x "$bin" ] || [ "$dir/redistribute_mpi.c" -nt "$bin" ] || [ "$dir/costa_peer.cpp" -nt "$bin" ] \
     || [ "$build/libgdap.so" -nt "$bin" ] || [ "$lib" -nt "$bin" ]; then
    mpicc -std=c99 -O2 -g -Wall -Wextra -DGDAP_BENCH_COSTA -I"$root/include" -c "$dir/redistribute_mpi.c" \
      -o "$build/redistribute_costa_mpi.o"
    mpicxx -std=c++17 -O2 -g -Wall -Wextra -DOMPI_SKIP_MPICXX -fopenmp -isystem "$COSTA_PREFIX/include" -c "$dir/costa_peer.cpp" \
      -o "$build/costa_peer.o"
    mpicxx -fopenmp "$build/redistribute_costa_mpi.o" "$build/costa_peer.o" -o "$bin" "$lib" -L"$build" -lgdap \
      -lscalapack-openmpi -Wl,-rpath,"$build"
  fi
}
which=${1:-all}
[ $# -gt 0 ] && shift
case $which in
  all | redistribute | reduce_scatter | halo) ;;
  *) echo "run.sh: unknown harness '$which' (redistribute, reduce_scatter, halo)" >&2; exit 2 ;;
esac

# Open MPI refuses root unless told; 4 ranks on fewer cores need --oversubscribe, and binding
# would pin two ranks to one core while another core idles.
mpirun_args=(-np "$ranks" --oversubscribe --bind-to none)
if [ "$(id -u)" = 0 ]; then mpirun_args+=(--allow-run-as-root); fi

echo "## gdap beside MPI and ScaLAPACK (bench/mpi)"
echo
echo "machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $ranks ranks$( \
  [ "$(nproc)" -lt "$ranks" ] && echo ' oversubscribed'); $(mpirun --version | head -1); gdap $(git -C "$root" describe --always --dirty 2>/dev/null || echo '?')"
# Other work on a shared machine skews the times: the load averages before and after say how much.
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$which" = all ] || [ "$which" = redistribute ]; then
  if [ -n "${COSTA_PREFIX:-}" ]; then
    build_redistribute_costa
    echo "COSTA: $COSTA_PREFIX, OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}"
    OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} mpirun "${mpirun_args[@]}" -x OMP_NUM_THREADS \
      "$build/bench_redistribute_costa_mpi" "$@"
  else
    build_harness redistribute -lscalapack-openmpi
    mpirun "${mpirun_args[@]}" "$build/bench_redistribute_mpi" "$@"
  fi
fi
if [ "$which" = all ] || [ "$which" = reduce_scatter ]; then
  build_harness reduce_scatter
  mpirun "${mpirun_args[@]}" "$build/bench_reduce_scatter_mpi" "$@"
fi
if [ "$which" = all ] || [ "$which" = halo ]; then
  build_harness halo
  mpirun "${mpirun_args[@]}" "$build/bench_halo_mpi" "$@"
fi
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
