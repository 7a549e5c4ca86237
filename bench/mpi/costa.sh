#!/usr/bin/env bash
# Builds and installs COSTA (github.com/eth-cscs/COSTA), the CPU redistribution library that
# bench/mpi/redistribute_mpi.c times beside gdap, from a source tree the user fetched, into a
# prefix outside this repository (COSTA's code is never part of gdap). Core library only: its
# ScaLAPACK wrappers need MKL or Cray LibSci, and the harness calls costa::transform directly.
#
# Usage: COSTA_SRC=/path/to/COSTA [COSTA_PREFIX=/path/to/install] bench/mpi/costa.sh
#   COSTA_SRC     COSTA's source tree (the folder holding its CMakeLists.txt), required
#   COSTA_PREFIX  where to install (default ${TMPDIR:-/tmp}/gdap-costa); its build tree is
#                 $COSTA_PREFIX/build. Must lie outside this repository.
#   JOBS          parallel build jobs (default 2)
# Then: COSTA_PREFIX=... bench/mpi/run.sh redistribute (or -DGDAP_BENCH_COSTA_DIR=$COSTA_PREFIX
# in a CMake build with GDAP_BUILD_BENCH=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

if [ -z "${COSTA_SRC:-}" ]; then
  echo "costa.sh: set COSTA_SRC to COSTA's source tree (github.com/eth-cscs/COSTA), e.g." >&2
  echo "  COSTA_SRC=\$HOME/src/COSTA bench/mpi/costa.sh" >&2
  exit 2
fi
if [ ! -f "$COSTA_SRC/CMakeLists.txt" ] || ! grep -q 'project(costa' "$COSTA_SRC/CMakeLists.txt"; then
  echo "costa.sh: COSTA_SRC=$COSTA_SRC holds no COSTA CMakeLists.txt (project(costa ...))" >&2
  exit 2
fi
prefix=$(realpath -m "${COSTA_PREFIX:-${TMPDIR:-/tmp}/gdap-costa}")
case "$prefix/" in
  "$root"/*) echo "costa.sh: COSTA_PREFIX=$prefix lies inside the repository; pick a folder outside it" >&2; exit 2 ;;
esac

build=$prefix/build
log=$build/costa-build.log
mkdir -p "$build"
# Release (-O3), shared off, PIC on: the harness links it statically and runs no COSTA tests.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$COSTA_SRC" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCOSTA_SCALAPACK=OFF -DCOSTA_WITH_TESTS=OFF -DCOSTA_WITH_APPS=OFF -DBUILD_SHARED_LIBS=OFF \
  "${launcher[@]}" >"$log" 2>&1 || { tail -30 "$log"; exit 1; }
cmake --build "$build" -j"${JOBS:-2}" >>"$log" 2>&1 || { grep -B2 -A8 -m5 error "$log"; exit 1; }
cmake --install "$build" >>"$log" 2>&1 || { tail -30 "$log"; exit 1; }
version=$(grep -A3 'project(costa' "$COSTA_SRC/CMakeLists.txt" | grep -m1 -o 'VERSION [0-9.]*' | cut -d' ' -f2)
echo "COSTA $version installed in $prefix"
