#!/usr/bin/env bash
# The GEMM's GPU checks in one call on a lent GPU machine: builds gdap with CUDA and NCCL and the
# gemm tests, runs test_gemm_gpu (group on the GPUs present, ranks sharing a GPU, NCCL) and, with
# "bench", the GEMM benchmark (bench/gpu/run_gemm.sh). Needs .deps/root and .deps/tvm_ffi carried
# (tests/gpu/prepare.sh makes them). Usage: tests/gemm/run_gpu.sh [bench]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gdap-gemm-out}
mkdir -p "$out"
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
nvidia-smi -L
cmake -S . -B build-gemm-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGDAP_WITH_CUDA=ON -DGDAP_WITH_NCCL=ON \
  -DGDAP_WITH_PYTHON=OFF -DGDAP_WITH_FORTRAN=OFF -DGDAP_CHECK_ABI=OFF -DGDAP_CHECK_DOCS=OFF \
  -DGDAP_DLPACK_INCLUDE_DIR=$PWD/.deps/tvm_ffi/include >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep -E 'gdap:|gdap gemm' "$out/configure.log"
cmake --build build-gemm-gpu -j16 --target test_gemm_gpu test_gemm gemm_mpi >"$out/build.log" 2>&1 ||
  { grep -B2 -A8 'error' "$out/build.log" | head -60; exit 1; }
rc=0
./build-gemm-gpu/tests/gemm/test_gemm_gpu 2>&1 | tail -30 | tee "$out/test_gemm_gpu.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
OPENBLAS_NUM_THREADS=1 ./build-gemm-gpu/tests/gemm/test_gemm 2>&1 | tail -3
if [ "${1:-}" = bench ]; then
  bench/gpu/run_gemm.sh || rc=1
fi
exit $rc
