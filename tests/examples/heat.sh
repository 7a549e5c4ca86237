#!/usr/bin/env bash
# The heat example against an installed gdap. Usage: heat.sh BUILD_DIR SCRATCH_DIR PYTHON STEP
#   build: install BUILD_DIR into SCRATCH_DIR/prefix, configure examples/heat against it only
#          (CMAKE_PREFIX_PATH) in SCRATCH_DIR/build, and build it;
#   host:  run the example's host cases (ctest -L host); gpu: its gpu cases (ctest -L gpu).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 scratch=$2 python=$3 step=$4
case $step in
  build)
    rm -rf "$scratch" && mkdir -p "$scratch"
    cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
    args=(-S "$here/../../examples/heat" -B "$scratch/build" -DCMAKE_PREFIX_PATH="$scratch/prefix")
    if [ -n "$python" ]; then args+=(-DPython3_EXECUTABLE="$python"); fi
    if grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja' "$build/CMakeCache.txt"; then args+=(-G Ninja); fi
    for launcher in C CXX CUDA; do  # the build's compiler launcher (ccache), if it has one
      value=$(sed -n "s/^CMAKE_${launcher}_COMPILER_LAUNCHER:[A-Z]*=//p" "$build/CMakeCache.txt")
      if [ -n "$value" ]; then args+=(-DCMAKE_${launcher}_COMPILER_LAUNCHER="$value"); fi
    done
    cmake "${args[@]}" | grep -E 'gdap|Fortran|CUDA|MPI' || true
    cmake --build "$scratch/build" -j"$(nproc)"
    echo "heat example: built against $scratch/prefix"
    ;;
  host | gpu)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    ctest --test-dir "$scratch/build" -L "$step" --output-on-failure -j2
    ;;
  *) echo "heat.sh: unknown step '$step' (build, host or gpu)"; exit 2 ;;
esac
