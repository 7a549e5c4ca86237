#!/usr/bin/env bash
# The main job: builds the gdap tool and runs `gdap demo` (by default 4 ranks as threads of one
# process, host memory). Arguments go to the demo, e.g. tools/demo.sh --rows 100 --cols 60 --grid 3x2
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh >&2
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPython3_EXECUTABLE="$PWD/.deps/venv/bin/python3" >/dev/null
cmake --build build --target gdap_cli -j"$(nproc)" >/dev/null
exec build/src/cli/gdap demo "$@"
