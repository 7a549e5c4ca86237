#!/usr/bin/env bash
# gdap's redistribution over NCCL with one MPI process per GPU, beside an NCCL all-to-all of the same
# bytes on the same communicator (bench/gpu/hosts_gpu.cu), twice: the processes as one host, then each
# process a host of its own with NCCL on its network transport (NCCL_P2P_DISABLE=1,
# NCCL_SHM_DISABLE=1), the route a job takes over several nodes. Writes $OUT/hosts_gpu.md.
# Usage: [GDAP_BENCH_BUILD=<build with libgdap>] [RANKS=4] bench/gpu/hosts.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${OUT:-/tmp/gdap-bench-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=${GDAP_BENCH_BUILD:-build-bench-gpu}
if [ ! -f "$build/libgdap.so" ]; then GDAP_BENCH_BUILD='' OUT=$out bash bench/gpu/run.sh --build-only || exit 1; build="build-bench-gpu"; fi
build=$(cd "$build" && pwd)
ranks=${RANKS:-$(nvidia-smi -L | wc -l)}
exe=$build/hosts_gpu
# mpicxx's flags are words on purpose.
# shellcheck disable=SC2046
nvcc -O2 -std=c++20 -arch=sm_90 -Iinclude $(mpicxx --showme:compile) bench/gpu/hosts_gpu.cu -o "$exe" -L"$build" -lgdap -lnccl \
  $(mpicxx --showme:link | sed 's/-pthread/-Xcompiler -pthread/g; s/-Wl,/-Xlinker /g') -Xlinker -rpath -Xlinker "$build" || exit 1
{
  echo "## redistribution over NCCL, one process per GPU, float32 16384 x 16384 rows -> columns"
  nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c
  echo
  echo "| processes | route | engine | median ms | GB/s across | rate / all-to-all | result |"
  echo "|---|---|---|---|---|---|---|"
} | tee "$out/hosts_gpu.md"
rc=0
mpirun -np "$ranks" --oversubscribe "$exe" | tee -a "$out/hosts_gpu.md" || rc=1
GDAP_TEST_SEPARATE_HOSTS=1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 mpirun -np "$ranks" --oversubscribe \
  -x GDAP_TEST_SEPARATE_HOSTS -x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE "$exe" | tee -a "$out/hosts_gpu.md" || rc=1
exit $rc
