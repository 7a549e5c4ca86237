#!/usr/bin/env bash
# The heat example in one command, on the host: builds gdap from this checkout (MPI, Fortran and
# Python when present; CUDA when the toolkit is), installs it into build-heat/prefix, builds the
# example against that installed tree only (find_package(gdap)), runs its host checks (ctest -L
# host) and a demonstration: the C solver on 4 ranks with the Python companion attached to its
# sections, drawing build-heat/heat.png, and the Fortran solver's checkpoint drawn into
# build-heat/checkpoint.png. On a GPU machine run bench/gpu/heat.sh instead (README.md).
# Usage: examples/heat/run.sh [GDAP_PREFIX]   (an installed gdap to use instead of building one)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$root/build-heat
python=${PYTHON:-$root/.deps/venv/bin/python3}
[ -x "$python" ] || python=$(command -v python3)
mkdir -p "$work"
prefix=${1:-}
if [ -z "$prefix" ]; then
  prefix=$work/prefix
  cmake -S . -B "$work/gdap" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGDAP_BUILD_TESTS=OFF \
    -DPython3_EXECUTABLE="$python" >"$work/gdap-configure.log"
  grep 'gdap:' "$work/gdap-configure.log"
  cmake --build "$work/gdap" -j"$(nproc)" >/dev/null
  rm -rf "$prefix" && cmake --install "$work/gdap" --prefix "$prefix" >/dev/null
fi
cmake -S examples/heat -B "$work/example" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DPython3_EXECUTABLE="$python" >/dev/null
cmake --build "$work/example" -j"$(nproc)" >/dev/null
echo "== the example's host checks"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ctest --test-dir "$work/example" -L host -j"$(nproc)"
echo "== a run with the Python companion attached"
export OMP_WAIT_POLICY=passive PYTHONPATH=$(ls -d "$prefix"/lib*/python3*/site-packages | head -1)
rm -rf "$work/share" "$work/ck"
"$work/example/heat" --dims 96x64 --grid 2x2 --periodic 1 --mode 2x1 --steps 400 --residual-every 10 \
  --share "$work/share" --hold 60 &
"$python" examples/heat/python/heat_view.py attach "$work/share" --wait 60 --release --out "$work/heat.png"
wait
if [ -x "$work/example/heat_f" ]; then
  "$work/example/heat_f" --dims 40x48x32 --grid 1x2x2 --periodic 2 --steps 100 --residual-every 5 \
    --checkpoint-every 100 --checkpoint-dir "$work/ck" | tail -2
  "$python" examples/heat/python/heat_view.py checkpoint "$work/ck/step00000100.zarr" --out "$work/checkpoint.png"
fi
echo "== done: $work/heat.png$([ -f "$work/checkpoint.png" ] && echo " and $work/checkpoint.png")"
