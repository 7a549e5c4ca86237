#!/usr/bin/env bash
# One call on a lent multi-GPU machine (nvidia-h200-x2, or -x4 for the 4-GPU rows): builds gdap
# with CUDA and NCCL, then times gdap's halo exchange (NCCL and in-process group) beside raw NCCL
# send/recv of the same bytes, in one run. Writes the table to $OUT/halo_gpu.md.
# Usage: bench/gpu/run_halo.sh [number of GPUs, default all]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gdap-bench-out}
mkdir -p "$out"
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/machine.txt"
nvidia-smi topo -m >>"$out/machine.txt" 2>&1
cmake -S . -B build-bench-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGDAP_WITH_CUDA=ON -DGDAP_WITH_NCCL=ON \
  -DGDAP_BUILD_TESTS=OFF -DGDAP_WITH_PYTHON=OFF -DGDAP_WITH_FORTRAN=OFF \
  -DGDAP_DLPACK_INCLUDE_DIR=$PWD/.deps/tvm_ffi/include >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
cmake --build build-bench-gpu -j16 --target gdap >"$out/build.log" 2>&1 || { grep -A8 error "$out/build.log" | head -40; exit 1; }
nvcc -O2 -std=c++20 -arch=sm_90 -Iinclude bench/gpu/halo_gpu.cu -o build-bench-gpu/halo_gpu \
  -Lbuild-bench-gpu -lgdap -lnccl -Xlinker -rpath -Xlinker "$PWD/build-bench-gpu" || exit 1
{
  head -1 "$out/machine.txt"
  ./build-bench-gpu/halo_gpu "$@"
} | tee "$out/halo_gpu.md"
