#!/usr/bin/env bash
# The main job: installs only what the demo needs (tools/deps.sh --demo), builds the demo alone
# (gdap-demo: the layers up to plan, see src/cli/CMakeLists.txt; no halo, reductions, GEMM, I/O,
# IPC, MPI or Fortran) in build-demo/ with the build's progress on screen, and runs it: by default 4
# ranks as threads of one process share a 12 x 16 array in host memory, zero-copy, then redistribute
# it. CUDA is compiled in only where a GPU and the toolkit are both there. The build is -O1 with the
# shared libfmt (not header-only): a third of the CPU time of the full build's flags for the same
# sources, and the demo's arrays are small.
# Arguments go to the demo, e.g. tools/demo.sh --rows 100 --cols 60 --grid 3x2. GDAP_DEMO_BUILD
# names another build folder (the test suite's tools.demo_sh builds in its own).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GDAP_DEMO_BUILD:-build-demo}
tools/deps.sh --demo >&2
cuda=OFF
if [ -x /usr/local/cuda/bin/nvcc ] && nvidia-smi -L >/dev/null 2>&1; then cuda=ON; fi
if [ ! -f "$build/build.ninja" ]; then
  echo "demo: configuring $build/ (CUDA $cuda)" >&2
  log=$build/configure.log
  mkdir -p "$build"
  if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DGDAP_FMT_HEADER_ONLY=OFF \
      -DPython3_EXECUTABLE="$PWD/.deps/venv/bin/python3" -DGDAP_WITH_CUDA=$cuda -DGDAP_WITH_NCCL=OFF -DGDAP_WITH_MPI=OFF \
      -DGDAP_WITH_ZSTD=OFF -DGDAP_WITH_BLOSC=OFF -DGDAP_WITH_ZLIB=OFF -DGDAP_WITH_BLAS=OFF \
      -DGDAP_WITH_FORTRAN=OFF -DGDAP_WITH_PYTHON=OFF -DGDAP_BUILD_TESTS=OFF >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "demo: configuring failed; the whole log is in $log" >&2
    rm -f "$build/build.ninja"
    exit 1
  fi
fi
echo "demo: building gdap-demo ($(nproc) jobs)" >&2
cmake --build "$build" --target gdap_demo -j"$(nproc)" >&2
exec "$build/src/cli/gdap-demo" "$@"
