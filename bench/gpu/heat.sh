#!/usr/bin/env bash
# One call on a GPU machine (4 x H100 for the whole table): the heat example (examples/heat) on
# GPUs, its checks and its timings. Builds gdap (Release: CUDA, NCCL, MPI), installs it, builds the
# example against the installed tree and the hand-written NCCL peer (bench/gpu/heat_nccl_ref.cu:
# the example's kernels and overlap, raw NCCL for the halo); then
#   checks: the example's gpu cases (ctest -L gpu: the C driver over the in-process group, NCCL
#           threads and MPI + NCCL, against the exact solution, and a restart bit for bit), and the
#           Fortran driver when its bundle was built and carried (examples/heat/gpu/bundle_fortran.sh);
#   bench:  2-d float32 16384^2, 1000 steps, on 1, 2 and 4 GPUs beside the NCCL peer (parallel
#           efficiency against the same kernels on one GPU); 3-d float64 512^3 and 1024^3 at 1, 2, 4
#           GPUs (strong scaling) and 512^3 per GPU (weak scaling). Every timed run is checked
#           against the exact solution after its timing.
# Prints a short table last and writes it to $OUT/heat_gpu.md. GDAP_BENCH_BUILD names a gdap build
# to reuse (it must have NCCL). Usage: bench/gpu/heat.sh [checks] [bench]   (default: both)
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=${OUT:-/tmp/gdap-bench-out}
mkdir -p "$out"
what=" ${*:-checks bench} "
export CMAKE_PREFIX_PATH=$root/.deps/root/usr OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# blosc (and its lz4, snappy) travel in .deps/root too: the linker and the tests find them there.
export LD_LIBRARY_PATH=$root/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/machine.txt"
gpus=$(nvidia-smi -L | wc -l)
[ "$gpus" -gt 4 ] && gpus=4
work=$root/build-heat-gpu
gdap_build=${GDAP_BENCH_BUILD:-$work/gdap}
mkdir -p "$work"

echo "== gdap (Release) and the heat example against its installed tree"
if [ -z "${GDAP_BENCH_BUILD:-}" ]; then
  cmake -S . -B "$gdap_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGDAP_WITH_CUDA=ON -DGDAP_WITH_NCCL=ON \
    -DGDAP_BUILD_TESTS=OFF -DGDAP_WITH_PYTHON=OFF -DGDAP_WITH_FORTRAN=OFF -DGDAP_CHECK_ABI=OFF \
    -DGDAP_DLPACK_INCLUDE_DIR=$root/.deps/tvm_ffi/include >"$out/heat_configure.log" 2>&1 ||
    { tail -20 "$out/heat_configure.log"; exit 1; }
  cmake --build "$gdap_build" -j"$(nproc)" >"$out/heat_build.log" 2>&1 || { grep -A8 error "$out/heat_build.log" | head -40; exit 1; }
fi
rm -rf "$work/prefix" && cmake --install "$gdap_build" --prefix "$work/prefix" >/dev/null
cmake -S examples/heat -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  >"$out/heat_example_configure.log" 2>&1 || { tail -20 "$out/heat_example_configure.log"; exit 1; }
cmake --build "$work/example" -j"$(nproc)" >"$out/heat_example_build.log" 2>&1 ||
  { grep -A8 error "$out/heat_example_build.log" | head -40; exit 1; }
nvcc -O3 -std=c++20 -arch=sm_90 -Iexamples/heat/src bench/gpu/heat_nccl_ref.cu examples/heat/src/heat_cuda.cu \
  examples/heat/src/heat_host.c examples/heat/src/heat_problem.c -lnccl -o "$work/heat_nccl_ref" || exit 1
heat=$work/example/heat
ref=$work/heat_nccl_ref
rc=0

if [[ $what == *" checks "* ]]; then
  echo "== the example's gpu checks"
  ctest --test-dir "$work/example" -L gpu --output-on-failure 2>&1 | tee "$out/heat_checks.log" | grep -E 'Test +#|tests passed|tests failed' || rc=1
  grep -q '100% tests passed' "$out/heat_checks.log" || rc=1
  if [ -x build-heat-fortran-bundle/bin/heat_f ]; then
    echo "== the Fortran driver (built elsewhere with gfortran) against this machine's libgdap"
    examples/heat/gpu/run_fortran.sh build-heat-fortran-bundle "$work/prefix/lib" "$heat" 2>&1 | tee "$out/heat_fortran.log" || rc=1
  else
    echo "== no Fortran bundle (build-heat-fortran-bundle): the Fortran driver was not run" | tee "$out/heat_fortran.log"
  fi
fi

# ms per step of one run that also passed its checks; "fail" otherwise.
ms() {
  local text
  text=$("$@" 2>&1)
  echo "$text" >>"$out/heat_runs.log"
  if grep -qE '^heat(-ref)?: check.*FAILED|^heat: checks FAILED' <<<"$text" ||
     ! grep -qE '^heat: checks passed|^heat-ref: check.*: ok' <<<"$text"; then
    echo fail
    return
  fi
  sed -n 's/.* steps in .* s, \([0-9.]*\) ms per step/\1/p' <<<"$text" | tail -1
}
run_gdap() {  # run_gdap GPUS DIMS STEPS DTYPE [options]: the C driver over NCCL, slabs along dimension 0
  local p=$1 dims=$2 steps=$3 dtype=$4
  shift 4
  local grid=$p
  for _ in $(seq 2 "$(tr x '\n' <<<"$dims" | wc -l)"); do grid=${grid}x1; done
  echo "run: heat --comm nccl --ranks $p --grid $grid --dims $dims --dtype $dtype $*" >>"$out/heat_runs.log"
  ms "$heat" --device cuda --comm nccl --ranks "$p" --grid "$grid" --dims "$dims" --steps "$steps" --dtype "$dtype" --bench "$@"
}
run_peer() {  # run_peer GPUS DIMS STEPS DTYPE [--no-overlap]
  echo "run: heat_nccl_ref $2 $1 $3 $4 ${5:-}" >>"$out/heat_runs.log"
  ms "$ref" "$2" "$1" "$3" "$4" ${5:-}
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "-" }'; }
efficiency() { awk -v t1="$1" -v tp="$2" -v p="$3" 'BEGIN { if (t1 + 0 > 0 && tp + 0 > 0) printf "%.1f%%", 100 * t1 / (p * tp); else print "-" }'; }

if [[ $what == *" bench "* ]]; then
  : >"$out/heat_runs.log"
  table=$out/heat_gpu.md
  {
    echo "## heat example on $(head -1 "$out/machine.txt" | cut -d, -f1) x $gpus, one process, one thread per GPU"
    echo
    echo "2-d float32 16384^2, 1000 steps, rows over the GPUs, fixed ends; ms per step (every run checked against the exact solution)"
    echo
    echo "| GPUs | gdap | NCCL peer | gdap / peer | gdap efficiency | peer efficiency |"
    echo "|---|---|---|---|---|---|"
  } >"$table"
  declare -A g2 r2
  for p in 1 2 4; do
    [ $p -le "$gpus" ] || continue
    g2[$p]=$(run_gdap $p 16384x16384 1000 float32)
    r2[$p]=$(run_peer $p 16384x16384 1000 float32)
    echo "| $p | ${g2[$p]} | ${r2[$p]} | $(ratio "${g2[$p]}" "${r2[$p]}") | $(efficiency "${g2[1]}" "${g2[$p]}" $p) | $(efficiency "${r2[1]}" "${r2[$p]}" $p) |" >>"$table"
  done
  if [ "$gpus" -ge 4 ]; then
    a=$(run_gdap 4 16384x16384 1000 float32 --no-overlap)
    b=$(run_peer 4 16384x16384 1000 float32 --no-overlap)
    echo "| 4, halo after the step | $a | $b | $(ratio "$a" "$b") | $(efficiency "${g2[1]}" "$a" 4) | $(efficiency "${r2[1]}" "$b" 4) |" >>"$table"
    a=$(ms "$heat" --device cuda --comm group --ranks 4 --grid 4x1 --dims 16384x16384 --steps 1000 --dtype float32 --bench)
    echo "| 4, in-process group (peer copies) | $a | | | $(efficiency "${g2[1]}" "$a" 4) | |" >>"$table"
  fi
  {
    echo
    echo "3-d float64, slabs along dimension 0, fixed ends; ms per step (strong scaling: the same grid on more GPUs)"
    echo
    echo "| grid | steps | GPUs | gdap | NCCL peer | gdap / peer | gdap efficiency |"
    echo "|---|---|---|---|---|---|---|"
  } >>"$table"
  for n in 512 1024; do
    steps=$([ $n = 512 ] && echo 200 || echo 50)
    declare -A g3=()
    for p in 1 2 4; do
      [ $p -le "$gpus" ] || continue
      g3[$p]=$(run_gdap $p ${n}x${n}x${n} $steps float64)
      b=$(run_peer $p ${n}x${n}x${n} $steps float64)
      echo "| ${n}^3 | $steps | $p | ${g3[$p]} | $b | $(ratio "${g3[$p]}" "$b") | $(efficiency "${g3[1]}" "${g3[$p]}" $p) |" >>"$table"
    done
  done
  {
    echo
    echo "3-d float64, 512^3 per GPU (weak scaling: the grid grows along dimension 0); ms per step"
    echo
    echo "| GPUs | grid | gdap | NCCL peer | gdap / peer | weak efficiency (t1 / tP) |"
    echo "|---|---|---|---|---|---|"
  } >>"$table"
  w1=""
  for p in 1 2 4; do
    [ $p -le "$gpus" ] || continue
    dims=$((512 * p))x512x512
    a=$(run_gdap $p $dims 200 float64)
    b=$(run_peer $p $dims 200 float64)
    [ $p = 1 ] && w1=$a
    echo "| $p | $dims | $a | $b | $(ratio "$a" "$b") | $(efficiency "$w1" "$a" 1) |" >>"$table"
  done
  grep -q fail "$table" && rc=1
  echo
  cat "$table"
fi
exit $rc
