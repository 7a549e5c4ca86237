#!/usr/bin/env bash
# Builds gdap and passes the whole test suite, as CI does (.ci/run): installs what is missing
# (tools/deps.sh); a full build in build/ (CUDA code compiled when the toolkit is there, Fortran,
# the bindings, the CLI) running every test except those labelled gpu, which need a GPU machine
# (tests/gpu/run.sh); `pip install .` into a fresh venv and the Python suite against it; then the
# same suite again in build-asan/ under AddressSanitizer and UndefinedBehaviorSanitizer, and in
# build-tsan/ under ThreadSanitizer; then the libFuzzer targets for a bounded time. Exits non-zero on the
# first failure. Fortran and Python are required (ON), so a missing tool cannot drop their tests;
# CUDA is required when the toolkit is at /usr/local/cuda (CI: the CUDA code must compile there).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
jobs=$(nproc)
python=$PWD/.deps/venv/bin/python3
cuda=OFF
if [ -x /usr/local/cuda/bin/nvcc ]; then cuda=ON; fi
passed=0
# ctest with its output kept, adding the number of tests it ran to the total printed at the end.
run_ctest() {
  local log
  log=$(mktemp)
  ctest "$@" 2>&1 | tee "$log"
  passed=$((passed + $(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -1)))
  rm -f "$log"
}

echo "== build (RelWithDebInfo) in build/"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$python" \
  -DGDAP_WITH_CUDA=$cuda -DGDAP_WITH_FORTRAN=ON -DGDAP_WITH_PYTHON=ON -DGDAP_WITH_MPI=ON
cmake --build build -j"$jobs"
echo "== tests"
run_ctest --test-dir build --output-on-failure -LE gpu -j"$jobs"

# `pip install .` (pyproject.toml, scikit-build-core) into a fresh virtual environment, then the
# Python suite against that installed package, not the build tree.
echo "== pip install . into a fresh virtual environment (build-pip/venv), and the Python suite against it"
rm -rf build-pip && python3 -m venv build-pip/venv
build-pip/venv/bin/python3 -m pip install -q --disable-pip-version-check . pytest zarr jax tensorstore
log=$(mktemp)
(cd build-pip && venv/bin/python3 -c 'import gdap; print("installed gdap", gdap.__version__, "at", gdap.__file__)' &&
  venv/bin/python3 ../docs/examples/redistribute_threads.py && venv/bin/python3 -m pytest -p no:cacheprovider -q -m "not gpu" ../tests/python) 2>&1 | tee "$log"
passed=$((passed + $(sed -n 's/^\([0-9]*\) passed.*/\1/p' "$log" | tail -1)))
rm -f "$log"

# The sanitizer build leaves CUDA out: the CUDA runtime and ASan's shadow memory do not mix, and
# building without CUDA also tests that every CUDA request fails cleanly with GDAP_ERR_UNSUPPORTED.
# It leaves the Python extension out too: an uninstrumented interpreter cannot load ASan first.
# MPI is in: the MPI engines (point-to-point, single-copy reads, mapped shared-memory segments) run
# under ASan + UBSan too, with leak checking off for the mpi-labelled tests only: Open MPI's
# components allocate once and are unloaded at MPI_Finalize, so LeakSanitizer can neither name nor
# suppress them. Every other test keeps leak checking.
# The sanitizer builds run the soak with 2,000 calls per variant (build/ runs the full 10,000): the
# same mix of calls and faults, bounded under the sanitizers' 3-15x slowdown.
echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer, without CUDA) in build-asan/"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGDAP_SANITIZE=address,undefined \
  -DGDAP_WITH_CUDA=OFF -DGDAP_WITH_PYTHON=OFF -DGDAP_WITH_MPI=ON -DGDAP_WITH_FORTRAN=ON -DGDAP_SOAK_CALLS=2000 -DPython3_EXECUTABLE="$python"
cmake --build build-asan -j"$jobs"
echo "== tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest --test-dir build-asan --output-on-failure -LE 'gpu|mpi' -j"$jobs"
echo "== MPI tests under ASan + UBSan (leak checking off: Open MPI's unloaded components)"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest --test-dir build-asan --output-on-failure -L mpi -LE gpu -j"$jobs"

# ThreadSanitizer over the same suite: the in-process group runs its ranks as threads, and handles
# are created, validated and exported from many threads at once. Host only (no CUDA, MPI, Python).
echo "== build (ThreadSanitizer, host only) in build-tsan/"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGDAP_SANITIZE=thread -DGDAP_WITH_CUDA=OFF \
  -DGDAP_WITH_PYTHON=OFF -DGDAP_WITH_MPI=OFF -DGDAP_WITH_FORTRAN=OFF -DGDAP_BUILD_CLI=OFF -DGDAP_CHECK_ABI=OFF \
  -DGDAP_SOAK_CALLS=2000 -DPython3_EXECUTABLE="$python" >/dev/null
cmake --build build-tsan -j"$jobs"
echo "== tests under TSan"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_ctest --test-dir build-tsan --output-on-failure -LE gpu -j"$jobs"

# The parsers and validators under libFuzzer (clang), each target for a bounded time: any crash,
# leak or sanitizer report fails. New inputs it finds stay in build-fuzz/tests/fuzz/found.
echo "== fuzz targets (clang, libFuzzer + ASan + UBSan) in build-fuzz/"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGDAP_BUILD_FUZZERS=ON \
  -DGDAP_SANITIZE=address,undefined -DGDAP_WITH_CUDA=OFF -DGDAP_WITH_MPI=OFF -DGDAP_WITH_FORTRAN=OFF -DGDAP_WITH_PYTHON=OFF \
  -DGDAP_BUILD_CLI=OFF -DPython3_EXECUTABLE="$python" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_json fuzz_dims fuzz_zarr fuzz_zarr_shard fuzz_zarr_codecs fuzz_dnpy fuzz_cli
run_ctest --test-dir build-fuzz --output-on-failure -L fuzz
echo "== all tests passed (build/, build-pip/, build-asan/, build-tsan/, build-fuzz/)"
echo "tests: $passed passed, 0 failed"
