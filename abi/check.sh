#!/usr/bin/env bash
# Compares a built libgdap.so with the stored baseline abi/gdap.abi (libabigail's abidiff).
# Fails on an incompatible change (a function removed or changed, a struct changed); passes on a
# compatible one (functions added) and says how to record it. See docs/abi.md.
set -uo pipefail
cd "$(dirname "$0")/.."
lib=${1:-build/libgdap.so}
report=$(abidiff --headers-dir1 include/gdap --headers-dir2 include/gdap abi/gdap.abi "$lib")
rc=$?
echo "$report"
if (( rc & 1 )); then echo "abi check: abidiff failed to run (exit $rc)"; exit 2; fi
if (( rc & 8 )); then
  echo "abi check: INCOMPATIBLE change against abi/gdap.abi: an exported function or type was removed or changed."
  echo "If this is deliberate it needs a new major version: see docs/abi.md, then run abi/update.sh."
  exit 1
fi
if (( rc & 4 )); then
  echo "abi check: passed, with compatible changes (e.g. new functions): record them with abi/update.sh."
  exit 0
fi
echo "abi check: passed, identical to the baseline"
