#!/usr/bin/env bash
# One call on a lent GPU machine: builds gdap with CUDA and NCCL (Release), then runs the named GPU
# benchmarks, each timing gdap beside its peer in the same run, on every GPU present. Each writes
# its table to $OUT/<name>_gpu.md.
# Usage: bench/gpu/run.sh [redistribute] [halo] [allreduce] [reduce] [gemm] ...   (default: redistribute)
#        bench/gpu/run.sh --build-only   (the Release library in build-bench-gpu, nothing timed)
#   redistribute: float32 16384^2 row blocks -> column blocks / row block-cyclic(256), and the fine-grained
#                 cyclic rows -> columns / column block-cyclic(16), over every GPU (GDAP_BENCH_GPUS=2: the
#                 first two), beside an NCCL all-to-all of the same bytes; cupyx reshard on 2 GPUs
#   redistribute_grid: float64 32768^2 2-d blocks -> 2-d block-cyclic 256 x 256 / column blocks over
#                 NCCL (2 x 2 on 4 GPUs, 2 x 1 on 2), beside an NCCL all-to-all of the same bytes
#   gemm:         float64/float32 16384^3 and 32768^3 GEMM, beside P x single-GPU cuBLAS and cupyx matmul
#   halo:         3-d float64 512^3 halo exchange, beside raw NCCL send/recv of the same bytes
#   halo_faces:   one GPU: what the halo rows' strided faces cost (hand-written pack, unpack and
#                 contiguous copy, gdap's one-pass self-exchange); `halo_faces_gpu once` is for ncu
#   allreduce:    1 GiB float32 all-reduce, beside ncclAllReduce
#   alternate:    two plans in turn on one communicator (rows -> columns -> rows), group and NCCL engine,
#                 beside each plan's call made alone
#   halo_links:   strided halo faces stored straight into the neighbours' padding beside the staged
#                 route and raw NCCL (no gdap call)
#   links:        what the links carry, every GPU sending to every other at once: SM stores and loads,
#                 TMA bulk stores, copy engines (1-d, 2-d, mixed with SM stores), NCCL all-to-all
#   reduce_scatter: 1 GiB float32 partial sums per GPU into row blocks, beside ncclReduceScatter
#   reduce:       global sums of 1 GiB float32 per GPU (all, rows, columns), beside CUB / cuBLAS + NCCL
#                 (bench/gpu/reduce_ab.sh OLD.cu: the same against this tree's kernels and OLD.cu's in turn)
# The Python-level comparison (issue 25) is its own command: bench/gpu/reshard_scaling.sh times gdap's
# redistribution (GlobalArray.reshard, the bare call) beside NCCL's all-to-all of the same bytes, cupyx,
# JAX and DTensor for rows -> columns, 2-d blocks -> block-cyclic and cyclic rows -> columns at 1, 2 and
# 4 GPUs, into $OUT/reshard_scaling.md with a scaling table.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gdap-bench-out}
mkdir -p "$out"
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
# blosc (and its lz4, snappy) travel in .deps/root too: the linker and the tests find them there.
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/machine.txt"
nvidia-smi topo -m >>"$out/machine.txt" 2>&1
# GDAP_BENCH_BUILD names a build that already has libgdap (tests/gpu/run.sh's build-gpu, RelWithDebInfo),
# so that one short lease builds once for the tests and the benchmarks.
build=${GDAP_BENCH_BUILD:-build-bench-gpu}
if [ ! -f "$build/libgdap.so" ] || [ -z "${GDAP_BENCH_BUILD:-}" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGDAP_WITH_CUDA=ON -DGDAP_WITH_NCCL=ON \
    -DGDAP_BUILD_TESTS=OFF -DGDAP_WITH_PYTHON=OFF -DGDAP_WITH_FORTRAN=OFF \
    -DGDAP_DLPACK_INCLUDE_DIR=$PWD/.deps/tvm_ffi/include >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
  cmake --build "$build" -j"$(nproc)" --target gdap >"$out/build.log" 2>&1 || { grep -A8 error "$out/build.log" | head -40; exit 1; }
fi
echo "library: $build ($(grep -m1 CMAKE_BUILD_TYPE:STRING "$build/CMakeCache.txt"))" | tee -a "$out/machine.txt"
build=$(cd "$build" && pwd)  # GDAP_BENCH_BUILD may be relative or absolute
[ "${1:-}" = --build-only ] && exit 0  # bench/gpu/hosts.sh: the library only
rc=0
for name in "${@:-redistribute}"; do
  exe=$build/${name}_gpu
  extra=()
  if [ -f bench/gpu/${name}_gpu.libs ]; then read -ra extra <bench/gpu/${name}_gpu.libs; fi
  nvcc -O2 -std=c++20 -arch=sm_90 -Iinclude bench/gpu/${name}_gpu.cu -o "$exe" \
    -L"$build" -lgdap -lnccl "${extra[@]}" -Xlinker -rpath -Xlinker "$build" || { rc=1; continue; }
  {
    echo "## $name on $(nvidia-smi -L | wc -l) GPU(s), one process"
    head -1 "$out/machine.txt"
    "$exe" || rc=1
    if [ "$name" = redistribute ]; then python3 bench/gpu/cupyx_reshard.py 2>&1 | tail -5; fi
    if [ "$name" = gemm ]; then python3 bench/gpu/cupyx_matmul.py 2>&1 | tail -12; fi
  } | tee "$out/${name}_gpu.md"
done
exit $rc
