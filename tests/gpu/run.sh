#!/usr/bin/env bash
# One call on a lent GPU machine: configure with CUDA, build, run the whole test suite including
# the tests labelled gpu, then the gpu tests again under compute-sanitizer. The GPU machines have
# no internet: fmt, nlohmann-json, CLI11 and GoogleTest travel unpacked from Debian packages in
# .deps/root and the DLPack header in .deps/tvm_ffi (both made by tests/gpu/prepare.sh here).
# Usage: tests/gpu/run.sh [gpu-only]   (gpu-only: the gpu-labelled tests alone, for a short lease;
#        memcheck too with MEMCHECK=1; RACECHECK=1 adds racecheck and synccheck on every gpu executable)
set -uo pipefail
only=${1:-}
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/gdap-gpu-out}
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nvcc --version | tail -1
} | tee "$out/machine.txt"
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr
# blosc (and its lz4, snappy) travel in .deps/root too: the linker and the tests find them there.
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Python packages the machine lacks (swig, zarr and its dependencies) travel as wheels in .whl
# (made here by tests/gpu/prepare.sh); pip takes from them only what its python3 (there a venv
# with CuPy, PyTorch, JAX, TensorStore and mpi4py) does not have: matplotlib draws the heat example's
# plots (examples.heat.gpu).
python=$(command -v python3)
if ls .whl/*.whl >/dev/null 2>&1; then
  "$python" -m pip install -q --no-index --find-links .whl swig zarr matplotlib
  "$python" -c 'import zarr, tensorstore, matplotlib; print("python:", zarr.__version__, "zarr, tensorstore", getattr(tensorstore, "__version__", "(no version)"), "matplotlib", matplotlib.__version__)'
fi
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGDAP_WITH_CUDA=ON -DPython3_EXECUTABLE=$python \
  -DGDAP_CHECK_ABI=OFF -DGDAP_CHECK_DOCS=OFF \
  -DGDAP_DLPACK_INCLUDE_DIR=$PWD/.deps/tvm_ffi/include >"$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
grep 'gdap:' "$out/configure.log"
cmake --build build-gpu -j"$(nproc)" >"$out/build.log" 2>&1 || { grep -B2 -A8 'error' "$out/build.log" | head -80; exit 1; }
rc=0
if [ "$only" != gpu-only ]; then
  ctest --test-dir build-gpu --output-on-failure -j8 -LE 'julia|gpu' >"$out/ctest.log" 2>&1 || rc=1
  grep -E 'tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Skipped|Not Run' "$out/ctest.log" | head -40
fi
echo "--- gpu-labelled tests:"
ctest --test-dir build-gpu --output-on-failure -L gpu -V >"$out/ctest_gpu.log" 2>&1 || rc=1
grep -E '^\S+: \[ *(OK|FAILED|SKIPPED) *\]|^\S+: (PASSED|FAILED|SKIPPED)|passed|failed|tests passed|tests failed' "$out/ctest_gpu.log" \
  | grep -v '^\S*: *$' | head -120 | tee "$out/gpu_tests.txt"
[ "$only" = gpu-only ] && [ "${MEMCHECK:-0}" != 1 ] && exit $rc  # a short lease: memcheck on request
echo "--- compute-sanitizer (memcheck) on the gpu test executables:"
for exe in $(find build-gpu/tests -name 'test_*_gpu' -type f -executable); do
  compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 9 "$exe" >"$out/$(basename $exe).memcheck.log" 2>&1
  echo "$(basename $exe): memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$out/$(basename $exe).memcheck.log" | tail -1)"
done
if [ "${RACECHECK:-0}" = 1 ]; then
  echo "--- compute-sanitizer racecheck and synccheck (shared-memory hazards, barrier misuse):"
  for exe in $(find build-gpu/tests -name 'test_*_gpu' -type f -executable | sort); do
    for tool in racecheck synccheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 "$exe" >"$out/$(basename $exe).$tool.log" 2>&1
      echo "$(basename $exe) $tool: rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$(basename $exe).$tool.log" | tail -1)"
      grep -m1 'Internal Sanitizer Error' "$out/$(basename $exe).$tool.log"  # counted as an error, not a hazard
    done
  done
fi
# CUDA API errors are left out above: NCCL probes its kernels at init (no kernel image for other
# architectures) and peer access is enabled idempotently; both are expected, not memory errors.
exit $rc
