#!/usr/bin/env bash
# One call on a lent GPU machine: gdap's redistribution beside NCCL's all-to-all of the same bytes, cupyx,
# JAX and DTensor for three layouts (bench/gpu/reshard_scaling.py) at 1, 2 and 4 GPUs
# (CUDA_VISIBLE_DEVICES=0 / 0,1 / 0,1,2,3; a count above the machine's is skipped and said so), then the
# scaling table. Everything goes to $OUT/reshard_scaling.md (the records to reshard_scaling.jsonl).
# The Python binding: $GDAP_BENCH_BUILD/bindings/python when that names a build that has it (e.g.
# tests/gpu/run.sh's build-gpu), else a Release build with CUDA made here in build-bench-py.
# At 4 GPUs it also times the rank-permuted move (--layout permuted-rows --no-peers: without roles, with
# the keeping roles, and NCCL's all-to-all of the bytes that cross without them; a few seconds).
# Usage: [GPUS="1 2 4"] [PERMUTED=0] bench/gpu/reshard_scaling.sh [reshard_scaling.py flags, e.g. --layout rows-cols]
#   GPUS: the counts to time (default 1 2 4); empty: build only (a first, short call on a lent machine,
#   whose build-bench-py the next call reuses). PERMUTED=0 leaves the rank-permuted move out.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${OUT:-/tmp/gdap-bench-out}
mkdir -p "$out"
python=$(command -v python3)
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=${GDAP_BENCH_BUILD:-build-bench-py}
if ! ls "$build"/bindings/python/gdap/_gdap_c*.so >/dev/null 2>&1; then
  # swig travels as a wheel in .whl (tests/gpu/prepare.sh) where the machine lacks it.
  if ls .whl/*.whl >/dev/null 2>&1; then "$python" -m pip install -q --no-index --find-links .whl swig; fi
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGDAP_WITH_CUDA=ON -DGDAP_WITH_NCCL=ON \
    -DGDAP_WITH_PYTHON=ON -DGDAP_WITH_FORTRAN=OFF -DGDAP_BUILD_TESTS=OFF \
    -DPython3_EXECUTABLE="$python" -DGDAP_DLPACK_INCLUDE_DIR="$PWD"/.deps/tvm_ffi/include \
    >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
  cmake --build "$build" -j"$(nproc)" --target gdap gdap_python gdap_python_sources >"$out/build.log" 2>&1 \
    || { grep -A8 error "$out/build.log" | head -40; exit 1; }
fi
build=$(cd "$build" && pwd)
export PYTHONPATH=$build/bindings/python${PYTHONPATH:+:$PYTHONPATH}
gpu_counts=${GPUS-1 2 4}
if [ -z "$gpu_counts" ]; then echo "built $build; GPUS is empty: nothing timed"; exit 0; fi
md=$out/reshard_scaling.md
records=$out/reshard_scaling.jsonl
: >"$records"
have=$(nvidia-smi -L | wc -l)
{
  echo "# gdap's redistribution beside its peers at 1, 2 and 4 GPUs"
  echo
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sort | uniq -c
  echo "library: $build ($(grep -m1 CMAKE_BUILD_TYPE:STRING "$build/CMakeCache.txt"))," \
    "commit $(git rev-parse --short HEAD 2>/dev/null)"
} | tee "$md"
rc=0
for gpus in $gpu_counts; do
  if [ "$gpus" -gt "$have" ]; then
    echo -e "\n## $gpus GPUs: skipped, the machine has $have GPU(s)" | tee -a "$md"
    continue
  fi
  visible=$(seq -s, 0 $((gpus - 1)))
  echo -e "\n## $gpus GPU(s), CUDA_VISIBLE_DEVICES=$visible" | tee -a "$md"
  start=$SECONDS
  CUDA_VISIBLE_DEVICES=$visible "$python" bench/gpu/reshard_scaling.py --json "$records" "$@" 2>&1 | tee -a "$md"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  if [ "$gpus" = 4 ] && [ "${PERMUTED:-1}" != 0 ]; then
    CUDA_VISIBLE_DEVICES=$visible "$python" bench/gpu/reshard_scaling.py --json "$records" --layout permuted-rows \
      --no-peers 2>&1 | tee -a "$md"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  fi
  echo -e "\n($gpus GPU(s): $((SECONDS - start)) s)" | tee -a "$md"
done
[ -s "$records" ] || { echo "nothing timed" | tee -a "$md"; exit 1; }
"$python" bench/gpu/reshard_scaling.py --summarize "$records" | tee -a "$md"
[ "${PIPESTATUS[0]}" = 0 ] || rc=1
exit $rc
