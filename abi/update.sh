#!/usr/bin/env bash
# Writes the ABI baseline abi/gdap.abi from a built libgdap.so (default: build/libgdap.so).
# Run it deliberately, after adding functions (a compatible change) or, for an incompatible change,
# after bumping the major version (docs/abi.md), and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=${1:-build/libgdap.so}
abidw --headers-dir include/gdap --drop-private-types --exported-interfaces-only --no-show-locs \
  --no-comp-dir-path --no-corpus-path --out-file abi/gdap.abi "$lib"
echo "abi: wrote abi/gdap.abi from $lib"
