#!/usr/bin/env bash
# The main job: installs what is missing (tools/deps.sh), builds the gdap tool and runs `gdap demo`
# (by default 4 ranks as threads of one process share a 12 x 16 array in host memory, zero-copy).
# Arguments go to the demo, e.g. tools/demo.sh --rows 100 --cols 60 --grid 3x2
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh >&2
log=build/demo-build.log
mkdir -p build
if ! { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$PWD/.deps/venv/bin/python3" &&
       cmake --build build --target gdap_cli -j"$(nproc)"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "demo: the build failed; the whole log is in $log" >&2
  exit 1
fi
exec build/src/cli/gdap demo "$@"
