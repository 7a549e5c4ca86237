#!/usr/bin/env bash
# One call on a lent GPU machine: the reduce benchmark (reduce_gpu.cu, bench/gpu/run.sh reduce)
# against two builds of libgdap in turn on the same GPUs: this tree's, and one whose
# src/reduce/reduce_kernels.cu is replaced by OLD_KERNELS (a file the caller brings, e.g.
# `git show main:src/reduce/reduce_kernels.cu`). Both come from one build directory
# (GDAP_BENCH_BUILD, default build-gpu: tests/gpu/run.sh's): its libgdap is copied aside, the old
# kernels are built there and copied aside too, and the tree's kernels are put back (newer than
# the old object, so the next build of that directory compiles them again). One benchmark
# executable, built once, runs against either copy (LD_LIBRARY_PATH comes before its RUNPATH).
# Usage: bench/gpu/reduce_ab.sh OLD_KERNELS [rounds]   (rounds: default 2, each new then old)
# Writes $OUT/reduce_ab.md: each run's table rows, headed by which library ran.
set -uo pipefail
if [ $# -lt 1 ] || [ ! -f "$1" ]; then echo "usage: $0 OLD_KERNELS.cu [rounds]" >&2; exit 2; fi
old_kernels=$(realpath "$1")
rounds=${2:-2}
cd "$(dirname "$0")/../.." || exit 1
out=${OUT:-/tmp/gdap-bench-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=${GDAP_BENCH_BUILD:-build-gpu}
[ -f "$build/libgdap.so" ] || { echo "no $build/libgdap.so: build it first (tests/gpu/run.sh gpu-only)" >&2; exit 1; }
build=$(cd "$build" && pwd)
kernels=src/reduce/reduce_kernels.cu
libs=$(mktemp -d)
mkdir -p "$libs/new" "$libs/old"
cmake --build "$build" --target gdap -j"$(nproc)" >"$out/ab_build_new.log" 2>&1 || { tail -20 "$out/ab_build_new.log"; exit 1; }
cp -P "$build"/libgdap.so* "$libs/new/"
# The benchmark, compiled while the old kernels build.
read -ra extra <bench/gpu/reduce_gpu.libs
nvcc -O2 -std=c++20 -arch=sm_90 -Iinclude bench/gpu/reduce_gpu.cu -o "$libs/reduce_gpu" -L"$libs/new" -lgdap -lnccl \
  "${extra[@]}" -Xlinker --enable-new-dtags -Xlinker -rpath -Xlinker "$libs/new" >"$out/ab_bench_build.log" 2>&1 &
bench_build=$!
cp "$kernels" "$libs/new_kernels.cu"
cp "$old_kernels" "$kernels"
cmake --build "$build" --target gdap -j"$(nproc)" >"$out/ab_build_old.log" 2>&1
built_old=$?
cp "$libs/new_kernels.cu" "$kernels"
touch "$kernels"
[ $built_old = 0 ] || { tail -20 "$out/ab_build_old.log"; exit 1; }
cp -P "$build"/libgdap.so* "$libs/old/"
wait $bench_build || { tail -20 "$out/ab_bench_build.log"; exit 1; }
rc=0
nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tee "$out/reduce_ab.md"
for round in $(seq "$rounds"); do
  for which in new old; do
    lib_path=$libs/$which:$LD_LIBRARY_PATH
    echo "== $which kernels, round $round ($(LD_LIBRARY_PATH=$lib_path ldd "$libs/reduce_gpu" | grep -o "$libs/[a-z]*/libgdap[^ ]*"))" |
      tee -a "$out/reduce_ab.md"
    LD_LIBRARY_PATH=$lib_path "$libs/reduce_gpu" >"$out/reduce_ab_${which}_$round.log" 2>&1 || rc=1
    grep -E '^\| (case|all|rows|columns)' "$out/reduce_ab_${which}_$round.log" | tee -a "$out/reduce_ab.md"
    [ $rc = 0 ] || tail -5 "$out/reduce_ab_${which}_$round.log"
  done
done
exit $rc
